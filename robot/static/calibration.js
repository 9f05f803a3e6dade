// The calibration tab: each camera's live frame with the face outlines drawn over it, the colour
// references, and (when robotd lets them be changed) their editing: drag a corner or type its pixels,
// pick a colour, "Check" asks robotd what a save would do, "Save and apply" writes the files and the
// next scan uses them. Before the first calibration (no views saved) the faces start where robotd
// suggests, to be dragged onto the cube; "Scan the solved cube" then checks the saved views. A flip/spin
// rig has one quad instead, the face under its camera (top_face), saved on its own.

import {api} from "./api.js";
import {QuadOverlay} from "./quads.js";
import {clearFieldError, faceFields, problemTarget, referenceFields, setCorner, showFieldError} from "./calibration_form.js";

function byId(id) {
  return document.getElementById(id);
}

/** The size of a camera's frame (from robotd), or, when it has none, one that holds every corner. */
function frameSize(known, views) {
  if (known && known.width && known.height) return [known.width, known.height];
  const points = views.flatMap((view) => view.corners);
  return [Math.max(1, ...points.map(([x]) => x)) * 1.1, Math.max(1, ...points.map(([, y]) => y)) * 1.1];
}

export class CalibrationView {
  /** `cameraNames()` lists the cameras robotd has open; `allCameras()` every camera it has. */
  constructor({cameraNames, allCameras, onMessage}) {
    Object.assign(this, {cameraNames, allCameras, onMessage});
    this.views = byId("calibration-views");
    this.note = byId("calibration-note");
    this.references = byId("references");
    this.inner = byId("views-inner");
    this.result = byId("calibration-result");
    this.active = false;
    this.online = true;
    this.page = null;
    this.draft = null;
    this.overlays = new Map();
    this.edits = 0; // a check's reply is shown only if nothing was edited while it was asked
    byId("panel-calibration").addEventListener("input", () => { this.edits += 1; });
    byId("calibration-reload").addEventListener("click", () => this.load());
    byId("calibration-revert").addEventListener("click", () => this.load());
    byId("calibration-check").addEventListener("click", () => this.check());
    byId("calibration-save").addEventListener("click", () => this.save());
    byId("calibration-solved").addEventListener("click", () => this.checkSolved());
    this.inner.addEventListener("input", () => this.innerChanged());
    byId("views-size").addEventListener("change", (event) => {
      this.draft.views.size = Number(event.target.value);
      this.changed({});
    });
  }

  get editable() {
    return Boolean(this.page && this.page.config);
  }

  async load() {
    let page;
    try {
      page = await api("api/calibration");
    } catch (error) {
      this.page = this.draft = null;
      this.note.textContent = `No calibration to show: ${error.message}`;
      this.views.replaceChildren();
      this.references.replaceChildren();
      this.showEditing();
      return;
    }
    this.page = page;
    this.draft = page.config ? structuredClone(page.config) : null;
    if (this.draft && !this.draft.views && page.starting) this.draft.views = structuredClone(page.starting);
    const top = page.top_face;
    this.topDraft = top ? structuredClone(top.corners || top.starting) : null;
    this.result.textContent = "";
    this.render();
  }

  /** No views saved yet: the first calibration, from robotd's starting layout. */
  get first() {
    return Boolean(this.page && this.page.config && !this.page.config.views && this.page.starting);
  }

  /** A flip/spin rig whose face under the camera is not saved yet. */
  get firstTop() {
    return Boolean(this.page && this.page.top_face && !this.page.top_face.corners);
  }

