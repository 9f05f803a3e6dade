import contextlib
import gc
import os
import signal
import sys

import pytest

import devices
import processes
from chromium import SharedChromium, close_unless_next_uses
from firmware_interface import RigLink


@pytest.fixture(autouse=True, scope="session")
def no_processes_left_behind():
    """Every process the tests started has ended when they finish (set up first, so checked last): one still
    running would outlive pytest as an orphan. Orphans of processes a test killed are handed to pytest, so they
    count too. Those that do not end within a few seconds are killed and named."""
    if not sys.platform.startswith("linux"):
        yield
        return
    processes.adopt_orphans()
    yield
    stuck = processes.wait_gone(processes.left_behind(), timeout_s=10)
    if stuck:
        commands = processes.children()
        for pid in stuck:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        pytest.fail(
            "processes the tests left running (now killed): " + "; ".join(commands.get(pid, str(pid)) for pid in stuck)
        )


@pytest.fixture(autouse=True, scope="session")
def private_cache_dir(tmp_path_factory):
    """Keep tables built by tests out of the user's cache directory."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ROBOTD_CACHE_DIR", str(tmp_path_factory.mktemp("robotd-cache")))
    yield
    mp.undo()


def pytest_addoption(parser):
    parser.addoption(
        "--firmware",
        default="sim,avr",
        metavar="DEVICES",
        help="devices the firmware link tests run against, comma-separated: sim (the Python "
        "simulator), avr (the firmware binary under simavr) or a real board's port or pyserial "
        "URL (e.g. /dev/ttyACM0: faces are turned back and forth, the cube is left as it was)",
    )


def pytest_generate_tests(metafunc):
    if "firmware" in metafunc.fixturenames:
        from devices import choices

        metafunc.parametrize("firmware", choices(metafunc.config))


@pytest.fixture
def start_device(firmware):
    """start_device(faults=..., state=..., reset_on_open=...) → a started device of the kind under test."""
    started = []

    def make(**options):
        started.append(devices.start(firmware, **options))
        return started[-1]

    yield make
    for device in started:
        devices.stop(device)


@pytest.fixture
def device(start_device):
    return start_device()


@pytest.fixture
def port(device):
    return device.path


@pytest.fixture
def connect():
    """connect(device or path, enable=True, **link options) → a connected RigLink (enabled, and its motors set
    up as the device needs), closed after the test."""
    links = []

    def make(target, enable=True, **options):
        link = RigLink(getattr(target, "path", target), **options)
        links.append(link)
        link.connect()
        if enable:
            link.enable().wait(5)
            devices.prepare(link)
        return link

    yield make
    for link in links:
        link.close()


CHROMIUM = SharedChromium()


@pytest.fixture(scope="session")
def shared_chromium():
    """The one Chromium (tests/chromium.py), closed at the latest when the session's fixtures are torn down:
    before the check for processes left behind, which was set up first."""
    yield CHROMIUM
    CHROMIUM.close()


@pytest.fixture
def browser(shared_chromium):
    """Headless Chromium, shared by the browser tests that run one after another (tests/chromium.py): each test
    opens its own context. Skips with the reason when playwright or a Chromium binary is missing."""
    return shared_chromium.get()


@pytest.hookimpl(trylast=True)  # after the test's own fixtures, its pages and contexts, are torn down
def pytest_runtest_teardown(item, nextitem):
    close_unless_next_uses(CHROMIUM, nextitem, "browser")
    # A worker that has run hundreds of tests holds up to 800,000 objects, and a full collection of them
    # stopped every thread, the simulated boards' included, for up to 0.6 s (more on a loaded machine: a
    # board that looks silent). Collected here, between tests, what survives is frozen: a test's own
    # collections then walk only the objects it made.
    gc.collect()
    gc.freeze()
