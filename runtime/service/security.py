"""Who may talk to the control service: the rules every request passes before a handler.

The service listens on 127.0.0.1 only, so other machines cannot reach it; what is left is
the browser on this machine (any web page the streamer opens can send requests to
127.0.0.1) and other local programs. The rules, in the order they are checked:

1. **Host** must name the loopback address and the service's own port: ``127.0.0.1:PORT``,
   ``localhost:PORT`` or ``[::1]:PORT``. A missing or foreign Host is refused (403), which
   defeats DNS rebinding (a page at ``evil.example`` whose name later resolves to 127.0.0.1
   still sends ``Host: evil.example``), so no foreign page reads ``/status`` or
   ``/frame.png``.
2. **Origin**, when present, must be the service's own origin: ``http://`` + one of the
   Host forms above (``null`` and every other origin: 403). ``Sec-Fetch-Site``, when present,
   must be ``same-origin`` or ``none`` (typed in the address bar). Browsers always send
   Origin on POST and cannot forge either header. No response carries CORS headers, so a
   cross-origin page can read nothing either. The panel page the service serves at ``GET /``
   is same-origin: its requests pass.
3. **State changes** (POST, PUT, PATCH, DELETE) must be ``Content-Type: application/json``
   (a parameter such as ``; charset=utf-8`` is allowed): a page can send a form or
   ``text/plain`` POST without asking first (a "CORS-simple" request), never a JSON one.
   Otherwise 415.
4. **Token** (optional, ``--service-token TOKEN`` or ``auto``, generated and printed): when
   set, every request must carry it — ``Authorization: Bearer TOKEN`` or ``X-Swaycam-Token:
   TOKEN`` — or a panel cookie this service issued; otherwise 401. The panel is opened at
   ``GET /?token=TOKEN`` (the URL printed at start): that answer is a redirect to ``/`` with a
   new random per-page nonce in the cookie ``swaycam_panel`` (HttpOnly, SameSite=Strict,
   :data:`PANEL_NONCES` kept), so the token leaves the address bar and the page's own requests
   (fetch, the preview image) carry the nonce. Headers a local program can write —
   ``Origin``, ``Sec-Fetch-Site`` — never stand in for the token; the page itself needs it
   too (it is how a client gets a nonce). It keeps out local programs and pages that were
   not given the token.
5. **Rate**: per client address, a token bucket for every request (:data:`RATE_ALL`) and a
   smaller one for state changes (:data:`RATE_CHANGE`); over it: 429 with ``Retry-After``.
   A flood then costs the render loop at most the bucket's rate of commands.

Bodies: ``Content-Length`` is required on state changes (missing: 411), must be a
non-negative integer no larger than :data:`MAX_BODY` (400 / 413); chunked bodies are refused
(411: "send Content-Length"). Every refusal is JSON ``{"error": "..."}``.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from http import HTTPStatus

from ..errors import SettingsError
from .errors import RequestError

#: Largest request body (bytes).
MAX_BODY = 64 * 1024
#: (requests per second, burst) per client address, every request.
RATE_ALL = (60.0, 120)
#: (requests per second, burst) per client address, state-changing requests.
RATE_CHANGE = (10.0, 20)
#: Methods that change state.
CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Host names that mean this machine's loopback interface.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: The panel's cookie (a per-page nonce, rule 4) and how many issued nonces stay valid.
PANEL_COOKIE = "swaycam_panel"
PANEL_NONCES = 64


class Refused(RequestError):
    """A request the rules refuse: ``status``, a message for the JSON body and the answer's
    extra ``headers`` (Retry-After, WWW-Authenticate)."""

    def __init__(self, status: HTTPStatus, message: str, headers: dict | None = None):
        super().__init__(status, message, headers)


def make_token(spec: str | None) -> str | None:
    """The service token for ``--service-token``: None (off), ``"auto"`` (a new random one,
    128 bits, URL-safe) or the given text (at least 8 characters).

    Raises:
        SettingsError: a given token shorter than 8 characters or with spaces/control characters.
    """
    if spec is None:
        return None
    if spec == "auto":
        return secrets.token_urlsafe(16)
    if len(spec) < 8 or any(c.isspace() or ord(c) < 32 for c in spec):
        raise SettingsError("--service-token must be 'auto' or at least 8 characters without spaces")
    return spec


class _Bucket:
    __slots__ = ("tokens", "t")

    def __init__(self, burst: float, now: float):
        self.tokens, self.t = float(burst), now


class RateLimiter:
    """Token buckets per client address: ``rate`` per second, up to ``burst`` at once."""

    def __init__(self, rate: float, burst: int, *, clock=time.monotonic, max_clients: int = 1024):
        self.rate, self.burst, self.clock, self.max_clients = float(rate), int(burst), clock, max_clients
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """0.0 when ``client`` may go on (one token taken), else the seconds until it may."""
        now = self.clock()
        with self._lock:
            b = self._buckets.get(client)
            if b is None:
                if len(self._buckets) >= self.max_clients:      # bounded memory: forget the oldest
                    self._buckets.pop(next(iter(self._buckets)))
                b = self._buckets[client] = _Bucket(self.burst, now)
            b.tokens = min(self.burst, b.tokens + (now - b.t) * self.rate)
            b.t = now
            if b.tokens >= 1.0:
                b.tokens -= 1.0
                return 0.0
            return (1.0 - b.tokens) / self.rate


@dataclass
class SecurityPolicy:
    """The rules of the module doc for a service on 127.0.0.1:``port``."""

    port: int
    token: str | None = None
    _nonces: OrderedDict = field(default_factory=OrderedDict, repr=False)

    def __post_init__(self):
        self.all_limiter = RateLimiter(*RATE_ALL)
        self.change_limiter = RateLimiter(*RATE_CHANGE)
        self._nonce_lock = threading.Lock()

    def bind(self, port: int) -> None:
        """The port actually bound (a service asked for port 0 learns it after binding)."""
        self.port = port

    # ------------------------------------------------------------------ the parts
    def allowed_hosts(self) -> frozenset[str]:
        return frozenset(f"{n}:{self.port}" for n in LOOPBACK_NAMES)

    def allowed_origins(self) -> frozenset[str]:
        return frozenset(f"http://{h}" for h in self.allowed_hosts())

    def _token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def _panel_nonce_ok(self, headers) -> bool:
        for line in headers.get_all("Cookie") or []:
            for part in line.split(";"):
                name, _, value = part.strip().partition("=")
                if name == PANEL_COOKIE:
                    with self._nonce_lock:
                        if any(hmac.compare_digest(value.encode(), n.encode()) for n in self._nonces):
                            return True
        return False

    def panel_login(self, method: str, path: str, query: str) -> str | None:
        """A ``Set-Cookie`` value with a new panel nonce when the request opens the panel
        with the token (``GET /?token=TOKEN``; rule 4), else None."""
        if self.token is None or method != "GET" or path != "/":
            return None
        from urllib.parse import parse_qs

        given = parse_qs(query[:1024]).get("token", [None])[0]
        if not self._token_ok(given):
            return None
        nonce = secrets.token_urlsafe(24)
        with self._nonce_lock:
            self._nonces[nonce] = None
            while len(self._nonces) > PANEL_NONCES:
                self._nonces.popitem(last=False)
        return f"{PANEL_COOKIE}={nonce}; Path=/; HttpOnly; SameSite=Strict"

    def check(self, method: str, headers, client: str, path: str = "", query: str = "") -> None:
        """Raise :class:`Refused` unless the request may reach a handler (module doc);
        ``path`` and ``query``: the request's path and the text after ``?``."""
        hosts = headers.get_all("Host") or []
        if len(hosts) != 1:
            raise Refused(HTTPStatus.FORBIDDEN, "exactly one Host header is required" if hosts
                          else "a Host header is required")
        host = hosts[0].strip().lower()
        if host not in self.allowed_hosts():
            raise Refused(HTTPStatus.FORBIDDEN, f"Host {hosts[0][:80]!r} is not this service "
                          f"(use http://127.0.0.1:{self.port})")
        origins = headers.get_all("Origin") or []
        if len(origins) > 1 or (origins and origins[0].strip().lower() not in self.allowed_origins()):
            raise Refused(HTTPStatus.FORBIDDEN, f"cross-origin requests are refused (Origin {origins[0][:80]!r})")
        site = (headers.get("Sec-Fetch-Site") or "").strip().lower()
        if site and site not in ("same-origin", "none"):
            raise Refused(HTTPStatus.FORBIDDEN, f"cross-site requests are refused (Sec-Fetch-Site {site[:40]!r})")
        if method in CHANGING:
            ctype = (headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            if ctype != "application/json":
                raise Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                              f"{method} needs Content-Type: application/json (got {ctype[:60] or 'none'!r})")
        if self.token is not None:
            given = headers.get("X-Swaycam-Token")
            auth = headers.get("Authorization") or ""
            if auth[:7].lower() == "bearer ":
                given = auth[7:].strip()
            if not (self._token_ok(given) or self._panel_nonce_ok(headers)
                    or self.panel_login(method, path, query) is not None):
                raise Refused(HTTPStatus.UNAUTHORIZED, "this service needs its token: "
                              "'Authorization: Bearer TOKEN', or open the panel at /?token=TOKEN "
                              "(printed when the service started)")
        wait = self.all_limiter.take(client)
        if not wait and method in CHANGING:
            wait = self.change_limiter.take(client)
        if wait:
            raise Refused(HTTPStatus.TOO_MANY_REQUESTS, f"too many requests; retry in {wait:.2f} s",
                          {"Retry-After": str(max(1, int(wait + 0.999)))})

    def body_length(self, method: str, headers) -> int:
        """The body's length in bytes from Content-Length (0 when a GET has none).

        Raises:
            Refused: chunked (411), missing on a state change (411), not a non-negative
                integer or given twice (400), over :data:`MAX_BODY` (413).
        """
        te = headers.get("Transfer-Encoding")
        if te is not None:
            raise Refused(HTTPStatus.LENGTH_REQUIRED,
                          f"Transfer-Encoding {te[:40]!r} is not supported; send the body with Content-Length")
        values = headers.get_all("Content-Length") or []
        if not values:
            if method in CHANGING:
                raise Refused(HTTPStatus.LENGTH_REQUIRED, f"{method} needs a Content-Length header (a JSON body, "
                              "'{}' when there is nothing to say)")
            return 0
        if len(values) > 1:
            raise Refused(HTTPStatus.BAD_REQUEST, "Content-Length given more than once")
        text = values[0].strip()
        if not (text.isascii() and text.isdigit()):
            raise Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {values[0][:40]!r} is not a non-negative integer")
        if len(text.lstrip("0")) > 12 or int(text) > MAX_BODY:      # however many digits: too large
            raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body of {text[:40]} bytes is over {MAX_BODY} bytes")
        n = int(text)
        return n
