"""Shared parts of the vision benches (bench/vision.py, bench/vision_stress.py).

- the real dev set (``load_devset``), read at run time from
  ``../shared/vision-devset`` or ``--devset PATH`` (some items are GPL-3.0:
  they are never copied into this repository);
- seeded random states (``random_face_states``);
- one scan judged against the truth (``judge``) and the tallies of verdicts.

Verdicts, from best to worst (``CONFIDENT`` is the confidence a sticker
needs to count as read for sure):

- ``right``: the returned state is the truth, every sticker confident;
- ``right-flagged``: the truth, but some sticker below ``CONFIDENT``;
- ``refused``: a ``ScanError`` (the message names what is in doubt);
- ``wrong-flagged``: another state, but every sticker that differs from the
  truth is below ``CONFIDENT`` (the doubt is named where it matters);
- ``wrong``: another state with at least one differing sticker read
  confidently: wrong and confident, never acceptable.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from solver.puzzles.cube.batch import Puzzle, to_facelet_array
from solver.puzzles.cube.geometry import FACES, sticker_name
from solver.puzzles.cube.scramble import random_states
from vision import Calibration, ScanError, calibrate, classify
from vision.calibration import colours_from_json

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DEVSET = REPO.parent / "shared" / "vision-devset"
CONFIDENT = 0.9
VERDICTS = ("right", "right-flagged", "refused", "wrong-flagged", "wrong")


def random_face_states(size: int, count: int, rng: np.random.Generator) -> list[str]:
    faces = to_facelet_array(random_states(Puzzle.of_size(size), count, rng))
    return ["".join("URFDLB"[f] for f in row) for row in faces]


@dataclass
class DevItem:
    """One cube of the dev set: RGB triples in facelet order (``rgb-scan``) or six BGR photos (``photos``)."""

    id: str
    kind: str
    size: int
    answer: str
    licence: str
    rgb: np.ndarray | None = None
    photos: dict[str, np.ndarray] | None = None


def load_devset(path: Path) -> list[DevItem]:
    """The dev set's cubes, read from ``path`` (its ``manifest.json``); ``FileNotFoundError`` if absent."""
    manifest = json.loads((Path(path) / "manifest.json").read_text())
    items = []
    for entry in manifest:
        size, answer = int(entry["puzzle"]), entry["answer"]
        item = DevItem(entry["id"], entry["kind"], size, answer, entry.get("licence", "").split(" ")[0])
        files = [Path(path) / f for f in entry["files"]]
        if entry["kind"] == "rgb-scan":
            item.rgb = colours_from_json(json.loads(next(f for f in files if f.name != "answer.txt").read_text()))
        else:
            item.photos = {}
            for face in FACES:
                image = next(f for f in files if f.stem == f"rubiks-side-{face}")
                item.photos[face] = cv2.imread(str(image), cv2.IMREAD_COLOR)
                if item.photos[face] is None:
                    raise FileNotFoundError(f"cannot read {image}")
        items.append(item)
    return items


@dataclass
class Outcome:
    """A scan judged against the truth (see the module docstring for the verdicts)."""

    verdict: str
    min_confidence: float | None = None
    differ: list[str] = field(default_factory=list)  # stickers whose reading is not the truth
    confident_differ: list[str] = field(default_factory=list)
    message: str = ""
    named: tuple[str, ...] = ()  # stickers a ScanError names
    names_suspect: bool | None = None  # a refusal/flag points at the perturbed part
    state: str | None = None
    seconds: float = 0.0

    def row(self) -> dict:
        return {
            "verdict": self.verdict,
            "min_confidence": None if self.min_confidence is None else round(self.min_confidence, 4),
            "differ": self.differ,
            "confident_differ": self.confident_differ,
            "message": self.message[:120],
        }


def _mentions(message: str, named: tuple[str, ...], doubtful: list[str], suspect: tuple[str, ...]) -> bool:
    """Whether a refusal or a flag points at the suspect stickers (names one, or says ``face X`` of their face)."""
    faces = {s[0] for s in suspect}
    return (
        bool(set(named) & set(suspect))
        or bool(set(doubtful) & set(suspect))
        or any(f"face {f}" in message for f in faces)
    )


def judge(
    call: Callable[[], object], truth: str, suspect: tuple[str, ...] = (), confident: float = CONFIDENT
) -> Outcome:
    """Run one scan (``call`` returns a Classification or raises ScanError) and judge it against ``truth``.

    ``suspect``: sticker names the case perturbed (a turned face's stickers,
    an occluded sticker); ``names_suspect`` says whether a refusal or a flag
    points at them.
    """
    n = 3 if len(truth) == 54 else 2
    start = time.perf_counter()
    try:
        result = call()
    except ScanError as error:
        message = str(error)
        named = tuple(error.stickers)
        return Outcome(
            "refused",
            message=message,
            named=named,
            seconds=time.perf_counter() - start,
            names_suspect=_mentions(message, named, [], suspect) if suspect else None,
        )
    seconds = time.perf_counter() - start
    confidence = np.asarray(result.confidence, dtype=np.float64)
    doubtful = [sticker_name(i, n) for i in np.flatnonzero(confidence < confident)]
    differ = (
        [i for i, (a, b) in enumerate(zip(result.state, truth)) if a != b]
        if len(result.state) == len(truth)
        else list(range(len(truth)))
    )
    confident_differ = [sticker_name(i, n) for i in differ if i < len(confidence) and confidence[i] >= confident]
    if not differ:
        verdict = "right" if not doubtful else "right-flagged"
    else:
        verdict = "wrong" if confident_differ else "wrong-flagged"
    return Outcome(
        verdict,
        float(confidence.min()),
        [sticker_name(i, n) for i in differ],
        confident_differ,
        state=result.state,
        seconds=seconds,
        names_suspect=_mentions("", (), doubtful, suspect) if suspect and doubtful else None,
    )


def tally(outcomes: list[Outcome]) -> dict:
    """Counts of each verdict, plus the cases and the wrong-and-confident total."""
    counts = {v: 0 for v in VERDICTS}
    for outcome in outcomes:
        counts[outcome.verdict] += 1
    counts["cases"] = len(outcomes)
    return counts


def reading_calibration(rgb: np.ndarray) -> Calibration | None:
    """A palette for a real scan whose rig has no solved-cube scan: its clean colours grouped as the
    scanner reads them (never by the answer); None when the clean scan is not read as it is given."""
    try:
        reading = classify(rgb)
    except ScanError:
        return None
    return None if reading.turned else calibrate(rgb, per_position=False, state=reading.state)
