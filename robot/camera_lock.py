"""Hold exposure, gain and white balance steady, whatever the camera kind.

A *source* (V4L2 or picamera2) knows how to switch its automatic controls
on, read what they chose, and fix values with the automatics off. This
module decides the order: manual values first, automatics for the rest,
let them settle, read, then fix everything at once. A control the camera
will not fix is reported and logged, never fatal: the scan still runs, with
that control left as the camera has it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .camera_config import CONTROLS, LockSettings

log = logging.getLogger("robotd.camera")


class Source(Protocol):
    """One opened camera, as the lock and the frame loop see it."""

    # Frames still to come under the old controls after a change: buffers
    # already queued, and the sensor's own delay in applying them.
    flush_frames: int

    def read(self) -> np.ndarray | None: ...

    def current(self, names: Iterable[str]) -> dict[str, Any]:
        """What the camera uses now for each control; None where it cannot say."""

    def release(self, names: Iterable[str]) -> dict[str, str]:
        """Switch these controls to automatic; returns {control: why not} for those it could not."""

    def fix(self, values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """Automatics off, these values on; returns (values now in force, {control: why not})."""

    def close(self) -> None: ...


@dataclass
class LockState:
    """What the last lock did, for ``status()`` and the log."""

    enabled: bool
    how: str  # "settled", "manual", "reapplied" (after a reopen) or "off"
    locked: dict[str, Any] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    @property
    def auto(self) -> list[str]:
        return [name for name in CONTROLS if name not in self.locked and name not in self.refused]

    def as_dict(self) -> dict:
        return {
            "enabled": self.enabled,
            "how": self.how,
            "auto": self.auto,
            "locked": {name: _plain(value) for name, value in self.locked.items()},
            "refused": dict(self.refused),
        }


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def apply_lock(
    source: Source, settings: LockSettings, held: dict[str, Any] | None = None, name: str = "camera"
) -> LockState:
    """Set the controls of a freshly opened source; ``held`` are the values of an earlier lock to reuse."""
    if held:
        # A reopen in the middle of a scan must not re-settle: the faces
        # already read were seen under these values.
        locked, refused = source.fix(held)
        state = LockState(settings.lock, "reapplied", locked, refused)
    else:
        state = _first_lock(source, settings)
    if state.locked:
        drop_frames(source, source.flush_frames)
    _report(name, state)
    return state


def _first_lock(source: Source, settings: LockSettings) -> LockState:
    manual = settings.manual()
    pending = [name for name in CONTROLS if name not in manual]
    # Controls persist on a V4L2 device after it is closed (an earlier run may
    # have left them fixed), so the automatics are switched on explicitly.
    refused = source.release(pending) if pending else {}
    locked, not_fixed = source.fix(manual) if manual else ({}, {})
    refused.update(not_fixed)
    if not settings.lock or not pending:
        return LockState(settings.lock, "manual" if manual else "off", locked, refused)
    drop_frames(source, settings.settle_frames)
    seen = source.current(pending)
    chosen = {}
    for name in pending:
        if seen.get(name) is not None:
            chosen[name] = seen[name]
        else:
            refused.setdefault(name, "the camera does not report the value its automatic chose")
    locked, not_fixed = source.fix({**chosen, **locked})
    for name, why in not_fixed.items():
        refused.setdefault(name, why)
    return LockState(True, "settled", locked, {n: why for n, why in refused.items() if n not in locked})


def drop_frames(source: Source, frames: int) -> None:
    """Read and throw away frames still taken under the controls before a change."""
    for _ in range(frames):
        source.read()


def _report(camera: str, state: LockState) -> None:
    if state.locked:
        values = ", ".join(f"{name} {_plain(value)}" for name, value in state.locked.items())
        log.info("camera '%s': fixed (%s) %s", camera, state.how, values)
    for name, why in state.refused.items():
        log.warning("camera '%s': %s: %s", camera, name, why)
