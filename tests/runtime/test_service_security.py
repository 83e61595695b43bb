"""The control service against hostile requests (issue 16), over real HTTP on a socket:
foreign Host (DNS rebinding) and Origin refused with 403 JSON, CORS-simple POSTs refused
(415), bad Content-Length / chunked bodies 4xx JSON, OPTIONS and http.server's own errors
answer JSON, the optional token, NaN refused and never echoed, no 500 traceback, and a
flood limited per client (runtime/service/security.py)."""

from __future__ import annotations

import json
import logging
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from runtime.service import ControlService
from runtime.service.security import MAX_BODY, RATE_CHANGE, RateLimiter, make_token


class Controller:
    def __init__(self):
        self.calls = []
        self.answer = {"fps": 30.0}

    def status(self):
        return self.answer

    def recenter(self):
        self.calls.append("recenter")

    def load_avatar(self, path: Path):
        return {"loaded": path.name}

    def set_hair(self, solver, params):
        self.calls.append(("hair", solver, params))
        return {"solver": solver, "params": params}

    def frame_png(self):
        return b"\x89PNG\r\n\x1a\n"

    def motion(self):
        raise RuntimeError("boom in the controller")

    def set_motion(self, clip, **kw):
        return {}


@pytest.fixture()
def svc():
    ctl = Controller()
    with ControlService(ctl, port=0) as s:
        yield s, ctl


def raw(s, text: bytes, timeout: float = 10.0):
    """Send ``text`` as it is; (status, headers {lower name: value}, body bytes)."""
    with socket.create_connection(s.address, timeout=timeout) as c:
        c.sendall(text)
        data = b""
        while True:
            try:
                chunk = c.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return status, headers, body


def req(s, method, path, *, headers=None, body=None, host="default"):
    port = s.address[1]
    h = {} if host is None else {"Host": f"127.0.0.1:{port}" if host == "default" else host}
    h.update(headers or {})
    if body is not None and "Content-Length" not in h and "Transfer-Encoding" not in h:
        h["Content-Length"] = str(len(body))
    lines = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in h.items()] + ["Connection: close", "", ""]
    return raw(s, "\r\n".join(lines).encode("latin-1") + (body or b""))


def jreq(s, method, path, obj=None, **kw):
    headers = {"Content-Type": "application/json", **kw.pop("headers", {})}
    body = json.dumps(obj).encode() if obj is not None else (b"{}" if method == "POST" else None)
    status, h, b = req(s, method, path, headers=headers, body=body, **kw)
    return status, h, b


def error_of(h, body) -> str:
    assert h["content-type"] == "application/json", (h, body)
    return json.loads(body)["error"]


# --------------------------------------------------------------------------- Host


@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:{port}", "127.0.0.1", "127.0.0.1:1",
                                  "localhost:{other}", "127.0.0.2:{port}", "0.0.0.0:{port}"])
def test_a_foreign_host_is_refused_with_403_json(svc, host):
    s, ctl = svc
    port = s.address[1]
    status, h, b = jreq(s, "POST", "/recenter", host=host.format(port=port, other=port + 1))
    assert status == 403 and "is not this service" in error_of(h, b)
    status, h, b = req(s, "GET", "/frame.png", host=host.format(port=port, other=port + 1))   # rebinding read
    assert status == 403 and not b.startswith(b"\x89PNG")
    assert ctl.calls == []


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST:{port}"])
def test_the_loopback_host_forms_are_accepted(svc, host):
    s, _ = svc
    assert req(s, "GET", "/status", host=host.format(port=s.address[1]))[0] == 200


def test_a_missing_or_doubled_host_is_refused(svc):
    s, _ = svc
    status, h, b = req(s, "GET", "/status", host=None)
    assert status == 403 and error_of(h, b) == "a Host header is required"
    port = s.address[1]
    status, h, b = raw(s, b"GET /status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nHost: evil.example.com\r\n\r\n" % port)
    assert status == 403 and error_of(h, b) == "exactly one Host header is required"


