"""One headless Chromium for the browser tests of neighbouring modules.

Launching Chromium takes a second or more, so the browser tests share one
(each test still opens its own context and page). It is closed as soon as
the next test this process runs has no use for it (``close_unless_next_uses``,
called after each test with the runner's own next item, so it holds in each
pytest-xdist worker too): playwright's sync API keeps its event loop marked as
running in the main thread while it is open, and a test that runs its own loop
there (``asyncio.run``) would fail.
"""

from __future__ import annotations

import pytest

from page_checks import chromium_path


class SharedChromium:
    """``get()`` launches Chromium on first use (skipping with the reason where it cannot); ``close()`` ends it."""

    def __init__(self) -> None:
        self._playwright = None
        self._browser = None

    def get(self):
        if self._browser is None:
            sync_api = pytest.importorskip(
                "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
            )
            executable = chromium_path()
            if executable is None:
                pytest.skip("no Chromium binary (apt-get install chromium, or set ROBOTD_CHROMIUM)")
            self._playwright = sync_api.sync_playwright().start()
            try:
                self._browser = self._playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            except BaseException:
                self.close()
                raise
        return self._browser

    def close(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


def close_unless_next_uses(shared: SharedChromium, nextitem, fixture: str) -> None:
    """Close ``shared`` unless ``nextitem`` (the test this process runs next; None after its last) uses
    ``fixture``."""
    if nextitem is None or fixture not in getattr(nextitem, "fixturenames", ()):
        shared.close()
