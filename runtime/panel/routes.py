"""The browser control panel: its page, the preview stream and the JSON endpoints it uses,
served by the control service (:mod:`runtime.service`) for one running session.

Endpoints added to the service (all JSON but the page, its files and the preview; every one
is documented in the README and is what the panel itself calls):

    GET  /                 the panel (runtime/panel/static/index.html); /panel/<file> its CSS/JS
    GET  /preview.mjpg     the live preview: multipart JPEG frames, at most PREVIEW_MAX_FPS per
                           second, read back only while a client watches (runtime/panel/preview.py)
    GET  /preview.jpg      one preview frame
    GET  /avatars          {"avatars": [files in --avatar-dir], "current"}
    GET  /clips            {"clips": ["idle", "rest", files in --motion-dir], "playing"}
    GET  /hair             {"solver", "solvers", "params", "springs" {name: params in effect},
                           "steps", "resets"} (+ "tails" and "rest_tails", where each tail would be
                           on the rest arc carried by its anchor, [[x, y, z] m], with ?tails=1)
    GET  /expressions      {"expressions": [the avatar's], "active" {name: weight}, "triggered",
                           "keys" {key: name}, "mode", "fade_ms"}
    POST /expression       {"name", "weight" 0..1 (default 1; 0 releases), "fade_ms" (default the
                           config's)}: shown over the tracked expressions (runtime/panel/expressions.py)
    POST /hotkeys          {"keys": {name: key}, "mode": "toggle"|"hold", "fade_ms"} (each optional)
    GET  /outputs          {"background", "outputs", "vcam" {"on", "panel", "device"}, "recording"
                           {"video", "poses": {"path", "frames"} | null}, "record_dir"}
    POST /vcam             {"on": true|false, "device": optional}: the virtual camera on / off
    POST /record           {"kind": "video"|"poses", "on": true|false, "name": optional file name}:
                           start / stop a recording into --record-dir (runtime/panel/outputs_control.py)
    POST /background       {"background": "transparent" | "green" | "#rrggbb"}; transparent is 409 while a
                           video or virtual camera output runs (no alpha), and they cannot start then
    POST /calibrate        {"phase": "neutral"|"blink"|"mouth"} collects that phase; {"phase": "apply"}
                           sets the ranges from the three; {"phase": "cancel"} stops
    POST /config/save      {} writes [hair], [expressions], [calibration] into the --config file
                           (or ./swaycam.toml without one); answers {"path", "hair", ...}

Render-thread work goes through the session's command queue, as the service's own endpoints.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from .calibration import CalibrationCollector
from .expressions import ExpressionOverlay
from .outputs_control import OutputControl, OutputError
from .preview import PreviewTap
from .settings import MODES, check_expressions, fade_ms, hotkeys, mode

if TYPE_CHECKING:  # pragma: no cover
    from ..session import Session

log = logging.getLogger(__name__)

STATIC_TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
                ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
STATIC_FILES = ("index.html", "panel.css", "panel.js")
#: Where the panel saves settings when the run has no --config file.
DEFAULT_CONFIG_FILE = "swaycam.toml"
#: The MJPEG stream's part boundary.
BOUNDARY = "swaycamframe"


def static_file(name: str) -> bytes:
    """A file shipped in runtime/panel/static (package data)."""
    return resources.files(__package__).joinpath("static", name).read_bytes()


class Panel:
    """The panel of ``session`` (see the module doc): preview tap, triggered expressions,
    calibration collector and the endpoints' handlers."""

    def __init__(self, session: Session):
        self.session = session
        self.preview = PreviewTap()
        self.overlay = ExpressionOverlay(self._now_ns)
        self.calibration = CalibrationCollector()
        self.outputs = OutputControl(session)
        self._closed = False

    def _now_ns(self) -> int:
        c = self.session.clock
        return c.wall_ns() if c is not None else time.perf_counter_ns()

    # ------------------------------------------------------------------ render thread hooks
    def expressions(self, tracked: dict | None) -> dict | None:
        """The frame's expression weights with the triggered ones on top."""
        return self.overlay.apply(tracked)

    def frame_drawn(self, renderer, wall_ns: int, sample) -> None:
        """After the frame is drawn and sent: the preview, the calibration's samples."""
        self.preview.frame_drawn(renderer, wall_ns)
        self.outputs.frame_drawn(sample)
        if self.calibration.phase is not None and sample is not None:
            self.calibration.feed(sample.blendshapes, sample.found)

    def hotkey(self, key: str) -> bool:
        """A window key: toggle the expression it is the hotkey of (True when it is one)."""
        names = self._names()
        name = hotkeys(self.session.cfg.expressions, names).get(key.lower())
        if name is None:
            return False
        on = self.overlay.targets().get(name, 0.0) > 0
        self.overlay.trigger(name, 0.0 if on else 1.0, fade_ms(self.session.cfg.expressions))
        return True

    def close(self) -> None:
        """Stop the preview (wakes its streams) and free its GL objects (render thread)."""
        if not self._closed:
            self._closed = True
            self.outputs.close()
            self.preview.close()
            self.preview.release()

    # ------------------------------------------------------------------ routes
    def routes(self, h) -> dict:
        """{(method, path): handler} for the request handler ``h`` (runtime.service._Handler)."""
        r = {("GET", "/"): lambda: self._static(h, "index.html"),
             ("GET", "/preview.mjpg"): lambda: self._mjpeg(h), ("GET", "/preview.jpg"): lambda: self._jpeg(h),
             ("GET", "/avatars"): lambda: self._avatars(h), ("GET", "/clips"): lambda: self._clips(h),
             ("GET", "/hair"): lambda: self._hair(h), ("GET", "/expressions"): lambda: self._expressions_get(h),
             ("POST", "/expression"): lambda: self._expression(h), ("POST", "/hotkeys"): lambda: self._hotkeys(h),
             ("GET", "/outputs"): lambda: self._outputs(h), ("POST", "/background"): lambda: self._background(h),
             ("POST", "/vcam"): lambda: self._vcam(h), ("POST", "/record"): lambda: self._record(h),
             ("POST", "/calibrate"): lambda: self._calibrate(h), ("POST", "/config/save"): lambda: self._save(h)}
        for name in STATIC_FILES:
            r[("GET", f"/panel/{name}")] = (lambda n=name: self._static(h, n))
        return r

    def _static(self, h, name: str) -> None:
        body = static_file(name)
        h.send_response(HTTPStatus.OK)
        h.send_header("Content-Type", STATIC_TYPES[Path(name).suffix])
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Cache-Control", "no-cache")
        h.send_header("X-Content-Type-Options", "nosniff")
        h.send_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; "
                      "frame-ancestors 'none'; form-action 'none'")
        h.send_header("X-Frame-Options", "DENY")
        h.end_headers()
        h.wfile.write(body)

    def _mjpeg(self, h) -> None:
        tap = self.preview
        tap.connect()
        try:
            h.send_response(HTTPStatus.OK)
            h.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
            h.send_header("Cache-Control", "no-store")
            h.end_headers()
            seq = 0
            while not self._closed:
                seq2, jpeg = tap.wait_next(seq, timeout_s=1.0)
                if jpeg is None:
                    continue
                seq = seq2
                h.wfile.write(f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
                              .encode() + jpeg + b"\r\n")
                h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            tap.disconnect()
            h.close_connection = True

    def _jpeg(self, h) -> None:
        from ..service import RequestError

        tap = self.preview
        tap.connect()
        try:
            seq, _ = tap.latest()
            _, jpeg = tap.wait_next(seq, timeout_s=3.0)
        finally:
            tap.disconnect()
        if jpeg is None:
            raise RequestError(HTTPStatus.SERVICE_UNAVAILABLE, "no preview frame (is the run drawing frames?)")
        h._send(HTTPStatus.OK, jpeg, "image/jpeg")

    def _avatars(self, h) -> None:
        from ..service import AVATAR_SUFFIXES, folder_files

        d = h.service.avatar_dir
        files = folder_files(d, AVATAR_SUFFIXES)
        current = self.session.rig.avatar.path
        cur = None
        if d is not None and current:
            try:
                cur = str(Path(current).resolve().relative_to(d.resolve()))
            except ValueError:
                cur = None
        h._json(HTTPStatus.OK, {"avatars": files, "current": cur, "path": str(current) if current else None,
                                "folder": d is not None})

    def _clips(self, h) -> None:
        from ..service import CLIP_SUFFIXES, folder_files

        files = folder_files(h.service.motion_dir, CLIP_SUFFIXES)
        m = self.session.controller.motion()
        h._json(HTTPStatus.OK, {"clips": ["idle", "rest", *files], "playing": m.get("playing"),
                                "motion": m.get("playing") is not None})

    def _hair(self, h) -> None:
        from solver.modes import SOLVER_NAMES

        tails = "tails=1" in (h.path.partition("?")[2])
        s = self.session

        def do():
            rig = s.rig
            ch = rig.chains
            out = {"solver": rig.solver, "solvers": list(SOLVER_NAMES), "params": rig.hair_params,
                   "springs": rig.hair_springs(), "steps": ch.steps if ch is not None else 0,
                   "resets": s.loop.resets + (ch.auto_resets if ch is not None else 0)}
            if tails and ch is not None:
                out["tails"] = ch.tails.tolist()
                out["rest_tails"] = ch.rest_arc_tails(rig.world).tolist()
            return out

        h._json(HTTPStatus.OK, s.commands.call(do))

    def _names(self) -> list[str]:
        return list(self.session.rig.avatar.expressions)

    def _expressions_get(self, h) -> None:
        e = self.session.cfg.expressions
        names = self._names()
        h._json(HTTPStatus.OK, {"expressions": names, "active": {k: round(v, 4) for k, v in self.overlay.weights().items()},
                                "triggered": self.overlay.targets(), "keys": hotkeys(e, names),
                                "mode": mode(e), "fade_ms": fade_ms(e)})

    def _expression(self, h) -> None:
        from ..service import RequestError

        body = h._body()
        h._keys(body, ("name", "weight", "fade_ms"))
        name = body.get("name")
        if not isinstance(name, str) or name not in self._names():
            raise RequestError(HTTPStatus.NOT_FOUND if isinstance(name, str) else HTTPStatus.BAD_REQUEST,
                               f"'name' must be one of the avatar's expressions: {', '.join(self._names())}")
        try:
            self.overlay.trigger(name, body.get("weight", 1.0), body.get("fade_ms", fade_ms(self.session.cfg.expressions)))
        except ValueError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        h._json(HTTPStatus.OK, {"name": name, "triggered": self.overlay.targets()})

    def _hotkeys(self, h) -> None:
        from ..service import RequestError

        body = h._body()
        h._keys(body, ("keys", "mode", "fade_ms"))
        table = dict(self.session.cfg.expressions)
        if "keys" in body:
            keys = body["keys"]
            if not isinstance(keys, dict):
                raise RequestError(HTTPStatus.BAD_REQUEST, "'keys' must be an object {expression: key}")
            table["keys"] = {n: str(k).lower() for n, k in keys.items() if k}
        for k in ("mode", "fade_ms"):
            if k in body:
                table[k] = body[k]
        try:
            check_expressions(table)
        except ValueError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        self.session.cfg = replace(self.session.cfg, expressions=table)
        self._expressions_get(h)

    def _outputs(self, h) -> None:
        s = self.session
        h._json(HTTPStatus.OK, {"background": s.cfg.background, "outputs": [o.name for o in s.output_specs],
                                "preview_clients": self.preview.clients, **self.outputs.state()})

    def _vcam(self, h) -> None:
        from ..service import RequestError

        body = h._body()
        h._keys(body, ("on", "device"))
        on, device = body.get("on"), body.get("device")
        if not isinstance(on, bool) or not (device is None or isinstance(device, str)):
            raise RequestError(HTTPStatus.BAD_REQUEST, "expected {\"on\": true|false, \"device\": optional name}")
        try:
            h._json(HTTPStatus.OK, self.outputs.set_vcam(on, device))
        except OutputError as exc:
            raise RequestError(HTTPStatus(exc.status), str(exc)) from None

    def _record(self, h) -> None:
        from ..service import RequestError

        body = h._body()
        h._keys(body, ("kind", "on", "name"))
        on, name = body.get("on"), body.get("name")
        if not isinstance(on, bool) or not (name is None or isinstance(name, str)):
            raise RequestError(HTTPStatus.BAD_REQUEST,
                               "expected {\"kind\": \"video\"|\"poses\", \"on\": true|false, \"name\": optional file name}")
        try:
            out = self.outputs.start(body.get("kind"), name) if on else self.outputs.stop(body.get("kind"))
        except OutputError as exc:
            raise RequestError(HTTPStatus(exc.status), str(exc)) from None
        h._json(HTTPStatus.OK, out)

    def _background(self, h) -> None:
        from ..config import ConfigError, parse_background
        from ..service import RequestError

        body = h._body()
        h._keys(body, ("background",))
        bg = body.get("background")
        if not isinstance(bg, str):
            raise RequestError(HTTPStatus.BAD_REQUEST, "'background' must be 'transparent', 'green' or '#rrggbb'")
        try:
            parse_background(bg)
        except ConfigError as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        try:
            self.outputs.set_background(bg)
        except OutputError as exc:
            raise RequestError(HTTPStatus(exc.status), str(exc)) from None
        h._json(HTTPStatus.OK, {"background": bg})

    def _calibrate(self, h) -> None:
        from ..service import RequestError

        body = h._body()
        h._keys(body, ("phase",))
        phase = body.get("phase")
        c = self.calibration
        if phase == "cancel":
            c.stop()
        elif phase == "apply":
            c.stop()
            try:
                ranges = c.ranges()
            except ValueError as exc:
                raise RequestError(HTTPStatus.CONFLICT, str(exc)) from None
            self.session.commands.call(lambda: self.session.set_calibration(ranges))
            h._json(HTTPStatus.OK, {"calibration": ranges})
            return
        else:
            try:
                c.start(phase)
            except ValueError as exc:
                raise RequestError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        h._json(HTTPStatus.OK, {"phase": c.phase, "frames": c.counts()})

    def _save(self, h) -> None:
        from ..service import RequestError
        from .config_file import save_tables

        body = h._body()
        h._keys(body, ())
        s = self.session
        path = Path(s.cfg.config_path or DEFAULT_CONFIG_FILE)
        hair = s.commands.call(lambda: dict(s.rig.hair_params))
        tables = {"hair": hair, "expressions": dict(s.cfg.expressions), "calibration": dict(s.cfg.calibration)}
        try:
            save_tables(path, tables)
        except (ValueError, OSError) as exc:
            raise RequestError(HTTPStatus.UNPROCESSABLE_ENTITY, f"cannot save {path}: {exc}") from None
        s.cfg = replace(s.cfg, hair=hair, config_path=str(path))
        h._json(HTTPStatus.OK, {"path": str(path.resolve()), **tables})


__all__ = ["MODES", "Panel"]
