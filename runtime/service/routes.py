"""The control service's own endpoints and the :class:`Controller` they call.

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
    POST /wind        {"direction": [x, y, z], "strength": m/s (<= 40), "gusts": 0..1, "seed": int,
                      "ramp_s": s (<= 60), "impulse": [x, y, z] m/s (|v| <= 10)} (each key
                      optional; unset wind keys keep their setting): the wind eases to the new
                      one over ramp_s (never a jump), an impulse pushes every tail once at the
                      next substep ("hair flip"); answers {"wind": the setting, "now": the
                      wind of the last substep}; a value out of range answers 400
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
    GET  /hairstyle/guides  the guide curves of the style drawn (docs/guides.md; schema
                      avatars/tryon/guides.schema.json): every guide's points (metres, the
                      avatar's rest frame), state (attached, joined, rejected), scalp triangle
                      and barycentric weights, parent; 404 while the avatar's own hair is drawn
    GET  /view        the viewer: {"framing", "orbit" {"yaw", "pitch" rad, "zoom", "pan" [m, m]},
                      "follow", "inspect", "roots", "guides" (counts of the style drawn, or null),
                      "paused", "compare", "solvers"}
    POST /view        {"drag": [dx, dy], "pan": [dx, dy] (pixels of an image "height" pixels
                      high, default the output's), "wheel": notches, "reset": true, "orbit":
                      {...} (absolute), "framing": "bust"|"full"|"hair"|"back", "inspect":
                      "mesh"|"mesh+guides"|"guides"|"weights", "chain": N (whose weights),
                      "roots": bool, "follow": bool} (each optional):
                      moves the window's and the preview's camera (runtime/view.py); the virtual
                      camera and the video / PNG outputs keep their framing unless "follow"
    POST /playback    {"paused": bool, "restart": true (the clip from its start), "steps": N (single
                      120 Hz substeps while paused, 1..1200), "compare": bool (the other solver side
                      by side)} (each optional); answers as GET /view
    GET  /frame.png   the last rendered frame

The routes never touch GL or the solver themselves: they call a :class:`Controller` whose
methods are made thread-safe by the runtime (they hand work to the render thread:
runtime/controller.py). The controller's errors are answered by type (runtime/service/errors.py).
"""

from __future__ import annotations

import math
from http import HTTPStatus
from pathlib import Path
from typing import Callable, Protocol

from .errors import BadRequest, Forbidden, GatewayTimeout, NotFound, Unavailable
from .paths import resolve_avatar, resolve_clip, resolve_style
from .request import Request

#: A route: answers one (method, path) with what the request asks.
Route = Callable[[Request], None]


class Controller(Protocol):
    """What the service's endpoints ask of a running session (runtime/controller.py
    ``SessionController``)."""

    def status(self) -> dict: ...

    def recenter(self) -> None: ...

    def load_avatar(self, path: Path) -> dict: ...

    def set_hair(self, solver: str | None, params: dict | None) -> dict: ...

    def frame_png(self) -> bytes | None: ...

    def view(self) -> dict: ...

    def set_view(self, change: dict) -> dict: ...

    def playback(self, *, paused: bool | None = None, restart: bool = False, steps: int = 0,
                 compare: bool | None = None) -> dict: ...

    def guides(self) -> dict | None: ...

    def hairstyles(self) -> dict: ...

    def set_hairstyle(self, path: Path | None, name: str | None, *, wait: bool = True) -> dict: ...

    def motion(self) -> dict: ...

    def set_wind(self, wind: dict | None, impulse=None) -> dict: ...

    def set_motion(self, clip: str | None, *, speed: float | None = None, loop: bool | None = None,
                   layer: str | None = None) -> dict: ...


