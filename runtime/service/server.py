"""The local control service (off unless asked): JSON over HTTP on 127.0.0.1 only.

Endpoints:
    GET  /status      fps, tracker latency, face found, substeps, drops (the live metrics), the
                      hairstyle drawn
    POST /recenter    capture the current head pose as neutral
    POST /avatar      {"path": "name.vrm"}: load an avatar from the configured avatar folder
                      (paths resolving outside it are refused with 403); the hairstyle drawn
                      is fitted on it again off the render thread ("hairstyle_pending")
    POST /hair        {"solver": "rest-shape"|"legacy"|"vrm", "params": {"k": 60, "c": 4, ...}}
                      (params as the config's [hair] table, see runtime.rig.hair_params;
                      either key may be left out to keep it). Both change the running
                      hair in place: its motion goes on, nothing snaps to rest. Answers
                      {"solver", "params", "springs": {name: the parameters in effect}}
    GET  /motion      what the body plays: {"playing", "program", "index", "layer", "speed", ...}
    POST /motion      {"clip": "idle" | "rest" | "FILE[#Name[+Name...]]", "speed": 1.5, "loop": true,
                      "layer": "additive" | "override"} (each key optional): a clip from the
                      configured motion folder (paths outside it are refused with 403), played
                      from the next substep with a cross-fade; a clip that cannot be loaded or
                      played answers 422 and the previous one keeps playing
    GET  /hairstyles  the hairstyle try-on: {"styles": [names in the hair folder], "current": the
                      style drawn (null: the avatar's own hair), "pending": the one being fitted,
                      "switching", "error": the last style that could not be fitted}
    POST /hairstyle   {"name": "bob01"} (a style of the hair folder, or a file path inside it;
                      paths resolving outside it are refused with 403, unknown names 404) or
                      {"name": null} (the avatar's own hair back); "wait": false answers 202 at
                      once. Fitted off the render thread (or reloaded from the fit cache) while
                      the previous style keeps running, then swapped in between frames; answers
                      the fit's report (guides: candidates, attached, joined, rejected; chains,
                      cached, seconds). A style that cannot be fitted answers 422 with the
                      try-on's message and the previous style stays; a request replaced by a
                      newer one before it was drawn answers 409
    GET  /frame.png   the last rendered frame
With a panel (runtime/panel): GET / (the browser panel) and its endpoints (runtime/panel/routes.py).
    OPTIONS (any)     {"allow": [methods]} and an Allow header; no CORS headers, ever
Bad requests get 4xx with a JSON body ``{"error": "..."}``; so do malformed request lines,
unknown methods and the rare internal failure (500, one log line, no traceback in the answer).

Before any handler runs, :mod:`runtime.service.security` checks the Host (loopback and this
port only), the Origin (this service's own only), the content type of state changes
(``application/json``), the optional token and a per-client rate limit; bodies need a
Content-Length (no chunked bodies). NaN and Infinity are not JSON and are refused.

The service never touches GL or the solver itself: it calls a :class:`Controller` whose
methods are made thread-safe by the runtime (they hand work to the loop thread).
"""

from __future__ import annotations

import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Protocol

from solver.modes import SOLVER_NAMES

from .security import Refused, SecurityPolicy

log = logging.getLogger(__name__)

AVATAR_SUFFIXES = (".vrm", ".glb", ".gltf")
CLIP_SUFFIXES = (".vrma", ".glb", ".gltf", ".vrm", ".bvh")
#: Connections served at once; more are closed at once (a flood cannot grow threads without bound).
MAX_CONNECTIONS = 32
#: Seconds a client may take to send its request (a slow sender cannot hold a thread).
REQUEST_TIMEOUT_S = 5.0


