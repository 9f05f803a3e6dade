"""The dashboard cannot be framed by a page of another origin (clickjacking): its headers, and Chromium obeying them."""

import pytest

from test_dashboard_page import client, serve  # noqa: F401 - fixtures

FRAMING = {"content-security-policy": "frame-ancestors 'self'", "x-frame-options": "DENY"}


@pytest.mark.parametrize(
    "path, host, status",
    [("/", "testserver", 200), ("/app.js", "testserver", 200), ("/api/status", "testserver", 200), ("/", "evil", 400)],
)
def test_every_response_forbids_frames_of_other_origins(client, path, host, status):  # noqa: F811
    reply = client.get(path, headers={"Host": host})
    assert reply.status_code == status
    assert {name: reply.headers.get(name) for name in FRAMING} == FRAMING


def framing_page(url: str) -> str:
    return f'<!doctype html><iframe id="dashboard" src="{url}" width="900" height="700"></iframe>'


def without_framing_headers(route) -> None:
    """The dashboard's reply as robotd would send it without the framing headers."""
    reply = route.fetch()
    route.fulfill(response=reply, headers={k: v for k, v in reply.headers.items() if k not in FRAMING})


def test_chromium_refuses_the_dashboard_in_a_frame_of_another_origin(browser, serve):  # noqa: F811
    server = serve()
    context = browser.new_context()
    page = context.new_page()
    own = server.url + "framing.html"
    elsewhere = own.replace("127.0.0.1", "localhost")  # another origin on this machine, as in the attack
    for url in (own, elsewhere):  # pages the browser is handed as if each origin served them
        page.route(url, lambda route: route.fulfill(content_type="text/html", body=framing_page(server.url)))
    dashboard = page.frame_locator("#dashboard").locator("#start")
    try:
        page.goto(own)
        dashboard.wait_for(state="attached", timeout=10_000)  # its own origin may frame it

        page.route(server.url, without_framing_headers)
        page.goto(elsewhere)
        dashboard.wait_for(state="attached", timeout=10_000)  # without the headers, so may any other
        page.unroute(server.url)

        page.goto(elsewhere, wait_until="load")  # the window's load waits for its frames, a refused one too
        assert dashboard.count() == 0
        assert [frame.url for frame in page.frames[1:]] == ["chrome-error://chromewebdata/"]  # Chromium's refusal
    finally:
        context.close()
