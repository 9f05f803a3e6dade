"""The run history as a file to download: CSV (one row a run, flat columns) or JSON (the runs as the API gives them).

Both are written a run at a time from ``History.export_runs``, so a history of
thousands of runs never sits in memory whole. Times in the CSV are ISO 8601 in
UTC; a text cell that a spreadsheet would take for a formula (``=``, ``+``,
``@``, a tab) is written with a leading ``'``.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

CSV_COLUMNS = (
    "id",
    "started_at",
    "ended_at",
    "duration_s",
    "outcome",
    "puzzle",
    "mode",
    "moves_done",
    "moves_total",
    "length_htm",
    "length_qtm",
    "solver",
    "solution",
    "estimated_s",
    "actual_s",
    "error",
    "seed",
    "scanned_state",
)
_TIMES = ("started_at", "ended_at")
_FORMULA_STARTS = ("=", "+", "@", "\t", "\r")


def iso_time(unix: float | None) -> str:
    return "" if unix is None else datetime.fromtimestamp(unix, UTC).isoformat(timespec="milliseconds")


def _cell(column: str, value) -> object:
    if value is None:
        return ""
    if column in _TIMES:
        return iso_time(value)
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def runs_csv(runs: Iterable[dict]) -> Iterator[str]:
    """A header line, then one line per run."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(CSV_COLUMNS)
    yield flush()
    for run in runs:
        writer.writerow([_cell(column, run.get(column)) for column in CSV_COLUMNS])
        yield flush()


def runs_json(runs: Iterable[dict], filters: dict) -> Iterator[str]:
    """``{"exported_at", "filters", "runs": [...]}``, the runs as ``GET /api/runs`` lists them."""
    head = {"exported_at": iso_time(time.time()), "filters": filters}
    yield json.dumps(head)[:-1] + ', "runs": ['
    for index, run in enumerate(runs):
        yield ("," if index else "") + json.dumps(run)
    yield "]}"


def export_name(extension: str, filters: dict) -> str:
    """``robotd-runs-20261128-0412[-done][-3x3].csv``: the filters in the name, so two exports do not clash."""
    parts = ["robotd-runs", time.strftime("%Y%m%d-%H%M%S")]
    if filters.get("outcome"):
        parts.append(filters["outcome"])
    if filters.get("puzzle"):
        parts.append(f"{filters['puzzle']}x{filters['puzzle']}")
    return "-".join(parts) + "." + extension
