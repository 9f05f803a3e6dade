// The Rig card: what can be done between runs. Home, motors on/off and reconnect the link (whichever
// this rig's controller can do, as api/status lists them under rig_actions), and one jog button per
// move it accepts (api/status "jog"). Everything waits while a run goes or the page is offline.

import {api} from "./api.js";
import {duration} from "./format.js";

function byId(id) {
  return document.getElementById(id);
}

const FACE_TURN = /^([URFDLB])(['2]?)$/;

/** What a jog button does, in words (its title, and its accessible name after the command). */
export function describeJog(command) {
  const face = FACE_TURN.exec(command);
  if (face) {
    const how = {"": "a quarter turn clockwise", "'": "a quarter turn counter-clockwise", 2: "a half turn"}[face[2]];
    return `turn the ${face[1]} face ${how}`;
  }
  const op = /^(spin|turn)([+-])([12])$/.exec(command);
  if (op) {
    const what = op[1] === "spin" ? "the whole cube" : "the bottom layer";
    const way = op[2] === "+" ? "clockwise" : "counter-clockwise";
    return `turn ${what} ${op[3] === "1" ? "a quarter turn" : "a half turn"} ${way}, seen from below`;
  }
  return {flip: "tip the cube over", hold: "close the cover on the upper layers", release: "open the cover"}[command]
    || command;
}

// button id -> [rig action it needs, API path, body, what the message calls it]
const ACTIONS = {
  "rig-home": ["home", "api/rig/home", undefined, "Home"],
  "rig-motors-on": ["motors", "api/rig/motors", {enabled: true}, "Motors on"],
  "rig-motors-off": ["motors", "api/rig/motors", {enabled: false}, "Motors off"],
  "rig-reconnect": ["reconnect", "api/rig/reconnect", undefined, "Reconnect"],
  "rig-square": ["square", "api/rig/square", undefined, "Square faces"],
};

export class RigControls {
  /** `busy()`: a run is in progress; `onMessage(id, kind, text, options)`; `onDone()`: re-read the status. */
  constructor({busy, onMessage, onDone}) {
    Object.assign(this, {busy, onMessage, onDone});
    this.shownJog = "";
    this.pending = null;
    this.online = false;
    this.actions = [];
    this.jogCount = 0;
    for (const id of Object.keys(ACTIONS)) byId(id).addEventListener("click", () => this.act(id));
  }

  /** Take api/status: the jog commands, the rig actions and whether the motors are on. */
  show(status) {
    this.actions = status.rig_actions || [];
    this.showJog(status.jog || []);
    for (const [id, [needs]] of Object.entries(ACTIONS)) byId(id).hidden = !this.actions.includes(needs);
    const motors = status.motors_on;
    byId("rig-state").textContent = this.actions.includes("motors") && motors !== null && motors !== undefined
      ? `Motors: ${motors ? "on" : "off (the rig turns by hand)"}` : "";
    byId("rig-card").hidden = this.actions.length === 0 && this.jogCount === 0;
    this.update();
  }

  /** One button per command robotd accepts; rebuilt only when the list changes (keeps the focus). */
  showJog(commands) {
    const key = JSON.stringify(commands);
    if (key === this.shownJog) return;
    this.shownJog = key;
    this.jogCount = commands.length;
    const box = byId("jog-buttons");
    box.dataset.layout = commands.every((c) => FACE_TURN.test(c)) ? "faces" : "ops";
    box.replaceChildren(...commands.map((command) => this.jogButton(command)));
    byId("jog-box").hidden = commands.length === 0;
  }

  jogButton(command) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = command;
    button.dataset.command = command;
    button.title = describeJog(command);
    button.setAttribute("aria-label", `${command}: ${describeJog(command)}`);
    button.addEventListener("click", () => this.jog(command));
    return button;
  }

  setOnline(online) {
    this.online = online;
    this.update();
  }

  /** Disabled during a run and offline; while one action is under way the others stay (and ignore clicks). */
  update() {
    const blocked = this.busy() || !this.online;
    for (const button of byId("rig-card").querySelectorAll("button")) button.disabled = blocked;
    const waiting = String(this.pending !== null);
    byId("jog-buttons").setAttribute("aria-busy", waiting);
    byId("rig-actions").setAttribute("aria-busy", waiting);
  }

  async jog(command) {
    await this.once(command, async () => {
      const reply = await api("api/jog", {method: "POST", body: {command}});
      this.onMessage("jog", "info", `Jog ${command}: done in ${duration(reply.seconds)}.`, {autoHideMs: 4000});
    }, (error) => this.onMessage("jog", "error", `Jog ${command} failed: ${error.message}`));
  }

  async act(id) {
    const [, path, body, name] = ACTIONS[id];
    await this.once(name, async () => {
      const reply = await api(path, {method: "POST", body});
      const text = `${name}: ${reply.message} (${duration(reply.seconds)})`;
      byId("rig-result").textContent = text;
      this.onMessage("rig", "info", text, {autoHideMs: 6000});
    }, (error) => {
      byId("rig-result").textContent = `${name} failed: ${error.message}`;
      this.onMessage("rig", "error", `${name} failed: ${error.message}`);
    });
  }

  async once(what, call, failed) {
    if (this.pending !== null || this.busy() || !this.online) return;
    this.pending = what;
    this.update();
    try {
      await call();
    } catch (error) {
      failed(error);
    } finally {
      this.pending = null;
      this.update();
      this.onDone(); // the machine panel and the motors line show where the rig is now
    }
  }
}