class ServiceRoutes:
    """The endpoints of the module doc for ``controller``.

    Args:
        controller: the session's controller.
        avatar_dir, motion_dir, hair_dirs: the folders POST /avatar, /motion and /hairstyle
            may load from (None / []: none).
        solvers: the solver names POST /hair accepts.
    """

    def __init__(self, controller: Controller, *, avatar_dir: Path | None, motion_dir: Path | None,
                 hair_dirs: list[Path], solvers: tuple[str, ...]):
        self.controller = controller
        self.avatar_dir, self.motion_dir, self.hair_dirs = avatar_dir, motion_dir, hair_dirs
        self.solvers = solvers

    def table(self) -> dict[tuple[str, str], Route]:
        """{(method, path): route}."""
        return {("GET", "/status"): self.status, ("POST", "/recenter"): self.recenter,
                ("POST", "/avatar"): self.avatar, ("POST", "/hair"): self.hair, ("GET", "/frame.png"): self.frame,
                ("GET", "/motion"): self.motion_get, ("POST", "/motion"): self.motion,
                ("GET", "/hairstyles"): self.hairstyles, ("POST", "/hairstyle"): self.hairstyle,
                ("GET", "/hairstyle/guides"): self.guides, ("GET", "/view"): self.view_get,
                ("POST", "/view"): self.view, ("POST", "/playback"): self.playback, ("POST", "/wind"): self.wind}

    def status(self, req: Request) -> None:
        req.reply(self.controller.status())

    def recenter(self, req: Request) -> None:
        req.body()
        self.controller.recenter()
        req.reply({"ok": True})

    def avatar(self, req: Request) -> None:
        body = req.body(("path",))
        if self.avatar_dir is None:
            raise Forbidden("no avatar folder is configured (--avatar-dir)")
        target = resolve_avatar(self.avatar_dir, body.get("path"))
        try:
            result = self.controller.load_avatar(target)      # AvatarError, RigError: 422
        except TimeoutError:
            raise GatewayTimeout("loaded, but the render thread did not swap it in "
                                 "(the run is not drawing frames)") from None
        req.reply(result)

    def hair(self, req: Request) -> None:
        from ..rig.hair_params import parse_hair

        body = req.body(("solver", "params"))
        solver = body.get("solver")
        if solver is not None and solver not in self.solvers:
            raise BadRequest(f"solver must be one of {list(self.solvers)}")
        params = body.get("params")          # absent: keep the current settings
        if params is not None and not isinstance(params, dict):
            raise BadRequest("'params' must be an object (k, c, gravity, hit_radius)")
        if params:
            parse_hair(params)      # whatever the avatar (with or without springs); SettingsError: 400
        req.reply(self.controller.set_hair(solver, params))

    def wind(self, req: Request) -> None:
        from ..rig.hair_external import WIND_KEYS

        body = req.body(WIND_KEYS + ("impulse",))
        wind, impulse = check_wind_body(body)            # untrusted: every field, bounded (BadRequest)
        req.reply(self.controller.set_wind(wind, impulse))

    def motion_get(self, req: Request) -> None:
        req.reply(self.controller.motion())

    def motion(self, req: Request) -> None:
        body = req.body(("clip", "speed", "loop", "layer"))
        clip = resolve_clip(self.motion_dir, body["clip"]) if "clip" in body else None
        speed, loop, layer = body.get("speed"), body.get("loop"), body.get("layer")
        if speed is not None and (isinstance(speed, bool) or not isinstance(speed, (int, float))
                                  or not 0 < speed <= 100):
            raise BadRequest("'speed' must be a number > 0 and <= 100")
        if loop is not None and not isinstance(loop, bool):
            raise BadRequest("'loop' must be true or false")
        if layer is not None and not isinstance(layer, str):
            raise BadRequest("'layer' must be 'additive' or 'override'")
        # ClipError, MotionError: 422 (the previous clip keeps playing)
        req.reply(self.controller.set_motion(clip, speed=None if speed is None else float(speed), loop=loop,
                                             layer=layer))

    def hairstyles(self, req: Request) -> None:
        req.reply(self.controller.hairstyles())

    def hairstyle(self, req: Request) -> None:
        body = req.body(("name", "wait"))
        if "name" not in body:
            raise BadRequest("'name' is required: a style name, or null for the avatar's own hair")
        wait = body.get("wait", True)
        if not isinstance(wait, bool):
            raise BadRequest("'wait' must be true or false")
        path, name = (None, None) if body["name"] is None else resolve_style(self.hair_dirs, body["name"])
        try:
            # StyleError: 422 (the try-on's message); StyleSuperseded: 409; SessionClosed: 503
            result = self.controller.set_hairstyle(path, name, wait=wait)
        except TimeoutError:
            raise GatewayTimeout("still fitting; GET /hairstyles shows it pending") from None
        req.reply(result, HTTPStatus.OK if wait else HTTPStatus.ACCEPTED)

    def guides(self, req: Request) -> None:
        doc = self.controller.guides()
        if doc is None:
            raise NotFound("the avatar's own hair is drawn: no fitted style, no guides")
        req.reply(doc)

    def view_get(self, req: Request) -> None:
        req.reply(self.controller.view())

    def view(self, req: Request) -> None:
        from render.camera import FRAMINGS
        from render.inspection import INSPECT_MODES
        from render.orbit import Orbit

        body = req.body(("drag", "pan", "wheel", "reset", "orbit", "framing", "inspect", "roots", "follow", "height",
                         "chain"))
        change = {}
        for key in ("drag", "pan"):
            if key in body:
                v = body[key]
                if not isinstance(v, list) or len(v) != 2 or not all(_number(x, 10_000) for x in v):
                    raise BadRequest(f"'{key}' must be [dx, dy] pixels (|d| <= 10000)")
                change[key] = (float(v[0]), float(v[1]))
        if "wheel" in body:
            if not _number(body["wheel"], 100):
                raise BadRequest("'wheel' must be a number of notches (|n| <= 100)")
            change["wheel"] = float(body["wheel"])
        if "height" in body:
            if not _number(body["height"], 10_000) or body["height"] < 1:
                raise BadRequest("'height' must be the image height in pixels (1..10000)")
            change["height"] = float(body["height"])
        if "orbit" in body:
            if not isinstance(body["orbit"], dict):
                raise BadRequest("'orbit' must be an object {yaw, pitch, zoom, pan}")
            try:
                change["orbit"] = Orbit.from_dict(body["orbit"])
            except ValueError as exc:
                raise BadRequest(str(exc)) from None
        for key, choices in (("framing", FRAMINGS), ("inspect", INSPECT_MODES)):
            if key in body:
                if body[key] not in choices:
                    raise BadRequest(f"'{key}' must be one of {list(choices)}")
                change[key] = body[key]
        if "chain" in body:
            c = body["chain"]
            if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= 10_000:
                raise BadRequest("'chain' must be a chain number, 0..10000")
            change["chain"] = c
        for key in ("reset", "roots", "follow"):
            if key in body:
                if not isinstance(body[key], bool):
                    raise BadRequest(f"'{key}' must be true or false")
                change[key] = body[key]
        req.reply(self.controller.set_view(change))

    def playback(self, req: Request) -> None:
        body = req.body(("paused", "restart", "steps", "compare"))
        for key in ("paused", "restart", "compare"):
            if key in body and not isinstance(body[key], bool):
                raise BadRequest(f"'{key}' must be true or false")
        steps = body.get("steps", 0)
        if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= 1200:
            raise BadRequest("'steps' must be a whole number of substeps, 0..1200")
        # MotionError (a restart without body motion), RigError (compare mode): 422
        req.reply(self.controller.playback(paused=body.get("paused"), restart=body.get("restart", False), steps=steps,
                                           compare=body.get("compare")))

    def frame(self, req: Request) -> None:
        png = self.controller.frame_png()
        if png is None:
            raise Unavailable("no frame rendered yet")
        req.send(png, "image/png")