# --------------------------------------------------------------------------- Origin and content type


@pytest.mark.parametrize("origin", ["http://evil.example.com", "null", "http://127.0.0.1:1", "https://127.0.0.1:{port}",
                                    "http://127.0.0.1:{port}.evil.com"])
def test_a_cross_origin_request_is_refused(svc, origin):
    s, ctl = svc
    o = origin.format(port=s.address[1])
    status, h, b = jreq(s, "POST", "/recenter", headers={"Origin": o})
    assert status == 403 and error_of(h, b) == f"cross-origin requests are refused (Origin {o!r})"
    # the case: a CORS-simple POST from a foreign page
    status, h, b = req(s, "POST", "/recenter", headers={"Origin": o, "Content-Type": "text/plain"}, body=b"{}")
    assert status == 403
    assert ctl.calls == []
    assert "access-control-allow-origin" not in h


def test_cross_site_fetch_metadata_is_refused(svc):
    s, ctl = svc
    status, h, b = req(s, "GET", "/status", headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403 and "cross-site" in error_of(h, b)


def test_the_panel_origin_is_accepted(svc):
    s, ctl = svc
    port = s.address[1]
    for o in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        status, h, b = jreq(s, "POST", "/recenter", headers={"Origin": o, "Sec-Fetch-Site": "same-origin"})
        assert status == 200 and json.loads(b) == {"ok": True}
    assert ctl.calls == ["recenter", "recenter"]


@pytest.mark.parametrize("ctype", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                   "application/jsonx", "text/json"])
def test_a_state_change_needs_json(svc, ctype):
    s, ctl = svc
    status, h, b = req(s, "POST", "/recenter", headers={"Content-Type": ctype} if ctype else {}, body=b"{}")
    assert status == 415 and "needs Content-Type: application/json" in error_of(h, b)
    assert ctl.calls == []
    status, _, _ = req(s, "POST", "/recenter", headers={"Content-Type": "application/json; charset=utf-8"}, body=b"{}")
    assert status == 200


# --------------------------------------------------------------------------- bodies


@pytest.mark.parametrize("length,status,fragment", [
    ("-1", 400, "Content-Length '-1' is not a non-negative integer"),
    ("abc", 400, "is not a non-negative integer"), ("1e3", 400, "is not a non-negative integer"),
    ("\u00b2".encode().decode("latin-1"), 400, "is not a non-negative integer"),
    (str(MAX_BODY + 1), 413, f"is over {MAX_BODY} bytes"), ("99999999999999999999", 413, "is over"),
])
def test_bad_content_length_is_4xx_json(svc, length, status, fragment):
    s, ctl = svc
    got, h, b = req(s, "POST", "/hair", headers={"Content-Type": "application/json", "Content-Length": length},
                    body=b"{}")
    assert got == status and fragment in error_of(h, b)
    assert ctl.calls == []


def test_missing_length_and_chunked_bodies_are_411(svc):
    s, ctl = svc
    status, h, b = req(s, "POST", "/recenter", headers={"Content-Type": "application/json"})
    assert status == 411 and error_of(h, b).startswith("POST needs a Content-Length header")
    status, h, b = req(s, "POST", "/recenter", headers={"Content-Type": "application/json",
                                                        "Transfer-Encoding": "chunked"}, body=b"2\r\n{}\r\n0\r\n\r\n")
    assert status == 411 and error_of(h, b) == ("Transfer-Encoding 'chunked' is not supported; "
                                                "send the body with Content-Length")
    status, h, b = req(s, "POST", "/recenter", headers={"Content-Type": "application/json", "Content-Length": "2"},
                       body=b"{}" + b"\r\n", host="default")
    assert status == 200
    assert ctl.calls == ["recenter"]


def test_a_body_shorter_than_its_length_is_408(svc, monkeypatch):
    from runtime.service import server as service_module

    monkeypatch.setattr(service_module._Handler, "timeout", 0.5)
    s, ctl = svc
    status, h, b = raw(s, b"POST /recenter HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 10\r\n\r\n{}" % s.address[1], timeout=15)
    assert status == 408 and error_of(h, b) == "the body of 10 bytes did not arrive within 0.5 s"
    assert ctl.calls == []


