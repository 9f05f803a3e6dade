"""A run summary as a few readable lines for the terminal."""

from __future__ import annotations

STEP_ORDER = ("scanning", "solving", "executing", "verifying")


def format_summary(summary: dict) -> str:
    puzzle = f"{summary['puzzle']}x{summary['puzzle']}x{summary['puzzle']}" if summary.get("puzzle") else "cube"
    context = ", ".join(
        str(x)
        for x in (
            summary.get("mode"),
            puzzle,
            summary.get("seed") is not None and f"seed {summary['seed']}",
            summary.get("light") and f"light {summary['light']}",
        )
        if x
    )
    verdict = "cube solved" if summary.get("solved") else "cube NOT solved"
    lines = [f"run {summary.get('id')} ({context}): {summary.get('outcome')}, {verdict}"]
    if summary.get("error"):
        lines.append(f"error     : {summary['error']}")
    lines += _scan_lines(summary)
    if summary.get("scramble") is not None:
        lines.append(f"scramble  : {summary['scramble'] or '(none)'}")
    if summary.get("scanned_state"):
        lines.append(f"scanned   : {summary['scanned_state']}")
    if summary.get("solution") is not None:
        lines.append(
            f"solution  : {summary['solution'] or '(already solved)'} "
            f"({summary.get('length_htm')} HTM, {summary.get('length_qtm')} QTM) by {summary.get('solver')}"
        )
    params = summary.get("solver_params") or {}
    for candidate in params.get("candidates", []):
        lines.append("candidate : " + describe_candidate(candidate))
    if params.get("segments"):
        lines.append("moves by  : " + describe_segments(params["segments"], params.get("splices", [])))
    steps = summary.get("step_durations") or {}
    if steps:
        lines.append("steps     : " + " · ".join(f"{name} {steps[name]:.3f} s" for name in STEP_ORDER if name in steps))
    if summary.get("actual_s") is not None:
        lines.append(f"motor time: {summary['actual_s']:.2f} s (estimated {summary.get('estimated_s') or 0:.2f} s)")
    if summary.get("host_overhead_s") is not None:
        lines.append(f"host time : {summary['host_overhead_s']:.3f} s (measured: the run's wall time less execution)")
    lines += _read_back_lines(summary.get("read_back"))
    if summary.get("link"):
        link = summary["link"]
        lines.append("link      : " + ", ".join(f"{k} {v}" for k, v in link.items()))
    return "\n".join(lines)


def describe_candidate(candidate: dict) -> str:
    """One solver's answer to a 3x3x3 as a line: its lengths, planned motor time and solve time."""
    head = f"{candidate['solver']} in {candidate['solve_s']:.2f} s: "
    if not candidate.get("found"):
        return head + "no solution"
    return head + f"{candidate['htm']} HTM, {candidate['qtm']} QTM, {candidate['planned_s']:.2f} s on the rig"


def describe_segments(segments: list[dict], splices: list[dict]) -> str:
    """Which solver found which of the executed moves, and what the splices saved."""
    parts, first = [], 1
    for segment in segments:
        last = first + segment["htm"] - 1
        parts.append(f"{segment['solver']} {first}-{last}" if last > first else f"{segment['solver']} {first}")
        first = last + 1
    saved = sum(splice["saved_s"] for splice in splices)
    spliced = f" ({len(splices)} splice{'s' if len(splices) != 1 else ''}, {saved:.2f} s saved)" if splices else ""
    return ", ".join(parts) + spliced


def _read_back_lines(read_back: dict | None) -> list[str]:
    """``robotd --rig-only``: what the virtual cube followed, and each command the controller did otherwise."""
    if not read_back:
        return []
    lines = [f"read back : the virtual cube followed {read_back['follows']}"]
    lines += [f"differs   : {difference}" for difference in read_back.get("differences", [])]
    return lines


def _scan_lines(summary: dict) -> list[str]:
    """The stickers in doubt, and where to see (and attach to a bug report) what the camera saw."""
    lines = []
    if summary.get("scan_doubts"):
        lines.append(f"in doubt  : {', '.join(summary['scan_doubts'])}")
    if summary.get("scan_kept"):
        lines.append(f"scan kept : {summary['scan_kept']} (frames, overlay and scan.json: attach it to a bug report)")
    if summary.get("scan_overlay"):
        lines.append(f"overlay   : {summary['scan_overlay']}")
    return lines


def nonzero(counters: dict) -> dict:
    """The counters that counted something (nested tables, such as error bits, likewise)."""
    kept = {k: nonzero(v) if isinstance(v, dict) else v for k, v in counters.items()}
    return {k: v for k, v in kept.items() if v}
