"""Checks run inside the dashboard page by the browser tests: text contrast (WCAG 2.x) and overlaps.

``CONTRAST`` is evaluated in the page. For every element with text of its own that is rendered (not
hidden, not a disabled control: WCAG exempts inactive controls), it takes the computed text colour,
composites it (with the opacity of the element and its ancestors) over the background actually behind
it (the first opaque background up the tree, with the translucent ones above it laid over), and
computes the contrast ratio. Placeholders are checked the same way, with their ``::placeholder``
colour. CSS transitions running at the time (the current-move chip's) are seeked to several points
and measured at each, so a colour pair that only fails half-way through an animation fails too.
"""

from __future__ import annotations

import os
import shutil


def chromium_path() -> str | None:
    """The Chromium the browser tests and the screenshot bench drive: $ROBOTD_CHROMIUM, else the system one."""
    for candidate in (
        os.environ.get("ROBOTD_CHROMIUM"),
        shutil.which("chromium"),
        "/usr/bin/chromium",
        shutil.which("chromium-browser"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


CONTRAST = r"""() => {
  const parse = (text) => {
    const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(text) ||
              /color\(srgb ([\d.]+) ([\d.]+) ([\d.]+)(?: \/ ([\d.]+))?\)/.exec(text);
    if (!m) return null;
    const scale = text.startsWith("color(") ? 255 : 1;
    return [Number(m[1]) * scale, Number(m[2]) * scale, Number(m[3]) * scale, m[4] === undefined ? 1 : Number(m[4])];
  };
  const over = (top, bottom) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1);
  };
  const luminance = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const hex = (c) => "#" + c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, "0")).join("");
  const background = (element) => {
    const layers = [];
    for (let el = element; el; el = el.parentElement) {
      const style = getComputedStyle(el);
      const colour = parse(style.backgroundColor);
      if (colour && colour[3] > 0) layers.push(colour);
      if (colour && colour[3] >= 1) break;
      if (el === document.documentElement && !(colour && colour[3] >= 1)) layers.push([255, 255, 255, 1]);
    }
    if (!layers.length) layers.push([255, 255, 255, 1]);
    return layers.reverse().reduce((below, layer) => over(layer, below));
  };
  const opacity = (element) => {
    let product = 1;
    for (let el = element; el; el = el.parentElement) product *= Number(getComputedStyle(el).opacity);
    return product;
  };
  const inactive = (element) => element.closest(":disabled, [aria-disabled='true'], [inert]") !== null;
  const shown = (element) => {
    if (!element.getClientRects().length) return false;
    const style = getComputedStyle(element);
    if (style.visibility !== "visible") return false;
    const box = element.getBoundingClientRect();
    return box.width > 1 && box.height > 1 && !element.closest(".visually-hidden");
  };
  const large = (style) => {
    const size = parseFloat(style.fontSize);
    return size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
  };
  const ownText = (element) => [...element.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  const describe = (element) => {
    const id = element.id ? `#${element.id}` : "";
    const named = typeof element.className === "string" && element.className;
    const cls = named ? "." + element.className.trim().split(/\s+/).join(".") : "";
    return `${element.tagName.toLowerCase()}${id}${cls}`;
  };
  const measure = (found) => {
    for (const element of document.querySelectorAll("body *")) {
      if (element instanceof SVGElement || inactive(element) || !shown(element)) continue;
      const style = getComputedStyle(element);
      const bg = background(element);
      const checks = [];
      if (ownText(element)) checks.push(["text", style.color, element.textContent.trim().slice(0, 40)]);
      if ((element.placeholder || "") && !element.value) {
        checks.push(["placeholder", getComputedStyle(element, "::placeholder").color, element.placeholder]);
      }
      for (const [what, colour, text] of checks) {
        const fg = parse(colour);
        if (!fg) continue;
        const alpha = fg[3] * opacity(element);
        const value = ratio(over([fg[0], fg[1], fg[2], alpha], bg), bg);
        const needed = large(style) ? 3 : 4.5;
        const key = `${describe(element)} ${what}`;
        const seen = found.get(key);
        if (!seen || value < seen.ratio) {
          found.set(key, {element: key, text, ratio: Math.round(value * 100) / 100, needed,
                          fg: hex(over([fg[0], fg[1], fg[2], alpha], bg)), bg: hex(bg)});
        }
      }
    }
  };
  const found = new Map();
  const running = document.getAnimations().filter((a) => a.playState === "running");
  if (running.length) {
    for (const animation of running) animation.pause();
    for (const share of [0, 0.25, 0.5, 0.75, 1]) {
      for (const animation of running) {
        const end = animation.effect.getComputedTiming().endTime;
        animation.currentTime = Number.isFinite(end) ? end * share : 0;
      }
      measure(found);
    }
    for (const animation of running) animation.finish();
  } else {
    measure(found);
  }
  const all = [...found.values()].sort((a, b) => a.ratio - b.ratio);
  return {checked: all.length, lowest: all[0] || null, failing: all.filter((c) => c.ratio < c.needed)};
}"""

OVERLAPS = r"""(selectors) => {
  const boxes = selectors.map((s) => [s, document.querySelector(s)])
    .filter(([, el]) => el && el.getClientRects().length)
    .map(([s, el]) => [s, el.getBoundingClientRect()]);
  const hits = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, p] = boxes[i], [b, q] = boxes[j];
      if (p.left < q.right - 0.5 && q.left < p.right - 0.5 && p.top < q.bottom - 0.5 && q.top < p.bottom - 0.5) {
        hits.push([a, b]);
      }
    }
  }
  return hits;
}"""


def drag_by(page, handle, dx: float, dy: float) -> None:
    """Drag ``handle`` (a locator) by ``dx``, ``dy`` CSS pixels with the mouse, in a few steps."""
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y + dy, steps=4)
    page.mouse.up()