  render() {
    const views = this.page.views || {};
    const fixed = this.page.views_fixed;
    const top = this.page.top_face;
    this.note.textContent = this.firstTop
      ? "First calibration: the face under the camera is not saved yet, so robotd cannot scan. Put a cube on " +
        `the base with the cover open, and drag the four corners onto that face's outer corners: ${top.order} ` +
        "(the back of the rig at the top of the picture; the dot marks back-left). Then Save and apply, and check " +
        "with a solved cube below."
      : top && top.fixed ? `The face under the camera is ${top.fixed}; the six scan views below follow from it.`
      : top ? `Drag the corners of the face under the camera (${top.order}), then Save and apply; ` +
        "the six scan views below follow from it."
      : this.first
      ? "First calibration: no views are saved yet, so robotd cannot scan. Put a cube in the rig. In each " +
        "camera's picture, drag the four corners of each face onto that face's outer corners on the cube " +
        "(the letter names the face, the dot marks its corner at the top left of the face as drawn in the net). " +
        "Then Save and apply, and check with a solved cube below."
      : !Object.keys(views).length ? "No camera views are configured."
      : fixed ? `Face outlines as configured; ${fixed}.`
        : this.editable ? "Drag a corner on the picture, or type its pixels; Check, then Save and apply."
          : "Face outlines as configured; the dot marks each face's top-left corner as drawn in the net.";
    this.overlays.clear();
    const figures = this.cameraGroups().map(([name, group]) => this.figure(name, group));
    if (top) figures.unshift(this.topFigure(top));
    this.views.replaceChildren(...figures);
    referenceFields(this.references, this.draft || {calibration: this.readOnlyReferences()},
                    this.editable, (change) => this.changed(change));
    this.showEditing();
    if (this.active) this.streams(true);
  }

  /** [camera, [{face, corners, key, view, index}]] in the order robotd lists the cameras. */
  cameraGroups() {
    const groups = new Map(Object.keys(this.page.views || {}).map((name) => [name, []]));
    if (this.draft && this.draft.views) {
      this.draft.views.view.forEach((view, index) => {
        if (!groups.has(view.image)) groups.set(view.image, []);
        groups.get(view.image).push({face: view.face, corners: view.corners, key: index, view, index});
      });
    } else {
      for (const [name, camera] of Object.entries(this.page.views || {})) {
        groups.set(name, Object.entries(camera.faces || {}).map(([face, corners]) => ({face, corners, key: face})));
      }
    }
    return [...groups.entries()];
  }

  readOnlyReferences() {
    const references = this.page ? this.page.references : null;
    return references ? {palette: references} : null;
  }

  /** The flip/spin rig's camera with the face under it, draggable unless the config sets it. */
  topFigure(top) {
    const onDrag = top.fixed ? null : (key, k, x, y) => {
      this.topDraft[k] = [x, y];
      this.overlays.get("top").update("top", this.topDraft);
      this.changed({});
    };
    const figure = this.figure(top.camera, [{face: "top", corners: this.topDraft, key: "top"}],
                               {known: top, onDrag, overlayKey: "top"});
    figure.classList.add("top-face");
    return figure;
  }

  figure(name, faces, {known = (this.page.views || {})[name], onDrag, overlayKey = name} = {}) {
    const [width, height] = frameSize(known, faces);
    const editable = !onDrag && this.editable && this.page.editable.views;
    const figure = document.createElement("figure");
    figure.className = "calibration-view";
    figure.dataset.camera = name;
    const frame = document.createElement("div");
    frame.className = "frame";
    frame.style.aspectRatio = `${width} / ${height}`;
    const caption = document.createElement("figcaption");
    caption.textContent = `${name} — ${Math.round(width)}×${Math.round(height)}, faces ${faces.map((f) => f.face).join(" ") || "none"}`;
    if (this.cameraNames().includes(name)) {
      const img = document.createElement("img");
      img.alt = `Live view of camera ${name} with the face outlines`;
      img.dataset.stream = `stream/${encodeURIComponent(name)}`;
      img.addEventListener("load", () => {
        if (img.naturalWidth && (img.naturalWidth !== width || img.naturalHeight !== height)) {
          caption.textContent += ` — the camera delivers ${img.naturalWidth}×${img.naturalHeight}: ` +
            "the outlines may not match the frame";
        }
      }, {once: true});
      frame.append(img);
    } else {
      frame.classList.add("no-camera");
      caption.textContent += " — this camera is not open";
    }
    const drag = onDrag || (editable ? (key, k, x, y) => this.dragged(key, k, x, y) : null);
    const overlay = new QuadOverlay(width, height, faces, drag);
    this.overlays.set(overlayKey, overlay);
    frame.append(overlay.element);
    figure.append(frame, caption);
    if (editable && faces.length) {
      const numbers = document.createElement("details");
      numbers.className = "corner-editor";
      const summary = document.createElement("summary");
      summary.textContent = `Corners in pixels (faces ${faces.map((f) => f.face).join(" ")})`;
      numbers.append(summary, ...faces.map(({view, index}) => faceFields(view, index, this.allCameras(),
                                                                          (c) => this.changed(c))));
      figure.append(numbers);
    }
    return figure;
  }

