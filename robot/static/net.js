// The cube drawn as an unfolded net in SVG: U above, L F R B in a row, D below.
//
// A facelet string lists the faces U R F D L B, each face's stickers in
// reading order as drawn here (54 letters for a 3x3, 24 for a 2x2). Letters
// name the face whose colour the sticker shows. Each sticker <rect> carries
// data-face, data-index and data-letter so the drawing can be read back.

const SVG_NS = "http://www.w3.org/2000/svg";
export const FACE_ORDER = "URFDLB";
export const LOW_CONFIDENCE = 0.6;
const NET_CELL = {U: [1, 0], L: [0, 1], F: [1, 1], R: [2, 1], B: [3, 1], D: [1, 2]};
export const COLOUR_NAMES = {U: "white", R: "red", F: "green", D: "yellow", L: "orange", B: "blue"};
const STICKER = 10; // SVG units per sticker
const FACE_GAP = 2;

/** 3 for a 54-letter state, 2 for a 24-letter one, else null. */
export function puzzleSize(state) {
  if (!state) return null;
  return state.length === 54 ? 3 : state.length === 24 ? 2 : null;
}

/** True when every face shows one colour. */
export function isSolved(state) {
  const n = puzzleSize(state);
  if (!n) return false;
  const per = n * n;
  for (let face = 0; face < 6; face++) {
    const stickers = state.slice(face * per, (face + 1) * per);
    if ([...stickers].some((letter) => letter !== stickers[0])) return false;
  }
  return true;
}

function svgElement(name, attributes = {}) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  return element;
}

/** A net drawn into an <svg>; `show` recolours it in place, rebuilding only when the size changes. */
export class CubeNet {
  constructor(svg) {
    this.svg = svg;
    this.size = null;
    this.stickers = [];
  }

  build(n) {
    this.svg.replaceChildren();
    const faceSpan = n * STICKER + FACE_GAP;
    this.svg.setAttribute("viewBox", `${-FACE_GAP / 2} ${-FACE_GAP / 2} ${4 * faceSpan} ${3 * faceSpan}`);
    this.svg.dataset.size = String(n);
    this.stickers = [];
    for (const face of FACE_ORDER) {
      const [col, row] = NET_CELL[face];
      const group = svgElement("g", {class: "face", "data-face": face});
      for (let i = 0; i < n * n; i++) {
        const x = col * faceSpan + (i % n) * STICKER;
        const y = row * faceSpan + Math.floor(i / n) * STICKER;
        const cell = svgElement("g", {class: "cell"});
        const rect = svgElement("rect", {
          class: "sticker", x: x + 0.5, y: y + 0.5, width: STICKER - 1, height: STICKER - 1, rx: 1.4,
          "data-face": face, "data-index": i,
        });
        const title = svgElement("title");
        const mark = svgElement("text", {class: "doubt-mark", x: x + STICKER / 2, y: y + STICKER / 2 + 0.2,
                                         "text-anchor": "middle", "dominant-baseline": "central"});
        mark.textContent = "?";
        rect.append(title);
        cell.append(rect, mark);
        group.append(cell);
        this.stickers.push({cell, rect, title, face, index: i});
      }
      this.svg.append(group);
    }
    this.size = n;
  }

  /**
   * Draw `state` (null: an empty cube of size `emptySize`). `confidence` (one value per sticker, or null)
   * marks stickers below LOW_CONFIDENCE. Returns the number of doubtful stickers.
   */
  show(state, confidence = null, emptySize = 3) {
    if (!puzzleSize(state)) state = null; // not a 2x2 or 3x3 facelet string: draw an empty cube
    const n = puzzleSize(state) || emptySize;
    if (n !== this.size) this.build(n);
    let doubtful = 0;
    this.stickers.forEach((sticker, position) => {
      const letter = state ? state[position] : "";
      const known = letter in COLOUR_NAMES;
      const score = confidence ? confidence[position] : undefined;
      const doubt = typeof score === "number" && score < LOW_CONFIDENCE;
      doubtful += doubt ? 1 : 0;
      sticker.rect.dataset.letter = letter;
      sticker.rect.setAttribute("class", `sticker ${known ? "c-" + letter : letter ? "c-other" : "c-empty"}`);
      sticker.cell.classList.toggle("doubtful", doubt);
      if (doubt) sticker.rect.dataset.confidence = score.toFixed(2);
      else delete sticker.rect.dataset.confidence;
      const colour = known ? COLOUR_NAMES[letter] : letter ? `colour ${letter}` : "unknown";
      sticker.title.textContent = `${sticker.face}${sticker.index + 1}: ${colour}` +
        (typeof score === "number" ? `, confidence ${score.toFixed(2)}` : "");
    });
    const solved = isSolved(state);
    this.svg.dataset.state = state || "";
    this.svg.dataset.solved = String(solved);
    this.svg.dataset.doubtful = String(doubtful);
    return doubtful;
  }
}
