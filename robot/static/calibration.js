// The calibration tab: each camera's live frame with the face outlines drawn over it, the colour
// references, and (when robotd lets them be changed) their editing: drag a corner or type its pixels,
// pick a colour, "Check" asks robotd what a save would do, "Save and apply" writes the files and the
// next scan uses them.

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
    byId("calibration-reload").addEventListener("click", () => this.load());
    byId("calibration-revert").addEventListener("click", () => this.load());
    byId("calibration-check").addEventListener("click", () => this.check());
    byId("calibration-save").addEventListener("click", () => this.save());
    this.inner.addEventListener("input", () => this.innerChanged());
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
    this.result.textContent = "";
    this.render();
  }

  render() {
    const views = this.page.views || {};
    const fixed = this.page.views_fixed;
    this.note.textContent = !Object.keys(views).length ? "No camera views are configured."
      : fixed ? `Face outlines as configured; ${fixed}.`
        : this.editable ? "Drag a corner on the picture, or type its pixels; Check, then Save and apply."
          : "Face outlines as configured; the dot marks each face's top-left corner as drawn in the net.";
    this.overlays.clear();
    this.views.replaceChildren(...this.cameraGroups().map(([name, group]) => this.figure(name, group)));
    referenceFields(this.references, this.draft || {calibration: this.readOnlyReferences()},
                    this.editable, (change) => this.changed(change));
    this.showEditing();
    if (this.active) this.streams(true);
  }

  /** [camera, [{face, corners, key, view, index}]] in the order robotd lists the cameras. */
  cameraGroups() {
    const groups = new Map(Object.keys(this.page.views || {}).map((name) => [name, []]));
    if (this.draft) {
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

  figure(name, faces) {
    const known = (this.page.views || {})[name];
    const [width, height] = frameSize(known, faces);
    const editable = this.editable && this.page.editable.views;
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
    const overlay = new QuadOverlay(width, height, faces, editable ? (key, k, x, y) => this.dragged(key, k, x, y) : null);
    this.overlays.set(name, overlay);
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
    if (rebuild) {
      this.render();
    } else if (index !== undefined) {
      const view = this.draft.views.view[index];
      const overlay = this.overlays.get(view.image);
      if (overlay) overlay.update(index, view.corners);
    }
    this.result.textContent = this.changes() ? "Changed: not saved yet." : "";
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
    if (editable) this.inner.value = String(this.draft.views.inner);
    const files = editable ? this.page.files : null;
    byId("calibration-files").textContent = files
      ? `Saved to ${files.views} (views) and ${files.calibration} (colours); the previous file is kept as a backup.`
      : "This rig's calibration cannot be changed from here.";
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
      this.result.textContent = "No changes to check.";
      return false;
    }
    let reply;
    try {
      reply = await api("api/calibration/check", {method: "POST", body});
    } catch (error) {
      this.result.textContent = `Could not check: ${error.message}`;
      return false;
    }
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
    if (!(await this.check(true))) return;
    let reply;
    try {
      reply = await api("api/calibration", {method: "PUT", body: this.changes()});
    } catch (error) {
      this.result.textContent = `Not saved: ${error.message}`;
      return;
    }
    this.page = reply;
    this.draft = structuredClone(reply.config);
    this.render();
    const saved = reply.saved.map((s) => `${s.part} to ${s.file}` + (s.backup ? ` (the previous file is kept as ${s.backup})` : ""));
    this.result.textContent = `Saved ${saved.join("; ")}, and applied: the next scan uses it.`;
    this.onMessage("calibration", "info", "Calibration saved and applied.", {autoHideMs: 4000});
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
