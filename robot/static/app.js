// robotd dashboard: wires the live event stream, the run view, history, calibration and the controls.

import {api, forgetKey, lastClockSample, setKeyPrompt} from "./api.js";
import {CalibrationView} from "./calibration.js";
import {CameraView} from "./cameras.js";
import {BUSY_PHASES, TERMINAL_PHASES} from "./format.js";
import {HistoryView} from "./history.js";
import {RigControls} from "./rig.js";
import {RunView} from "./runview.js";
import {DaemonLog} from "./daemon_log.js";
import {HealthCard} from "./health.js";
import {machineRows, showRows} from "./machine.js";
import {LiveSocket} from "./socket.js";

const STATUS_POLL_MS = 10000;
const STATUS_TIMEOUT_MS = 8000; // a robotd that accepts connections but does not answer counts as lost
const TICK_MS = 250;
const LIVE_STATUS_MS = 1000; // the Machine card's refresh during a run
const HEALTH_MS = 5000;
const LOG_MS = 2000;
const RIG_ACTIONS = ["home", "motors on", "motors off", "reconnect", "square faces"]; // what api/stop calls them under "jogging"

const byId = (id) => document.getElementById(id);

const TABS = ["run", "history", "calibration"];

const page = {
  status: null, tab: "run", lostConnection: false, online: false, lastHeard: null, skew: null,
  statusTimer: null, statusAt: 0, // the Machine card's refresh during a run
};
const loaded = new Set(); // tabs shown at least once (their data is loaded on first view)

// ---- messages (errors and notices, announced by the aria-live region) ----

const messageTimers = new Map();

function showMessage(id, kind, text, {autoHideMs = 0} = {}) {
  const box = byId("messages");
  let item = box.querySelector(`[data-id="${CSS.escape(id)}"]`);
  if (!item) {
    item = document.createElement("p");
    item.dataset.id = id;
    const span = document.createElement("span");
    const close = document.createElement("button");
    close.type = "button";
    close.className = "dismiss";
    close.textContent = "×";
    close.setAttribute("aria-label", "Dismiss message");
    close.addEventListener("click", () => clearMessage(id));
    item.append(span, close);
    box.append(item);
  }
  item.className = `message ${kind}`;
  item.firstElementChild.textContent = text;
  clearTimeout(messageTimers.get(id));
  if (autoHideMs) messageTimers.set(id, setTimeout(() => clearMessage(id), autoHideMs));
}

function clearMessage(id) {
  const item = byId("messages").querySelector(`[data-id="${CSS.escape(id)}"]`);
  if (item) item.remove();
}

// ---- the server's clock (phones and an offline Pi rarely agree on the time) ----

function serverNow() {
  const local = Date.now() / 1000;
  if (page.skew !== null) return local - page.skew;
  const sample = lastClockSample();
  return sample ? local - (sample.local - sample.server) : local;
}

function noteServerTime(t) {
  const sample = Date.now() / 1000 - t; // clock difference plus delivery delay: the smallest is the best
  page.skew = page.skew === null ? sample : Math.min(page.skew, sample);
}

// ---- the API key prompt ----

function askForKey(reason) {
  const dialog = byId("key-dialog");
  const input = byId("key-input");
  byId("key-reason").textContent = reason;
  input.value = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "save" && input.value.trim() ? input.value.trim() : null);
    }, {once: true});
    dialog.returnValue = "";
    dialog.showModal();
    input.focus();
  });
}

// ---- views ----

const runView = new RunView({now: serverNow, onPhase, onMessage: showMessage});
const historyView = new HistoryView({onError: (text) => showMessage("history", "error", text)});
const cameraView = new CameraView();
const cameras = () => (page.status ? page.status.cameras : []);
const calibrationView = new CalibrationView({
  cameraNames: () => cameras().filter((c) => c.open).map((c) => c.name),
  allCameras: () => cameras().map((c) => c.name),
  onMessage: showMessage,
});
const healthCard = new HealthCard(byId("health"), byId("health-note"));
const daemonLog = new DaemonLog(byId("daemon-log"), byId("daemon-log-follow"));
const runTabShown = () => document.visibilityState === "visible" && page.tab === "run" && page.online;
const rig = new RigControls({busy: () => runView.busy, onMessage: showMessage, onDone: () => pollStatus()});

