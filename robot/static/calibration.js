// The calibration tab: each camera's live frame with the configured face quads drawn over it,
// and the colour references the vision uses.

import {api} from "./api.js";
import {COLOUR_NAMES} from "./net.js";

const SVG_NS = "http://www.w3.org/2000/svg";

function byId(id) {
  return document.getElementById(id);
}

function svg(name, attributes = {}) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, value);
  return el;
}

/** The quads of one camera view as an SVG overlay in image coordinates. */
function overlay(view) {
  const picture = svg("svg", {class: "quads", viewBox: `0 0 ${view.width} ${view.height}`,
                              preserveAspectRatio: "none", "aria-hidden": "true"});
  const unit = Math.max(view.width, view.height) / 200; // line widths that scale with the image
  for (const [face, corners] of Object.entries(view.faces || {})) {
    const points = corners.map(([x, y]) => `${x},${y}`).join(" ");
    const group = svg("g", {class: `quad face-${face}`, "data-face": face});
    group.append(svg("polygon", {class: "quad-shadow", points, "stroke-width": 2.2 * unit}),
                 svg("polygon", {class: "quad-line", points, "stroke-width": unit}));
    const [x0, y0] = corners[0];
    group.append(svg("circle", {class: "quad-corner", cx: x0, cy: y0, r: 2 * unit, "stroke-width": 0.6 * unit}));
    const cx = corners.reduce((sum, [x]) => sum + x, 0) / corners.length;
    const cy = corners.reduce((sum, [, y]) => sum + y, 0) / corners.length;
    const label = svg("text", {class: "quad-label", x: cx, y: cy, "font-size": 9 * unit, "stroke-width": 0.5 * unit,
                               "text-anchor": "middle", "dominant-baseline": "central"});
    label.textContent = face;
    group.append(label);
    picture.append(group);
  }
  return picture;
}

export class CalibrationView {
  /** `cameraNames()` lists the cameras robotd has open (their streams are shown under the quads). */
  constructor({cameraNames}) {
    this.cameraNames = cameraNames;
    this.views = byId("calibration-views");
    this.note = byId("calibration-note");
    this.references = byId("references");
    this.active = false;
    byId("calibration-reload").addEventListener("click", () => this.load());
  }

  async load() {
    let calibration;
    try {
      calibration = await api("api/calibration");
    } catch (error) {
      this.note.textContent = `No calibration to show: ${error.message}`;
      this.views.replaceChildren();
      this.references.replaceChildren();
      return;
    }
    const views = calibration.views || {};
    this.note.textContent = Object.keys(views).length
      ? "Face outlines as configured; the dot marks each face's top-left corner as drawn in the net."
      : "No camera views are configured.";
    this.views.replaceChildren(...Object.entries(views).map(([name, view]) => this.figure(name, view)));
    this.showReferences(calibration.references);
    if (this.active) this.streams(true);
  }

  figure(name, view) {
    const figure = document.createElement("figure");
    figure.className = "calibration-view";
    figure.dataset.camera = name;
    const frame = document.createElement("div");
    frame.className = "frame";
    frame.style.aspectRatio = `${view.width} / ${view.height}`;
    const caption = document.createElement("figcaption");
    caption.textContent = `${name} — ${view.width}×${view.height}, faces ${Object.keys(view.faces || {}).join(" ") || "none"}`;
    if (this.cameraNames().includes(name)) {
      const img = document.createElement("img");
      img.alt = `Live view of camera ${name} with the configured face outlines`;
      img.dataset.stream = `stream/${encodeURIComponent(name)}`;
      img.addEventListener("load", () => {
        if (img.naturalWidth && (img.naturalWidth !== view.width || img.naturalHeight !== view.height)) {
          caption.textContent += ` — the camera delivers ${img.naturalWidth}×${img.naturalHeight}: ` +
            "the outlines may not match the frame";
        }
      }, {once: true});
      frame.append(img);
    } else {
      frame.classList.add("no-camera");
      caption.textContent += " — this camera is not open";
    }
    frame.append(overlay(view));
    figure.append(frame, caption);
    return figure;
  }

  showReferences(references) {
    if (!references) {
      const item = document.createElement("li");
      item.textContent = "No colour references are set: the vision classifies colours without them.";
      this.references.replaceChildren(item);
      return;
    }
    this.references.replaceChildren(...Object.entries(references).map(([face, rgb]) => {
      const item = document.createElement("li");
      item.dataset.face = face;
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = `rgb(${rgb.join(",")})`;
      const text = document.createElement("span");
      text.textContent = `${face} (${COLOUR_NAMES[face] || "?"}): RGB ${rgb.map((v) => Math.round(v)).join(", ")}`;
      item.append(swatch, text);
      return item;
    }));
  }

  /** Connect (or release) the MJPEG streams: only a visible tab holds camera connections. */
  streams(on) {
    this.active = on;
    for (const img of this.views.querySelectorAll("img[data-stream]")) {
      if (on) img.src = img.dataset.stream;
      else img.removeAttribute("src");
    }
  }
}
