"""Every face of every real RGB scan re-shot over a grid of brightness and gamma. Prints one JSON object.

    python bench/vision_relight_sweep.py [--devset PATH] [--confident C] [--palette]

The stress set (``bench/vision_stress.py``) relights each face with four
fixed lights; this sweeps brightness finely, where a face's fitted light
can trade against colours that differ mainly in lightness: gains 0.4, 1.5,
2.2 and 3 in linear light, each with a gamma of 0.8 to 1.1 on the encoded
values, on each of the six faces (384 readings for the dev set's 4 scans).
Target: ``wrong`` = 0.

``--palette`` reads each scan with a colour calibration. These robots'
solved-cube scans are not in the dev set, so each palette is made from the
scan's own clean colours, grouped as the scanner reads them
(``reading_calibration``; never from the answer): the calibration of a rig
whose light then changed on one face.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.vision_cases import CONFIDENT, DEFAULT_DEVSET, VERDICTS, judge, reading_calibration  # noqa: E402
from bench.vision_stress import dev_sources  # noqa: E402
from solver.puzzles.cube.geometry import FACES  # noqa: E402
from vision import classify  # noqa: E402
from vision.lighting import recolour  # noqa: E402

GAINS = (0.4, 1.5, 2.2, 3.0)
GAMMAS = (0.8, 0.9, 1.0, 1.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devset", type=Path, default=DEFAULT_DEVSET)
    parser.add_argument("--confident", type=float, default=CONFIDENT)
    parser.add_argument("--palette", action="store_true", help="read with a calibration of each scan's rig")
    args = parser.parse_args()
    started = time.perf_counter()
    sources, note = dev_sources(args.devset)
    rows = []
    for source in (s for s in sources if s.rgb is not None):
        per_face = len(source.rgb) // 6
        calibration = reading_calibration(source.rgb) if args.palette else None
        for face, gain, gamma in product(range(6), GAINS, GAMMAS):
            rgb = source.rgb.copy()
            block = slice(face * per_face, (face + 1) * per_face)
            rgb[block] = recolour(rgb[block], (gain, gain, gain), gamma)
            outcome = judge(lambda rgb=rgb, cal=calibration: classify(rgb, cal), source.truth, confident=args.confident)
            rows.append(
                {
                    "source": source.name,
                    "face": FACES[face],
                    "gain": gain,
                    "gamma": gamma,
                    "palette": calibration is not None,
                    "verdict": outcome.verdict,
                    "differ": outcome.differ,
                }
            )
    print(
        json.dumps(
            {
                "devset_note": note,
                "palette": args.palette,
                "readings": len(rows),
                "totals": {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS},
                "not_right": [r for r in rows if r["verdict"] not in ("right", "refused")],
                "wall_s": round(time.perf_counter() - started, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
