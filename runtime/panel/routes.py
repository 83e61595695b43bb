"""The browser control panel's endpoints: its page, the preview stream and the JSON endpoints
it uses, served by the control service (:mod:`runtime.service`) for one running session.

Endpoints added to the service (all JSON but the page, its files and the preview; every one
is documented in the README and is what the panel itself calls):

    GET  /                 the panel (runtime/panel/static/index.html); /panel/<file> its CSS/JS
    GET  /preview.mjpg     the live preview: multipart JPEG frames, at most PREVIEW_MAX_FPS per
                           second, read back only while a client watches (runtime/panel/preview.py)
    GET  /preview.jpg      one preview frame
    GET  /avatars          {"avatars": [files in --avatar-dir], "current"}
    GET  /clips            {"clips": ["idle", "rest", "turn-test", "move-then-settle", files in --motion-dir, FILE#Name of each clip of
                           a library], "playing"}
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
    POST /calibrate/voice  {"vowel": "a"|"i"|"u"|"e"|"o"|"silence"} records that vowel from the
                           microphone (--audio mic); {"vowel": "apply"} uses and saves the profile
                           (runtime/panel/voice.py); {"vowel": "cancel"} stops; 409 without a microphone
    POST /config/save      {} writes [hair], [expressions], [calibration] into the --config file
                           (or ./swaycam.toml without one); answers {"path", "hair", ...}

The panel's own state (preview, triggered expressions, calibration being collected) is its
:class:`runtime.panel.state.PanelState`; every change of the run goes through the session's
controller (:class:`PanelController`: runtime/controller.py), the same path as the service's
own endpoints.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Protocol

from ..service.errors import BadRequest, NotFound, Unavailable, Unprocessable
from ..service.paths import AVATAR_SUFFIXES, CLIP_SUFFIXES, folder_files
from ..service.request import Request
from ..service.routes import Controller, Route
from .settings import MODES, fade_ms, hotkeys, mode
from .state import PanelState

STATIC_TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
                ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
STATIC_FILES = ("index.html", "panel.css", "panel.js")
#: Headers of the panel's files (on top of the service's nosniff).
STATIC_HEADERS = {"Cache-Control": "no-cache", "Content-Security-Policy": "default-src 'self'; img-src 'self' "
                  "data:; frame-ancestors 'none'; form-action 'none'", "X-Frame-Options": "DENY"}
#: The MJPEG stream's part boundary.
BOUNDARY = "swaycamframe"


def static_file(name: str) -> bytes:
    """A file shipped in runtime/panel/static (package data)."""
    return resources.files(__package__).joinpath("static", name).read_bytes()


class PanelController(Controller, Protocol):
    """What the panel's endpoints ask of a running session, beside the service's
    :class:`runtime.service.routes.Controller` (runtime/controller.py ``SessionController``)."""

    def current_avatar(self) -> str | None: ...

    def hair(self, *, tails: bool = False) -> dict: ...

    def expression_names(self) -> list[str]: ...

    def expressions(self) -> dict: ...

    def set_expressions(self, table: dict) -> None: ...

    def set_calibration(self, ranges: dict) -> dict: ...

    def outputs(self) -> dict: ...

    def set_background(self, background: str) -> dict: ...

    def set_vcam(self, on: bool, device: str | None = None) -> dict: ...

    def record(self, kind: str, on: bool, name: str | None = None) -> dict: ...

    def save_config(self) -> dict: ...


class PanelRoutes:
    """The endpoints of the module doc.

    Args:
        panel: the panel's state.
        controller: the session's controller.
        avatar_dir, motion_dir: the folders GET /avatars and /clips list (None: none).
    """

    def __init__(self, panel: PanelState, controller: PanelController, *, avatar_dir: Path | None = None,
                 motion_dir: Path | None = None):
        self.panel = panel
        self.controller = controller
        self.avatar_dir = Path(avatar_dir) if avatar_dir else None
        self.motion_dir = Path(motion_dir) if motion_dir else None
        self._clip_names: dict[tuple, list[str]] = {}       # (file, mtime): its clips' names

    def table(self) -> dict[tuple[str, str], Route]:
        """{(method, path): route}."""
        r = {("GET", "/"): lambda req: self.static(req, "index.html"),
             ("GET", "/preview.mjpg"): self.mjpeg, ("GET", "/preview.jpg"): self.jpeg,
             ("GET", "/avatars"): self.avatars, ("GET", "/clips"): self.clips, ("GET", "/hair"): self.hair,
             ("GET", "/expressions"): self.expressions_get, ("POST", "/expression"): self.expression,
             ("POST", "/hotkeys"): self.hotkeys, ("GET", "/outputs"): self.outputs,
             ("POST", "/background"): self.background, ("POST", "/vcam"): self.vcam, ("POST", "/record"): self.record,
             ("POST", "/calibrate"): self.calibrate, ("POST", "/calibrate/voice"): self.calibrate_voice,
             ("POST", "/config/save"): self.save}
        for name in STATIC_FILES:
            r[("GET", f"/panel/{name}")] = (lambda req, n=name: self.static(req, n))
        return r

    # ------------------------------------------------------------------ page and preview
    def static(self, req: Request, name: str) -> None:
        req.send(static_file(name), STATIC_TYPES[Path(name).suffix], headers=STATIC_HEADERS)

    def mjpeg(self, req: Request) -> None:
        tap = self.panel.preview
        tap.connect()
        try:
            out = req.stream(f"multipart/x-mixed-replace; boundary={BOUNDARY}")
            seq = 0
            while not self.panel.closed:
                seq2, jpeg = tap.wait_next(seq, timeout_s=1.0)
                if jpeg is None:
                    continue
                seq = seq2
                out.write(f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
                          .encode() + jpeg + b"\r\n")
                out.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            tap.disconnect()

    def jpeg(self, req: Request) -> None:
        tap = self.panel.preview
        tap.connect()
        try:
            seq, _ = tap.latest()
            _, jpeg = tap.wait_next(seq, timeout_s=3.0)
        finally:
            tap.disconnect()
        if jpeg is None:
            raise Unavailable("no preview frame (is the run drawing frames?)")
        req.send(jpeg, "image/jpeg")

    # ------------------------------------------------------------------ pickers
    def avatars(self, req: Request) -> None:
        d = self.avatar_dir
        files = folder_files(d, AVATAR_SUFFIXES)
        current = self.controller.current_avatar()
        cur = None
        if d is not None and current:
            try:
                cur = str(Path(current).resolve().relative_to(d.resolve()))
            except ValueError:      # not inside the folder
                cur = None
        req.reply({"avatars": files, "current": cur, "path": str(current) if current else None,
                   "folder": d is not None})

    def clips(self, req: Request) -> None:
        """The clips: idle, rest, the head turn (repeated, and then still), every file of the motion folder, and every named clip of a
        library (a glTF with several animations: ``FILE#Name``), so each can be picked."""
        from avatars.clips.load import clip_names

        items = ["idle", "rest", "turn-test", "move-then-settle"]
        for f in folder_files(self.motion_dir, CLIP_SUFFIXES):
            p = self.motion_dir / f
            try:
                key = (f, p.stat().st_mtime_ns)
            except OSError:
                continue
            names = self._clip_names.get(key)
            if names is None:
                names = self._clip_names[key] = clip_names(p)
            items += [f"{f}#{n}" for n in names] if len(names) > 1 else [f]
        m = self.controller.motion()
        req.reply({"clips": items, "playing": m.get("playing"), "motion": m.get("playing") is not None})

    def hair(self, req: Request) -> None:
        req.reply(self.controller.hair(tails="tails=1" in req.query))

    # ------------------------------------------------------------------ expressions
    def expressions_get(self, req: Request) -> None:
        e = self.controller.expressions()
        names = self.controller.expression_names()
        ov = self.panel.overlay
        req.reply({"expressions": names, "active": {k: round(v, 4) for k, v in ov.weights().items()},
                   "triggered": ov.targets(), "keys": hotkeys(e, names), "mode": mode(e), "fade_ms": fade_ms(e)})

    def expression(self, req: Request) -> None:
        body = req.body(("name", "weight", "fade_ms"))
        name = body.get("name")
        names = self.controller.expression_names()
        if not isinstance(name, str) or name not in names:
            error = NotFound if isinstance(name, str) else BadRequest
            raise error(f"'name' must be one of the avatar's expressions: {', '.join(names)}")
        # a weight or fade out of range: SettingsError, 400
        self.panel.overlay.trigger(name, body.get("weight", 1.0),
                                   body.get("fade_ms", fade_ms(self.controller.expressions())))
        req.reply({"name": name, "triggered": self.panel.overlay.targets()})

    def hotkeys(self, req: Request) -> None:
        body = req.body(("keys", "mode", "fade_ms"))
        table = self.controller.expressions()
        if "keys" in body:
            keys = body["keys"]
            if not isinstance(keys, dict):
                raise BadRequest("'keys' must be an object {expression: key}")
            names = self.controller.expression_names()
            unknown = [n for n in keys if n not in names]
            if unknown:
                raise BadRequest(f"{unknown[0][:40]!r} is not an expression of this avatar ({', '.join(names)})")
            bad = [k for k in keys.values() if k and not isinstance(k, str)]
            if bad:
                raise BadRequest(f"a key must be a key name, got {str(bad[0])[:40]!r}")
            table["keys"] = {n: k.lower() for n, k in keys.items() if k}
        for k in ("mode", "fade_ms"):
            if k in body:
                table[k] = body[k]
        self.controller.set_expressions(table)      # SettingsError naming the key: 400
        self.expressions_get(req)

    # ------------------------------------------------------------------ outputs
    def outputs(self, req: Request) -> None:
        o = self.controller.outputs()
        req.reply({"background": o.pop("background"), "outputs": o.pop("outputs"),
                   "preview_clients": self.panel.preview.clients, **o})

    def vcam(self, req: Request) -> None:
        body = req.body(("on", "device"))
        on, device = body.get("on"), body.get("device")
        if not isinstance(on, bool) or not (device is None or isinstance(device, str)):
            raise BadRequest("expected {\"on\": true|false, \"device\": optional name}")
        req.reply(self.controller.set_vcam(on, device))           # OutputError: its status

    def record(self, req: Request) -> None:
        body = req.body(("kind", "on", "name"))
        on, name = body.get("on"), body.get("name")
        if not isinstance(on, bool) or not (name is None or isinstance(name, str)):
            raise BadRequest("expected {\"kind\": \"video\"|\"poses\", \"on\": true|false, \"name\": optional "
                             "file name}")
        req.reply(self.controller.record(body.get("kind"), on, name))      # OutputError: its status

    def background(self, req: Request) -> None:
        from ..config import parse_background

        body = req.body(("background",))
        bg = body.get("background")
        if not isinstance(bg, str):
            raise BadRequest("'background' must be 'transparent', 'green' or '#rrggbb'")
        parse_background(bg)                                # ConfigError: 400
        req.reply(self.controller.set_background(bg))       # OutputError: 409 while an output has no alpha

    # ------------------------------------------------------------------ calibration and saving
    def calibrate(self, req: Request) -> None:
        body = req.body(("phase",))
        phase = body.get("phase")
        c = self.panel.calibration
        if phase == "cancel":
            c.stop()
        elif phase == "apply":
            c.stop()
            ranges = c.ranges()                             # CalibrationError: 409
            req.reply(self.controller.set_calibration(ranges))
            return
        else:
            c.start(phase)                                  # SettingsError (an unknown phase): 400
        req.reply({"phase": c.phase, "frames": c.counts()})

    def calibrate_voice(self, req: Request) -> None:
        body = req.body(("vowel",))
        vowel = body.get("vowel")
        v = self.panel.voice
        if vowel == "apply":
            req.reply(v.apply())                            # Conflict: no microphone, no takes
        elif vowel == "cancel":
            req.reply(v.stop())
        else:
            req.reply(v.start(vowel))                       # SettingsError (an unknown vowel): 400

    def save(self, req: Request) -> None:
        from ..errors import ConfigError

        req.body(())
        try:
            req.reply(self.controller.save_config())
        except ConfigError as exc:                          # "cannot save PATH: ..."
            raise Unprocessable(str(exc)) from None


__all__ = ["MODES", "PanelController", "PanelRoutes"]
