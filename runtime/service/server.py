"""The control service's HTTP server: 127.0.0.1 only, one daemon thread serving, one thread
per connection (at most :data:`MAX_CONNECTIONS`), a route per (method, path).

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

import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .errors import MethodNotAllowed, NotFound, RequestError, status_of
from .request import Request, send_json
from .routes import Controller, Route, ServiceRoutes
from .security import SecurityPolicy

log = logging.getLogger(__name__)

#: Connections served at once; more are closed at once (a flood cannot grow threads without bound).
MAX_CONNECTIONS = 32
#: Seconds a client may take to send its request (a slow sender cannot hold a thread).
REQUEST_TIMEOUT_S = 5.0


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handler):
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request, client_address):
        if not self._slots.acquire(blocking=False):
            log.debug("service: %d connections open; %s closed", MAX_CONNECTIONS, client_address)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class ControlService:
    """A ThreadingHTTPServer on 127.0.0.1:``port`` (0 picks a free port) in a daemon thread.

    Args:
        controller: the session's controller (:class:`runtime.service.routes.Controller`).
        avatar_dir, motion_dir, hair_dirs: the folders POST /avatar, /motion and /hairstyle
            may load from.
        solvers: the solver names POST /hair accepts (default: every one, solver.modes).
        routes: more routes {(method, path): route} (the panel's).
        token: the optional service token (:func:`runtime.service.security.make_token`).

    Attributes:
        policy: the request rules (:class:`runtime.service.security.SecurityPolicy`).
        routes: every route, {(method, path): route}.
    """

    def __init__(self, controller: Controller, *, port: int = 8765, avatar_dir: Path | None = None,
                 solvers: tuple[str, ...] | None = None, motion_dir: Path | None = None,
                 hair_dirs: list[Path] = (), routes: dict[tuple[str, str], Route] | None = None,
                 token: str | None = None):
        if solvers is None:
            from solver.modes import SOLVER_NAMES

            solvers = tuple(SOLVER_NAMES)
        self.controller = controller
        own = ServiceRoutes(controller, avatar_dir=Path(avatar_dir) if avatar_dir else None,
                            motion_dir=Path(motion_dir) if motion_dir else None,
                            hair_dirs=[Path(d) for d in hair_dirs], solvers=solvers)
        self.routes = {**own.table(), **(routes or {})}
        handler = type("Handler", (_Handler,), {"service": self})
        self.server = _Server(("127.0.0.1", port), handler)
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


class _Handler(BaseHTTPRequestHandler):
    service: ControlService
    server_version = "swaycam"
    timeout = REQUEST_TIMEOUT_S

    def log_message(self, fmt, *args):  # route to logging, not stderr
        log.debug("%s %s", self.address_string(), fmt % args)

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
                svc.policy.check(method, self.headers, self.client_address[0], req.path)
            except RequestError as exc:     # Refused
                log.info("service: refused %s %s from %s: %s", method, self.path[:80], self.client_address[0], exc)
                req.reply({"error": str(exc)}, exc.status, exc.headers)
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
            route(req)
        except RequestError as exc:
            req.reply({"error": str(exc)}, exc.status, exc.headers)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            raise
        except Exception as exc:  # noqa: BLE001 - a bad request must never kill the service
            status = status_of(exc)
            if status is not None:                 # the runtime's errors, by kind
                req.reply({"error": str(exc)}, status)
                return
            # one line in the log (the traceback only at debug level), none in the answer
            log.error("service: internal error on %s %s: %s: %s", method, path[:80], type(exc).__name__, exc)
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


__all__ = ["ControlService", "MAX_CONNECTIONS", "REQUEST_TIMEOUT_S"]
