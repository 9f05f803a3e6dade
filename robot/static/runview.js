// The current run as the page shows it: phase, cube net, solution, progress, step times, event log.
//
// Built from a snapshot (status + the run's events so far) and then kept up
// to date one event at a time; replaying the snapshot's events through the
// same `apply` is what makes a reconnect rebuild the view exactly.

import {
  BUSY_PHASES, STEPS, TERMINAL_PHASES, candidateText, describeEvent, duration, retakeText, stepTimes, tabTitle,
} from "./format.js";
import {CubeNet, isSolved, puzzleSize} from "./net.js";

const LOG_LIMIT = 300;

function byId(id) {
  return document.getElementById(id);
}

/** The fields of a `solution_update` event the summary shows, those that are there (read defensively). */
function spliced(d) {
  const fields = {};
  for (const key of ["moves", "htm", "qtm", "estimated_s"]) if (d[key] !== undefined) fields[key] = d[key];
  fields.segments = Array.isArray(d.segments) ? d.segments : [];
  fields.splices = Array.isArray(d.splices) ? d.splices : [];
  return fields;
}

/** After a splice: which solver found which moves, and that the commands listed are the first plan's. */
function splicedText(s) {
  if (!s.splices || !s.splices.length) return "";
  const parts = (s.segments || []).map((g) => `${g.solver ?? "?"} ${g.htm ?? "?"} moves`).join(", then ");
  return `. ${s.splices.length} quicker ending${s.splices.length === 1 ? "" : "s"} spliced in while turning` +
    (parts ? ` (${parts})` : "") + "; the motor commands below are the first plan's";
}

export class RunView {
  /** `now()` gives the server's clock in unix seconds; `onPhase(phase, event, live)` and `onMessage(...)` notify the app. */
  constructor({now, onPhase, onMessage}) {
    Object.assign(this, {now, onPhase, onMessage});
    this.net = new CubeNet(byId("net"));
    this.scanNet = new CubeNet(byId("scan-net"));
    this.el = {
      phase: byId("phase"), runLabel: byId("run-label"), netCaption: byId("net-caption"),
      scanBox: byId("scan-box"), scanCaption: byId("scan-caption"), scanCheck: byId("scan-check"),
      scanCheckText: byId("scan-check-text"), overlay: byId("scan-overlay"), overlayLink: byId("scan-overlay-link"),
      bar: byId("progress-bar"), currentMove: byId("current-move"),
      scanNotes: byId("scan-notes"), scanNotesList: byId("scan-notes-list"),
      progressText: byId("progress-text"), elapsed: byId("elapsed"), remaining: byId("remaining"),
      steps: byId("steps"), summary: byId("solution-summary"), moves: byId("moves"), log: byId("log"),
    };
    this.el.overlay.addEventListener("error", () => this.overlayGone());
    this.reset(null, null);
  }

  reset(runId, startedAt) {
    Object.assign(this, {
      runId, startedAt, endedAt: null, phase: "idle", events: [], scan: null, scanCheck: null, solution: null,
      doneIndex: -1, doneMoves: 0, totalMoves: 0, state: null, executingSince: null, lastMoveAt: null,
    });
    this.el.moves.replaceChildren();
    this.el.log.replaceChildren();
    this.renderAll();
  }

  get busy() {
    return BUSY_PHASES.includes(this.phase);
  }

  /** Rebuild everything from a WebSocket snapshot. */
  fromSnapshot(status, events) {
    const progress = status.progress || {};
    this.reset(status.run_id ?? null, progress.started_at ?? null);
    for (const event of events) this.apply(event, false);
    this.phase = status.phase;
    if (!this.state && progress.state) this.state = progress.state;
    if (progress.total_moves !== undefined && !this.solution) {
      this.totalMoves = progress.total_moves;
      this.doneMoves = progress.done_moves || 0;
    }
    this.renderAll();
    this.onPhase(this.phase, null, false);
  }