function onPhase(phase, event, live) {
  const busy = runView.busy;
  byId("start").disabled = busy || !page.online;
  rig.update();
  byId("stop").classList.toggle("armed", busy);
  if (!live) return;
  if (phase === "scanning") {
    for (const item of byId("messages").querySelectorAll('[data-id^="run-"]')) item.remove();
  }
  if (phase === "scanning" || TERMINAL_PHASES.includes(phase)) historyView.reload();
}

function showMachine(status) {
  const list = byId("machine");
  showRows(list, machineRows(status));
  if (status.auth_required) {
    const forget = document.createElement("button");
    forget.type = "button";
    forget.textContent = "Forget saved API key";
    forget.addEventListener("click", () => {
      forgetKey();
      showMessage("key", "info", "The saved API key was removed from this browser.", {autoHideMs: 4000});
    });
    const div = document.createElement("div");
    div.append(forget);
    list.append(div);
  }
}

/** During a run the Machine card follows the moves: a fresh status at most once a second. */
function statusSoon() {
  if (page.statusTimer) return;
  const wait = Math.max(0, LIVE_STATUS_MS - (Date.now() - (page.statusAt || 0)));
  page.statusTimer = setTimeout(() => {
    page.statusTimer = null;
    page.statusAt = Date.now();
    pollStatus();
  }, wait);
}

/** Camera streams run only while their tab is shown and the page is visible. */
function cameraStreams(restart = false) {
  const visible = document.visibilityState === "visible";
  cameraView.streams(visible && page.tab === "run", restart);
  calibrationView.streams(visible && page.tab === "calibration");
}

function applyStatus(status) {
  page.status = status;
  byId("sim-options").hidden = !status.simulation; // a virtual cube: --sim, or --rig-only
  rig.show(status);
  showMachine(status);
  if (cameraView.show(status.cameras || []) && loaded.has("calibration")) {
    calibrationView.load(); // its frames depend on which cameras are open
  }
}

async function pollStatus() {
  // while the live connection is down the banner says so; the reconnect brings a fresh snapshot
  if (document.visibilityState !== "visible" || !page.online) return;
  try {
    applyStatus(await api("api/status", {timeoutMs: STATUS_TIMEOUT_MS}));
    page.lastHeard = Date.now();
    clearMessage("status");
  } catch (error) {
    if (error.status === 0) socket.drop(`robotd does not answer (${error.message})`);
    else showMessage("status", "error", `Could not read robotd's status: ${error.message}`);
  }
}

// ---- controls ----

function runOptions() {
  if (!page.status || !page.status.simulation) return {};
  const options = {};
  const puzzle = byId("puzzle").value;
  if (puzzle) options.puzzle = Number(puzzle);
  const seed = byId("seed").value.trim();
  if (seed) {
    if (!/^\d+$/.test(seed)) throw new Error("the seed must be a whole number, 0 or more");
    options.seed = Number(seed);
  }
  const scramble = byId("scramble").value.trim();
  if (scramble) options.scramble = scramble;
  return options;
}

async function startRun(event) {
  event.preventDefault();
  const button = byId("start");
  let options;
  try {
    options = runOptions();
  } catch (error) {
    showMessage("start", "error", `Cannot start: ${error.message}`);
    return;
  }
  button.disabled = true;
  try {
    const reply = await api("api/runs", {method: "POST", body: options});
    clearMessage("start");
    byId("run-label").textContent = `run ${reply.run_id}`;
  } catch (error) {
    showMessage("start", "error", `Could not start a run: ${error.message}`);
  } finally {
    button.disabled = runView.busy || !page.online;
  }
}

async function stopRobot() {
  try {
    const reply = await api("api/stop", {method: "POST"});
    let text = BUSY_PHASES.includes(reply.phase) ? "Stop sent: the run is stopping." : "Stop sent (nothing was running).";
    if (reply.jogging) text = `Stop sent: ${RIG_ACTIONS.includes(reply.jogging) ? "" : "the jog "}${reply.jogging} is stopping.`;
    showMessage("stop", "info", text, {autoHideMs: 4000});
  } catch (error) {
    showMessage("stop", "error", `Stop failed: ${error.message}`);
  }
}

// ---- tabs ----