def test_nan_is_not_json_and_is_never_echoed(svc):
    s, ctl = svc
    for text in (b'{"params": {"k": NaN}}', b'{"params": {"k": Infinity}}', b'{"params": {"k": -Infinity}}'):
        status, h, b = req(s, "POST", "/hair", headers={"Content-Type": "application/json"}, body=text)
        assert status == 400 and "is not JSON (numbers must be finite)" in error_of(h, b)
    status, h, b = req(s, "POST", "/hair", headers={"Content-Type": "application/json"},
                       body=b'{"params": {"k": 1e400}}')     # overflows to inf in the parser
    assert status == 400 and "not a finite number" in error_of(h, b)
    assert ctl.calls == []
    ctl.answer = {"fps": float("nan")}
    status, h, b = req(s, "GET", "/status")
    assert status == 500 and error_of(h, b) == "internal error: the answer is not JSON"


def test_hair_params_are_validated_by_the_service_itself(svc):
    s, ctl = svc
    status, h, b = jreq(s, "POST", "/hair", {"params": {"k": -1}})
    assert status == 400 and error_of(h, b) == "hair.k: -1 is below 0"
    status, h, b = jreq(s, "POST", "/hair", {"params": {"springs": {"x": {"c": "fast"}}}})
    assert status == 400 and error_of(h, b) == "hair.springs.x.c: 'fast' is not a finite number"
    assert ctl.calls == []


# --------------------------------------------------------------------------- methods, errors


def test_options_answers_json_without_cors(svc):
    s, _ = svc
    status, h, b = req(s, "OPTIONS", "/hair")
    assert status == 200 and json.loads(b) == {"allow": ["OPTIONS", "POST"]} and h["allow"] == "OPTIONS, POST"
    assert not any(k.startswith("access-control-") for k in h)
    status, h, b = req(s, "OPTIONS", "/hair", headers={"Origin": "http://evil.example.com",
                                                      "Access-Control-Request-Method": "POST"})
    assert status == 403 and h["content-type"] == "application/json"     # a preflight from a foreign page
    status, h, b = req(s, "OPTIONS", "/nope")
    assert status == 404 and error_of(h, b) == "no endpoint /nope"


@pytest.mark.parametrize("text,status", [(b"GARBAGE\r\n\r\n", 400), (b"FOO /status HTTP/1.1\r\nHost: x\r\n\r\n", 501),
                                         (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414),
                                         (b"GET /status HTTP/9.0\r\n\r\n", 505)])
def test_http_servers_own_errors_are_json(svc, text, status):
    s, _ = svc
    got, h, b = raw(s, text)
    assert got == status and h["content-type"] == "application/json" and "error" in json.loads(b)


def test_an_internal_error_is_500_json_one_log_line_no_traceback(svc, caplog):
    s, _ = svc
    with caplog.at_level(logging.INFO, logger="runtime.service"):
        status, h, b = req(s, "GET", "/motion")
    assert status == 500 and error_of(h, b) == "internal error (RuntimeError)"
    lines = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert [r.getMessage() for r in lines] == ["service: internal error on GET /motion: RuntimeError: boom in the "
                                               "controller"]
    assert all(r.exc_info is None for r in lines)
    assert req(s, "GET", "/status")[0] == 200


# --------------------------------------------------------------------------- token