  /** Take one event into the view; `live` is false while replaying a snapshot. */
  apply(event, live = true) {
    const d = event.data || {};
    if (event.kind === "phase" && d.phase === "scanning") this.reset(event.run_id, event.t);
    if (event.run_id !== null && event.run_id !== undefined) this.runId = event.run_id;
    this.events.push(event);
    switch (event.kind) {
      case "phase":
        this.phase = d.phase;
        if (d.phase === "executing") this.executingSince = event.t;
        if (TERMINAL_PHASES.includes(d.phase)) this.endedAt = event.t;
        break;
      case "scan":
        this.scan = {state: d.state, confidence: d.confidence || [], warnings: d.warnings || [],
                     retakes: d.retakes || []};
        this.state = d.state;
        this.scanCheck = d.doubtful && d.doubtful.length ? {scanId: d.scan_id, doubtful: d.doubtful, refused: false} : null;
        break;
      case "scan_failed":
        this.scanCheck = d.scan_id || (d.stickers && d.stickers.length)
          ? {scanId: d.scan_id, doubtful: d.stickers || [], refused: true, attempt: d.attempt, kept: d.kept} : null;
        break;
      case "solution":
        this.solution = d;
        this.totalMoves = d.htm;
        this.doneMoves = 0;
        this.doneIndex = -1;
        this.renderMoveList();
        break;
      case "solution_update": // a quicker ending spliced in while the robot turns: the new whole solution
        if (this.solution) this.solution = {...this.solution, ...spliced(d)};
        if (Number.isFinite(d.total_moves)) this.totalMoves = d.total_moves;
        break;
      case "move":
        this.doneIndex = d.index;
        this.doneMoves = d.done_moves;
        this.totalMoves = d.total_moves;
        this.state = d.state;
        this.lastMoveAt = event.t;
        break;
      case "verified":
        this.state = d.state;
        break;
      case "error":
        this.onMessage(`run-${event.run_id}`, "error", `Run ${event.run_id} failed: ${d.message}`);
        break;
      case "stopped":
        this.onMessage(`run-${event.run_id}`, "info", `Run ${event.run_id} stopped: ${d.message}`);
        break;
      default:
        break;
    }
    if (event.kind !== "move") this.log(event);
    if (live || event.kind === "phase") this.renderAll();
    if (event.kind === "phase") this.onPhase(this.phase, event, live);
  }

  log(event) {
    const item = document.createElement("li");
    item.dataset.kind = event.kind;
    const time = document.createElement("span");
    time.className = "log-time";
    time.textContent = this.startedAt ? `+${(event.t - this.startedAt).toFixed(2)} s` : "";
    const text = document.createElement("span");
    text.textContent = describeEvent(event);
    item.append(time, text);
    this.el.log.append(item);
    while (this.el.log.childElementCount > LOG_LIMIT) this.el.log.firstElementChild.remove();
  }

  renderAll() {
    this.renderPhase();
    this.renderNets();
    this.renderScanCheck();
    this.renderScanNotes();
    this.renderSolution();
    this.renderProgress();
    this.tick();
  }

  renderPhase() {
    this.el.phase.textContent = this.phase;
    this.el.phase.dataset.phase = this.phase;
    this.el.runLabel.textContent = this.runId ? `run ${this.runId}` : "";
    document.body.dataset.phase = this.phase;
  }

  renderNets() {
    const scanned = this.scan ? this.scan.state : null;
    const unchanged = scanned !== null && this.state === scanned;
    const doubtful = this.net.show(this.state, unchanged ? this.scan.confidence : null);
    const n = puzzleSize(this.state);
    let caption = "No cube scanned yet.";
    if (this.state) {
      const solved = isSolved(this.state);
      caption = `${n}x${n} cube, ${solved ? "solved" : "not solved"}`;
      if (this.solution && this.totalMoves) caption += ` — ${this.doneMoves} of ${this.totalMoves} moves done`;
      if (doubtful) caption += ` — ${doubtful} sticker${doubtful === 1 ? "" : "s"} read with low confidence (marked ?)`;
    }
    this.el.netCaption.textContent = caption;
    this.net.svg.setAttribute("aria-label", `Cube net: ${caption}`);

    this.el.scanBox.hidden = !scanned || unchanged;
    if (scanned && !unchanged) {
      const doubtfulAtScan = this.scanNet.show(scanned, this.scan.confidence);
      this.el.scanCaption.textContent = doubtfulAtScan
        ? `${doubtfulAtScan} sticker${doubtfulAtScan === 1 ? "" : "s"} read with low confidence (marked ?)`
        : "All stickers read with good confidence.";
    }
  }

  /** A scan in doubt or refused: the stickers by name, where a refused one was kept, and its overlay picture. */
  renderScanCheck() {
    const check = this.scanCheck;
    this.el.scanCheck.hidden = !check;
    if (!check) return;
    const names = check.doubtful.length ? check.doubtful.join(", ") : "none named";
    let text = check.refused
      ? `Scan attempt ${check.attempt} was refused. Stickers in doubt: ${names}.`
      : `The scan went through, but these stickers were read with low confidence: ${names}.`;
    if (check.kept) text += ` The refused scan (frames, overlay, scan.json) is kept in ${check.kept} for a bug report.`;
    const url = check.scanId ? `api/scan/overlay.png?scan=${check.scanId}` : null;
    const overlay = this.el.overlay;
    if (url && overlay.getAttribute("src") !== url) {
      overlay.hidden = false;
      overlay.src = url;
      this.el.overlayLink.href = url;
    }
    if (!url) overlay.hidden = true;
    if (overlay.dataset.gone === url) text += " The picture of this scan is no longer in robotd's memory.";
    overlay.alt = `Each face as scanned, with its grid, the colours read and their confidences; ` +
      `stickers in doubt framed in red: ${names}`;
    this.el.scanCheckText.textContent = text;
    this.el.scanCheck.dataset.refused = String(check.refused);
  }

