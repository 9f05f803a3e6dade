"""The dashboard page: served by the app with relative URLs, and driven by a real browser.

The browser tests run headless Chromium (the system ``chromium`` package) through
playwright's Python API against a real uvicorn server on a free port; they skip
with the reason when playwright or a Chromium binary is missing.
"""

import re
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.responses import PlainTextResponse

import solver
from page_checks import CONTRAST, OVERLAPS, drag_by
from robot.daemon import Daemon
from robot.errors import RobotError
from robot.motion import parse_jog
from robot.web import STATIC_DIR, WebSettings, create_app
from robot.web_server import dashboard_server
from robot_doubles import KEY, QUICK_HOME, acting_daemon, calibrating_daemon, make_daemon, scanning_daemon, wait_done
from solver.puzzles.cube.notation import MOVE_NAMES
from test_robotd import free_port, serving

PAGE_FILES = sorted(p.name for p in STATIC_DIR.iterdir() if p.suffix in (".html", ".js", ".css"))
SVG_NAMESPACE = "http://www.w3.org/2000/svg"  # an XML name, never fetched
STEPS = ["scanning", "solving", "executing", "verifying"]


# ---------------------------------------------------------------- served by the app (fast)


@pytest.fixture
def client(tmp_path):
    daemon = make_daemon(tmp_path)
    with TestClient(create_app(daemon, WebSettings(allowed_hosts=("testserver",)))) as client:
        yield client
    daemon.close()


def referenced_files() -> set[str]:
    """Every file the page loads: src/href in index.html (but the API's) and ES module imports in the scripts."""
    html = (STATIC_DIR / "index.html").read_text()
    names = {name for name in re.findall(r'(?:src|href)="([^"#:]+)"', html) if not name.startswith("api/")}
    for script in STATIC_DIR.glob("*.js"):
        names |= {name.removeprefix("./") for name in re.findall(r'from\s+"([^"]+)"', script.read_text())}
    return names


def test_index_and_every_file_it_loads_are_served(client):
    index = client.get("/")
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="app.js">' in index.text
    names = referenced_files()
    assert {"app.js", "style.css", "api.js", "net.js", "socket.js"} <= names
    types = {".js": "javascript", ".css": "text/css"}
    for name in names:
        reply = client.get(f"/{name}")
        assert reply.status_code == 200, name
        assert types[Path(name).suffix] in reply.headers["content-type"], name
        assert reply.text == (STATIC_DIR / name).read_text()


def test_page_uses_only_relative_urls_and_nothing_external():
    for name in PAGE_FILES:
        text = (STATIC_DIR / name).read_text().replace(SVG_NAMESPACE, "")
        assert not re.search(r"""["'`(]\s*/+(api|ws|stream|docs)\b""", text), f"{name}: absolute URL to the API"
        assert not re.search(r"\b(https?|wss?):?//", text, re.I), f"{name}: external or absolute URL"
        assert "@import" not in text and "cdn" not in text.lower(), name


def test_every_element_the_scripts_look_up_is_in_the_page():
    html = (STATIC_DIR / "index.html").read_text()
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    wanted = set()
    for script in STATIC_DIR.glob("*.js"):
        wanted |= set(re.findall(r'byId\(\s*"([^"]+)"\s*\)', script.read_text()))
    wanted |= {f"{prefix}-{tab}" for prefix in ("tab", "panel") for tab in ("run", "history", "calibration")}
    assert wanted and wanted <= ids, sorted(wanted - ids)


# ---------------------------------------------------------------- in a real browser


class SubPath:
    """What a reverse proxy does for an app published under a prefix: only paths below it pass, stripped."""

    def __init__(self, app, prefix: str):
        self.app, self.prefix = app, prefix

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            if not scope["path"].startswith(self.prefix + "/"):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await PlainTextResponse(f"not under {self.prefix}/", 404)(scope, receive, send)
                return
            path = scope["path"][len(self.prefix) :]
            scope = {**scope, "path": path, "raw_path": path.encode()}
        await self.app(scope, receive, send)


class Server:
    """uvicorn serving the dashboard app on 127.0.0.1 in a thread; ``restart`` keeps the port and the daemon."""

    def __init__(self, daemon, settings: WebSettings):
        self.daemon, self.settings = daemon, settings
        self.url = f"http://127.0.0.1:{settings.port}{settings.root_path}/"
        self.start()

    def start(self):
        import uvicorn

        app = create_app(self.daemon, self.settings)
        served = SubPath(app, self.settings.root_path) if self.settings.root_path else app
        config = uvicorn.Config(
            served,
            host="127.0.0.1",
            port=self.settings.port,
            log_level="warning",
            timeout_graceful_shutdown=0.5,
            ws_ping_interval=None,
        )
        self.server = dashboard_server(config, app)
        self.thread = threading.Thread(target=self.server.run, name="dashboard-test-server", daemon=True)
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.time() < deadline, "uvicorn did not start"
            time.sleep(0.02)

    def stop(self):
        self.server.should_exit = True
        self.thread.join(10)
        assert not self.thread.is_alive(), "uvicorn did not stop"

    def restart(self):
        self.stop()
        self.start()


