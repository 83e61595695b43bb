"""Token bypasses (issue 34 finding 4): with ``--service-token`` set, ``POST /expression``
answered 200 without the token to a client adding ``Sec-Fetch-Site: same-origin`` or
``Origin: http://127.0.0.1:PORT``. Every way a local program could claim to be the panel is
refused now (401) and changes nothing; only the token, or the nonce cookie the service issued
when the panel was opened with it, gets in."""

from __future__ import annotations

import pytest

from runtime.service import ControlService

from .conftest import RecordingController, call

TOKEN = "s3cret-token-for-tests"


@pytest.fixture()
def guarded():
    ctl = RecordingController()
    with ControlService(ctl, port=0, token=TOKEN) as s:
        yield s.address[1], ctl


def _forgeries(port):
    own = f"http://127.0.0.1:{port}"
    return [{"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}, {"Origin": own},
            {"Origin": own, "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Referer": own + "/"},
            {"Cookie": "swaycam_panel="}, {"Cookie": f"swaycam_panel={TOKEN}"}, {"Authorization": f"Basic {TOKEN}"},
            {"Authorization": "Bearer " + TOKEN[:-1]}, {"X-Swaycam-Token": TOKEN.upper()}]


@pytest.mark.parametrize("path", ["/recenter", "/hair", "/motion"])
def test_forged_browser_headers_are_no_token(guarded, path):
    port, ctl = guarded
    for h in _forgeries(port):
        status, body, _ = call(port, "POST", path, {}, headers=h)
        assert status == 401 and "token" in body["error"], (h, status, body)
        status, body, _ = call(port, "GET", "/status", headers=h)
        assert status == 401, h
    status, _, _ = call(port, "POST", f"{path}?token={TOKEN}", {})        # the query opens only the panel
    assert status == 401
    assert ctl.calls == []


def test_the_panel_nonce_is_per_page_and_gets_in(guarded):
    port, ctl = guarded
    status, _, _ = call(port, "GET", "/")
    assert status == 401
    import http.client

    cookies = []
    for _ in range(2):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", f"/?token={TOKEN}")
        r = c.getresponse()
        r.read()
        assert r.status == 303 and r.getheader("Location") == "/"
        cookies.append(r.getheader("Set-Cookie").split(";")[0])
        c.close()
    assert cookies[0] != cookies[1]
    for ck in cookies:
        assert call(port, "POST", "/recenter", {}, headers={"Cookie": ck})[0] == 200
    assert ctl.calls == [("recenter",), ("recenter",)]
