// Plain-language text for durations, times and run events.

export const STEPS = ["scanning", "solving", "executing", "verifying"];
export const TERMINAL_PHASES = ["done", "error", "stopped"];
export const BUSY_PHASES = STEPS;

/** "0.42 s", "12.3 s", "2 min 05 s"; "–" for a missing value. */
export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "–";
  const s = Math.max(0, seconds);
  if (s < 10) return `${s.toFixed(2)} s`;
  if (s < 60) return `${s.toFixed(1)} s`;
  const minutes = Math.floor(s / 60);
  return `${minutes} min ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
}

/** A unix time as local date and time. */
export function clock(unixSeconds) {
  if (!unixSeconds) return "–";
  return new Date(unixSeconds * 1000).toLocaleString(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit",
  });
}

/** One solver's answer to a 3x3x3: lengths, planned motor time and solve time. */
export function candidateText(c) {
  const head = `${c.solver} in ${duration(c.solve_s)}: `;
  return c.found ? head + `${c.htm} HTM, ${c.qtm} QTM, ${duration(c.planned_s)} on the rig` : head + "no solution";
}

/** An image taken again at another exposure: `{image, exposure, why, kept}` in words (read defensively). */
export function retakeText(retake) {
  if (!retake || typeof retake !== "object") return String(retake);
  const why = {clipped: "colours clipped", dark: "too dark"}[retake.why] || retake.why || "retaken";
  const exposure = retake.exposure === undefined || retake.exposure === null ? "" : ` at exposure ${retake.exposure}`;
  const kept = retake.kept === undefined ? "" : retake.kept ? ", this one kept" : ", the first one kept";
  return `${retake.image ?? "an image"}: ${why}, taken again${exposure}${kept}`;
}

/** The browser tab's title: the run's state at a glance from another tab ("▶ 12/21 · executing — robotd"). */
export function tabTitle(phase, doneMoves, totalMoves) {
  const name = "robotd";
  if (BUSY_PHASES.includes(phase)) {
    const count = totalMoves ? `${doneMoves}/${totalMoves} · ` : "";
    return `▶ ${count}${phase} — ${name}`;
  }
  const mark = {done: "✓", error: "✗", stopped: "■"}[phase];
  return mark ? `${mark} ${phase} — ${name}` : name;
}

export function puzzleName(puzzle) {
  return puzzle ? `${puzzle}x${puzzle}` : "–";
}

/** One line describing an event, for the run log and the run details. */
export function describeEvent(event) {
  const d = event.data || {};
  switch (event.kind) {
    case "phase":
      return d.previous ? `${d.previous} → ${d.phase}` : `phase ${d.phase}`;
    case "prepared":
      return d.scramble ? `virtual cube scrambled with ${d.scramble}` : "virtual cube prepared";
    case "scan": {
      const size = d.state && d.state.length === 24 ? "2x2" : "3x3";
      const names = d.doubtful || [];
      const doubtful = names.length || (d.confidence || []).filter((c) => c < 0.6).length;
      const note = doubtful ? `, ${doubtful} sticker${doubtful === 1 ? "" : "s"} in doubt` : "";
      const warnings = (d.warnings || []).length ? `; warnings: ${d.warnings.join("; ")}` : "";
      const retakes = (d.retakes || []).length ? `; ${d.retakes.length} image${d.retakes.length === 1 ? "" : "s"} retaken` : "";
      return `scanned a ${size} (attempt ${d.attempt ?? 1}${note}${names.length ? ": " + names.join(", ") : ""})` +
        warnings + retakes;
    }
    case "scan_failed":
      return `${d.phase === "verifying" ? "re-scan" : "scan"} attempt ${d.attempt} failed: ${d.message}` +
        (d.kept ? ` (kept in ${d.kept})` : "");
    case "solution":
      return `solution${d.solver ? " by " + d.solver : ""}: ${d.htm} moves HTM, ${d.qtm} QTM, found in ${duration(d.seconds)}` +
        (d.estimated_s ? `; motors ≈ ${duration(d.estimated_s)}` : "");
    case "solution_update":
      return `a quicker ending spliced in: ${d.htm ?? "?"} moves HTM in all now` +
        (d.estimated_s ? `; motors ≈ ${duration(d.estimated_s)}` : "");
    case "move":
      return `${d.command}  (${d.done_moves}/${d.total_moves} moves)`;
    case "verified":
      return d.solved ? "verified: the cube is solved" : "verified: the cube is NOT solved";
    case "stop_requested":
      return `stop requested: ${d.reason}`;
    case "error":
      return `error: ${d.message}`;
    case "stopped":
      return `stopped: ${d.message}`;
    case "rig":
      return `${d.action}: ${d.outcome}${d.message ? " — " + d.message : ""}`;
    default:
      return event.kind;
  }
}

/**
 * Seconds spent in each step, from a run's events (the running step counts up to `now`). In simulation
 * the time before the `prepared` event (scrambling the virtual cube) is "preparing", not "scanning".
 */
export function stepTimes(events, now = null) {
  const times = {};
  let step = null;
  let since = null;
  const close = (t) => {
    if (step && STEPS.concat("preparing").includes(step) && t !== null) {
      times[step] = (times[step] || 0) + Math.max(0, t - since);
    }
  };
  for (const event of events) {
    if (event.kind === "phase") {
      close(event.t);
      [step, since] = [event.data.phase, event.t];
    } else if (event.kind === "prepared" && step === "scanning") {
      step = "preparing";
      close(event.t);
      [step, since] = ["scanning", event.t];
    }
  }
  close(now);
  return times;
}