@pytest.fixture
def serve(tmp_path):
    """Start servers on demand: ``serve(auth=False)`` returns a running ``Server``."""
    started = []

    def start(
        auth: bool = False, turn_s: float = 0.05, calibration: dict | None = None, root_path: str = "", make=make_daemon
    ) -> Server:
        directory = tmp_path / f"daemon{len(started)}"
        directory.mkdir()
        daemon = make(directory, turn_s=turn_s)
        if calibration is not None:
            daemon = Daemon(
                runner=daemon.runner,
                history=daemon.history,
                bus=daemon.bus,
                rig=daemon.rig,
                cameras=daemon.cameras,
                link_status=daemon.link_status,
                simulation=daemon.simulation,
                calibration=lambda: calibration,
            )
        settings = (
            WebSettings(host="0.0.0.0", api_key=KEY, port=free_port(), root_path=root_path)
            if auth
            else WebSettings(port=free_port(), root_path=root_path)
        )
        server = Server(daemon, settings)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
        wait_done(server.daemon, 5)
        server.daemon.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.problems = []
    page.on("pageerror", lambda error: page.problems.append(f"page error: {error}"))
    page.on(
        "console", lambda message: page.problems.append(f"console: {message.text}") if message.type == "error" else None
    )
    yield page
    context.close()


