"""The dashboard as an operator lives in it (issue 34): a run on a phone, progress in the tab title, the Machine
card in words and live, the history's columns, colours, filters and export, robotd's log, the computer's health,
and the scan's warnings. Headless Chromium against a real uvicorn server, as in test_dashboard_page."""

import csv
import io
import logging
import re

import pytest

from page_checks import CONTRAST
from robot.health import HealthSources, health
from robot.run import ScanResult
from robot_doubles import ActingRig, VirtualRig, make_daemon, scanning_daemon, wait_done
from test_dashboard_page import open_dashboard, page, serve, start_from_page  # noqa: F401 - fixtures
from test_history_export import record

PHONE = {"width": 390, "height": 844}
IN_FIRST_SCREEN = """(ids) => ids.map((id) => {
  const box = document.getElementById(id).getBoundingClientRect();
  return {id, top: box.top, bottom: box.bottom, shown: box.height > 0};
})"""


def recorded_runs(history) -> dict[str, int]:
    """One run of each ending, as a daemon in use has them: their ids by outcome."""
    return {
        "done": record(history, "done", 3, 20),
        "stopped": record(history, "stopped", 3, 7),
        "error": record(history, "error", 2, 3, total=9, error="motion 4 failed: the board halted"),
        "interrupted": record(history, "interrupted", 3, 2, error="robotd stopped during this run"),
    }


def history_with_runs(serve, on) -> tuple[dict[str, int], object]:  # noqa: F811
    """A server whose history has ``recorded_runs``, its History tab open on ``on``: the ids and the server."""
    server = serve()
    ids = recorded_runs(server.daemon.history)
    on.goto(server.url + "#history")
    on.wait_for_selector("#history-rows .badge.outcome-interrupted")
    return ids, server


def rows_of(on, selector: str) -> dict[str, str]:
    return dict(zip(on.locator(f"{selector} dt").all_inner_texts(), on.locator(f"{selector} dd").all_inner_texts()))


# ---------------------------------------------------------------- a phone, and the tab title


def test_at_390_px_a_run_shows_its_progress_without_scrolling_and_the_tab_title_follows(serve, browser):  # noqa: F811
    server = serve(turn_s=0.3)
    context = browser.new_context(viewport=PHONE)
    phone = context.new_page()
    open_dashboard(phone, server.url)
    assert phone.title() == "robotd"
    start_from_page(phone, "2", seed="4")
    phone.wait_for_selector("#moves li.done", timeout=60_000)
    phone.evaluate("window.scrollTo(0, 0)")
    ids = ["phase", "progress-bar", "progress-text", "current-move", "elapsed", "remaining"]
    for box in phone.evaluate(IN_FIRST_SCREEN, ids):
        assert box["shown"] and 0 <= box["top"] and box["bottom"] <= PHONE["height"], box
    above = phone.evaluate(IN_FIRST_SCREEN, ["progress-title", "start-title"])
    assert above[0]["top"] < above[1]["top"]  # the progress above the start form
    progress = phone.inner_text("#progress-text")
    done, total = re.match(r"(\d+) of (\d+) moves — executing", progress).groups()
    assert re.fullmatch(r"Now turning: \S+", phone.inner_text("#current-move"))
    assert re.fullmatch(rf"▶ \d+/{total} · executing — robotd", phone.title()), phone.title()
    assert int(phone.title().split("/")[0][2:]) >= int(done)
    phone.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    phone.wait_for_function("() => document.title === '✓ done — robotd'")
    assert phone.is_hidden("#current-move")
    context.close()


def test_the_tab_title_says_error_after_a_failed_run(serve, page):  # noqa: F811
    server = serve(make=lambda directory, turn_s: scanning_daemon(directory, refuse=True, turn_s=turn_s))
    open_dashboard(page, server.url)
    start_from_page(page, "3", scramble="R U")
    page.wait_for_selector('#phase[data-phase="error"]', timeout=30_000)
    page.wait_for_function("() => document.title === '✗ error — robotd'")