  dragged(index, k, x, y) {
    const view = this.draft.views.view[index];
    view.corners[k] = [x, y];
    setCorner(index, k, [x, y]);
    this.changed({index});
  }

  innerChanged() {
    const value = this.inner.valueAsNumber;
    if (!Number.isFinite(value)) {
      showFieldError(byId("inner-error"), "a number from 0.1 to 0.9 is needed", [this.inner]);
      return;
    }
    clearFieldError(byId("inner-error"));
    this.draft.views.inner = value;
    this.changed({});
  }

  /** An edit: redraw its outline (or everything when a face moved to another camera). */
  changed({index, rebuild} = {}) {
    this.edits += 1;
    if (rebuild) {
      this.render();
    } else if (index !== undefined) {
      const view = this.draft.views.view[index];
      const overlay = this.overlays.get(view.image);
      if (overlay) overlay.update(index, view.corners);
    }
    this.result.textContent = this.changes() || this.topChanged() ? "Changed: not saved yet." : "";
  }

  /** The face under a flip/spin rig's camera differs from what robotd has (or was never saved). */
  topChanged() {
    const top = this.page && this.page.top_face;
    return Boolean(top && !top.fixed && JSON.stringify(this.topDraft) !== JSON.stringify(top.corners));
  }

  /** Save the face under the camera; true when saved. */
  async saveTopFace() {
    let reply;
    try {
      reply = await api("api/calibration/top_face", {method: "PUT", body: {corners: this.topDraft}});
    } catch (error) {
      this.result.textContent = `Not saved: ${error.message}`;
      return false;
    }
    this.saved(reply);
    return true;
  }

  /** The parts that differ from what robotd has, as PUT /api/calibration takes them (null: none). */
  changes() {
    if (!this.draft) return null;
    const body = {};
    for (const part of ["views", "calibration"]) {
      if (this.draft[part] && JSON.stringify(this.draft[part]) !== JSON.stringify(this.page.config[part])) {
        body[part] = this.draft[part];
      }
    }
    return Object.keys(body).length ? body : null;
  }

  showEditing() {
    const editable = this.editable;
    byId("inner-field").hidden = !(editable && this.page.editable.views);
    if (editable && this.draft.views) this.inner.value = String(this.draft.views.inner);
    byId("size-field").hidden = !this.first;
    if (this.first) byId("views-size").value = String(this.draft.views.size);
    byId("calibration-solved").disabled = !(this.page && this.page.config && this.page.config.views) || !this.online;
    const files = editable ? this.page.files : null;
    const top = this.page && this.page.top_face;
    const where = !top ? files && `${files.views} (views)`
      : top.fixed ? null : `${top.file} (the face under the camera)`;
    byId("calibration-files").textContent = !files ? "This rig's calibration cannot be changed from here."
      : `Saved to ${where ? `${where} and ` : ""}${files.calibration} (colours); the previous file is kept as a backup.`;
    byId("calibration-revert").disabled = !editable;
    for (const id of ["calibration-check", "calibration-save"]) byId(id).disabled = !editable || !this.online;
  }

