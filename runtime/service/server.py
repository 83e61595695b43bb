"""The control service's HTTP server: 127.0.0.1 only, one daemon thread serving, one thread
per connection, a route per (method, path).

Connections: at most :data:`MAX_CONNECTIONS` at once and :data:`MAX_PER_CLIENT` from one
client address. A request — request line, headers and body — must arrive whole within
:data:`REQUEST_DEADLINE_S` of the connection being ready for it; each byte does not restart
the clock (a client trickling one byte per second is cut off at the deadline and closed; a body late past it: 408).
When a new connection would go over a limit, the connection that has waited longest for its
request to arrive is closed to make room (a client still sending its request holds no slot
against one whose request is complete); only when every slot is answering a complete request
(a long render-thread call, an MJPEG stream) is the new one closed. So a local process
opening slow connections cannot lock other clients out: they are served at once.

Its routes are the service's own (runtime/service/routes.py) and, with a panel, the panel's
(runtime/panel/routes.py: GET / and its endpoints), each a function of one
:class:`runtime.service.request.Request`.

    OPTIONS (any)     {"allow": [methods]} and an Allow header; no CORS headers, ever

Before any route runs, :mod:`runtime.service.security` checks the Host (loopback and this
port only), the Origin (this service's own only), the content type of state changes
(``application/json``), the optional token and a per-client rate limit; bodies need a
Content-Length (no chunked bodies). Bad requests get 4xx with a JSON body
``{"error": "..."}`` (a route's :class:`RequestError`, or the runtime's error by type:
runtime/service/errors.py); so do malformed request lines, unknown methods and the rare
internal failure (500, one log line, no traceback in the answer).
"""

from __future__ import annotations

import io
import logging
import re
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .errors import MethodNotAllowed, NotFound, RequestError, status_of
from .request import Request, send_json
from .routes import Controller, Route, ServiceRoutes
from .security import SecurityPolicy

log = logging.getLogger(__name__)

#: Connections served at once (a flood cannot grow threads without bound; module doc).
MAX_CONNECTIONS = 64
#: Connections from one client address at once.
MAX_PER_CLIENT = 32
#: Seconds a whole request (line, headers, body) may take to arrive, however it trickles.
REQUEST_DEADLINE_S = 5.0
#: Seconds one socket operation may block (an answer the client does not read).
REQUEST_TIMEOUT_S = 5.0


class _Conn:
    """A connection of the server: its socket, client address, and since when it has been
    waiting for its request (None while a complete request is answered)."""

    __slots__ = ("sock", "client", "waiting_since")

    def __init__(self, sock, client: str):
        self.sock, self.client, self.waiting_since = sock, client, time.monotonic()


class _Connections:
    """The open connections and the limits of the module doc (thread-safe)."""

    def __init__(self, total: int, per_client: int):
        self.total, self.per_client = total, per_client
        self._lock = threading.Lock()
        self._open: dict[int, _Conn] = {}
        self.evicted = 0
        self.refused = 0

    def admit(self, sock, client: str) -> bool:
        """Register a new connection, closing the longest-waiting one over a limit; False:
        refused (every slot in the way is answering a complete request)."""
        with self._lock:
            victim = None
            mine = [c for c in self._open.values() if c.client == client]
            for pool, limit in ((mine, self.per_client), (list(self._open.values()), self.total)):
                if len(pool) >= limit:
                    waiting = [c for c in pool if c.waiting_since is not None]
                    if not waiting:
                        self.refused += 1
                        return False
                    victim = min(waiting, key=lambda c: c.waiting_since)
                    break
            if victim is not None:
                del self._open[id(victim.sock)]
                self.evicted += 1
            self._open[id(sock)] = _Conn(sock, client)
        if victim is not None:
            log.debug("service: %s waited %.1f s for its request; closed for a new connection", victim.client,
                      time.monotonic() - victim.waiting_since)
            try:
                victim.sock.shutdown(socket.SHUT_RDWR)       # its thread's read ends; it closes it
            except OSError:
                pass
        return True

    def waiting(self, sock, on: bool) -> None:
        """The connection waits for a request (``on``) or answers a complete one."""
        with self._lock:
            c = self._open.get(id(sock))
            if c is not None:
                c.waiting_since = time.monotonic() if on else None

    def drop(self, sock) -> None:
        with self._lock:
            self._open.pop(id(sock), None)

    def count(self) -> int:
        with self._lock:
            return len(self._open)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    #: the listen backlog: a burst of connections waits in the kernel instead of being
    #: answered with SYN retries a second later (socketserver's default is 5)
    request_queue_size = 128

    def __init__(self, address, handler, *, max_connections: int = MAX_CONNECTIONS,
                 max_per_client: int = MAX_PER_CLIENT):
        super().__init__(address, handler)
        self.connections = _Connections(max_connections, max_per_client)

    def process_request(self, request, client_address):
        if not self.connections.admit(request, client_address[0]):
            log.debug("service: every connection is busy; %s closed", client_address)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.drop(request)


