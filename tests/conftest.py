import pytest


@pytest.fixture(autouse=True, scope="session")
def private_cache_dir(tmp_path_factory):
    """Keep tables built by tests out of the user's cache directory."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ROBOTD_CACHE_DIR", str(tmp_path_factory.mktemp("robotd-cache")))
    yield
    mp.undo()


def pytest_addoption(parser):
    parser.addoption("--firmware", default="sim,avr", metavar="DEVICES",
                     help="devices the firmware link tests run against, comma-separated: sim (the Python "
                          "simulator), avr (the firmware binary under simavr) or a real board's port or pyserial "
                          "URL (e.g. /dev/ttyACM0: faces are turned back and forth, the cube is left as it was)")


def pytest_generate_tests(metafunc):
    if "firmware" in metafunc.fixturenames:
        from devices import choices
        metafunc.parametrize("firmware", choices(metafunc.config))
