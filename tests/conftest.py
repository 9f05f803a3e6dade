import pytest


@pytest.fixture(autouse=True, scope="session")
def private_cache_dir(tmp_path_factory):
    """Keep tables built by tests out of the user's cache directory."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ROBOTD_CACHE_DIR", str(tmp_path_factory.mktemp("robotd-cache")))
    yield
    mp.undo()