def test_the_token_is_needed_by_other_clients_not_by_the_panel():
    ctl = Controller()
    token = make_token("auto")
    assert len(token) == 22 and make_token("auto") != token
    with ControlService(ctl, port=0, token=token) as s:
        port = s.address[1]
        status, h, b = req(s, "GET", "/status")
        assert status == 401 and "needs its token" in error_of(h, b)
        assert req(s, "GET", "/status", headers={"Authorization": "Bearer wrong-token"})[0] == 401
        assert req(s, "GET", "/status", headers={"Authorization": f"Bearer {token}"})[0] == 200
        assert req(s, "GET", "/status", headers={"X-Swaycam-Token": token})[0] == 200
        assert jreq(s, "POST", "/recenter", headers={"Authorization": f"Bearer {token}"})[0] == 200
        # headers a local program writes are no token (issue 34 finding 4: they were)
        assert req(s, "GET", "/", headers={"Sec-Fetch-Site": "none"})[0] == 401
        assert req(s, "GET", "/status", headers={"Sec-Fetch-Site": "none"})[0] == 401
        assert jreq(s, "POST", "/recenter", headers={"Origin": f"http://127.0.0.1:{port}"})[0] == 401
        assert req(s, "GET", "/status", headers={"Sec-Fetch-Site": "same-origin"})[0] == 401
        # the panel opens with the token in its URL: a redirect to / with a per-page nonce
        status, h, _ = req(s, "GET", f"/?token={token}")
        assert status == 303 and h["location"] == "/"
        cookie = h["set-cookie"].split(";")[0]
        assert cookie.startswith("swaycam_panel=") and token not in cookie
        assert "HttpOnly" in h["set-cookie"] and "SameSite=Strict" in h["set-cookie"]
        assert req(s, "GET", "/", headers={"Cookie": cookie})[0] == 404          # no page here: not 401
        assert req(s, "GET", "/status", headers={"Cookie": cookie})[0] == 200
        assert jreq(s, "POST", "/recenter", headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"})[0] \
            == 200
        assert req(s, "GET", "/status", headers={"Cookie": "swaycam_panel=made-up"})[0] == 401
        assert req(s, "GET", "/?token=wrong-token")[0] == 401
        # a foreign page with the token is still a foreign page
        assert jreq(s, "POST", "/recenter", headers={"Origin": "http://evil.example.com",
                                                     "Authorization": f"Bearer {token}"})[0] == 403
    assert ctl.calls == ["recenter", "recenter"]
    with pytest.raises(ValueError, match="at least 8 characters"):
        make_token("short")


# --------------------------------------------------------------------------- rate


def test_a_flood_is_limited_per_client(svc):
    s, ctl = svc
    rate, burst = RATE_CHANGE
    t0 = time.monotonic()
    answers = [jreq(s, "POST", "/recenter")[:2] for _ in range(burst + 15)]
    elapsed = time.monotonic() - t0
    ok = sum(1 for st, _ in answers if st == 200)
    limited = [h for st, h in answers if st == 429]
    assert burst <= ok <= burst + rate * elapsed + 1
    assert len(ctl.calls) == ok and limited and all(int(h["retry-after"]) >= 1 for h in limited)
    assert req(s, "GET", "/status")[0] == 200          # reading goes on (its own, larger bucket)


def test_rate_limiter_buckets():
    now = [0.0]
    lim = RateLimiter(10.0, 3, clock=lambda: now[0])
    assert [lim.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert lim.take("a") == pytest.approx(0.1)
    assert lim.take("b") == 0.0                        # another client has its own bucket
    now[0] = 0.25
    assert [lim.take("a") for _ in range(3)] == [0.0, 0.0, pytest.approx(0.05)]


# --------------------------------------------------------------------------- curl


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_with_a_bad_host_or_origin_gets_403_json(svc):
    s, ctl = svc
    url = f"http://127.0.0.1:{s.address[1]}/recenter"
    for extra in (["-H", "Host: evil.example.com"], ["-H", "Origin: http://evil.example.com"]):
        out = subprocess.run(["curl", "-s", "-i", "-X", "POST", "-H", "Content-Type: application/json", "-d", "{}",
                              *extra, url], capture_output=True, text=True, timeout=30).stdout
        head, _, body = out.partition("\n\n")      # (text mode: \r\n read as \n)
        assert head.startswith("HTTP/1.0 403") and "Content-Type: application/json" in head
        assert "error" in json.loads(body)
    assert ctl.calls == []
