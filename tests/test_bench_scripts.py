"""Every benchmark in bench/ still starts: its imports resolve and its arguments parse.

The benches run for minutes, so the tests run none of them in full, and mypy leaves bench/ out; without
this a change to what a bench imports would only show when someone next measures with it.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SCRIPTS = sorted(path for path in BENCH.glob("*.py") if "argparse" in path.read_text())
HELPERS = sorted(path.stem for path in BENCH.glob("*.py") if "argparse" not in path.read_text())


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_each_bench_starts_and_explains_its_arguments(script):
    done = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("usage:")


def test_the_benches_shared_modules_import():
    # bench/ goes last on the path, as the benches that import these put it: bench/serial.py would shadow pyserial
    code = f"import sys; sys.path.append({str(BENCH)!r}); " + "; ".join(f"import {name}" for name in HELPERS)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    assert HELPERS and done.returncode == 0, done.stderr[-3000:]
