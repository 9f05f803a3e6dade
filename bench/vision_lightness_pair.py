"""Red and orange told apart by lightness alone, on two faces only, one of them re-shot: the scanner's
hardest case for "never wrong with confidence". Prints one JSON object.

    python bench/vision_lightness_pair.py [--cubes N] [--seed S] [--confident C] [--palette [--gaps]]

The cubes are states of <R, L, U2, D2, F2, B2>, so faces R and L hold all
18 red and orange stickers and nothing else (as the dev set's
``resolver-6f2686e-3x3x3-random-02`` does). Red and orange share one
chromaticity and differ by 1.35 times in linear light (about 9 L*, what
that dim scan shows); each sticker is shaded by a log-normal brightness
factor (``--shading``, the sticker-to-sticker spread) and a little
per-channel noise. Then one face is re-shot with a gain in linear light
(``R x1.0``: none).
A face's light is then measured only through the very stickers whose
colour it decides, so most of these scans are refused; the figure that
matters is ``wrong`` (another cube with a differing sticker read as sure).

``--palette`` reads every scan with a colour calibration, as a user of such
a rig would make one: a solved cube scanned once under the rig's light
(the same shading and noise, no face re-shot, its own seed). The
calibration keeps no position gains: this rig has no vignetting, and its
shading is per sticker, not per position.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.vision_cases import CONFIDENT, VERDICTS, judge  # noqa: E402
from solver.puzzles.cube.cubie import CubieCube, apply_moves_cubie, to_facelets  # noqa: E402
from solver.puzzles.cube.geometry import FACES  # noqa: E402
from solver.puzzles.cube.notation import parse_moves  # noqa: E402
from vision import Calibration, calibrate, classify  # noqa: E402
from vision.lab import linear_to_srgb  # noqa: E402
from vision.reader import Reader, costs  # noqa: E402

# Linear reflectance as a dim camera sees it: orange is red, 1.35 times as light.
PALETTE = {
    "U": (0.50, 0.55, 0.55),
    "R": (0.30, 0.030, 0.010),
    "F": (0.008, 0.10, 0.030),
    "D": (0.18, 0.13, 0.010),
    "L": (0.40, 0.040, 0.0135),
    "B": (0.008, 0.025, 0.055),
}
MOVES = ("R", "R'", "R2", "L", "L'", "L2", "U2", "D2", "F2", "B2")
RESHOTS = (("R", 1.0), ("R", 2.2), ("R", 3.0), ("R", 0.4), ("L", 2.2), ("L", 0.4), ("U", 2.2))
SCRAMBLE_LENGTH = 25
SPREAD_SCALES = (1.0, 1.5, 2.0, 3.0)


def lightness_pair_cube(rng: np.random.Generator) -> str:
    """A facelet string in which faces R and L hold only the R and L colours."""
    moves = parse_moves(" ".join(rng.choice(MOVES, SCRAMBLE_LENGTH)))
    return to_facelets(apply_moves_cubie(CubieCube.solved(3), moves))


def scan_colours(state: str, face: str, gain: float, shading: float, rng: np.random.Generator) -> np.ndarray:
    linear = np.array([PALETTE[c] for c in state]) * rng.lognormal(0, shading, (54, 1))
    linear *= rng.lognormal(0, 0.03, (54, 3))
    at = FACES.index(face) * 9
    linear[at : at + 9] *= gain
    return np.round(linear_to_srgb(linear))


def rig_calibration(shading: float, seed: int) -> Calibration:
    """The palette of this rig: a solved cube scanned once under its light (no face re-shot)."""
    rng = np.random.default_rng([seed, 1_000_000])
    solved = to_facelets(CubieCube.solved(3))
    return calibrate(scan_colours(solved, "R", 1.0, shading, rng), per_position=False)


def truth_gaps(rgb: np.ndarray, calibration: Calibration, truth: str, read: str) -> dict[str, float]:
    """Cost of the true cube minus that of the cube read, at the calibrated spreads times each k."""
    reader = Reader(rgb, calibration)
    assert reader.prior_spread is not None
    gaps = {}
    for k in SPREAD_SCALES:
        cost = []
        for state in (truth, read):
            labels = np.array([FACES.index(c) for c in state])
            refs = reader.update(labels)
            spread = reader.prior_spread[reader._palette_match(labels)] * k
            cost.append(float(costs(reader.features, refs, spread)[0][np.arange(len(labels)), labels].sum()))
        gaps[f"x{k:g}"] = round(cost[0] - cost[1], 1)
    return gaps


def _counts(rows: list[dict]) -> dict:
    return {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=int, default=20, help="cubes per re-shot face and shading")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shading", type=float, nargs="+", default=[0.1, 0.2])
    parser.add_argument("--confident", type=float, default=CONFIDENT)
    parser.add_argument("--palette", action="store_true", help="read with a calibration of the rig")
    parser.add_argument("--gaps", action="store_true", help="with --palette: wrong readings against the truth")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    for shading in args.shading:
        calibration = rig_calibration(shading, args.seed) if args.palette else None
        for face, gain in RESHOTS:
            for cube in range(args.cubes):
                rng = np.random.default_rng([args.seed, cube])
                state = lightness_pair_cube(rng)
                rgb = scan_colours(state, face, gain, shading, rng)
                outcome = judge(lambda rgb=rgb, cal=calibration: classify(rgb, cal), state, confident=args.confident)
                row = {"shading": shading, "face": face, "gain": gain, "cube": cube, "verdict": outcome.verdict}
                if args.gaps and calibration is not None and outcome.verdict == "wrong":
                    row["truth_minus_read_nats"] = truth_gaps(rgb, calibration, state, classify(rgb, calibration).state)
                rows.append(row)
    per_reshot = {
        f"{face} x{gain}": _counts([r for r in rows if (r["face"], r["gain"]) == (face, gain)])
        for face, gain in RESHOTS
    }
    print(
        json.dumps(
            {
                "palette": args.palette,
                "cases": len(rows),
                "totals": _counts(rows),
                "per_reshot": per_reshot,
                "wrong_cases": [r for r in rows if r["verdict"] == "wrong"],
                "wall_s": round(time.perf_counter() - started, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
