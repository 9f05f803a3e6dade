// The history tab: the table of runs (newest first, "show older"), a run's details, the solve-time chart.

import {api} from "./api.js";
import {STEPS, candidateText, clock, describeEvent, duration, puzzleName, retakeText, stepTimes} from "./format.js";
import {CubeNet} from "./net.js";

const PAGE = 20;
const CHART_RUNS = 30;
const SVG_NS = "http://www.w3.org/2000/svg";

function byId(id) {
  return document.getElementById(id);
}

function element(name, text = "", className = "") {
  const el = document.createElement(name);
  if (text !== "") el.textContent = text;
  if (className) el.className = className;
  return el;
}

function svg(name, attributes = {}) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, value);
  return el;
}

function totalSeconds(run) {
  return run.ended_at && run.started_at ? run.ended_at - run.started_at : null;
}

/** "7 of 20": what the run turned (a stopped or failed run too), of its solution's moves (HTM). */
function movesDone(run) {
  if (run.moves_total === null || run.moves_total === undefined) return "–";
  return `${run.moves_done ?? 0} of ${run.moves_total}`;
}

/** The history's filters added to `base` as a query: the table, the chart and the export links take the same. */
function filterQuery(outcome, puzzle, base = {}) {
  const query = new URLSearchParams(base);
  if (outcome) query.set("outcome", outcome);
  if (puzzle) query.set("puzzle", puzzle);
  return query;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export class HistoryView {
  /** `onError(message)` shows a failure to the user. */
  constructor({onError}) {
    this.onError = onError;
    this.rows = byId("history-rows");
    this.more = byId("history-more");
    this.empty = byId("history-empty");
    this.filter = byId("outcome-filter");
    this.puzzleFilter = byId("puzzle-filter");
    this.dialog = byId("run-dialog");
    this.details = byId("run-details");
    this.offset = 0;
    this.loading = null;
    this.more.addEventListener("click", () => this.load(false));
    this.filter.addEventListener("change", () => this.reload());
    this.puzzleFilter.addEventListener("change", () => this.reload());
    byId("run-dialog-close").addEventListener("click", () => this.dialog.close());
    this.dialog.addEventListener("click", (event) => {
      if (event.target === this.dialog) this.dialog.close(); // a click on the backdrop
    });
  }

  /** Reload the first page and the chart (after a run starts or ends, or the filter changes). */
  reload() {
    return Promise.all([this.load(true), this.loadChart()]);
  }

  async load(fresh) {
    const offset = fresh ? 0 : this.offset;
    const outcome = this.filter.value;
    const puzzle = this.puzzleFilter.value;
    for (const format of ["csv", "json"]) {
      byId(`export-${format}`).setAttribute("href", `api/runs/export?${filterQuery(outcome, puzzle, {format})}`);
    }
    const query = filterQuery(outcome, puzzle, {limit: String(PAGE), offset: String(offset)});
    const request = api(`api/runs?${query}`);
    this.loading = request;
    try {
      const page = await request;
      if (this.loading !== request) return; // a newer load replaced this one
      if (fresh) this.rows.replaceChildren();
      this.rows.append(...page.runs.map((run) => this.row(run)));
      this.offset = offset + page.runs.length;
      this.more.hidden = page.runs.length < PAGE;
      this.empty.hidden = this.rows.childElementCount > 0;
      this.empty.textContent = outcome || puzzle ? "No runs pass these filters." : "No runs recorded yet.";
    } catch (error) {
      this.onError(`Could not load the run history: ${error.message}`);
    }
  }

  row(run) {
    const tr = document.createElement("tr");
    tr.dataset.runId = String(run.id);
    tr.dataset.outcome = run.outcome;
    const open = element("button", `#${run.id}`, "link");
    open.type = "button";
    open.setAttribute("aria-label", `Details of run ${run.id}`);
    open.addEventListener("click", (event) => {
      event.stopPropagation();
      this.show(run.id);
    });
    const outcome = element("span", run.outcome, `badge outcome-${run.outcome}`);
    // data-label: on a phone each row is a card, and each cell says what it is
    const cells = [["Run", open], ["Started", clock(run.started_at)], ["Cube", puzzleName(run.puzzle)],
                   ["Outcome", outcome], ["Moves done", movesDone(run)], ["Duration", duration(totalSeconds(run))],
                   ["Error", run.error || ""]];
    for (const [label, content] of cells) {
      const td = element("td", "", label === "Error" ? "error-cell" : "");
      td.dataset.label = label;
      if (content !== "") td.append(content);
      if (label === "Error" && run.error) td.title = run.error;
      tr.append(td);
    }
    tr.addEventListener("click", () => this.show(run.id));
    return tr;
  }

  /** Open the details of one run, with its events. */
  async show(runId) {
    let run;
    try {
      run = await api(`api/runs/${encodeURIComponent(runId)}`);
    } catch (error) {
      this.onError(`Could not load run ${runId}: ${error.message}`);
      return;
    }
    byId("run-dialog-title").textContent = `Run ${run.id} — ${run.outcome}`;
    this.details.replaceChildren(this.facts(run), this.steps(run), this.scanned(run), this.eventList(run));
    if (!this.dialog.open) this.dialog.showModal();
  }

  facts(run) {
    const list = element("dl", "", "facts");
    const add = (name, value) => {
      if (value === null || value === undefined || value === "") return;
      const div = element("div");
      div.append(element("dt", name), element("dd", String(value)));
      list.append(div);
    };
    add("Started", clock(run.started_at));
    add("Ended", run.ended_at ? clock(run.ended_at) : null);
    add("Total", duration(totalSeconds(run)));
    add("Mode", run.mode);
    add("Seed", run.seed);
    add("Cube", run.puzzle ? puzzleName(run.puzzle) : null);
    add("Error", run.error);
    add("Moves done", run.moves_total === null || run.moves_total === undefined ? null : movesDone(run));
    const scan = (run.events || []).filter((e) => e.kind === "scan").pop();
    for (const warning of (scan && scan.data.warnings) || []) add("Scan warning", warning);
    for (const retake of (scan && scan.data.retakes) || []) add("Scan retake", retakeText(retake));
    add("Solver", run.solver);
    for (const c of (run.solver_params && run.solver_params.candidates) || []) add("Candidate", candidateText(c));
    add("Solution", run.solution);
    if (run.length_htm !== null && run.length_htm !== undefined) add("Length", `${run.length_htm} HTM, ${run.length_qtm} QTM`);
    add("Motors, estimated", run.estimated_s !== null ? duration(run.estimated_s) : null);
    add("Motors, actual", run.actual_s !== null ? duration(run.actual_s) : null);
    return list;
  }

  steps(run) {
    const times = run.step_durations && Object.keys(run.step_durations).length
      ? run.step_durations : stepTimes(run.events || []);
    const table = element("table", "", "steps");
    table.setAttribute("aria-label", "Time per step");
    const body = element("tbody");
    for (const step of STEPS) {
      if (!(step in times)) continue;
      const tr = element("tr");
      const th = element("th", step);
      th.scope = "row";
      tr.append(th, element("td", duration(times[step])));
      body.append(tr);
    }
    table.append(body);
    return table;
  }

  scanned(run) {
    const box = element("div", "", "details-net");
    if (!run.scanned_state) return box;
    const scan = (run.events || []).filter((e) => e.kind === "scan").pop();
    const picture = document.createElementNS(SVG_NS, "svg");
    picture.setAttribute("class", "net small");
    picture.setAttribute("role", "img");
    const doubtful = new CubeNet(picture).show(run.scanned_state, scan ? scan.data.confidence : null);
    picture.setAttribute("aria-label", `Scanned cube${doubtful ? `, ${doubtful} stickers in doubt` : ""}`);
    box.append(element("h3", "As scanned"), picture);
    return box;
  }

  eventList(run) {
    const box = element("div", "", "details-events");
    const events = run.events || [];
    box.append(element("h3", `Events (${events.length})`));
    const list = element("ol", "", "log");
    for (const event of events) {
      const item = element("li");
      item.dataset.kind = event.kind;
      item.append(element("span", `+${(event.t - run.started_at).toFixed(2)} s`, "log-time"),
                  element("span", describeEvent(event)));
      list.append(item);
    }
    box.append(list);
    return box;
  }

  async loadChart() {
    let runs;
    try {
      runs = (await api(`api/runs?${filterQuery("done", this.puzzleFilter.value, {limit: String(CHART_RUNS)})}`)).runs;
    } catch (error) {
      this.onError(`Could not load the solve times: ${error.message}`);
      return;
    }
    drawChart(byId("chart"), byId("chart-caption"), runs.reverse());
  }
}

/** Stacked bars (one per completed run, oldest left): time in each step. */
function drawChart(chart, caption, runs) {
  chart.replaceChildren();
  const width = 320, height = 120, left = 34, bottom = 16, top = 6;
  chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
  chart.dataset.runs = String(runs.length);
  if (!runs.length) {
    chart.setAttribute("aria-label", "No completed runs yet");
    caption.textContent = "No completed runs yet.";
    return;
  }
  const totals = runs.map((run) => totalSeconds(run) || 0);
  const most = Math.max(...totals, 0.001);
  const scale = (height - top - bottom) / most;
  const slot = (width - left) / Math.max(runs.length, 10);
  const axis = svg("g", {class: "axis"});
  axis.append(svg("line", {x1: left, y1: height - bottom, x2: width, y2: height - bottom}),
              svg("line", {x1: left, y1: top, x2: left, y2: height - bottom}));
  for (const [value, y] of [[most, top], [most / 2, top + (height - top - bottom) / 2], [0, height - bottom]]) {
    const label = svg("text", {x: left - 3, y, "text-anchor": "end", "dominant-baseline": "middle"});
    label.textContent = value ? duration(value).replace(" s", "s") : "0";
    axis.append(label);
  }
  chart.append(axis);
  runs.forEach((run, i) => {
    const bar = svg("g", {class: "bar", "data-run-id": run.id});
    const title = svg("title");
    title.textContent = `Run ${run.id}: ${duration(totals[i])} total` +
      STEPS.filter((s) => run.step_durations && s in run.step_durations)
        .map((s) => `, ${s} ${duration(run.step_durations[s])}`).join("");
    bar.append(title);
    let y = height - bottom;
    const x = left + i * slot + slot * 0.15;
    const parts = STEPS.map((s) => [s, (run.step_durations || {})[s] || 0]);
    const other = totals[i] - parts.reduce((sum, [, v]) => sum + v, 0);
    for (const [step, seconds] of [...parts, ["other", Math.max(0, other)]]) {
      if (seconds <= 0) continue;
      const h = seconds * scale;
      y -= h;
      bar.append(svg("rect", {class: `step-${step}`, x, y, width: slot * 0.7, height: h}));
    }
    chart.append(bar);
  });
  const typical = median(totals);
  chart.setAttribute("aria-label", `Solve times of the last ${runs.length} completed runs, median ${duration(typical)}`);
  const legend = element("span", "", "legend");
  for (const step of [...STEPS, "other"]) {
    const key = element("span", step, "legend-key");
    key.prepend(element("span", "", `swatch step-${step}`));
    legend.append(key);
  }
  caption.replaceChildren(`Last ${runs.length} completed run${runs.length === 1 ? "" : "s"}, oldest left; ` +
    `median ${duration(typical)}, fastest ${duration(Math.min(...totals))}. `, legend);
}