  clearProblems() {
    for (const target of document.querySelectorAll("#panel-calibration .field-error")) clearFieldError(target);
  }

  showProblems(problems) {
    this.clearProblems();
    for (const problem of problems) {
      const {target, inputs} = problemTarget(problem.field);
      showFieldError(target, problem.message, inputs);
      const folded = target.closest("details");
      if (folded) folded.open = true;
    }
  }

  /** Ask robotd what a save would do; true when it would go through. */
  async check(quiet = false) {
    const body = this.changes();
    if (!body) {
      this.result.textContent = this.topChanged()
        ? "The face under the camera is checked as it is saved: Save and apply." : "No changes to check.";
      return false;
    }
    const edits = this.edits;
    let reply;
    try {
      reply = await api("api/calibration/check", {method: "POST", body});
    } catch (error) {
      this.result.textContent = `Could not check: ${error.message}`;
      return false;
    }
    if (this.edits !== edits) return false; // about values since edited: it would hide the edit's own errors
    this.showProblems(reply.problems);
    if (!reply.valid) {
      this.result.textContent = `Not valid: ${reply.problems.length} problem${reply.problems.length === 1 ? "" : "s"}, ` +
        "shown next to the fields.";
    } else if (!quiet) {
      this.result.textContent = `Valid: saving writes ${Object.values(reply.files).join(" and ")} and applies it at once.`;
    }
    return reply.valid;
  }

  async save() {
    if (this.topChanged() && (!(await this.saveTopFace()) || !this.changes())) return;
    if (!(await this.check(true))) return;
    let reply;
    try {
      reply = await api("api/calibration", {method: "PUT", body: this.changes()});
    } catch (error) {
      this.result.textContent = `Not saved: ${error.message}`;
      return;
    }
    this.saved(reply);
  }

  /** robotd's page after a save: drawn afresh, and what was written where. */
  saved(reply) {
    const colours = this.draft && this.draft.calibration;
    this.page = reply;
    this.draft = structuredClone(reply.config);
    if (reply.saved[0].part === "top_face" && colours) this.draft.calibration = colours; // still to save
    this.topDraft = reply.top_face ? structuredClone(reply.top_face.corners || reply.top_face.starting) : null;
    this.render();
    const saved = reply.saved.map((s) => `${s.part} to ${s.file}` + (s.backup ? ` (the previous file is kept as ${s.backup})` : ""));
    this.result.textContent = `Saved ${saved.join("; ")}, and applied: the next scan uses it.`;
    this.onMessage("calibration", "info", "Calibration saved and applied.", {autoHideMs: 4000});
  }

  /** Scan the cube in the rig, a solved one, with the saved views; show the verdict and what was read. */
  async checkSolved() {
    const result = byId("calibration-solved-result");
    const figure = byId("calibration-solved-figure");
    result.textContent = "Scanning…";
    delete result.dataset.solved;
    figure.hidden = true;
    let reply;
    try {
      reply = await api("api/calibration/solved", {method: "POST"});
    } catch (error) {
      result.textContent = `Could not scan: ${error.message}`;
      return;
    }
    const message = reply.message.replace(/\.$/, "");
    result.textContent = reply.solved ? `Confirmed: ${message}.` : `Not right yet: ${message}.`;
    result.dataset.solved = String(reply.solved);
    if (reply.scan_id !== null) {
      byId("calibration-solved-overlay").src = `api/scan/overlay.png?scan=${reply.scan_id}`;
      figure.hidden = false;
    }
  }

  /** Connect (or release) the MJPEG streams: only a visible tab holds camera connections. */
  streams(on) {
    this.active = on;
    for (const img of this.views.querySelectorAll("img[data-stream]")) {
      if (on) img.src = img.dataset.stream;
      else img.removeAttribute("src");
    }
  }

  /** Live or not: edits can be made offline, but nothing can be checked or saved. */
  setOnline(online) {
    this.online = online;
    this.showEditing();
  }
}
