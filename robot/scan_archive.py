"""Scans kept for people: the last few in memory (the dashboard's overlay), refused ones on disk (bug reports).

Every scan ``ViewScanner`` makes becomes a ``ScanRecord``: its frames, the view
config, what the vision read (or why it refused), and the stickers in doubt.
``ScanMemory`` holds the last few (frames are large) for
``GET /api/scan/overlay.png``. ``RefusedScans`` writes a scan refused on every
attempt of a run to ``<data_dir>/refused-scans/<YYYYmmdd-HHMMSS>-run<id>/``:
each frame as ``frame-<image>.png``, ``overlay.png``, ``views.json``,
``calibration.json`` (when one was used) and ``scan.json``; only the newest
``[robotd] keep_refused_scans`` folders stay. A folder replays as it is, with
the command written in its ``scan.json``.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np

from vision import Calibration, Classification, ViewConfig, draw_overlay
from vision.overlay import encode_png

log = logging.getLogger("robotd.scans")

REMEMBERED_SCANS = 2  # a run's scan and its verification (or the last two attempts)
FOLDER = re.compile(r"^(\d{8}-\d{6})-run(\d+)(?:-(\d+))?$")
LAST_OVERLAY = "last-doubtful-scan.png"


@dataclass
class ScanRecord:
    """One scan as the camera saw it and the vision read it."""

    id: int
    t: float
    frames: dict[str, np.ndarray]
    views: ViewConfig
    reading: Classification | None
    doubtful: tuple[str, ...] = ()
    error: str | None = None
    calibration: Calibration | None = None
    _png: bytes | None = field(default=None, repr=False)

    def overlay_png(self) -> bytes:
        """``vision.draw_overlay`` of this scan as PNG (drawn once)."""
        if self._png is None:
            self._png = encode_png(draw_overlay(self.frames, self.views, self.reading, self.doubtful))
        return self._png

    def summary(self) -> dict:
        return {
            "scan_id": self.id,
            "t": self.t,
            "error": self.error,
            "doubtful": list(self.doubtful),
            "reading": None if self.reading is None else self.reading.as_dict(),
        }


class ScanMemory:
    """The last ``keep`` scans, each with an id counting up from 1; safe to use from several threads."""

    def __init__(self, keep: int = REMEMBERED_SCANS):
        self._records: deque[ScanRecord] = deque(maxlen=keep)
        self._lock = threading.Lock()
        self._next = 1

    def add(
        self,
        frames: dict[str, np.ndarray],
        views: ViewConfig,
        reading: Classification | None,
        doubtful: tuple[str, ...] = (),
        error: str | None = None,
        calibration: Calibration | None = None,
    ) -> ScanRecord:
        with self._lock:
            record = ScanRecord(
                self._next, time.time(), dict(frames), views, reading, tuple(doubtful), error, calibration
            )
            self._next += 1
            self._records.append(record)
        return record

    def get(self, scan_id: int | None = None) -> ScanRecord | None:
        """The scan with this id while it is remembered; the latest one for None."""
        with self._lock:
            if scan_id is None:
                return self._records[-1] if self._records else None
            return next((r for r in self._records if r.id == scan_id), None)

    @property
    def keep(self) -> int:
        return self._records.maxlen or 0


class RefusedScans:
    """Writes refused scans to ``directory`` for bug reports, keeping the newest ``keep`` (0: none)."""

    def __init__(self, directory: Path, keep: int, memory: ScanMemory):
        self.directory, self.limit, self.memory = Path(directory), keep, memory

    def keep(self, run_id: int, scan_id: int | None) -> Path | None:
        """Write the remembered scan ``scan_id`` of run ``run_id``; its folder, or None when nothing was kept."""
        record = self.memory.get(scan_id) if scan_id is not None else None
        if self.limit == 0 or record is None:
            return None
        try:
            folder = self._new_folder(record.t, run_id)
            _write(folder, record, run_id)
            self._prune()
        except OSError as error:
            log.warning("could not keep the refused scan of run %s in %s: %s", run_id, self.directory, error)
            return None
        return folder

    def folders(self) -> list[Path]:
        """The kept scans' folders, oldest first."""
        if not self.directory.is_dir():
            return []
        found = []
        for path in self.directory.iterdir():
            match = FOLDER.match(path.name)
            if match and path.is_dir():
                found.append((_order(match), path))
        return [path for _, path in sorted(found)]

    def _new_folder(self, t: float, run_id: int) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(t))
        self.directory.mkdir(parents=True, exist_ok=True)
        for extra in range(100):
            folder = self.directory / (f"{stamp}-run{run_id}" + (f"-{extra}" if extra else ""))
            try:
                folder.mkdir()
                return folder
            except FileExistsError:
                continue
        raise FileExistsError(f"too many folders named {stamp}-run{run_id}-N")

    def _prune(self) -> None:
        folders = self.folders()
        for old in folders[: max(0, len(folders) - self.limit)]:
            shutil.rmtree(old, ignore_errors=True)


