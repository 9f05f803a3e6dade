// The calibration tab's fields: the corners of each face (per camera), the colour references, and the
// problems robotd found, each shown next to the field it is about.

import {COLOUR_NAMES} from "./net.js";

const CORNER_NAMES = ["top left", "top right", "bottom right", "bottom left"];
const TYPICAL = {U: [235, 235, 230], R: [200, 30, 40], F: [30, 160, 70], D: [240, 210, 20], L: [245, 120, 10],
                 B: [30, 90, 210]};

function element(name, attributes = {}, text = "") {
  const el = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, value);
  if (text) el.textContent = text;
  return el;
}

const toHex = (rgb) => "#" + rgb.map((v) => Math.round(v).toString(16).padStart(2, "0")).join("");
const fromHex = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

/**
 * One face's fields: its camera and its four corners (x, y in pixels), labelled by the cube corner each
 * point is (``at``). `onChange()` hears every valid edit; an empty or non-numeric box is marked at once.
 */
export function faceFields(view, index, cameras, onChange) {
  const box = element("fieldset", {class: "face-fields", "data-index": String(index), "data-face": view.face});
  box.append(element("legend", {}, `Face ${view.face} (${COLOUR_NAMES[view.face] || "?"} centre)`));
  const error = element("p", {class: "field-error", id: `view-error-${index}`, hidden: ""});
  const camera = element("select", {"aria-label": `Camera of face ${view.face}`, "data-field": "image",
                                    "aria-describedby": error.id});
  for (const name of new Set([view.image, ...cameras])) camera.append(new Option(name, name, false, name === view.image));
  camera.addEventListener("change", () => {
    view.image = camera.value;
    onChange({rebuild: true});
  });
  const cameraLabel = element("label", {class: "camera-field"}, "Camera ");
  cameraLabel.append(camera);
  box.append(cameraLabel);
  view.corners.forEach((point, k) => box.append(cornerFields(view, index, k, error, onChange)));
  box.append(error);
  return box;
}

function cornerFields(view, index, k, error, onChange) {
  const group = element("div", {class: "corner-fields"});
  group.append(element("span", {class: "corner-name", title: `the ${CORNER_NAMES[k]} point of face ${view.face}`},
                       view.at[k]));
  ["x", "y"].forEach((axis, a) => {
    const input = element("input", {type: "number", step: "any", inputmode: "decimal", id: `corner-${index}-${k}-${axis}`,
                                    "data-field": "corners", "aria-describedby": error.id,
                                    "aria-label": `Face ${view.face}, corner ${view.at[k]}, ${axis} in pixels`});
    input.value = String(view.corners[k][a]);
    input.addEventListener("input", () => {
      const value = input.valueAsNumber;
      if (!Number.isFinite(value)) {
        showFieldError(error, `${view.at[k]} ${axis}: a number of pixels is needed`, [input]);
        return;
      }
      clearFieldError(error);
      view.corners[k][a] = value;
      onChange({index});
    });
    const label = element("label", {}, `${axis} `);
    label.append(input);
    group.append(label);
  });
  return group;
}

/** Move the boxes of one corner to a point dragged on the picture. */
export function setCorner(index, k, [x, y]) {
  for (const [axis, value] of [["x", x], ["y", y]]) {
    const input = document.getElementById(`corner-${index}-${k}-${axis}`);
    if (input) input.value = String(value);
  }
}

/** The colour reference of each face as a colour picker; `calibration` null offers to add a set. */
export function referenceFields(list, draft, editable, onChange) {
  const calibration = draft.calibration;
  if (!calibration) {
    const item = element("li", {}, "No colour references are set: the vision classifies colours without them.");
    if (editable) {
      const add = element("button", {type: "button", id: "references-add"}, "Add colour references");
      add.addEventListener("click", () => {
        draft.calibration = {size: draft.views ? draft.views.size : 3, palette: structuredClone(TYPICAL),
                             position_gains: null};
        onChange({rebuild: true});
      });
      item.append(" ", add);
    }
    list.replaceChildren(item);
    return;
  }
  list.replaceChildren(...Object.entries(calibration.palette).map(([face, rgb]) => {
    const item = element("li", {"data-face": face});
    const text = element("span", {class: "reference-text"});
    const describe = () => {
      text.textContent = `${face} (${COLOUR_NAMES[face] || "?"}): RGB ${calibration.palette[face].map(Math.round).join(", ")}`;
    };
    describe();
    if (!editable) {
      const swatch = element("span", {class: "swatch"});
      swatch.style.background = `rgb(${rgb.join(",")})`;
      item.append(swatch, text);
      return item;
    }
    const picker = element("input", {type: "color", id: `reference-${face}`, "aria-describedby": "references-error",
                                     "aria-label": `Reference colour of face ${face} (${COLOUR_NAMES[face] || "?"})`});
    picker.value = toHex(rgb);
    picker.addEventListener("input", () => {
      calibration.palette[face] = fromHex(picker.value);
      describe();
      onChange({});
    });
    item.append(picker, text);
    return item;
  }));
}

export function showFieldError(target, message, inputs = []) {
  target.textContent = message;
  target.hidden = false;
  for (const input of inputs) input.setAttribute("aria-invalid", "true");
}

export function clearFieldError(target) {
  target.textContent = "";
  target.hidden = true;
  const owner = target.closest("fieldset, section, .card") || document;
  for (const input of owner.querySelectorAll(`[aria-describedby="${target.id}"][aria-invalid]`)) {
    input.removeAttribute("aria-invalid");
  }
}

/** Where robotd's problem about `field` ("views.view.2.corners", "calibration.palette", ...) is shown. */
export function problemTarget(field) {
  const view = /^views\.view\.(\d+)(?:\.(\w+))?/.exec(field);
  if (view) {
    const target = document.getElementById(`view-error-${view[1]}`);
    const box = target ? target.closest("fieldset") : null;
    const inputs = box ? [...box.querySelectorAll(view[2] ? `[data-field="${view[2]}"]` : "input, select")] : [];
    if (target) return {target, inputs};
  }
  if (field === "views.inner") return {target: document.getElementById("inner-error"),
                                       inputs: [document.getElementById("views-inner")]};
  if (field.startsWith("calibration")) {
    return {target: document.getElementById("references-error"),
            inputs: [...document.querySelectorAll("#references input")]};
  }
  if (field.startsWith("views")) return {target: document.getElementById("views-error"), inputs: []};
  return {target: document.getElementById("calibration-result"), inputs: []};
}