def test_at_390_px_the_history_fits_the_screen_as_one_card_per_run(serve, browser):  # noqa: F811
    context = browser.new_context(viewport=PHONE)
    phone = context.new_page()
    history_with_runs(serve, phone)
    sizes = phone.evaluate("""() => {
      const wrap = document.querySelector(".table-wrap"), table = document.getElementById("history");
      return {page: document.documentElement.scrollWidth, wrap: wrap.clientWidth, table: table.scrollWidth,
              right: table.getBoundingClientRect().right, wrapRight: wrap.getBoundingClientRect().right};
    }""")
    assert sizes["page"] <= PHONE["width"], sizes
    assert sizes["table"] <= sizes["wrap"] and sizes["right"] <= sizes["wrapRight"] + 0.5, sizes
    first = phone.locator("#history-rows tr").first
    labels = first.locator("td").evaluate_all("cells => cells.map((c) => getComputedStyle(c, '::before').content)")
    assert '"Moves done"' in labels and '"Duration"' in labels
    context.close()


# ---------------------------------------------------------------- the Machine card


def linked_daemon(directory, turn_s):
    """A rig on a serial link whose board confirms each motion as it is done, as a real link counts them."""
    link = {
        "port": "/dev/serial/by-id/usb-Arduino_Mega_2560-if00",
        "connected": True,
        "healthy": True,
        "fault": None,
        "last_heard_s": 0.05,
        "in_flight": 1,
        "backlog": 2,
        "handshake": {"firmware": "robotd-fw", "version": "1.3", "stop_method": "ESTOP frame", "stop_latency_ms": 5},
        "counters": {"motions_done": 0, "resends": 2, "retransmissions": 1, "decode_errors": 1, "frames_sent": 40},
    }

    def status():
        link["counters"]["motions_done"] = daemon.runner.progress.get("done_moves", 0)
        return dict(link)

    daemon = make_daemon(directory, turn_s, ActingRig, link_status=status, mode="rig")
    daemon.link = link
    return daemon


def test_the_machine_card_says_the_link_in_words_and_follows_a_run(serve, page):  # noqa: F811
    server = serve(turn_s=0.4, make=linked_daemon)
    open_dashboard(page, server.url)
    page.wait_for_selector("#machine dt")
    rows = rows_of(page, "#machine")
    assert rows["Board"] == "robotd-fw 1.3" and rows["Stop"] == "ESTOP frame, about 5 ms"
    assert rows["Port"] == "/dev/serial/by-id/usb-Arduino_Mega_2560-if00"
    assert rows["Link"] == "connected; heard from 0.05 s ago"
    assert rows["Resends and errors"] == "3 resends, 1 error"
    assert rows["Commands"] == "1 sent and not yet confirmed, 2 waiting"
    assert rows["Motors"] == "on" and rows["Last fault"] == "none"
    assert rows["Confirmed by the board"] == "0 motor commands done"
    assert not [value for value in rows.values() if "{" in value or ": " in value and "," in value]

    start_from_page(page, "2", seed="4")
    # the card follows the moves as they are done, not only at the status poll every 10 s
    page.wait_for_function(
        """() => {
          const rows = [...document.querySelectorAll("#machine div")].map((d) => d.innerText.split("\\n"));
          const done = rows.find(([name]) => name === "Confirmed by the board");
          return document.getElementById("phase").dataset.phase === "executing" && done &&
            Number(done[1].split(" ")[0]) >= 3;
        }""",
        timeout=60_000,
    )
    progress = page.inner_text("#progress-text")
    confirmed = int(rows_of(page, "#machine")["Confirmed by the board"].split()[0])
    assert abs(confirmed - int(progress.split()[0])) <= 1, (confirmed, progress)
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)

    server.daemon.link.update(
        connected=False,
        healthy=False,
        fault={"type": "LinkError", "code": 4, "message": "the board stopped answering", "done_through": 7},
    )
    page.reload()
    page.wait_for_selector('#connection[data-state="open"]')
    rows = rows_of(page, "#machine")
    assert rows["Link"] == "not connected"
    assert rows["Last fault"] == "the board stopped answering (code 4)"
    assert page.get_attribute("#machine div:has(dt:text-is('Last fault')) dd", "class") == "bad"
    assert page.problems == []


# ---------------------------------------------------------------- the history