function selectTab(name, focus = false) {
  page.tab = name;
  for (const tab of TABS) {
    const button = byId(`tab-${tab}`);
    button.setAttribute("aria-selected", String(tab === name));
    button.tabIndex = tab === name ? 0 : -1;
    byId(`panel-${tab}`).hidden = tab !== name;
  }
  if (focus) byId(`tab-${name}`).focus();
  if (name === "history" && !loaded.has(name)) historyView.reload();
  if (name === "calibration" && !loaded.has(name)) calibrationView.load();
  loaded.add(name);
  cameraStreams();
  if (location.hash !== `#${name}`) history.replaceState(null, "", name === "run" ? location.pathname + location.search : `#${name}`);
}

function setUpTabs() {
  for (const tab of TABS) {
    const button = byId(`tab-${tab}`);
    button.addEventListener("click", () => selectTab(tab));
    button.addEventListener("keydown", (event) => {
      const step = {ArrowRight: 1, ArrowLeft: -1}[event.key];
      if (!step) return;
      event.preventDefault();
      selectTab(TABS[(TABS.indexOf(tab) + step + TABS.length) % TABS.length], true);
    });
  }
  const fromHash = location.hash.slice(1);
  selectTab(TABS.includes(fromHash) ? fromHash : "run");
}

// ---- the live connection ----

function clockTime(ms) {
  return new Date(ms).toLocaleTimeString(undefined, {hour: "2-digit", minute: "2-digit", second: "2-digit"});
}

/** Live or not: offline, the banner says since when the page shows old news, and nothing can be started. */
function setOnline(online) {
  page.online = online;
  document.body.dataset.connection = online ? "live" : "lost";
  byId("start").disabled = runView.busy || !online;
  rig.setOnline(online);
  calibrationView.setOnline(online);
}

function showConnection(state, detail) {
  const box = byId("connection");
  const text = byId("connection-text");
  box.dataset.state = state;
  if (state === "open") {
    text.textContent = "live";
    page.lastHeard = Date.now();
  } else if (state === "connecting") {
    text.textContent = "connecting…";
  } else {
    text.textContent = `offline, retry in ${Math.ceil(detail.seconds)} s`;
    page.lostConnection = true;
  }
  const lost = state === "waiting" || (state === "connecting" && page.lostConnection);
  setOnline(state === "open");
  byId("offline").hidden = !lost;
  if (state === "waiting") {
    const since = page.lastHeard ? ` The page shows the state of ${clockTime(page.lastHeard)}, not the live one.` : "";
    byId("offline-text").textContent = `Not connected to robotd (${detail.why}).${since} Starting runs and ` +
      `moving the rig wait for the connection; Stop is still sent. Trying again in ${detail.seconds.toFixed(0)} s.`;
  }
}

const socket = new LiveSocket({
  onState: showConnection,
  onSnapshot(message) {
    page.skew = null;
    if (typeof message.t === "number") noteServerTime(message.t); // if the server stamps its snapshots
    applyStatus(message.status);
    runView.fromSnapshot(message.status, message.events || []);
    healthCard.refresh();
    daemonLog.refresh();
    if (page.lostConnection) {
      page.lostConnection = false;
      cameraStreams(true);
      if (loaded.has("history")) historyView.reload();
    }
  },
  onEvent(event) {
    noteServerTime(event.t);
    page.lastHeard = Date.now();
    if (event.run_id === null || event.run_id === undefined) { // a jog or rig action (maybe from another page)
      if (event.kind === "jog" || event.kind === "rig") pollStatus();
      return;
    }
    runView.apply(event, true);
    if (event.kind === "move" || event.kind === "phase") statusSoon();
  },
});

// ---- start ----

setKeyPrompt(askForKey);
setUpTabs();
byId("start-form").addEventListener("submit", startRun);
byId("stop").addEventListener("click", stopRobot);
byId("offline-retry").addEventListener("click", () => socket.now());
setOnline(false);
document.addEventListener("visibilitychange", () => {
  cameraStreams();
  if (document.visibilityState === "visible") socket.now();
});
setInterval(() => {
  if (runView.busy) runView.tick();
}, TICK_MS);
setInterval(pollStatus, STATUS_POLL_MS);
setInterval(() => runTabShown() && healthCard.refresh(), HEALTH_MS);
setInterval(() => runTabShown() && daemonLog.refresh(), LOG_MS);
socket.start();