def check_wind_body(body: dict):
    """A POST /wind body (untrusted: parsed JSON with the allowed keys only) -> (the wind fields
    {key: value} or None, the impulse (3,) tuple or None). Every field is checked here, with
    its bounds (:class:`solver.wind.Wind`, :data:`solver.wind.MAX_IMPULSE`), before the render
    thread sees it.

    Raises:
        runtime.service.errors.BadRequest: a field of the wrong type or out of range (named);
            an empty body.
    """
    from solver.wind import MAX_IMPULSE

    from ..errors import SettingsError
    from ..rig.hair_external import WIND_KEYS, parse_wind

    wind = {k: body[k] for k in WIND_KEYS if k in body}
    impulse = body.get("impulse")
    if not wind and impulse is None:
        raise BadRequest(f"POST /wind needs one of {', '.join(WIND_KEYS)}, impulse")
    if wind:
        d = wind.get("direction")
        if d is not None and (not isinstance(d, list) or len(d) != 3):
            raise BadRequest("'direction' must be three numbers [x, y, z]")
        try:
            parse_wind({**({} if "direction" in wind else {"direction": [1.0, 0.0, 0.0]}), **wind}, "wind")
        except SettingsError as exc:
            raise BadRequest(str(exc)) from None
    if impulse is not None:
        ok = isinstance(impulse, list) and len(impulse) == 3 and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in impulse)
        if not ok:
            raise BadRequest("'impulse' must be three finite numbers [x, y, z] (m/s)")
        if math.sqrt(sum(float(x) ** 2 for x in impulse)) > MAX_IMPULSE:
            raise BadRequest(f"'impulse' is longer than {MAX_IMPULSE:g} m/s")
        impulse = tuple(float(x) for x in impulse)
    return wind or None, impulse


def _number(v, bound: float) -> bool:
    """``v`` is a finite JSON number within ±``bound``."""
    return not isinstance(v, bool) and isinstance(v, (int, float)) and abs(v) <= bound


__all__ = ["Controller", "Route", "ServiceRoutes", "check_wind_body"]