def test_history_shows_moves_done_duration_and_errors_and_filters_by_outcome_and_cube(serve, page):  # noqa: F811
    ids, _ = history_with_runs(serve, page)
    header = page.locator("#history thead th").all_inner_texts()
    assert header == ["Run", "Started", "Cube", "Outcome", "Moves done", "Duration", "Error"]

    def cells(run_id):
        row = page.locator(f'#history-rows tr[data-run-id="{run_id}"] td')
        return dict(zip(header, row.all_inner_texts()))

    assert cells(ids["stopped"])["Moves done"] == "7 of 20"  # what it turned, not the solution's length
    assert cells(ids["done"])["Moves done"] == "20 of 20"
    assert cells(ids["error"])["Moves done"] == "3 of 9"
    assert cells(ids["error"])["Error"] == "motion 4 failed: the board halted"
    assert cells(ids["stopped"])["Duration"] == "12.5 s"
    colours = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll("#history-rows .badge")]
      .map((b) => [b.textContent, getComputedStyle(b).backgroundColor]))""")
    assert len({colours[o] for o in ("done", "stopped", "error", "interrupted")}) == 4, colours

    only = "(id) => [...document.querySelectorAll('#history-rows tr')].map((r) => r.dataset.runId).join() === id"
    page.select_option("#puzzle-filter", "2")
    page.wait_for_function(only, arg=str(ids["error"]))
    page.select_option("#puzzle-filter", "")
    page.select_option("#outcome-filter", "stopped")
    page.wait_for_function(only, arg=str(ids["stopped"]))
    page.select_option("#puzzle-filter", "2")
    page.wait_for_selector("#history-empty:not([hidden])")
    assert page.inner_text("#history-empty") == "No runs pass these filters."
    assert page.problems == []


def test_the_export_links_download_the_filtered_runs(serve, page):  # noqa: F811
    ids, _ = history_with_runs(serve, page)
    page.select_option("#puzzle-filter", "3")
    page.wait_for_function("() => document.getElementById('export-csv').href.includes('puzzle=3')")
    with page.expect_download() as download:
        page.click("#export-csv")
    file = download.value
    assert re.fullmatch(r"robotd-runs-\d{8}-\d{6}-3x3\.csv", file.suggested_filename)
    rows = list(csv.DictReader(io.StringIO(open(file.path(), encoding="utf-8").read())))
    assert sorted(int(row["id"]) for row in rows) == sorted(ids[o] for o in ("done", "stopped", "interrupted"))
    page.select_option("#outcome-filter", "done")
    page.wait_for_function("() => document.getElementById('export-json').href.includes('outcome=done')")
    with page.expect_download() as download:
        page.click("#export-json")
    assert download.value.suggested_filename.endswith("-done-3x3.json")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_each_outcome_badge_meets_wcag_aa_contrast(serve, browser, scheme):  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    desktop = context.new_page()
    history_with_runs(serve, desktop)
    result = desktop.evaluate(CONTRAST)
    context.close()
    assert result["checked"] and result["failing"] == [], result["failing"]


# ---------------------------------------------------------------- robotd's log, the computer's health


@pytest.fixture
def info_logging():
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.INFO)  # as [robotd] log_level = "info" sets it
    yield logging.getLogger("robotd")
    root.setLevel(level)


def test_the_log_panel_follows_robotds_log_as_text_and_keeps_at_most_200_lines(serve, page, info_logging):  # noqa: F811
    server = serve()
    page.clock.install()  # the log is read every 2 s: the test moves the page's clock on instead of waiting
    open_dashboard(page, server.url)
    info_logging.warning('calibration <b>saved</b> <img src=x onerror="window.injected=1">')
    page.clock.run_for("00:02")
    page.wait_for_function("() => document.getElementById('daemon-log').innerText.includes('calibration <b>saved</b>')")
    line = page.locator("#daemon-log li", has_text="calibration").last
    assert line.get_attribute("data-level") == "WARNING"
    assert page.locator("#daemon-log img, #daemon-log b").count() == 0
    for i in range(260):
        info_logging.info("run %d: line", i)
    page.clock.run_for("00:02")
    page.wait_for_function("() => document.getElementById('daemon-log').innerText.includes('run 259: line')")
    texts = page.locator("#daemon-log li").all_inner_texts()
    assert len(texts) <= 200
    assert texts[-1].endswith("robotd: run 259: line")
    assert page.evaluate("window.injected") is None
    assert page.problems == []


def test_the_computer_card_shows_temperature_throttling_disk_and_memory(serve, page, monkeypatch, tmp_path):  # noqa: F811
    folder = tmp_path / "pi"
    folder.mkdir()
    (folder / "temp").write_text("48250\n")
    (folder / "meminfo").write_text("MemTotal: 1000000 kB\nMemAvailable: 250000 kB\n")
    sources = HealthSources(thermal=folder / "temp", meminfo=folder / "meminfo", loadavg=folder / "none")
    monkeypatch.setattr("robot.web.health", lambda data_dir: health(data_dir, sources))
    server = serve()
    page.clock.install()  # the page's timers run on a clock the test moves on: no waiting for the refresh
    open_dashboard(page, server.url)
    page.wait_for_selector("#health dt")
    rows = rows_of(page, "#health")
    assert rows["CPU temperature"] == "48.2 °C"
    assert rows["Memory"] == "256.0 MB available of 1.0 GB"
    assert " free of " in rows["Disk"] and str(server.daemon.history.path.parent) in rows["Disk"]
    assert rows["Load"] == f"not available here (no {folder / 'none'})"
    assert rows["Throttling"].startswith("not available here")
    (folder / "temp").write_text("51000\n")  # read again every few seconds
    page.clock.run_for("00:06")
    page.wait_for_function(
        """() => [...document.querySelectorAll("#health dd")].some((dd) => dd.textContent === "51.0 °C")""",
        timeout=15_000,
    )
    assert page.problems == []


# ---------------------------------------------------------------- the scan's warnings


class DriftingRig(VirtualRig):
    """Scans with a colour drift warning and an image taken again at another exposure."""

    def scan(self):
        result = super().scan()
        result = ScanResult(
            result.state,
            result.confidence,
            warnings=["the white of U is 14 units off its calibration (light changed?)"],
            retakes=[{"image": "ufr", "exposure": 0.5, "why": "clipped", "kept": True}],
        )
        return result


def test_scan_warnings_and_retakes_show_in_the_run_view_and_the_runs_details(serve, page):  # noqa: F811
    server = serve(make=lambda directory, turn_s: make_daemon(directory, turn_s, DriftingRig))
    open_dashboard(page, server.url)
    assert page.is_hidden("#scan-notes")
    start_from_page(page, "2", seed="4")
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    notes = page.locator("#scan-notes-list li").all_inner_texts()
    assert notes == [
        "the white of U is 14 units off its calibration (light changed?)",
        "ufr: colours clipped, taken again at exposure 0.5, this one kept",
    ]
    assert "warnings: the white of U is 14 units off" in page.inner_text("#log")
    page.click("#tab-history")
    page.locator("#history-rows tr").first.click()
    page.wait_for_selector("#run-dialog[open]")
    details = page.inner_text("#run-details")
    assert "Scan warning\nthe white of U is 14 units off" in details
    assert "Scan retake\nufr: colours clipped" in details
    assert page.problems == []
    wait_done(server.daemon)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_log_panel_and_the_computer_card_meet_wcag_aa_contrast(serve, browser, info_logging, scheme):  # noqa: F811
    server = serve()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    desktop = context.new_page()
    desktop.clock.install()
    open_dashboard(desktop, server.url)
    for level in (logging.INFO, logging.WARNING, logging.ERROR):
        info_logging.log(level, "a %s line for the contrast check", logging.getLevelName(level))
    desktop.clock.run_for("00:02")  # the log's next read, without waiting for it
    desktop.wait_for_selector('#daemon-log li[data-level="ERROR"]', timeout=10_000)
    desktop.wait_for_selector("#health dd")
    result = desktop.evaluate(CONTRAST)
    context.close()
    assert result["checked"] and result["failing"] == [], result["failing"]


def test_a_splice_during_the_run_shows_which_solver_found_which_moves(serve, page):  # noqa: F811
    """The run may splice a quicker ending in while the robot turns (a ``solution_update`` event)."""
    server = serve(turn_s=0.3)
    open_dashboard(page, server.url)
    start_from_page(page, "2", seed="4")
    page.wait_for_selector("#moves li.done", timeout=60_000)
    update = {
        "moves": "R2 F2 R' F' R U2",
        "htm": 6,
        "qtm": 9,
        "total_moves": 6,
        "estimated_s": 1.4,
        "segments": [{"solver": "pocket-table", "htm": 4}, {"solver": "tail search", "htm": 2}],
        "splices": [{"at": 4}],
    }
    server.daemon.bus.publish("solution_update", server.daemon.runner.run_id, **update)
    page.wait_for_function("() => document.getElementById('solution-summary').textContent.includes('spliced')")
    summary = page.inner_text("#solution-summary")
    assert summary.startswith("R2 F2 R' F' R U2 — 6 moves HTM, 9 QTM")
    assert "1 quicker ending spliced in while turning (pocket-table 4 moves, then tail search 2 moves)" in summary
    assert "a quicker ending spliced in: 6 moves HTM in all now; motors ≈ 1.40 s" in page.inner_text("#log")
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    assert page.problems == []