class Controller(Protocol):
    def status(self) -> dict: ...

    def recenter(self) -> None: ...

    def load_avatar(self, path: Path) -> dict: ...

    def set_hair(self, solver: str | None, params: dict | None) -> dict: ...

    def frame_png(self) -> bytes | None: ...

    def hairstyles(self) -> dict: ...

    def set_hairstyle(self, path: Path | None, name: str | None, *, wait: bool = True) -> dict: ...

    def motion(self) -> dict: ...

    def set_motion(self, clip: str | None, *, speed: float | None = None, loop: bool | None = None,
                   layer: str | None = None) -> dict: ...


class RequestError(Exception):
    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status = status


def folder_files(folder: Path | None, suffixes) -> list[str]:
    """The files with one of ``suffixes`` under ``folder`` that :func:`resolve_avatar` /
    :func:`resolve_clip` would accept, as sorted paths relative to ``folder``: a symlink that
    leads outside the folder is not listed (it would be refused, 403). [] for None."""
    if folder is None:
        return []
    base = folder.resolve()
    out = []
    for p in folder.rglob("*"):
        target = p.resolve()             # what the loader checks: the file a link leads to
        if target.suffix.lower() in suffixes and target.is_file() and target.is_relative_to(base):
            out.append(str(p.relative_to(folder)))
    return sorted(out)


def resolve_avatar(avatar_dir: Path, requested: str) -> Path:
    """The avatar file ``requested`` inside ``avatar_dir``; raises RequestError otherwise."""
    if not isinstance(requested, str) or not requested or "\0" in requested:
        raise RequestError(HTTPStatus.BAD_REQUEST, "'path' must be a non-empty string without NUL bytes")
    base = avatar_dir.resolve()
    target = (base / requested).resolve()
    if not target.is_relative_to(base):
        raise RequestError(HTTPStatus.FORBIDDEN, f"{requested!r} is outside the avatar folder")
    if target.suffix.lower() not in AVATAR_SUFFIXES:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"{requested!r} is not a .vrm/.glb/.gltf file")
    if not target.is_file():
        raise RequestError(HTTPStatus.NOT_FOUND, f"{requested!r} does not exist in the avatar folder")
    return target


def resolve_clip(motion_dir: Path | None, requested) -> str:
    """A clip spec for ``requested`` ("idle", "rest", or ``FILE[#Name...]`` inside
    ``motion_dir``); raises RequestError otherwise."""
    if not isinstance(requested, str) or not requested or "\0" in requested:
        raise RequestError(HTTPStatus.BAD_REQUEST, "'clip' must be a non-empty string without NUL bytes")
    if requested in ("idle", "rest"):
        return requested
    if motion_dir is None:
        raise RequestError(HTTPStatus.FORBIDDEN, "no motion folder is configured (--motion-dir)")
    file, sep, names = requested.partition("#")
    base = motion_dir.resolve()
    target = (base / file).resolve()
    if not target.is_relative_to(base):
        raise RequestError(HTTPStatus.FORBIDDEN, f"{file!r} is outside the motion folder")
    if target.suffix.lower() not in CLIP_SUFFIXES:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"{file!r} is not a {'/'.join(CLIP_SUFFIXES)} file")
    if not target.is_file():
        raise RequestError(HTTPStatus.NOT_FOUND, f"{file!r} does not exist in the motion folder")
    return str(target) + sep + names


