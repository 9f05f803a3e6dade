"""Screenshots of the dashboard for the docs, at a phone's width and at a desktop's; prints one JSON object.

    python bench/dashboard_shots.py [--out docs/img]

Starts ``robotd --sim`` on a free port (``tests/test_robotd.serving``; slow motors, so that a run is caught
mid-way), opens the dashboard
in headless Chromium (the system ``chromium``, driven by playwright) and writes:

- ``dashboard-390.png``: 390x844, a 3x3x3 run executing (the sticky top bar with the stop button, then the
  progress: moves done of total, the current move, the times);
- ``dashboard-390-calibration.png``: 390x844, the calibration tab with a face's corners open for editing;
- ``dashboard-390-history.png``: 390x844, the history, one card per run;
- ``dashboard-desktop.png``: 1280 wide, the same run, the whole page (the Machine and Computer cards, robotd's
  log);
- ``dashboard-desktop-history.png``: 1280x800, the history with its filters and export links.

The JSON says each file's size and the lowest text contrast measured on each shot (tests/page_checks.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# run as a script, this folder comes first on sys.path, and bench/serial.py would shadow pyserial
sys.path[0] = str(ROOT)
sys.path.insert(1, str(ROOT / "tests"))  # page_checks, and test_robotd's serving

from page_checks import CONTRAST, chromium_path  # noqa: E402
from test_robotd import serving  # noqa: E402

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
SLOW_RIG = """
[rig]
quarter_turn_s = 0.4
half_turn_s = 0.6
settle_s = 0.0
"""


def shoot(page, path: Path, full_page: bool = False) -> dict:
    page.screenshot(path=str(path), full_page=full_page)
    lowest = page.evaluate(CONTRAST)["lowest"]
    return {
        "file": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path),
        "bytes": path.stat().st_size,
        "lowest_contrast": lowest["ratio"] if lowest else None,
    }


def mid_run(page, url: str) -> None:
    """Open the dashboard and start a 3x3x3 run; back once the motors turn and a few moves are done."""
    page.goto(url)
    page.wait_for_selector('#connection[data-state="open"]')
    if page.get_attribute("#phase", "data-phase") != "executing":
        page.select_option("#puzzle", "3")
        page.fill("#seed", "11")
        page.click("#start")
    page.wait_for_function("() => document.querySelectorAll('#moves li.done').length >= 3", timeout=90_000)


def stop_and_run_again(page) -> None:
    """Stop the run under way, then run a 2x2x2 to the end: the history has a stopped run and a done one."""
    page.click("#stop")
    page.wait_for_selector('#phase[data-phase="stopped"]', timeout=30_000)
    page.select_option("#puzzle", "2")
    page.fill("#seed", "4")
    page.click("#start")
    page.wait_for_selector('#phase[data-phase="done"]', timeout=90_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--quick", action="store_true", help="accepted for the bench convention; always quick")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    shots = {}
    executable = chromium_path()
    if executable is None:
        sys.exit("no Chromium binary (apt-get install chromium, or set ROBOTD_CHROMIUM)")
    with tempfile.TemporaryDirectory() as folder, serving(Path(folder), rig=SLOW_RIG) as url:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            phone = browser.new_page(viewport=PHONE)
            mid_run(phone, url)
            shots["phone"] = shoot(phone, args.out / "dashboard-390.png")
            desktop = browser.new_page(viewport=DESKTOP)
            mid_run(desktop, url)
            desktop.wait_for_selector("#daemon-log li")
            desktop.wait_for_selector("#health dd")
            shots["desktop"] = shoot(desktop, args.out / "dashboard-desktop.png", full_page=True)
            stop_and_run_again(desktop)
            for name, page in (("desktop-history", desktop), ("390-history", phone)):
                page.click("#tab-history")
                page.wait_for_selector("#history-rows .badge.outcome-stopped")
                shots[name] = shoot(page, args.out / f"dashboard-{name}.png")
            phone.click("#tab-calibration")
            phone.wait_for_function("() => (document.querySelector('.calibration-view img') || {}).naturalWidth > 0")
            phone.click('.calibration-view[data-camera="ufr"] .corner-editor summary')
            phone.locator("#corner-0-0-x").scroll_into_view_if_needed()
            shots["calibration"] = shoot(phone, args.out / "dashboard-390-calibration.png")
            browser.close()
    print(json.dumps({"bench": "dashboard_shots", "shots": shots}))


if __name__ == "__main__":
    main()
