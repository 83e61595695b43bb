"""The controller of a running session: what the control service's and the panel's endpoints
ask for, one method each (runtime/service/routes.py, runtime/panel/routes.py).

The service answers HTTP requests on its own threads; anything that touches GL, the rig or the
pose input runs on the render thread through the session's command queue
(:mod:`runtime.commands`). Reads of plain attributes and counters (:meth:`status`) and of
the live settings (:class:`runtime.live_settings.LiveSettings`, lock-protected) stay on the
calling thread.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from avatars import load_avatar

from .commands import CommandQueue, RenderIdle, wait_for

if TYPE_CHECKING:  # pragma: no cover
    from .panel.outputs_control import OutputControl
    from .run_controls import RunControls
    from .settle import SettleMeter
    from .stage import Stage
    from .tryon import StyleSwitcher


class ControllerHost(Protocol):
    """What :class:`SessionController` uses of the running session (the ``Session`` of
    ``swaycam run``): its stage, hairstyle switcher, command queue, the render thread's idle
    time (the steps of a request's costly work wait for it) and run-time outputs, and the
    three things only the run itself knows."""

    commands: CommandQueue
    render_idle: RenderIdle
    stage: Stage
    tryon: StyleSwitcher
    output_control: OutputControl
    controls: RunControls
    settle: SettleMeter

    def live_status(self) -> dict:
        """The live metrics, whether the run is paused and whether the pose input has a face
        now (any thread: counters and plain attributes only)."""

    def recenter(self) -> None:
        """Take the current head pose as neutral (render thread)."""

    def frame_png(self) -> bytes | None:
        """The last drawn frame as PNG, or None before the first frame (render thread)."""


class SessionController:
    """:class:`runtime.service.Controller` (and the panel's) of ``host``: every method that
    changes the run goes through its command queue to the render thread."""

    def __init__(self, host: ControllerHost):
        self.host = host
        self._load_lock = threading.Lock()    # POST /avatar requests are prepared one at a time

    @property
    def stage(self) -> Stage:
        return self.host.stage

    # ------------------------------------------------------------------ the service's endpoints
    def status(self) -> dict:
        """The live metrics, the solver, the avatar file, whether the run is paused and
        whether the pose input has a face now (a pose track: the pose sampled last) — read
        from the service thread: counters and plain attributes only."""
        rig = self.stage.rig
        out = self.host.live_status()
        paused, face_found = out.pop("paused"), out.pop("face_found")
        out.update({"solver": rig.solver, "avatar": self.stage.avatar_name(), "paused": paused, "face_found": face_found,
                    "hairstyle": self.host.tryon.current, "hair_params": rig.hair_params})
        return out

    def recenter(self) -> None:
        self.host.commands.call(self.host.recenter)

    def load_avatar(self, path: Path) -> dict:
        """Load ``path`` and drive it (its hair at rest); the old avatar stays when it fails.

        The file is read, rigged, warmed up and framed (cameras and reduced-detail triangles)
        on the calling service thread, one request at a time; the render thread uploads it to
        the GPU a few milliseconds after each frame (:class:`render.staged.AvatarUpload`, issue
        34 finding 6) and then swaps the rig and the upload in at once, so the avatar drawn
        meanwhile keeps moving (issue 20: it stood still for 120-130 ms while Godette loaded at
        1280×720). A rig built under inputs
        that changed before the swap (solver, body motion, start hair, calibration:
        :meth:`Stage.rig_inputs`) is built again on the render thread. In compare mode the
        companion (the other solver) is built here too.

        Raises:
            AvatarError: not an avatar; RigError: one that cannot be driven (no head): the
                service answers 422.
            TimeoutError: the render thread did not swap it in within 60 s (504).
        """
        st, host = self.stage, self.host
        idle = host.render_idle.wait          # each step in the render thread's idle time
        with self._load_lock:
            idle()
            made_under = st.rig_inputs()
            avatar = load_avatar(path, gate=idle)
            idle()
            rig = st.make_rig(avatar, made_under[0])
            idle()
            rig.warm_up()
            idle()
            framing = st.framing(avatar, rig.world)
            idle()
            companion = st.make_companion(rig) if st.compare else None
            if companion is not None:
                idle()
                companion.warm_up()
            idle()
            upload = host.commands.call(lambda: st.begin_upload(avatar, framing))
            try:                              # the GPU upload: a few ms of it after each frame
                while True:
                    idle()
                    if host.commands.call(upload.step):
                        break
            except BaseException:
                host.commands.submit(upload.cancel)
                raise

            def do():
                try:
                    new, other = rig, companion
                    if not _same_rig_inputs(st.rig_inputs(), made_under):
                        new, other = st.make_rig(avatar, st.rig.solver), None
                        new.warm_up()
                except BaseException:
                    upload.cancel()
                    raise
                st.swap_rig(new, framing=framing, companion=other, upload=upload)
                st.set_base(Path(path), avatar)
                style = host.tryon.rebase()        # the hairstyle is tried on the new avatar (off this thread)
                return {"avatar": str(path), "springs": len(avatar.springs),
                        "warnings": [str(w) for w in avatar.warnings], "hairstyle_pending": style}

            idle()
            swapped = host.commands.submit(do)     # queued in request order; waited for without the lock
        try:
            return wait_for(swapped, 60.0)
        except TimeoutError:
            if swapped.cancelled():
                host.commands.submit(upload.cancel)
            raise

    def set_hair(self, solver: str | None, params: dict | None) -> dict:
        """Switch to ``solver`` (None: keep it) and/or replace the ``[hair]`` settings with
        ``params`` (None: keep them; {}: the avatar's own), in place: the hair's motion goes on
        (:meth:`Stage.switch_solver`, :meth:`Stage.set_hair`).

        Returns:
            {"solver", "params" (the settings), "springs" {name: parameters in effect}}.

        Raises:
            SettingsError: bad params; ValueError: an unknown solver (the service answers
                400); nothing is changed then.
        """
        st = self.stage
        rig = st.rig
        # parsed and matched against the springs here, off the render thread (3,000 patterns
        # cost 60+ dropped frames there); SettingsError before anything changes
        resolved = rig.resolve_hair(params, gate=self.host.render_idle.wait) if params is not None else None

        def do():
            if solver is not None:
                st.switch_solver(solver)
            if params is not None:
                st.set_hair(params, resolved)       # re-resolved there only if the springs changed
            warnings = list(resolved.warnings) if resolved is not None and st.rig.avatar is rig.avatar \
                else st.rig.hair_warnings()
            return {"solver": st.rig.solver, "params": st.rig.hair_params, "springs": st.rig.hair_springs(),
                    "warnings": warnings}

        return self.host.commands.call(do)

    def set_wind(self, wind: dict | None, impulse=None) -> dict:
        """Ease the hair's wind to ``wind`` ({"direction", "strength", "gusts", "seed",
        "ramp_s"}, each optional: unset keys keep the current setting; None: keep it) and/or
        push every tail by ``impulse`` (3,) m/s at the next substep (a "hair flip"), on the
        drawn rig and the companion (:func:`runtime.rig.hair_external.set_rig_wind`). The wind
        is kept in the ``[hair]`` settings (a new avatar, a solver switch, a saved config keep it).

        Returns:
            {"wind": the setting in effect, "now": the wind of the last substep, m/s}.

        Raises:
            SettingsError: a value out of range (checked here, before anything changes).
        """
        from .rig.hair_external import parse_wind, set_rig_wind

        st = self.stage
        w = None
        if wind is not None:
            w = parse_wind({**(st.rig.hair_params.get("wind") or {}), **wind}, "wind")

        def do():
            out = {}
            for r in (st.rig, st.companion):
                if r is not None:
                    res = set_rig_wind(r, w, impulse)
                    out = out or res
            st.settings.set_hair(st.rig.hair_params)
            return out

        return self.host.commands.call(do)

    def motion(self) -> dict:
        """What the body plays: {"playing", "program", "index", "layer", "speed", "fading",
        "in_place"} ({"playing": None} with ``--motion none``)."""
        st = self.stage

        def do():
            m = st.rig.motion
            return m.state() if m is not None else {"playing": None}

        return self.host.commands.call(do)

    def set_motion(self, clip: str | None, *, speed: float | None = None, loop: bool | None = None,
                   layer: str | None = None) -> dict:
        """Play ``clip`` ("idle", "rest", or ``FILE[#Name[+Name...]]`` in the motion folder,
        resolved by the service) from the next substep, cross-fading; and/or change the speed
        or the head layering in place. A clip that cannot be loaded or played changes nothing:
        the previous one keeps playing.

        Raises:
            ClipError: the clip cannot be loaded or played on this avatar; MotionError: no
                body motion, a bad speed or layer (the service answers 422).
        """
        st = self.stage
        # load (the slow part) on the service thread, play on the render thread
        setup = st.load_motion(clip, loop=loop) if clip is not None else None

        def do():
            if setup is not None:
                st.set_motion(setup, speed=speed, layer=layer)
            else:
                st.set_motion_options(speed=speed, layer=layer)
            return st.rig.motion.state()

        return self.host.commands.call(do, timeout_s=60.0)

    def hairstyles(self) -> dict:
        """The styles of the hair folder, the one drawn (``current``, None: the avatar's own
        hair) and the one being fitted (``pending``): :meth:`runtime.tryon.StyleSwitcher.state`
        (read from the service thread)."""
        return self.host.tryon.state()

    def set_hairstyle(self, path: Path | None, name: str | None, *, wait: bool = True,
                      timeout_s: float = 120.0) -> dict:
        """Try on the style file ``path`` (None: the avatar's own hair): fitted off the render
        thread, swapped in between frames; the previous style is drawn until then.

        Returns:
            with ``wait``, once it is drawn: {"current", "guides" {candidates, attached,
            joined, rejected}, "chains", "cached", "seconds", ...}; without: {"pending"}.

        Raises:
            StyleError: the style cannot be fitted (the service answers 422; the previous
                style stays); StyleSuperseded: a newer request replaced it (409);
                SessionClosed (503); TimeoutError: still fitting after ``timeout_s`` (504).
        """
        fut = self.host.tryon.request(path, name)
        if not wait:
            return {"pending": name, "switching": True}
        return fut.result(timeout=timeout_s)

    def frame_png(self) -> bytes | None:
        """The last drawn frame as PNG, read from the framebuffer now (render thread, between
        frames), or None before the first frame."""
        return self.host.commands.call(self.host.frame_png)

    def view(self) -> dict:
        """The viewer's state: {"framing", "orbit", "follow", "inspect", "roots", "guides" (the
        drawn style's counts, or null), "paused", "compare", "settle" (the "move-then-settle"
        clip's settle time: :meth:`runtime.settle.SettleMeter.state`, or null), "solvers" [left,
        right]} (render thread)."""
        return self.host.commands.call(self._view_state)

    def _view_state(self) -> dict:
        from .tryon import guides_of

        c = self.host.controls
        st = self.stage
        found = guides_of(st.rig.avatar)
        return {**c.drawer.view.state(), "guides": None if found is None else found[0].counts(),
                "paused": c.clock.paused, "compare": st.compare, "settle": self.host.settle.state(),
                "solvers": [st.rig.solver] + ([st.companion.solver] if st.companion is not None else [])}

    def set_view(self, change: dict) -> dict:
        """Apply ``change`` (checked by the service: runtime/service/routes.py ``POST /view``) on
        the render thread between frames, in this order: ``reset``, ``framing`` (resets the
        orbit), ``orbit`` (absolute), ``drag`` / ``pan`` [dx, dy] preview pixels (scaled to the
        output by ``height``, the preview's height), ``wheel`` notches, ``inspect``, ``roots``,
        ``follow``. Answers :meth:`view`. Raises ValueError (a bad framing or inspection view)."""
        c = self.host.controls

        def do():
            v = c.drawer.view
            if change.get("reset"):
                v.reset()
            if "framing" in change:
                c.drawer.set_framing(change["framing"])      # the viewer's; the outputs keep theirs
            if "orbit" in change:
                v.orbit = change["orbit"]
            scale = c.drawer.renderer.size[1] / change["height"] if change.get("height") else 1.0
            if "drag" in change:
                c.orbit(change["drag"][0] * scale, change["drag"][1] * scale)
            if "pan" in change:
                c.orbit(change["pan"][0] * scale, change["pan"][1] * scale, pan=True)
            if "wheel" in change:
                c.zoom(change["wheel"])
            if "inspect" in change:
                v.set_inspect(change["inspect"])
            if "roots" in change:
                v.roots = change["roots"]
            if "chain" in change:
                v.chain = change["chain"]
            if "follow" in change:
                v.follow = change["follow"]
            return self._view_state()

        return self.host.commands.call(do)

    def playback(self, *, paused: bool | None = None, restart: bool = False, steps: int = 0,
                 compare: bool | None = None) -> dict:
        """Pause or resume the clock, restart the clip playing, step ``steps`` single substeps
        (while paused), compare mode on / off (render thread). Answers :meth:`view`.

        Raises:
            MotionError: a restart without body motion; RigError, SettingsError: compare mode
                cannot be built (the service answers 422).
        """
        from .clock import RATE_HZ

        c = self.host.controls
        st = self.stage

        def do():
            if paused is not None and paused != c.clock.paused:
                c.clock.toggle_pause()
            if restart:
                st.restart_motion()
            if steps:
                c.clock.step(-(-steps * 1_000_000_000 // RATE_HZ))     # rounded up: exactly ``steps`` grid points
            if compare is not None and compare != st.compare:
                st.set_compare(compare)
            return self._view_state()

        return self.host.commands.call(do)

    def guides(self) -> dict | None:
        """The guide curves of the style drawn (avatars/tryon/guide_export.py ``to_json``), or
        None when the avatar drawn has its own hair (no fitted style)."""
        from avatars.tryon.guide_export import to_json

        from .tryon import guides_of

        st = self.stage
        found, name = self.host.commands.call(lambda: (guides_of(st.rig.avatar), self.host.tryon.current))
        if found is None:
            return None
        return to_json(found[0], style=name or "", avatar=st.avatar_name() or "default")

    # ------------------------------------------------------------------ the panel's endpoints
    def current_avatar(self) -> str | None:
        """The avatar drawn as the user named it (any thread): :meth:`Stage.avatar_name`."""
        return self.stage.avatar_name()

    def hair(self, *, tails: bool = False) -> dict:
        """The running hair: {"solver", "solvers", "params", "springs", "steps", "resets"}
        (+ with ``tails`` "tails" and "rest_tails" [[x, y, z] m]; render thread)."""
        from solver.modes import SOLVER_NAMES

        st = self.stage

        def do():
            rig = st.rig
            ch = rig.chains
            out = {"solver": rig.solver, "solvers": list(SOLVER_NAMES), "params": rig.hair_params,
                   "springs": rig.hair_springs(), "steps": ch.steps if ch is not None else 0,
                   "resets": st.hair_resets() + (ch.auto_resets if ch is not None else 0)}
            if tails and ch is not None:
                out["tails"] = ch.tails.tolist()
                out["rest_tails"] = ch.rest_arc_tails(rig.world).tolist()
            return out

        return self.host.commands.call(do)

    def expression_names(self) -> list[str]:
        """The expressions of the avatar drawn (any thread)."""
        return list(self.stage.rig.avatar.expressions)

    def expressions(self) -> dict:
        """The ``[expressions]`` table in effect (hotkeys, mode, fade)."""
        return self.stage.settings.expressions

    def set_expressions(self, table: dict) -> None:
        """Replace the ``[expressions]`` table (the hotkeys act at once). Raises SettingsError
        naming the key; nothing changes then."""
        self.stage.settings.set_expressions(table)

    def set_calibration(self, ranges: dict) -> dict:
        """Use the input ranges ``ranges`` ({blendshape: [lo, hi]}) from the next frame on
        (render thread). Raises SettingsError for bad ranges; nothing changes then."""
        self.host.commands.call(lambda: self.stage.set_calibration(ranges))
        return {"calibration": ranges}

    def outputs(self) -> dict:
        """{"background", "outputs" (the run's), "vcam", "recording", "record_dir"}."""
        out = self.host.output_control
        return {"background": self.stage.settings.background, "outputs": out.run_outputs(), **out.state()}

    def set_background(self, background: str) -> dict:
        """Draw ``background`` ("transparent", "green", "#rrggbb"; parsed already) from the
        next frame on. Raises OutputError (409) for "transparent" while an output without
        alpha runs."""
        self.host.output_control.set_background(background)
        return {"background": background}

    def set_vcam(self, on: bool, device: str | None = None) -> dict:
        """The panel's virtual camera on / off: :meth:`OutputControl.set_vcam`."""
        return self.host.output_control.set_vcam(on, device)

    def record(self, kind: str, on: bool, name: str | None = None) -> dict:
        """Start (``on``) or stop a ``kind`` ("video", "poses") recording:
        :meth:`OutputControl.start` / :meth:`OutputControl.stop`."""
        out = self.host.output_control
        return out.start(kind, name) if on else out.stop(kind)

    def save_config(self) -> dict:
        """Write ``[hair]``, ``[expressions]`` and ``[calibration]`` (the live settings) into
        the run's config file (``--config``, else ./swaycam.toml). Returns {"path", "hair",
        "expressions", "calibration"}.

        Raises:
            ConfigError: "cannot save PATH: ..." (the file is not TOML, a value cannot be
                written, or the file cannot be written).
        """
        from .errors import ConfigError
        from .panel.config_file import DEFAULT_CONFIG_FILE, save_tables

        settings = self.stage.settings
        path = Path(settings.config_path or DEFAULT_CONFIG_FILE)
        tables = settings.tables()
        try:
            save_tables(path, tables)
        except (ConfigError, OSError) as exc:
            raise ConfigError(f"cannot save {path}: {exc}") from None
        settings.saved(str(path), tables["hair"])
        return {"path": str(path.resolve()), **tables}


def _same_rig_inputs(a: tuple, b: tuple) -> bool:
    return a[1] is b[1] and a[0] == b[0] and a[2:] == b[2:]     # the motion program by identity


__all__ = ["ControllerHost", "SessionController"]