def resolve_style(hair_dirs: list[Path], requested) -> tuple[Path, str]:
    """(file, name) of the style ``requested`` — a style name (``<dir>/<name>/<name>.<ext>`` or
    ``<dir>/<name>.<ext>``) or a file path relative to a hair folder — inside ``hair_dirs``;
    raises RequestError otherwise (403 outside the folders, 404 unknown, 400 malformed)."""
    from avatars.hair.source import STYLE_SUFFIXES

    if not isinstance(requested, str) or not requested or "\0" in requested:
        raise RequestError(HTTPStatus.BAD_REQUEST, "'name' must be a non-empty string without NUL bytes, or null")
    if not hair_dirs:
        raise RequestError(HTTPStatus.FORBIDDEN, "no hair folder is configured (--hair-dir)")
    bases = [d.resolve() for d in hair_dirs]
    path_like = "/" in requested or "\\" in requested or requested in (".", "..") or \
        Path(requested).suffix.lower() in STYLE_SUFFIXES
    if path_like:
        targets = [(b / requested).resolve() for b in bases]
        inside = [t for t, b in zip(targets, bases) if t.is_relative_to(b)]
        if not inside:
            raise RequestError(HTTPStatus.FORBIDDEN, f"{requested!r} is outside the hair folder")
        if inside[0].suffix.lower() not in STYLE_SUFFIXES:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"{requested!r} is not a {'/'.join(STYLE_SUFFIXES)} file")
        found = next((t for t in inside if t.is_file()), None)
        if found is None:
            raise RequestError(HTTPStatus.NOT_FOUND, f"{requested!r} does not exist in the hair folder")
        return found, found.stem
    for b in bases:
        for suffix in STYLE_SUFFIXES:
            for cand in (b / requested / f"{requested}{suffix}", b / f"{requested}{suffix}"):
                if cand.is_file():
                    if not cand.resolve().is_relative_to(b):     # a link out of the folder
                        raise RequestError(HTTPStatus.FORBIDDEN, f"{requested!r} is outside the hair folder")
                    return cand, requested
    raise RequestError(HTTPStatus.NOT_FOUND, f"no hair style named {requested!r} in the hair folder "
                       "(GET /hairstyles lists them)")


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

    ``token``: the optional service token (:func:`runtime.service.security.make_token`);
    ``policy``: the request rules (:class:`runtime.service.security.SecurityPolicy`).
    """

    def __init__(self, controller: Controller, *, port: int = 8765, avatar_dir: Path | None = None,
                 solvers: tuple[str, ...] = SOLVER_NAMES, motion_dir: Path | None = None,
                 hair_dirs: list[Path] = (), panel=None, token: str | None = None):
        self.controller = controller
        #: the browser panel (runtime.panel.Panel): its page, preview and endpoints; None: none
        self.panel = panel
        self.avatar_dir = Path(avatar_dir) if avatar_dir else None
        self.motion_dir = Path(motion_dir) if motion_dir else None
        self.hair_dirs = [Path(d) for d in hair_dirs]
        self.solvers = solvers
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


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON (numbers must be finite)")


class _Handler(BaseHTTPRequestHandler):
    service: ControlService
    server_version = "swaycam"
    timeout = REQUEST_TIMEOUT_S

    def log_message(self, fmt, *args):  # route to logging, not stderr
        log.debug("%s %s", self.address_string(), fmt % args)

    def _send(self, status: HTTPStatus, body: bytes, ctype: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if int(status) >= 400:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: HTTPStatus, obj, headers: dict | None = None) -> None:
        try:
            body = json.dumps(obj, allow_nan=False).encode()
        except (TypeError, ValueError) as exc:   # a value JSON cannot say: never echo invalid JSON
            log.error("service: answer to %s %s is not JSON (%s)", self.command, self.path[:80], exc)
            status, body = HTTPStatus.INTERNAL_SERVER_ERROR, b'{"error": "internal error: the answer is not JSON"}'
        self._send(status, body, "application/json", headers)

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
        self._json(status, {"error": message or status.phrase})

    def _body(self) -> dict:
        n = self.service.policy.body_length(self.command, self.headers)
        try:
            raw = self.rfile.read(n) if n else b""
        except TimeoutError:
            raise RequestError(HTTPStatus.REQUEST_TIMEOUT, f"the body of {n} bytes did not arrive within "
                               f"{self.timeout:g} s") from None
        if len(raw) < n:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"body ended after {len(raw)} of {n} bytes")
        try:
            obj = json.loads(raw or b"{}", parse_constant=_no_constant)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"malformed JSON: {exc}") from None
        except (ValueError, RecursionError) as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"malformed JSON: {str(exc)[:200]}") from None
        if not isinstance(obj, dict):
            raise RequestError(HTTPStatus.BAD_REQUEST, "body must be a JSON object")
        return obj

    def _dispatch(self, method: str) -> None:
        try:
            try:
                self.service.policy.check(method, self.headers, self.client_address[0],
                                          self.path.split("?", 1)[0])
            except Refused as exc:
                log.info("service: refused %s %s from %s: %s", method, self.path[:80], self.client_address[0], exc)
                self._json(exc.status, {"error": str(exc)}, exc.headers)
                return
            self._route(method)
        except (BrokenPipeError, ConnectionResetError, TimeoutError) as exc:   # the client went away
            log.debug("service: client %s gone (%s)", self.address_string(), exc)

    def _routes(self) -> dict:
        routes = {
            ("GET", "/status"): self._status, ("POST", "/recenter"): self._recenter,
            ("POST", "/avatar"): self._avatar, ("POST", "/hair"): self._hair, ("GET", "/frame.png"): self._frame,
            ("GET", "/motion"): self._motion_get, ("POST", "/motion"): self._motion,
            ("GET", "/hairstyles"): self._hairstyles, ("POST", "/hairstyle"): self._hairstyle,
        }
        if self.service.panel is not None:
            routes.update(self.service.panel.routes(self))
        return routes

    def _route(self, method: str) -> None:
        routes = self._routes()
        path = self.path.split("?", 1)[0]
        try:
            if method == "OPTIONS":
                allow = sorted({m for m, p in routes if p == path or path == "*"} | {"OPTIONS"})
                if len(allow) == 1 and path != "*":
                    raise RequestError(HTTPStatus.NOT_FOUND, f"no endpoint {path[:80]}")
                self._json(HTTPStatus.OK, {"allow": allow}, {"Allow": ", ".join(allow)})
                return
            fn = routes.get((method, path))
            if fn is None:
                if any(p == path for _, p in routes):
                    raise RequestError(HTTPStatus.METHOD_NOT_ALLOWED, f"{method} not allowed on {path}")
                raise RequestError(HTTPStatus.NOT_FOUND, f"no endpoint {path[:80]}")
            fn()
        except Refused as exc:
            self._json(exc.status, {"error": str(exc)}, exc.headers)
        except RequestError as exc:
            self._json(exc.status, {"error": str(exc)})
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            raise
        except Exception as exc:  # noqa: BLE001 - a bad request must never kill the service
            # one line in the log (the traceback only at debug level), none in the answer
            log.error("service: internal error on %s %s: %s: %s", method, path[:80], type(exc).__name__, exc)
            log.debug("service: traceback", exc_info=True)
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"internal error ({type(exc).__name__})"})

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

    def _status(self):
        self._json(HTTPStatus.OK, self.service.controller.status())

    def _recenter(self):
        self._body()
        self.service.controller.recenter()
        self._json(HTTPStatus.OK, {"ok": True})

    def _avatar(self):
        body = self._body()
        self._keys(body, ("path",))
        if self.service.avatar_dir is None:
            raise RequestError(HTTPStatus.FORBIDDEN, "no avatar folder is configured (--avatar-dir)")
        target = resolve_avatar(self.service.avatar_dir, body.get("path"))
        try:
            result = self.service.controller.load_avatar(target)
        except ValueError as exc:
            raise RequestError(HTTPStatus.UNPROCESSABLE_ENTITY, str(exc)) from None
        except TimeoutError:
            raise RequestError(HTTPStatus.GATEWAY_TIMEOUT, "loaded, but the render thread did not swap it in "
                               "(the run is not drawing frames)") from None
        self._json(HTTPStatus.OK, result)

    def _keys(self, body: dict, known: tuple[str, ...]) -> None:
        unknown = sorted(set(body) - set(known))
        if unknown:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"unknown key {unknown[0]!r} (known: {', '.join(known)})")

    def _hair(self):
        body = self._body()
        self._keys(body, ("solver", "params"))
        solver = body.get("solver")
        if solver is not None and solver not in self.service.solvers:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"solver must be one of {list(self.service.solvers)}")
        params = body.get("params")          # absent: keep the current settings
        if params is not None and not isinstance(params, dict):
            raise RequestError(HTTPStatus.BAD_REQUEST, "'params' must be an object (k, c, gravity, hit_radius)")
        if params:
            from ..rig.hair_params import parse_hair

            try:
                parse_hair(params)      # whatever the avatar (with or without springs)
            except ValueError as exc:
                raise RequestError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        try:
            result = self.service.controller.set_hair(solver, params)
        except ValueError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        self._json(HTTPStatus.OK, result)

    def _motion_get(self):
        self._json(HTTPStatus.OK, self.service.controller.motion())

    def _motion(self):
        body = self._body()
        self._keys(body, ("clip", "speed", "loop", "layer"))
        clip = resolve_clip(self.service.motion_dir, body["clip"]) if "clip" in body else None
        speed, loop, layer = body.get("speed"), body.get("loop"), body.get("layer")
        if speed is not None and (isinstance(speed, bool) or not isinstance(speed, (int, float))
                                  or not 0 < speed <= 100):
            raise RequestError(HTTPStatus.BAD_REQUEST, "'speed' must be a number > 0 and <= 100")
        if loop is not None and not isinstance(loop, bool):
            raise RequestError(HTTPStatus.BAD_REQUEST, "'loop' must be true or false")
        if layer is not None and not isinstance(layer, str):
            raise RequestError(HTTPStatus.BAD_REQUEST, "'layer' must be 'additive' or 'override'")
        try:
            result = self.service.controller.set_motion(clip, speed=None if speed is None else float(speed),
                                                        loop=loop, layer=layer)
        except ValueError as exc:
            raise RequestError(HTTPStatus.UNPROCESSABLE_ENTITY, str(exc)) from None
        self._json(HTTPStatus.OK, result)

    def _hairstyles(self):
        self._json(HTTPStatus.OK, self.service.controller.hairstyles())

    def _hairstyle(self):
        from ..tryon import SessionClosed, StyleSuperseded

        body = self._body()
        self._keys(body, ("name", "wait"))
        if "name" not in body:
            raise RequestError(HTTPStatus.BAD_REQUEST, "'name' is required: a style name, or null for the avatar's "
                               "own hair")
        wait = body.get("wait", True)
        if not isinstance(wait, bool):
            raise RequestError(HTTPStatus.BAD_REQUEST, "'wait' must be true or false")
        path, name = (None, None) if body["name"] is None else resolve_style(self.service.hair_dirs, body["name"])
        try:
            result = self.service.controller.set_hairstyle(path, name, wait=wait)
        except ValueError as exc:          # StyleError: the try-on's message
            raise RequestError(HTTPStatus.UNPROCESSABLE_ENTITY, str(exc)) from None
        except StyleSuperseded as exc:
            raise RequestError(HTTPStatus.CONFLICT, str(exc)) from None
        except SessionClosed as exc:
            raise RequestError(HTTPStatus.SERVICE_UNAVAILABLE, str(exc)) from None
        except TimeoutError:
            raise RequestError(HTTPStatus.GATEWAY_TIMEOUT, "still fitting; GET /hairstyles shows it pending") from None
        self._json(HTTPStatus.OK if wait else HTTPStatus.ACCEPTED, result)

    def _frame(self):
        png = self.service.controller.frame_png()
        if png is None:
            raise RequestError(HTTPStatus.SERVICE_UNAVAILABLE, "no frame rendered yet")
        self._send(HTTPStatus.OK, png, "image/png")