def open_dashboard(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector('#connection[data-state="open"]', timeout=10_000)


# Records every state the net shows and every phase, as they happen.
WATCH = """() => {
  window.seen = {states: [], phases: []};
  const net = document.getElementById("net"), phase = document.getElementById("phase");
  new MutationObserver(() => {
    const s = net.dataset.state;
    if (s && s !== window.seen.states.at(-1)) window.seen.states.push(s);
  }).observe(net, {attributes: true, attributeFilter: ["data-state"]});
  new MutationObserver(() => {
    const p = phase.dataset.phase;
    if (p !== window.seen.phases.at(-1)) window.seen.phases.push(p);
  }).observe(phase, {attributes: true, attributeFilter: ["data-phase"]});
}"""

NET_FACES = """() => {
  const faces = {};
  for (const rect of document.querySelectorAll("#net rect.sticker")) {
    (faces[rect.dataset.face] ||= []).push(rect.dataset.letter);
  }
  return faces;
}"""


def start_from_page(page, puzzle: str, seed: str = "", scramble: str = "") -> None:
    page.select_option("#puzzle", puzzle)
    page.fill("#seed", seed)
    page.fill("#scramble", scramble)
    page.click("#start")


def check_a_run_from_the_page(page, url: str, screenshots: Path) -> None:
    """Start a 2x2 run from the page, follow it to done, check the net, moves, timings and history.

    Needs only the address of a dashboard in simulation mode (this module's server, or ``robotd --sim``).
    """
    open_dashboard(page, url)
    assert page.is_visible("#sim-options") and page.is_visible("#stop")
    page.evaluate(WATCH)
    start_from_page(page, "2", seed="4")
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    page.wait_for_function("() => document.getElementById('elapsed').textContent !== '–'")

    seen = page.evaluate("window.seen")
    assert seen["phases"][0] == "scanning" and seen["phases"][-1] == "done", seen["phases"]
    assert "executing" in seen["phases"]
    faces = page.evaluate(NET_FACES)
    assert sorted(faces) == list("BDFLRU") and all(len(letters) == 4 for letters in faces.values())
    assert all(len(set(letters)) == 1 for letters in faces.values()), faces  # every face one colour
    assert len({letters[0] for letters in faces.values()}) == 6
    assert page.get_attribute("#net", "data-solved") == "true"
    assert "solved" in page.inner_text("#net-caption")

    runs = page.request.get(url + "api/runs?limit=1").json()["runs"]
    run = page.request.get(url + f"api/runs/{runs[0]['id']}").json()
    assert run["outcome"] == "done"
    commands = next(e["data"]["commands"] for e in run["events"] if e["kind"] == "solution")
    move_states = [e["data"]["state"] for e in run["events"] if e["kind"] == "move"]
    assert commands and len(move_states) == len(commands)
    expected = [run["scanned_state"], *move_states]
    verified = next(e["data"]["state"] for e in run["events"] if e["kind"] == "verified")
    if verified != expected[-1]:
        expected.append(verified)
    assert seen["states"] == expected, "the net did not follow the moves one by one"

    assert page.locator("#cameras img").first.get_attribute("src").startswith("stream/")
    page.wait_for_function("() => document.querySelector('#cameras img').naturalWidth > 0")  # a frame came
    moves = page.locator("#moves li")
    assert moves.count() == len(commands)
    assert moves.all_inner_texts() == commands
    assert page.locator("#moves li.done").count() == len(commands)
    assert page.locator('#moves li[aria-current="step"]').count() == 0
    bar = page.locator("#progress-bar")
    assert bar.get_attribute("value") == bar.get_attribute("max") == str(run["length_htm"])
    steps = page.locator("#steps th").all_inner_texts()
    assert [s for s in steps if s in STEPS] == STEPS
    assert ("preparing" in steps) == any(e["kind"] == "prepared" for e in run["events"])
    solution = next(e["data"] for e in run["events"] if e["kind"] == "solution")
    assert run["solver"] == solution["solver"] == "pocket-table"  # a 2x2 comes from the exact table
    assert "found by pocket-table" in page.inner_text("#solution-summary")
    assert "solution by pocket-table" in page.inner_text("#log")
    page.screenshot(path=str(screenshots / "dashboard-run.png"), full_page=True)

    page.click("#tab-history")
    row = page.locator(f'#history-rows tr[data-run-id="{run["id"]}"]')
    row.wait_for()
    assert row.get_attribute("data-outcome") == "done"
    assert "2x2" in row.inner_text()
    page.wait_for_selector(f'#chart .bar[data-run-id="{run["id"]}"]')
    row.click()
    page.wait_for_selector("#run-dialog[open]")
    details = page.inner_text("#run-details")
    assert run["solution"] in details and "verified: the cube is solved" in details
    assert "Solver\npocket-table" in details
    assert page.locator("#run-details .log li").count() == len(run["events"])
    page.screenshot(path=str(screenshots / "dashboard-history.png"), full_page=True)
    page.click("#run-dialog-close")
    for name in ("dashboard-run.png", "dashboard-history.png"):
        print(f"screenshot: {screenshots / name}")


def test_a_run_started_from_the_page_ends_solved_and_is_in_the_history(serve, page, tmp_path):
    server = serve()
    check_a_run_from_the_page(page, server.url, tmp_path)
    assert page.problems == []


def test_works_behind_a_reverse_proxy_under_a_sub_path(serve, page, tmp_path):
    server = serve(root_path="/robot")
    assert server.url.endswith("/robot/")
    assert page.request.get(server.url.replace("/robot/", "/api/status")).status == 404  # only the prefix passes
    check_a_run_from_the_page(page, server.url, tmp_path)
    assert page.problems == []


def test_escape_closes_the_run_dialog_and_never_stops_the_run(serve, page):
    """Escape used to stop the robot wherever the focus was: closing the details of a run stopped the run."""
    server = serve(turn_s=0.3)
    open_dashboard(page, server.url)
    start_from_page(page, "2", seed="4")
    page.wait_for_selector('#phase[data-phase="executing"]', timeout=60_000)
    page.click("#tab-history")
    row = page.locator('#history-rows tr[data-outcome="running"]')
    row.wait_for()
    row.click()
    page.wait_for_selector("#run-dialog[open]")
    page.keyboard.press("Escape")
    page.wait_for_selector("#run-dialog:not([open])", state="hidden")
    page.keyboard.press("Escape")  # nothing open: still nothing stops
    page.click("#tab-run")
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    run = page.request.get(server.url + "api/runs/1").json()
    assert run["outcome"] == "done" and "stop_requested" not in [e["kind"] for e in run["events"]]
    assert page.get_attribute("#stop", "aria-keyshortcuts") is None
    page.click("#stop")  # the button still stops, of course
    page.wait_for_selector('#messages [data-id="stop"]')
    assert page.problems == []


def test_a_refused_start_and_a_failed_run_show_readable_messages(serve, page):
    server = serve(make=lambda directory, turn_s: scanning_daemon(directory, refuse=True, turn_s=turn_s))
    open_dashboard(page, server.url)
    start_from_page(page, "3", scramble="R U X")  # refused before any run starts
    page.wait_for_selector("#messages .message.error")
    message = page.locator("#messages .message.error").inner_text()
    assert "Could not start a run: scramble: move 3 ('X' at character 5)" in message
    assert "{" not in message and "detail" not in message
    start_from_page(page, "3", scramble="R U")  # this rig's scan is refused: the run fails
    page.wait_for_selector('#phase[data-phase="error"]', timeout=30_000)
    message = page.locator("#messages .message.error").inner_text()
    assert "Run 1 failed: scan failed after 1 attempts: cannot read the cube for sure" in message
    assert "{" not in message and "detail" not in message
    assert page.get_attribute("#messages", "aria-live") == "assertive"


def test_the_api_key_is_asked_once_and_kept(serve, page):
    server = serve(auth=True)
    open_dashboard(page, server.url)
    page.click("#start")
    page.wait_for_selector("#key-dialog[open]")
    assert "API key" in page.inner_text("#key-reason")
    page.fill("#key-input", "not-the-right-key")
    page.click('#key-dialog button[value="save"]')
    page.wait_for_selector("#messages .message.error")
    assert "API key" in page.inner_text("#messages")
    assert page.evaluate("localStorage.getItem('robotd.apiKey')") is None

    page.click("#start")
    page.wait_for_selector("#key-dialog[open]")
    page.fill("#key-input", KEY)
    page.press("#key-input", "Enter")
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    assert page.evaluate("localStorage.getItem('robotd.apiKey')") == KEY

    page.reload()
    page.wait_for_selector('#connection[data-state="open"]')
    page.click("#start")  # the kept key is sent: no second question
    page.wait_for_selector(
        '#phase[data-phase="scanning"], #phase[data-phase="solving"], '
        '#phase[data-phase="executing"], #phase[data-phase="verifying"]',
        timeout=10_000,
    )
    assert not page.is_visible("#key-dialog")
    wait_done(server.daemon)


def test_reconnects_and_rebuilds_the_view_from_the_snapshot(serve, page):
    server = serve()
    open_dashboard(page, server.url)
    start_from_page(page, "2", seed="7")
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    server.restart()
    page.wait_for_selector('#connection[data-state="open"]', timeout=20_000)
    assert page.get_attribute("#phase", "data-phase") == "done"
    assert page.get_attribute("#net", "data-solved") == "true"
    assert page.get_attribute("#net", "data-state") == server.daemon.runner.progress["state"]


NET_GEOMETRY = """async ([state, confidence]) => {
  const {CubeNet} = await import("./net.js");
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.style.width = "480px";
  document.body.append(svg);
  const doubtful = new CubeNet(svg).show(state, confidence);
  const boxes = {};
  for (const face of svg.querySelectorAll("g.face")) {
    const b = face.getBBox();
    boxes[face.dataset.face] = [b.x, b.y, b.width, b.height];
  }
  const marked = [...svg.querySelectorAll(".doubtful rect")].map((r) => r.dataset.face + r.dataset.index);
  const visibleMarks = [...svg.querySelectorAll(".doubt-mark")]
    .filter((m) => getComputedStyle(m).display !== "none").length;
  svg.remove();
  return {doubtful, boxes, marked, visibleMarks, count: svg.querySelectorAll("rect.sticker").length,
          solved: svg.dataset.solved, size: svg.dataset.size};
}"""


@pytest.mark.parametrize("n", [3, 2])
def test_net_layout_and_low_confidence_marks(serve, page, n):
    server = serve()
    page.goto(server.url)
    state = solver.scramble(n, seed=3)["state"]
    confidence = [1.0] * (6 * n * n)
    confidence[2], confidence[6 * n * n - 1] = 0.59, 0.2  # U3, and the last sticker of B
    result = page.evaluate(NET_GEOMETRY, [state, confidence])
    assert result["count"] == 6 * n * n and result["size"] == str(n) and result["solved"] == "false"
    assert result["doubtful"] == 2 and result["visibleMarks"] == 2
    assert sorted(result["marked"]) == sorted(["U2", f"B{n * n - 1}"])
    boxes = result["boxes"]
    assert len({(round(w, 3), round(h, 3)) for _, _, w, h in boxes.values()}) == 1  # square faces, one size
    xs = sorted({round(box[0], 3) for box in boxes.values()})
    ys = sorted({round(box[1], 3) for box in boxes.values()})
    column = {face: xs.index(round(box[0], 3)) for face, box in boxes.items()}
    row = {face: ys.index(round(box[1], 3)) for face, box in boxes.items()}
    assert column == {"U": 1, "L": 0, "F": 1, "R": 2, "B": 3, "D": 1}
    assert row == {"U": 0, "L": 1, "F": 1, "R": 1, "B": 1, "D": 2}


def test_history_pages_filters_and_charts_recorded_runs(serve, page):
    server = serve()
    history = server.daemon.history
    now = time.time() - 1000
    for i in range(25):  # recorded runs, as a daemon that has been in use for a while has them
        run_id = history.start_run(started_at=now + 10 * i, mode="sim", puzzle=2)
        outcome = "error" if i % 5 == 0 else "done"
        history.finish_run(
            run_id,
            outcome,
            "scan failed after 3 attempts" if outcome == "error" else None,
            length_htm=9,
            step_durations={"scanning": 0.5, "solving": 0.1, "executing": 1.2 + i / 10},
        )
        history.update_run(run_id, ended_at=now + 10 * i + 2 + i / 10)
    page.goto(server.url + "#history")
    page.wait_for_selector("#history-rows tr")
    rows = page.locator("#history-rows tr")
    assert rows.count() == 20 and rows.first.get_attribute("data-run-id") == "25"
    page.click("#history-more")
    page.wait_for_function("() => document.querySelectorAll('#history-rows tr').length === 25")
    assert page.is_hidden("#history-more")
    assert page.locator("#chart .bar").count() == 20  # the done ones, at most 30
    assert "median" in page.inner_text("#chart-caption")

    page.select_option("#outcome-filter", "error")
    page.wait_for_function("() => document.querySelectorAll('#history-rows tr').length === 5")
    assert set(page.locator("#history-rows tr").evaluate_all("rows => rows.map(r => r.dataset.outcome)")) == {"error"}
    page.locator("#history-rows tr").first.click()
    page.wait_for_selector("#run-dialog[open]")
    assert "scan failed after 3 attempts" in page.inner_text("#run-details")
    page.click("#run-dialog-close")
    assert page.problems == []


CALIBRATION = {
    "views": {
        "still": {
            "width": 64,
            "height": 48,
            "faces": {
                "U": [[8, 4], [30, 6], [28, 22], [6, 20]],
                "F": [[34, 6], [58, 4], [60, 22], [36, 24]],
                "R": [[10, 26], [30, 26], [30, 44], [10, 44]],
            },
        }
    },
    "references": {
        "U": [235, 235, 230],
        "R": [200, 30, 40],
        "F": [30, 160, 70],
        "D": [240, 210, 20],
        "L": [245, 120, 10],
        "B": [30, 90, 210],
    },
}


def test_calibration_draws_the_face_quads_over_the_live_frame(serve, page):
    server = serve(calibration=CALIBRATION)
    open_dashboard(page, server.url)
    assert page.get_attribute("#cameras img", "src") == "stream/still"
    page.click("#tab-calibration")
    view = page.locator('.calibration-view[data-camera="still"]')
    view.wait_for()
    assert view.locator("img").get_attribute("src") == "stream/still"
    assert page.get_attribute("#cameras img", "src") is None  # the hidden run tab let its stream go
    page.wait_for_function("() => document.querySelector('.calibration-view img').naturalWidth > 0")
    assert view.locator("svg.quads").get_attribute("viewBox") == "0 0 64 48"
    for face, corners in CALIBRATION["views"]["still"]["faces"].items():
        points = view.locator(f'g.quad[data-face="{face}"] polygon.quad-line').get_attribute("points")
        assert points == " ".join(f"{x},{y}" for x, y in corners)
    assert "may not match" not in view.locator("figcaption").inner_text()
    swatches = page.locator("#references li .swatch").evaluate_all(
        "items => items.map(i => getComputedStyle(i).backgroundColor)"
    )
    assert swatches == [f"rgb({r}, {g}, {b})" for r, g, b in CALIBRATION["references"].values()]
    assert page.problems == []


def test_calibration_tab_says_when_there_is_none(serve, page):
    server = serve()
    page.goto(server.url + "#calibration")
    page.wait_for_function("() => document.getElementById('calibration-note').textContent !== ''")
    assert page.inner_text("#calibration-note") == "No calibration to show: this rig has no calibration to show"
    assert page.inner_text("#messages") == ""


def test_stickers_scanned_with_low_confidence_are_marked(serve, page):
    server = serve()
    rig = server.daemon.runner.scanner
    plain_scan = rig.scan

    scans = []

    def doubtful_scan():  # vision unsure of U1 on the first scan, sure on the re-scan
        result = plain_scan()
        if not scans:
            result.confidence[0] = 0.31
            result.doubtful = ["U1"]
        scans.append(result)
        return result

    rig.scan = doubtful_scan
    open_dashboard(page, server.url)
    start_from_page(page, "2", seed="5")
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    assert page.is_visible("#scan-box")
    marked = page.locator("#scan-net .doubtful rect")
    assert marked.count() == 1 and marked.get_attribute("data-face") == "U"
    assert marked.get_attribute("data-index") == "0" and marked.get_attribute("data-confidence") == "0.31"
    assert "1 sticker read with low confidence" in page.inner_text("#scan-caption")
    assert page.locator("#net .doubtful").count() == 0  # the live net has moved on from the scan
    assert "1 sticker in doubt: U1" in page.inner_text("#log")
    assert page.is_visible("#scan-check") and page.is_hidden("#scan-overlay")  # this rig keeps no pictures
    assert "read with low confidence: U1." in page.inner_text("#scan-check-text")


def test_a_refused_scan_shows_what_the_camera_saw(serve, page):
    server = serve(make=lambda directory, turn_s: scanning_daemon(directory, refuse=True, turn_s=turn_s))
    open_dashboard(page, server.url)
    assert page.is_hidden("#scan-check") and page.get_attribute("#last-scan-link", "href") == "api/scan/overlay.png"
    start_from_page(page, "3", scramble="R U")
    page.wait_for_selector('#phase[data-phase="error"]', timeout=60_000)
    run = page.request.get(server.url + "api/runs/1").json()
    failed = [e["data"] for e in run["events"] if e["kind"] == "scan_failed"][-1]
    kept = failed["kept"]
    assert kept and kept.startswith(str(server.daemon.history.path.parent))

    for reload in (False, True):  # live, then rebuilt from the snapshot
        if reload:
            page.reload()
            page.wait_for_selector('#connection[data-state="open"]')
        page.wait_for_selector("#scan-check:not([hidden])")
        text = page.inner_text("#scan-check-text")
        assert f"Stickers in doubt: {', '.join(failed['stickers'])}." in text
        assert f"kept in {kept} for a bug report" in text
        overlay = page.locator("#scan-overlay")
        assert overlay.get_attribute("src") == f"api/scan/overlay.png?scan={failed['scan_id']}"
        page.wait_for_function("() => document.getElementById('scan-overlay').naturalWidth > 600")
        assert failed["stickers"][0] in overlay.get_attribute("alt")
    assert f"kept in {kept}" in page.inner_text("#messages")
    assert f"(kept in {kept})" in page.inner_text("#log")
    assert page.problems == []


def teach_jog(daemon):
    """Give the test daemon's virtual rig the 18 face-turn jogs; ``B2`` fails as a stalled motor would."""
    rig = daemon.runner.motion

    def jog(command):
        if command == "B2":
            raise RobotError("a motor stalled: motor B stalled")
        rig.state = solver.apply(rig.state, MOVE_NAMES[parse_jog(command)])

    rig.jog = jog
    rig.jog_commands = lambda: [MOVE_NAMES[3 * face + turns] for face in range(6) for turns in (0, 2, 1)]
    return rig


def test_jog_buttons_move_the_rig_and_wait_while_a_run_goes(serve, page):
    server = serve(turn_s=0.3)
    rig = teach_jog(server.daemon)
    open_dashboard(page, server.url)
    buttons = page.locator("#jog-buttons button")
    assert page.is_visible("#rig-card") and buttons.count() == 18
    assert page.get_attribute("#jog-buttons", "data-layout") == "faces"
    assert buttons.all_inner_texts()[3:6] == ["R", "R'", "R2"]
    assert buttons.nth(4).get_attribute("aria-label") == "R': turn the R face a quarter turn counter-clockwise"
    before = rig.state
    page.click('#jog-buttons button[data-command="R\'"]')
    page.wait_for_selector('#messages [data-id="jog"]')
    assert page.inner_text('#messages [data-id="jog"]').startswith("Jog R': done")
    assert rig.state == solver.apply(before, "R'")

    page.click('#jog-buttons button[data-command="B2"]')
    page.wait_for_selector('#messages .message.error[data-id="jog"]')
    assert "Jog B2 failed: a motor stalled" in page.inner_text('#messages [data-id="jog"]')

    start_from_page(page, "2", seed="4")
    page.wait_for_selector('#phase[data-phase="executing"]', timeout=60_000)
    assert page.is_disabled('#jog-buttons button[data-command="R"]')
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    assert page.is_enabled('#jog-buttons button[data-command="R"]')
    assert [p for p in page.problems if "status of 400" not in p] == []  # the browser logs B2's 400


def test_no_rig_panel_when_the_rig_can_neither_jog_nor_act(serve, page):
    server = serve()
    open_dashboard(page, server.url)
    assert page.is_hidden("#rig-card") and page.locator("#jog-buttons button").count() == 0


def test_a_run_from_the_page_of_robotd_sim(browser, page, tmp_path):
    """The real thing: ``robotd --sim`` in its own process, simulated firmware on a pty, rendered cameras (a 2x2:
    no two-phase worker)."""
    rig = "[rig]\nquarter_turn_s = 0.03\nhalf_turn_s = 0.05\nsettle_s = 0.0\n" + QUICK_HOME
    with serving(tmp_path, rig=rig, two_phase=False) as url:
        check_a_run_from_the_page(page, url, tmp_path)
        page.click("#tab-run")
        assert page.locator("#jog-buttons button").count() == 18
        before = page.request.get(url + "api/status").json()["simulation"]["cube"]
        page.click('#jog-buttons button[data-command="R"]')
        page.wait_for_selector('#messages [data-id="jog"]')
        assert page.inner_text('#messages [data-id="jog"]').startswith("Jog R: done")
        assert page.request.get(url + "api/status").json()["simulation"]["cube"] == solver.apply(before, "R")
        assert not page.problems, page.problems


# ---------------------------------------------------------------- operating the rig from the page


def test_home_motors_and_reconnect_from_the_page(serve, page):
    server = serve(turn_s=0.3, make=lambda directory, turn_s: acting_daemon(directory, turn_s))
    rig = server.daemon.runner.motion
    open_dashboard(page, server.url)
    for button in ("#rig-home", "#rig-motors-on", "#rig-motors-off", "#rig-reconnect"):
        assert page.is_visible(button) and page.is_enabled(button), button
    assert page.inner_text("#rig-state") == "Motors: on"
    page.click("#rig-motors-off")
    page.wait_for_function("() => document.getElementById('rig-state').textContent.startsWith('Motors: off')")
    assert page.inner_text("#rig-result").startswith("Motors off: the faces turn freely by hand")
    assert rig.motors_on is False
    page.click("#rig-home")
    page.wait_for_function("() => document.getElementById('rig-result').textContent.startsWith('Home:')")
    assert "every motor was sent HOME" in page.inner_text('#messages [data-id="rig"]')
    page.click("#rig-reconnect")
    page.wait_for_function("() => document.getElementById('rig-state').textContent === 'Motors: on'")
    assert rig.done == ["motors off", "home", "reconnect"]

    start_from_page(page, "2", seed="4")
    page.wait_for_selector('#phase[data-phase="executing"]', timeout=60_000)
    assert page.is_disabled("#rig-home") and page.is_disabled("#rig-reconnect")
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    assert page.is_enabled("#rig-home")
    assert page.problems == []


def test_an_action_the_controller_cannot_do_has_no_button_and_a_failure_is_shown(serve, page):
    cannot = {"home": "a Marlin rig has no home switches (robotd never sends G28)"}
    server = serve(make=lambda directory, turn_s: acting_daemon(directory, turn_s, cannot=cannot))
    rig = server.daemon.runner.motion

    def lost_link():
        raise RobotError("serial link: cannot open: no such device (is the board plugged in?)")

    rig.reconnect = lost_link
    open_dashboard(page, server.url)
    assert page.is_hidden("#rig-home") and page.is_visible("#rig-motors-off")
    page.click("#rig-reconnect")
    page.wait_for_selector('#messages .message.error[data-id="rig"]')
    assert page.inner_text("#rig-result") == (
        "Reconnect failed: serial link: cannot open: no such device (is the board plugged in?)"
    )
    assert [p for p in page.problems if "status of 400" not in p] == []  # the browser logs the 400


def test_a_lost_connection_is_shown_and_the_page_comes_back_with_a_fresh_snapshot(serve, page):
    server = serve(make=lambda directory, turn_s: acting_daemon(directory, turn_s))
    open_dashboard(page, server.url)
    assert page.is_hidden("#offline") and page.get_attribute("body", "data-connection") == "live"
    server.stop()
    page.wait_for_selector("#offline:not([hidden])", timeout=10_000)
    text = page.inner_text("#offline-text")
    assert text.startswith("Not connected to robotd (connection lost).") and "not the live one" in text
    assert page.get_attribute("body", "data-connection") == "lost"
    assert page.evaluate("getComputedStyle(document.querySelector('.cube-card')).filter") == "grayscale(1)"
    for control in ("#start", "#rig-home", "#rig-motors-off", "#rig-reconnect"):
        assert page.is_disabled(control), control
    assert page.is_enabled("#stop")  # a stop is always sent (if robotd is back, it acts)
    page.click("#rig-home", force=True)  # a disabled button does nothing
    assert server.daemon.runner.motion.done == []

    server.daemon.runner.motion.motors_on = False  # changed while the page was away
    server.start()
    page.click("#offline-retry")
    page.wait_for_selector('#connection[data-state="open"]', timeout=20_000)
    assert page.is_hidden("#offline") and page.get_attribute("body", "data-connection") == "live"
    assert page.is_enabled("#start") and page.is_enabled("#rig-home")
    assert page.inner_text("#rig-state").startswith("Motors: off")  # the fresh snapshot


def test_calibration_edit_check_and_save_round_trip(serve, page, tmp_path):
    server = serve(make=lambda directory, turn_s: calibrating_daemon(directory, turn_s))
    store = server.daemon.store
    views_file = store.files["views"]
    before = views_file.read_text()
    page.goto(server.url + "#calibration")
    page.wait_for_selector('.calibration-view[data-camera="ufr"] .corner-editor')
    page.click('.calibration-view[data-camera="ufr"] .corner-editor summary')
    page.fill("#corner-0-0-x", "700")
    assert page.get_attribute('g.quad[data-face="U"] polygon.quad-line', "points").startswith("700,")  # preview
    page.click("#calibration-check")
    page.wait_for_selector("#view-error-0:not([hidden])")
    assert "lies outside the 640x480 frame of camera 'ufr'" in page.inner_text("#view-error-0")
    assert page.get_attribute("#corner-0-0-x", "aria-invalid") == "true"
    assert "Not valid: 1 problem" in page.inner_text("#calibration-result")
    page.click("#calibration-save")  # a save checks first: nothing is written
    page.wait_for_selector("#view-error-0:not([hidden])")
    assert views_file.read_text() == before

    page.fill("#corner-0-0-x", "")
    assert "a number of pixels is needed" in page.inner_text("#view-error-0")
    page.fill("#corner-0-0-x", "300")
    page.fill("#corner-0-0-y", "70")
    handle = page.locator('g.quad[data-face="R"] circle.quad-corner').nth(2)  # drag R's third corner
    start = [float(page.input_value(f"#corner-1-2-{axis}")) for axis in "xy"]
    drag_by(page, handle, -20, -10)
    dragged = [float(page.input_value(f"#corner-1-2-{axis}")) for axis in "xy"]
    assert dragged[0] < start[0] and dragged[1] < start[1]
    page.click("#references-add")
    page.fill("#reference-R", "#c81e28")
    page.click("#calibration-save")
    page.wait_for_function("() => document.getElementById('calibration-result').textContent.startsWith('Saved')")
    result = page.inner_text("#calibration-result")
    assert f"views to {views_file} (the previous file is kept as {views_file}." in result
    assert "applied: the next scan uses it" in result and page.is_hidden("#view-error-0")
    applied = store.scanner.views()  # no restart
    assert applied.views[0].corners[0].tolist() == [300.0, 70.0]
    assert [round(v, 1) for v in applied.views[1].corners[2]] == [round(v, 1) for v in dragged]
    assert store.scanner.calibration.palette[1].tolist() == [200.0, 30.0, 40.0]
    backups = [p.read_text() for p in views_file.parent.glob("views.toml.*.bak")]
    assert views_file.read_text() != before and backups == [before]
    page.reload()
    page.wait_for_selector('.calibration-view[data-camera="ufr"] .corner-editor')
    assert page.input_value("#corner-0-0-x") == "300"
    assert page.problems == []


def test_a_check_answered_after_an_edit_does_not_hide_the_edit_s_own_error(serve, page):
    server = serve(make=lambda directory, turn_s: calibrating_daemon(directory, turn_s))
    held = []
    page.route("**/api/calibration/check", lambda route: held.append(route))
    page.goto(server.url + "#calibration")
    page.wait_for_selector('.calibration-view[data-camera="ufr"] .corner-editor')
    page.click('.calibration-view[data-camera="ufr"] .corner-editor summary')
    page.fill("#corner-0-0-x", "700")
    with page.expect_request("**/api/calibration/check"):
        page.click("#calibration-check")
    page.fill("#corner-0-0-x", "")  # edited while robotd is still checking 700
    with page.expect_response("**/api/calibration/check"):
        held[0].continue_()
    page.evaluate("() => new Promise((done) => setTimeout(done, 100))")  # the reply's handling, had it been shown
    assert "a number of pixels is needed" in page.inner_text("#view-error-0")
    assert "outside" not in page.inner_text("#view-error-0")
    assert page.problems == []


# ---------------------------------------------------------------- a phone's width, and contrast

HEADER = [".brand", ".phase-box", "#connection", "#stop", "#offline"]
STOP_IN_VIEW = """() => {
  const stop = document.getElementById("stop").getBoundingClientRect();
  const hit = document.elementFromPoint(stop.left + stop.width / 2, stop.top + stop.height / 2);
  return {top: stop.top, right: stop.right, bottom: stop.bottom, onTop: hit && hit.closest("#stop") !== null,
          width: document.documentElement.scrollWidth};
}"""


def test_at_360_px_nothing_in_the_header_overlaps_and_stop_stays_in_view(serve, browser):
    server = serve(turn_s=0.3, make=lambda directory, turn_s: calibrating_daemon(directory, turn_s))
    context = browser.new_context(viewport={"width": 360, "height": 740})
    page = context.new_page()
    open_dashboard(page, server.url)
    start_from_page(page, "2", seed="4")
    page.wait_for_selector('#phase[data-phase="executing"]', timeout=60_000)
    states = {
        "running": None,
        "long texts": """() => {
        document.getElementById("run-label").textContent = "run 123456";
        document.getElementById("connection-text").textContent = "offline, retry in 15 s";
        document.getElementById("offline-text").textContent = "Not connected to robotd (this page fell behind " +
          "the event stream). The page shows the state of 12:34:56, not the live one. Trying again in 15 s.";
        document.getElementById("offline").hidden = false;
      }""",
    }
    for name, change in states.items():
        if change:
            page.evaluate(change)
        assert page.evaluate(OVERLAPS, HEADER) == [], name
        for scroll in (0, 5000):  # the top bar is sticky: scrolled down, stop is still there
            page.evaluate(f"window.scrollTo(0, {scroll})")
            stop = page.evaluate(STOP_IN_VIEW)
            assert stop["top"] >= 0 and stop["right"] <= 360 and stop["bottom"] < 200, (name, stop)
            assert stop["onTop"] and stop["width"] <= 360, (name, stop)
    page.evaluate("window.scrollTo(0, 0)")
    page.click("#tab-history")
    assert page.evaluate(STOP_IN_VIEW)["width"] <= 360  # no page wider than the phone
    page.click("#tab-calibration")
    page.click('.calibration-view[data-camera="ufr"] .corner-editor summary')
    page.click("#calibration-check")  # "No changes to check."
    assert page.evaluate(STOP_IN_VIEW)["width"] <= 360  # long file paths wrap, the corner boxes fit
    context.close()
    wait_done(server.daemon)


def lowest_contrast(page, found: dict) -> None:
    """Measure the page as it is now; keep the lowest ratio and every failure in ``found``."""
    result = page.evaluate(CONTRAST)
    if result["lowest"] and (found["lowest"] is None or result["lowest"]["ratio"] < found["lowest"]["ratio"]):
        found["lowest"] = result["lowest"]
    found["failing"] += result["failing"]
    found["checked"] += result["checked"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_meets_wcag_aa_contrast(serve, browser, scheme):
    """Measured in the browser on what is rendered: the run with its current-move chip (sampled through any
    running transition), the history and a run's details, the calibration with a field error, a message
    and the connection-lost banner."""
    server = serve(turn_s=0.25, make=lambda directory, turn_s: calibrating_daemon(directory, turn_s, two_phase=False))
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    found = {"lowest": None, "failing": [], "checked": 0}
    open_dashboard(page, server.url)
    lowest_contrast(page, found)
    start_from_page(page, "3", scramble="R U F' L2 D B' R2")  # a short run: the chip moves on seven times
    page.wait_for_selector('#moves li[aria-current="step"]', timeout=60_000)
    for _ in range(3):  # the chip moves on: measure it as it changes
        page.evaluate("""() => new Promise((done) => new MutationObserver((_, observer) => {
          observer.disconnect(); done(); }).observe(document.getElementById("moves"),
          {subtree: true, attributes: true, attributeFilter: ["aria-current"]}))""")
        lowest_contrast(page, found)
    page.wait_for_selector('#phase[data-phase="done"]', timeout=60_000)
    page.click("#tab-history")
    page.locator("#history-rows tr").first.click()
    page.wait_for_selector("#run-dialog[open]")
    lowest_contrast(page, found)
    page.keyboard.press("Escape")
    page.click("#stop")  # a message
    page.click("#tab-calibration")
    page.click('.calibration-view[data-camera="ufr"] .corner-editor summary')
    page.fill("#corner-0-0-x", "")
    page.click("#calibration-check")  # a message and a field error
    lowest_contrast(page, found)
    server.stop()
    page.wait_for_selector("#offline:not([hidden])", timeout=10_000)
    lowest_contrast(page, found)
    server.start()
    context.close()
    print(f"contrast ({scheme}): {found['checked']} text/background pairs, lowest {found['lowest']}")
    assert found["failing"] == [], found["failing"]
    assert found["lowest"]["ratio"] >= 4.5 or found["lowest"]["needed"] == 3


def board_daemon(directory, turn_s=0.0) -> Daemon:
    """A motors-only daemon (robotd --rig-only) whose link names its board, and whose cube follows it."""
    handshake = {
        "port": "/dev/ttyACM0",
        "firmware": "grblHAL 1.1f",
        "version": "1.1f",
        "stop_method": "feed hold (!) then soft reset (0x18)",
        "stop_latency_ms": 20,
    }
    link = {"connected": True, "handshake": handshake}
    daemon = make_daemon(directory, turn_s=turn_s, link_status=lambda: link, mode="rig-only")
    simulation = daemon.simulation
    follows = {"follows": "the faces' positions the controller reports", "positions": True, "differences": ["d1"]}
    simulation.status = lambda: {"state": simulation.rig.state, "read_back": follows}
    return daemon


def test_the_machine_card_names_the_board_its_stop_and_what_a_motors_only_cube_follows(serve, page):
    server = serve(make=board_daemon)
    open_dashboard(page, server.url)
    page.wait_for_selector("#machine dt")
    rows = dict(zip(page.locator("#machine dt").all_inner_texts(), page.locator("#machine dd").all_inner_texts()))
    assert rows["Mode"] == "motors only: the real controller, a virtual cube and camera"
    assert rows["Board"] == "grblHAL 1.1f"  # the version is in the name already
    assert rows["Stop"] == "feed hold (!) then soft reset (0x18), about 20 ms"
    assert rows["Cube follows"] == "the faces' positions the controller reports"
    assert rows["Controller differs"] == "d1"
    assert page.is_visible("#sim-options")  # the virtual cube takes a scramble, as in simulation
    assert page.problems == []
