"""The runs in the log: one record per step of a run, and per jog or rig action, from the event bus.

Logger ``robotd.run``: the start, each phase, the scan, the solution, the
verification and the end of a run at INFO (a stop, which someone asked for,
as one INFO line); a failed scan and an error at WARNING; each executed
command at DEBUG. They go where ``[robotd] log_level`` sends records
(stderr or the journal, and ``[robotd] log_file``), next to the history's
full record of every event.
"""

from __future__ import annotations

import logging

from .events import Event

log = logging.getLogger("robotd.run")


def log_event(event: Event) -> None:
    """An ``EventBus`` subscriber: ``event`` as one log record (none for the kinds left out)."""
    kind, data = event["kind"], event["data"]
    run = f"run {event['run_id']}" if event["run_id"] is not None else "between runs"
    if kind == "stopped":  # asked for (Stop, a signal): one INFO line, which the phase change does not repeat
        log.info("%s stopped: %s", run, data["message"].removeprefix("stopped: "))
    elif kind in ("error", "scan_failed"):
        scan = "re-scan" if data.get("phase") == "verifying" else "scan"
        attempt = f" ({scan} attempt {data['attempt']})" if kind == "scan_failed" else ""
        log.warning("%s failed%s: %s", run, attempt, data["message"])
    elif kind in ("jog", "rig"):
        level = logging.INFO if data.get("outcome") in ("done", "stopped") else logging.WARNING
        what = data.get("command") or data.get("action")
        log.log(
            level, "%s %s: %s in %s s: %s", kind, what, data.get("outcome"), data.get("seconds"), data.get("message")
        )
    elif kind == "move":
        log.debug("%s: %s (%d/%d moves)", run, data["command"], data["done_moves"], data["total_moves"])
    elif kind in _INFO and not (kind == "phase" and data["phase"] == "stopped"):
        log.info("%s: %s", run, _INFO[kind](data))


_INFO = {
    "phase": lambda d: d["phase"],
    "prepared": lambda d: (
        f"simulated {'x'.join([str(d.get('puzzle'))] * 3)} cube, seed {d.get('seed')}, "
        f"scramble {d.get('scramble')!r}, light {d.get('light')}"
    ),
    "scan": lambda d: (
        f"scanned {d['state']} (attempt {d['attempt']}, lowest sticker confidence "
        f"{min(d['confidence'], default=1.0):.2f})"
    ),
    "solution": lambda d: (
        f"{d['solver']} solution {d['moves'] or '(none: solved)'} ({d['htm']} htm, {d['qtm']} qtm) "
        f"in {d['seconds']} s; {d['estimated_s']} s of motor time planned"
    ),
    "verified": lambda d: "re-scan: cube solved" if d["solved"] else f"re-scan: not solved ({d['state']})",
}
