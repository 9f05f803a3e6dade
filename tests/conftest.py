import pytest


@pytest.fixture(autouse=True, scope="session")
def private_cache_dir(tmp_path_factory):
    """Keep tables built by tests out of the user's cache directory."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ROBOTD_CACHE_DIR", str(tmp_path_factory.mktemp("robotd-cache")))
    yield
    mp.undo()


def pytest_addoption(parser):
    parser.addoption("--rig-port", default=None, metavar="PORT",
                     help="also run the firmware link tests against a real rig on this port or pyserial URL "
                          "(e.g. /dev/ttyACM0); they turn faces back and forth and leave the cube as it was")
