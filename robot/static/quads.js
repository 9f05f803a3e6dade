// The face outlines of one camera view, drawn in SVG over its frame (image coordinates), with handles
// that drag a corner when the view is editable.

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(name, attributes = {}) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, value);
  return el;
}

const pointsText = (corners) => corners.map(([x, y]) => `${x},${y}`).join(" ");

/**
 * An overlay of `faces` ([{face, corners, key}], corners in image pixels) on a `width` x `height` image.
 * With `onDrag(key, corner, x, y)` each corner is a handle the pointer can move; `update(key, corners)`
 * redraws one face in place (a drag keeps its pointer capture).
 */
export class QuadOverlay {
  constructor(width, height, faces, onDrag = null) {
    this.width = width;
    this.height = height;
    this.unit = Math.max(width, height) / 200; // line widths that scale with the image
    this.onDrag = onDrag;
    this.groups = new Map();
    this.element = svg("svg", {class: "quads", viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none",
                               "aria-hidden": "true"});
    for (const face of faces) this.add(face);
  }

  add({face, corners, key}) {
    const unit = this.unit;
    const group = svg("g", {class: `quad face-${face}`, "data-face": face});
    const shadow = svg("polygon", {class: "quad-shadow", "stroke-width": 2.2 * unit});
    const line = svg("polygon", {class: "quad-line", "stroke-width": unit});
    const label = svg("text", {class: "quad-label", "font-size": 9 * unit, "stroke-width": 0.5 * unit,
                               "text-anchor": "middle", "dominant-baseline": "central"});
    label.textContent = face;
    group.append(shadow, line, label);
    const handles = corners.map((_, index) => {
      const handle = svg("circle", {class: index === 0 ? "quad-corner first" : "quad-corner",
                                    r: (this.onDrag ? 3.5 : 2) * unit, "stroke-width": 0.6 * unit});
      if (this.onDrag) this.draggable(handle, key, index);
      group.append(handle);
      return handle;
    });
    if (!this.onDrag) handles.slice(1).forEach((handle) => handle.remove()); // read-only: the first corner only
    this.groups.set(key, {shadow, line, label, handles});
    this.update(key, corners);
    this.element.append(group);
  }

  update(key, corners) {
    const parts = this.groups.get(key);
    if (!parts) return;
    const points = pointsText(corners);
    parts.shadow.setAttribute("points", points);
    parts.line.setAttribute("points", points);
    parts.handles.forEach((handle, index) => {
      handle.setAttribute("cx", corners[index][0]);
      handle.setAttribute("cy", corners[index][1]);
    });
    parts.label.setAttribute("x", corners.reduce((sum, [x]) => sum + x, 0) / corners.length);
    parts.label.setAttribute("y", corners.reduce((sum, [, y]) => sum + y, 0) / corners.length);
  }

  draggable(handle, key, index) {
    handle.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      handle.setPointerCapture(event.pointerId);
      const move = (moved) => {
        const [x, y] = this.imagePoint(moved);
        this.onDrag(key, index, x, y);
      };
      const end = () => {
        handle.removeEventListener("pointermove", move);
        handle.removeEventListener("pointerup", end);
        handle.removeEventListener("pointercancel", end);
      };
      handle.addEventListener("pointermove", move);
      handle.addEventListener("pointerup", end);
      handle.addEventListener("pointercancel", end);
    });
  }

  /** A pointer position in image pixels, kept inside the image, to a tenth of a pixel. */
  imagePoint(event) {
    const box = this.element.getBoundingClientRect();
    const clamp = (value, high) => Math.round(Math.min(high, Math.max(0, value)) * 10) / 10;
    return [clamp((event.clientX - box.left) / box.width * this.width, this.width),
            clamp((event.clientY - box.top) / box.height * this.height, this.height)];
  }
}