  /** What the scan warned of (colours drifted from the calibration) and the images it took again. */
  renderScanNotes() {
    const notes = this.scan ? [...this.scan.warnings.map(String), ...this.scan.retakes.map(retakeText)] : [];
    this.el.scanNotes.hidden = notes.length === 0;
    this.el.scanNotesList.replaceChildren(...notes.map((note) => {
      const item = document.createElement("li");
      item.textContent = note;
      return item;
    }));
  }

  overlayGone() {
    const overlay = this.el.overlay;
    overlay.dataset.gone = overlay.getAttribute("src") || "";
    overlay.hidden = true;
    this.renderScanCheck();
  }

  renderMoveList() {
    const commands = this.solution ? this.solution.commands || [] : [];
    this.el.moves.replaceChildren(...commands.map((command, index) => {
      const item = document.createElement("li");
      item.textContent = command;
      item.dataset.index = String(index);
      return item;
    }));
  }

  renderSolution() {
    const s = this.solution;
    if (!s) {
      this.el.summary.textContent = this.busy ? "Waiting for the solution…" : "No solution yet.";
      return;
    }
    this.el.summary.textContent = s.commands && s.commands.length
      ? `${s.moves} — ${s.htm} moves HTM, ${s.qtm} QTM; found by ${s.solver || "the solver"} in ` +
        `${duration(s.seconds)}; ${s.commands.length} motor commands, ≈ ${duration(s.estimated_s)}` +
        ((s.candidates || []).length > 1 ? ` (${s.candidates.map(candidateText).join("; ")})` : "") +
        splicedText(s)
      : "The cube was already solved: nothing to turn.";
    const current = this.phase === "executing" ? this.doneIndex + 1 : -1;
    let currentItem = null;
    for (const item of this.el.moves.children) {
      const index = Number(item.dataset.index);
      item.classList.toggle("done", index <= this.doneIndex);
      if (index === current) {
        item.setAttribute("aria-current", "step");
        currentItem = item;
      } else {
        item.removeAttribute("aria-current");
      }
    }
    if (currentItem) {
      // keep the current command in view inside the list only (scrollIntoView would move the page)
      const list = this.el.moves;
      const top = currentItem.offsetTop; // the list is the items' offsetParent (position: relative)
      if (top < list.scrollTop || top + currentItem.offsetHeight > list.scrollTop + list.clientHeight) {
        list.scrollTop = top - list.clientHeight / 3;
      }
    }
  }

  renderProgress() {
    const bar = this.el.bar;
    document.title = tabTitle(this.phase, this.doneMoves, this.totalMoves);
    const command = this.phase === "executing" && this.solution ? (this.solution.commands || [])[this.doneIndex + 1] : null;
    this.el.currentMove.hidden = !command;
    this.el.currentMove.textContent = command ? `Now turning: ${command}` : "";
    if (this.totalMoves) {
      bar.max = this.totalMoves;
      bar.value = this.doneMoves;
      this.el.progressText.textContent = `${this.doneMoves} of ${this.totalMoves} moves — ${this.phase}`;
    } else if (this.solution || this.phase === "done") {
      bar.max = 1;
      bar.value = 1;
      this.el.progressText.textContent = "Nothing to turn.";
    } else if (this.busy) {
      bar.removeAttribute("value"); // indeterminate until the solution is known
      this.el.progressText.textContent = `${this.phase}…`;
    } else {
      bar.max = 1;
      bar.value = 0;
      this.el.progressText.textContent = this.runId ? `Run ${this.runId}: ${this.phase}` : "No run yet.";
    }
  }

  /** Motor time still to go: the estimate left after the last move, counting down until the next one. */
  remainingSeconds(now) {
    const s = this.solution;
    if (!s || !this.totalMoves || this.phase !== "executing") return null;
    const left = s.estimated_s * (this.totalMoves - this.doneMoves) / this.totalMoves;
    const since = this.lastMoveAt ?? this.executingSince ?? now;
    return Math.max(0, left - Math.max(0, now - since));
  }

  /** Refresh the clocks: elapsed, remaining, the running step. Called a few times a second. */
  tick() {
    const now = this.now();
    const end = this.busy ? now : this.endedAt;
    this.el.elapsed.textContent = this.startedAt && end ? duration(end - this.startedAt) : "–";
    this.el.remaining.textContent = this.busy ? duration(this.remainingSeconds(now)) : "–";
    const times = stepTimes(this.events, this.busy ? now : null);
    const rows = ["preparing", ...STEPS].filter((step) => step in times).map((step) => {
      const row = document.createElement("tr");
      if (step === this.phase) row.className = "current";
      const name = document.createElement("th");
      name.scope = "row";
      name.textContent = step;
      const value = document.createElement("td");
      value.textContent = duration(times[step]);
      row.append(name, value);
      return row;
    });
    if (this.solution && this.solution.seconds !== undefined) {
      const row = document.createElement("tr");
      row.className = "detail";
      row.innerHTML = "<th scope=\"row\">solver search</th><td></td>";
      row.lastElementChild.textContent = duration(this.solution.seconds);
      rows.push(row);
    }
    this.el.steps.replaceChildren(...rows);
  }
}