class _DeadlineReader(io.RawIOBase):
    """The request's bytes from the socket, each read bounded by what is left of the
    request's deadline (``deadline``, a monotonic time; None: the socket's own timeout)."""

    def __init__(self, sock, timeout_s: float, deadline_s: float):
        self.sock, self.timeout_s, self.deadline_s = sock, timeout_s, deadline_s
        self.deadline: float | None = None
        #: the limit that ran out last: the per-read timeout or the whole request's deadline, s
        self.expired_s = timeout_s

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.expired_s = self.deadline_s
                raise TimeoutError("the request did not arrive within its deadline")
            self.expired_s = self.deadline_s if left < self.timeout_s else self.timeout_s
            self.sock.settimeout(min(left, self.timeout_s))
        return self.sock.recv_into(b)


class ControlService:
    """A ThreadingHTTPServer on 127.0.0.1:``port`` (0 picks a free port) in a daemon thread.

    Args:
        controller: the session's controller (:class:`runtime.service.routes.Controller`).
        avatar_dir, motion_dir, hair_dirs: the folders POST /avatar, /motion and /hairstyle
            may load from.
        solvers: the solver names POST /hair accepts (default: every one, solver.modes).
        routes: more routes {(method, path): route} (the panel's).
        token: the optional service token (:func:`runtime.service.security.make_token`).
        request_deadline_s: seconds a whole request may take to arrive (module doc).
        gate: called once a request has arrived, before its route runs (a live run's
            :meth:`runtime.commands.RenderIdle.wait`: the route's Python work starts in the
            render thread's idle time instead of taking the GIL from a frame), or None.
        max_connections, max_per_client: the connection limits (module doc).

    Attributes:
        policy: the request rules (:class:`runtime.service.security.SecurityPolicy`).
        routes: every route, {(method, path): route}.
    """

    def __init__(self, controller: Controller, *, port: int = 8765, avatar_dir: Path | None = None,
                 solvers: tuple[str, ...] | None = None, motion_dir: Path | None = None,
                 hair_dirs: list[Path] = (), routes: dict[tuple[str, str], Route] | None = None,
                 token: str | None = None, request_deadline_s: float = REQUEST_DEADLINE_S,
                 max_connections: int = MAX_CONNECTIONS, max_per_client: int = MAX_PER_CLIENT,
                 gate=None):
        if solvers is None:
            from solver.modes import SOLVER_NAMES

            solvers = tuple(SOLVER_NAMES)
        self.controller = controller
        own = ServiceRoutes(controller, avatar_dir=Path(avatar_dir) if avatar_dir else None,
                            motion_dir=Path(motion_dir) if motion_dir else None,
                            hair_dirs=[Path(d) for d in hair_dirs], solvers=solvers)
        self.routes = {**own.table(), **(routes or {})}
        self.request_deadline_s = float(request_deadline_s)
        self.gate = gate
        handler = type("Handler", (_Handler,), {"service": self})
        self.server = _Server(("127.0.0.1", port), handler, max_connections=max_connections,
                              max_per_client=max_per_client)
        self.policy = SecurityPolicy(port=self.server.server_address[1], token=token)
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="swaycam-service", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        return self.server.server_address[:2]

    def start(self) -> "ControlService":
        self._thread.start()
        log.info("control service on http://%s:%d", *self.address)
        return self

    def close(self) -> None:
        """Stop serving (if started) and release the port."""
        if self._thread.is_alive():
            self.server.shutdown()
            self._thread.join(timeout=5)
        self.server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()


#: An absolute path in a message: a slash, then folders, then the last component.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~/])(?:/[^/\s:'\"(),]+)+/([^/\s:'\"(),]+)")


def client_message(text: str) -> str:
    """``text`` as a web client may read it: every absolute server path shortened to its last
    component (``/home/me/avatars/zero.vrm: ...`` -> ``zero.vrm: ...``), so no folder layout of
    the server leaks (issue 34 item 9); the log keeps the whole message."""
    return _ABSOLUTE_PATH.sub(lambda m: m.group(1), text)


def _short(text: str, n: int = 300) -> str:
    """A log line's copy of a message: at most ``n`` characters (a request's 30 KB string
    is not copied to the console)."""
    return text if len(text) <= n else f"{text[:n]}... ({len(text)} characters)"