def _order(match: re.Match) -> tuple:
    return match.group(1), int(match.group(2)), int(match.group(3) or 0)


def _write(folder: Path, record: ScanRecord, run_id: int) -> None:
    frames = {}
    for name, image in record.frames.items():
        frames[name] = f"frame-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.png"
        (folder / frames[name]).write_bytes(encode_png(image))
    (folder / "overlay.png").write_bytes(record.overlay_png())
    record.views.save(folder / "views.json")
    if record.calibration is not None:
        record.calibration.save(folder / "calibration.json")
    replay = " ".join(
        [
            "python -m vision scan --views views.json",
            *(f"--image {name}={file}" for name, file in frames.items()),
            *(["--calibration calibration.json"] if record.calibration is not None else []),
            "--overlay overlay-again.png",
        ]
    )
    report = {
        "robotd_version": _version(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(record.t)),
        "run_id": run_id,
        **record.summary(),
        "frames": frames,
        "overlay": "overlay.png",
        "views": record.views.to_json(),
        "calibration": None if record.calibration is None else record.calibration.to_json(),
        "replay": replay,
    }
    (folder / "scan.json").write_text(json.dumps(report, indent=1) + "\n")


def _version() -> str:
    try:
        return metadata.version("robotd")
    except metadata.PackageNotFoundError:
        return "unknown"


def scan_report(events: list[dict], memory: ScanMemory | None, data_dir: Path) -> dict:
    """For ``robotd --once``: the run's stickers in doubt, where its refused scan was kept, and an overlay.

    A scan that went through with stickers in doubt has its overlay written to
    ``<data_dir>/last-doubtful-scan.png`` (replaced each time). Empty when the
    scan was clear.
    """
    accepted = next((e["data"] for e in events if e["kind"] == "scan"), None)
    failed = [e["data"] for e in events if e["kind"] == "scan_failed"]
    latest = accepted if accepted is not None else (failed[-1] if failed else None)
    if latest is None:
        return {}
    doubts = latest.get("doubtful" if accepted is not None else "stickers") or []
    if accepted is not None and not doubts:
        return {}
    kept = latest.get("kept")
    overlay = str(Path(kept) / "overlay.png") if kept else _write_last_overlay(memory, latest.get("scan_id"), data_dir)
    return {"scan_doubts": list(doubts), "scan_kept": kept, "scan_overlay": overlay}


def _write_last_overlay(memory: ScanMemory | None, scan_id: int | None, data_dir: Path) -> str | None:
    record = memory.get(scan_id) if memory is not None and scan_id is not None else None
    if record is None:
        return None
    path = Path(data_dir) / LAST_OVERLAY
    try:
        path.write_bytes(record.overlay_png())
    except OSError as error:
        log.warning("could not write the scan overlay to %s: %s", path, error)
        return None
    return str(path)
