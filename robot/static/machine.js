// The Machine card: what robotd drives and how its link is doing, in words (api/status), kept live during a run.

import {duration} from "./format.js";

const MODES = {sim: "simulation", "rig-only": "motors only: the real controller, a virtual cube and camera"};
// counters of the links (robotd, Marlin, grbl, Maestro) that mean a line or frame was sent again, or went wrong
const RESEND = /resend|retransmission|retr(y|ies)/;
const TROUBLE = /error|nak|runaway|stray|disagreement|implausible|decode/;

/** A value as words: booleans as yes/no, nested tables as "name: value" pairs. */
function plainValue(value) {
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (value === null || value === undefined) return "–";
  if (Array.isArray(value)) return value.map(plainValue).join(", ");
  if (typeof value === "object") {
    return Object.entries(value).map(([k, v]) => `${k.replaceAll("_", " ")}: ${plainValue(v)}`).join(", ");
  }
  return String(value);
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The board that answered (api/status "board"): its firmware and version, and how it is stopped. */
function boardRows(board) {
  if (!board) return [];
  const rows = [];
  const name = [board.firmware, board.version].filter((part) => part !== undefined && part !== null);
  // a version the firmware's name already carries ("Marlin 2.1.2") is not repeated
  if (name.length === 2 && String(name[0]).includes(String(name[1]))) name.pop();
  if (name.length) rows.push(["Board", name.map(plainValue).join(" ")]);
  if (board.stop_method !== undefined) {
    const latency = board.stop_latency_ms;
    rows.push(["Stop", plainValue(board.stop_method) +
      (latency === undefined || latency === null ? "" : `, about ${plainValue(latency)} ms`)]);
  }
  return rows;
}

/** The last fault of the link in words: its message, and its code when it has one. */
function faultText(fault) {
  if (!fault) return "none";
  if (typeof fault !== "object") return String(fault);
  const code = fault.code === undefined || fault.code === null ? "" : ` (code ${fault.code})`;
  return `${fault.message || fault.type || "a fault"}${code}`;
}

/** Resends and errors from the link's counters, e.g. "2 resends, no errors"; null without counters. */
function troubleText(counters) {
  if (!counters || typeof counters !== "object") return null;
  let resends = 0, errors = 0;
  for (const [name, count] of Object.entries(counters)) {
    if (typeof count !== "number") continue;
    if (RESEND.test(name)) resends += count;
    else if (TROUBLE.test(name)) errors += count;
  }
  return `${resends ? plural(resends, "resend") : "no resends"}, ${errors ? plural(errors, "error") : "no errors"}`;
}

/** The serial link (api/status "link"), whatever the controller: port, connection, trouble, fault. */
function linkRows(link) {
  if (!link || !Object.keys(link).length) return [];
  const rows = [];
  if (link.port) rows.push(["Port", link.port]);
  if (link.connected !== undefined) {
    let state = link.connected ? "connected" : "not connected";
    if (link.connected && link.healthy === false) state += ", with a fault";
    if (link.connected && typeof link.last_heard_s === "number") state += `; heard from ${duration(link.last_heard_s)} ago`;
    rows.push(["Link", state, link.connected && link.healthy !== false ? "" : "bad"]);
  }
  if (link.halted) rows.push(["Board halted", "yes: Reconnect link to go on", "bad"]);
  const counters = link.counters || {};
  const confirmed = counters.motions_done ?? counters.moves_done;
  // motor commands, as the Solution card counts them (a command may turn two faces: not the moves' count)
  if (typeof confirmed === "number") rows.push(["Confirmed by the board", `${plural(confirmed, "motor command")} done`]);
  const trouble = troubleText(link.counters);
  if (trouble) rows.push(["Resends and errors", trouble]);
  if (typeof link.in_flight === "number") {
    const waiting = (link.backlog || 0) + (link.on_device || 0);
    rows.push(["Commands", `${link.in_flight} sent and not yet confirmed, ${waiting} waiting`]);
  }
  rows.push(["Last fault", faultText(link.fault), link.fault ? "bad" : ""]);
  return rows;
}

/** Under robotd --rig-only: what the virtual cube follows, and what the controller did otherwise. */
function readBackRows(simulation) {
  const readBack = simulation && simulation.read_back;
  if (!readBack) return [];
  const rows = [["Cube follows", readBack.follows]];
  for (const difference of readBack.differences || []) rows.push(["Controller differs", difference]);
  return rows;
}

function motorsText(on) {
  if (on === true) return "on";
  if (on === false) return "off (the faces turn by hand)";
  return "unknown";
}

/** The card's rows: [name, value, class] in the order an operator reads them. */
export function machineRows(status) {
  const rows = [["Mode", MODES[status.mode] || "real rig"]];
  if (status.rig) {
    rows.push(["Rig", status.rig.kind || "–"]);
    const timing = status.rig.timing || {};
    if (timing.quarter_turn_s !== undefined) {
      rows.push(["Turn time", `${duration(timing.quarter_turn_s)} quarter, ${duration(timing.half_turn_s)} half`]);
    }
  }
  rows.push(...boardRows(status.board), ...linkRows(status.link));
  if (status.motors_on !== undefined) rows.push(["Motors", motorsText(status.motors_on)]);
  rows.push(...readBackRows(status.simulation));
  rows.push(["Cameras", status.camera_ok ? "ok" : "a camera has a problem", status.camera_ok ? "" : "bad"]);
  rows.push(["API key", status.auth_required ? "needed to start runs, move the rig or change calibration"
    : "not needed (local only)"]);
  return rows;
}

/** Fill a <dl> with rows of [name, value, class]. */
export function showRows(list, rows) {
  list.replaceChildren(...rows.map(([name, value, className]) => {
    const div = document.createElement("div");
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    dt.textContent = name;
    dd.textContent = value;
    if (className) dd.className = className;
    div.append(dt, dd);
    return div;
  }));
}