class _Handler(BaseHTTPRequestHandler):
    service: ControlService
    server_version = "swaycam"
    timeout = REQUEST_TIMEOUT_S

    def log_message(self, fmt, *args):  # route to logging, not stderr
        log.debug("%s %s", self.address_string(), fmt % args)

    def setup(self):
        super().setup()
        self._reader = _DeadlineReader(self.connection, self.timeout, self.service.request_deadline_s)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self):
        """One request, which must arrive whole by the deadline (module doc)."""
        self._reader.deadline = time.monotonic() + self.service.request_deadline_s
        self.server.connections.waiting(self.connection, True)
        try:
            super().handle_one_request()
        except TimeoutError:       # the body trickled past the deadline after the headers
            self.close_connection = True
        except OSError:            # closed for a newer connection, or the client went away
            self.close_connection = True

    def read_limit_s(self) -> float:
        """The seconds that ran out when a read of the request timed out."""
        return self._reader.expired_s

    def _request_arrived(self) -> None:
        """The whole request is in: the answer may take its time (no deadline, no eviction)."""
        self._reader.deadline = None
        self.connection.settimeout(self.timeout)
        self.server.connections.waiting(self.connection, False)

    def send_error(self, code, message=None, explain=None):
        """http.server's own errors (malformed request line, unknown method, header too long)
        as JSON instead of its HTML page."""
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self.close_connection = True
        if not getattr(self, "command", None):
            self.command = ""
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":   # answer with a status line anyway
            self.request_version = "HTTP/1.0"
        send_json(self, status, {"error": message or status.phrase})

    def _dispatch(self, method: str) -> None:
        svc = self.service
        req = Request(self, method, body_length=svc.policy.body_length)
        try:
            try:
                svc.policy.check(method, self.headers, self.client_address[0], req.path, req.query)
            except RequestError as exc:     # Refused
                log.info("service: refused %s %s from %s: %s", method, self.path[:80], self.client_address[0],
                         _short(str(exc)))
                req.reply({"error": client_message(str(exc))}, exc.status, exc.headers)
                return
            cookie = svc.policy.panel_login(method, req.path, req.query)
            if cookie is not None:          # the panel opened with the token: a nonce, the token out of the URL
                req.send(b"", "text/plain", HTTPStatus.SEE_OTHER, headers={"Location": "/", "Set-Cookie": cookie})
                return
            self._route(req)
        except (BrokenPipeError, ConnectionResetError, TimeoutError) as exc:   # the client went away
            log.debug("service: client %s gone (%s)", self.address_string(), exc)

    def _route(self, req: Request) -> None:
        routes = self.service.routes
        method, path = req.method, req.path
        try:
            if method == "OPTIONS":
                allow = sorted({m for m, p in routes if p == path or path == "*"} | {"OPTIONS"})
                if len(allow) == 1 and path != "*":
                    raise NotFound(f"no endpoint {path[:80]}")
                req.reply({"allow": allow}, headers={"Allow": ", ".join(allow)})
                return
            route = routes.get((method, path))
            if route is None:
                if any(p == path for _, p in routes):
                    raise MethodNotAllowed(f"{method} not allowed on {path}")
                raise NotFound(f"no endpoint {path[:80]}")
            req.read_body()                 # the whole request by its deadline (408 otherwise)
            self._request_arrived()
            if self.service.gate is not None:
                self.service.gate()
            route(req)
        except RequestError as exc:
            req.reply({"error": client_message(str(exc))}, exc.status, exc.headers)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            raise
        except Exception as exc:  # noqa: BLE001 - a bad request must never kill the service
            status = status_of(exc)
            if status is not None:                 # the runtime's errors, by kind
                req.reply({"error": client_message(str(exc))}, status)
                return
            # one line in the log (the traceback only at debug level), none in the answer
            log.error("service: internal error on %s %s: %s: %s", method, path[:80], type(exc).__name__,
                      _short(str(exc)))
            log.debug("service: traceback", exc_info=True)
            req.reply({"error": f"internal error ({type(exc).__name__})"}, HTTPStatus.INTERNAL_SERVER_ERROR)

    def do_OPTIONS(self):
        self._dispatch("OPTIONS")

    def do_GET(self):
        self._dispatch("GET")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def do_PATCH(self):
        self._dispatch("PATCH")

    def do_POST(self):
        self._dispatch("POST")


__all__ = ["ControlService", "MAX_CONNECTIONS", "MAX_PER_CLIENT", "REQUEST_DEADLINE_S", "REQUEST_TIMEOUT_S"]
