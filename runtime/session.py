"""``swaycam run``: one session wires avatar, pose input, loop, renderer and outputs, and runs them.

Use it as a context manager::

    with Session(cfg, say=print) as session:     # opens everything (or nothing)
        result = session.run()                   # frames until the end, 'q' or stop()

Opening goes through one :class:`contextlib.ExitStack`, in this order: the pose input, the
GL context, the renderer, the control service (bound, so a busy port fails before any
output file is opened) and the outputs (video files last). A failure while opening closes
what was opened, in reverse order; so does closing.

With a hairstyle (``--hair``, ``[tryon] style``) the first avatar is the try-on of that style
on the ``--avatar`` (fitted, or reloaded from the fit cache, before anything opens); later
switches (keys, ``POST /hairstyle``) are fitted off the render thread by
:class:`runtime.tryon.StyleSwitcher` and swapped in between frames.

Time comes from the injected :class:`runtime.clock.Clock` (default: a :class:`ReplayClock`
starting at the input's first time offline, a :class:`MonotonicClock` live); the frame
schedules are in :mod:`runtime.schedule`. Pausing pauses the clock: the avatar freezes while
frames go on being drawn.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import threading
import time
from contextlib import ExitStack
from pathlib import Path

from avatars import Avatar, AvatarError, load_avatar
from solver.modes import SolverMode

from .clock import NO_CAP, Clock, MonotonicClock, ReplayClock
from .config import RunConfig, video_preset
from .controller import CommandQueue, SessionController, bind_service
from .drawing import FrameDrawer, Framing
from .keys import KEY_HELP, Keys
from .loop import FrameInfo, Loop
from .outputs import Outputs, OutputSpec, needs_window, open_outputs, plan_outputs
from .pose_inputs import PoseInput, open_pose_input
from .results import RunError, RunResult
from .rig import AvatarRig, DriveOptions, MotionSetup, load_motion
from .schedule import pacing_text, run_live, run_offline, sigterm_as_interrupt
from .telemetry import Telemetry
from .tryon import BaseAvatar, HairStyles, StyleError, StyleSwitcher, fit_style

log = logging.getLogger(__name__)


class Session:
    """One ``swaycam run``.

    Args:
        cfg: the run configuration (see :class:`runtime.config.RunConfig`).
        clock: the run's clock (default: :class:`ReplayClock` offline, :class:`MonotonicClock` live).
        say: where user-facing lines go (the CLI prints them).
        on_frame: called as ``on_frame(info, rig)`` after each frame is drawn and sent (tests, tools).
        progress: offline runs call ``progress(k, n)`` after frame k of about n (the CLI's
            progress line).

    Render-thread state (set by :meth:`open`): ``pose_input``, ``rig`` (and ``companion`` in
    compare mode), ``loop``, ``context``, ``renderer``, ``drawer``, ``outputs``, ``service``;
    ``base`` (:class:`runtime.tryon.BaseAvatar`: the avatar styles are tried on, its own
    hair included). :meth:`stop`, ``controller`` (the control service's) and ``tryon`` (the
    hairstyle switcher's requests) may be used from other threads.
    """

    def __init__(self, cfg: RunConfig, *, clock: Clock | None = None, say=print, on_frame=None, progress=None):
        self.cfg = cfg
        self.say = say
        self.on_frame = on_frame
        self.progress = progress
        self.clock: Clock | None = clock
        self.metrics = Telemetry()
        self.commands = CommandQueue()
        self.controller = SessionController(self)
        self.keys = Keys(self)
        self.output_specs: list[OutputSpec] = []
        self.pose_input: PoseInput | None = None
        self.duration_ns: int | None = None
        self.live = False
        self.fps = 0.0
        #: how frames are paced (runtime.schedule.pacing_text): the window title; the HUD has it short
        self.pacing = ""
        self.rig: AvatarRig | None = None
        self.companion: AvatarRig | None = None
        self.compare = False
        self.loop: Loop | None = None
        self.context = None
        self.renderer = None
        self.drawer: FrameDrawer | None = None
        self.outputs: Outputs | None = None
        self.service = None
        #: triggered expressions and hotkeys, and with the control service the browser panel
        #: (runtime.panel.Panel); set by open
        self.panel = None
        self._window = False
        self._faces_seen = 0
        #: the body motion program new rigs play (None: --motion none)
        self.motion_setup: MotionSetup | None = None
        self._motion_cycle: list | None = None
        self._motion_index = -1
        self._stop = threading.Event()
        self._stack: ExitStack | None = None
        #: the avatar hairstyles are tried on (set by open, changed by POST /avatar)
        self.base: BaseAvatar | None = None
        from .config import tryon_settings

        self.tryon = StyleSwitcher(self, HairStyles(cfg.hair_dir), functools.partial(tryon_settings, cfg.tryon),
                                   prewarm=bool(cfg.tryon.get("prewarm", cfg.kiosk)))
        #: VMC Performer (``--vmc-send``): the drawn frames sent out, or None
        self.vmc_sender = None
        self._body = False          # the input may carry a whole-body pose (VMC): rigs drive every bone

    # ------------------------------------------------------------------ open / close
    def open(self) -> "Session":
        """Check the outputs, load the avatar, open everything (see module doc).

        Raises:
            RunError, AvatarError, TrackingError, OSError (an output cannot be written),
            render.ContextError, render.VirtualCameraUnavailable; nothing stays open then.
        """
        if self._stack is not None:
            raise RuntimeError("the session is already open")
        cfg = self.cfg
        from render import Renderer, create_context

        specs = self._check_outputs()
        self._body = cfg.vmc_listen is not None or _track_has_body(cfg.source)
        rig = self._first_rig()
        with ExitStack() as stack:
            self.pose_input, self.duration_ns = open_pose_input(cfg, metrics=self.metrics)
            stack.enter_context(self.pose_input)
            status = self.pose_input.status()
            self.live = status.live
            self.fps = cfg.fps or (60.0 if self.live else 30.0)
            if self.clock is None:
                self.clock = MonotonicClock() if self.live else ReplayClock(status.start_ns)
            pace = dict(live=self.live, fps=self.fps, window=self._window, vsync=cfg.fps is None)
            self.pacing = pacing_text(**pace)
            self.context = stack.enter_context(create_context(
                "window" if self._window else "egl", size=cfg.size, vsync=cfg.fps is None, fullscreen=cfg.kiosk,
                title=f"swaycam ({self.pacing})"))
            self.renderer = stack.enter_context(Renderer(self.context, cfg.size, antialias=cfg.antialias,
                                                           outlines=cfg.outlines, detail=cfg.detail))
            self.renderer.set_background(cfg.background)
            self.drawer = FrameDrawer(self.renderer, self.metrics, framing=cfg.framing,
                                      pacing=pacing_text(**pace, short=True),
                                      overlays=cfg.overlays and not cfg.kiosk, hud=cfg.hud and not cfg.kiosk)
            self.drawer.set_avatar(rig.avatar, rig.world)
            from .panel import Panel

            self.panel = Panel(self)                      # expression hotkeys; with the service, the browser panel
            stack.callback(self.panel.close)              # after the service stops, before the GL context goes
            if cfg.service:
                from .service_security import make_token

                token = make_token(cfg.service_token)
                self.service = bind_service(self.controller, port=cfg.port, avatar_dir=cfg.avatar_dir,
                                            motion_dir=cfg.motion_dir, hair_dirs=self.tryon.styles.folders,
                                            panel=self.panel, token=token)
                if cfg.service_token == "auto":
                    log.warning("control service token: %s (other clients than the panel send "
                                "'Authorization: Bearer %s')", token, token)
                stack.callback(self.service.close)
            if cfg.vmc_send:
                from .vmc import VmcSender, parse_target

                self.vmc_sender = stack.enter_context(VmcSender(
                    rig.avatar, [parse_target(t) for t in cfg.vmc_send], divisor=int(cfg.vmc.get("divisor", 1)),
                    names=cfg.vmc.get("names", "vrm0")))
            self.outputs = stack.enter_context(open_outputs(specs, context=self.context, renderer=self.renderer,
                                                            fps=self.fps, live=self.live,
                                                            video_preset=video_preset(cfg.video_preset, self.live)))
            for o in specs:
                if o.kind in ("video", "png"):
                    self.say(f"writing {o.kind} to {o.target}")
            # offline every substep runs (no debt dropped); live, the cap keeps a stall from spiralling
            self.loop = Loop(rig, self.pose_input, max_substeps=cfg.max_substeps if self.live else NO_CAP,
                             metrics=self.metrics, clock=self.clock, draw=self._draw)
            self.rig = rig
            self.tryon.paced = self.live
            if (self.live or cfg.service) and self.tryon.styles.styles():
                self.tryon.prepare()              # before the first frame, not during a switch
            stack.callback(self.tryon.close)      # first to close: a fit in flight is dropped
            self._stack = stack.pop_all()
        return self

    def _check_outputs(self) -> list[OutputSpec]:
        from render.platform import has_display

        specs = plan_outputs(self.cfg.output, background=self.cfg.background, display=has_display(), say=self.say)
        self._window = needs_window(specs)
        if not self._window:
            os.environ.setdefault("SWAYCAM_GL", "egl")
        self.output_specs = specs
        return specs

    def _first_rig(self) -> AvatarRig:
        from .config import motion_options

        m = self.cfg.motion
        self.motion_setup = load_motion(self.cfg.motion_clip, options=motion_options(m),
                                        bone_map=m.get("bone_map"), bvh_scale=m.get("bvh_scale"), loop=m.get("loop"))
        path = self.cfg.avatar
        if path in (None, "default", "layered"):   # the generated avatars, by name (config files use it)
            from avatars.generate import default_avatar_path, layered_avatar_path

            path = layered_avatar_path() if path == "layered" else default_avatar_path()
        avatar = load_avatar(path)   # AvatarError (a ValueError) goes out as it is
        self.base = BaseAvatar(Path(path), avatar)
        style = self.cfg.hair_style
        if style is not None:
            avatar = self._first_style(style)
        try:
            rig = self.make_rig(avatar, self.cfg.solver)
        except ValueError as exc:   # an avatar it cannot drive (no head), bad hair settings
            raise RunError(str(exc)) from None
        rig.warm_up()   # numba compiles before any timing starts
        return rig

    def _first_style(self, style: str) -> Avatar:
        """The base avatar with ``style`` (a name in the hair folder or a file) tried on: the
        fit cache or a fit, before anything opens (an offline run draws it from its first
        frame). Raises RunError with the core's message when it cannot be fitted."""
        sw = self.tryon
        try:
            path = sw.styles.resolve(style)
            result, hit = fit_style(self.base, path, sw.settings, sw.cache)
        except StyleError as exc:
            raise RunError(f"hairstyle: {exc}") from None
        from .config import looks_like_path

        name = path.stem if looks_like_path(style) else style
        sw.set_current(name, path)
        g = result.guide_report
        self.say(f"hairstyle: {name}: {len(result.chains)} chains, guides {g.attached} attached + {g.joined} joined "
                 f"of {g.candidates}" + (" (cached)" if hit else f" (fitted in {result.seconds:.2f} s)"))
        from avatars.tryon.pipeline import own_hair_text

        self.say(f"hairstyle: {name}: the avatar's own hair: {own_hair_text(getattr(result, 'own_hair', {}))}")
        return result.avatar

    def close(self) -> None:
        """Close everything opened, in reverse order (flushing the outputs). Idempotent."""
        self._exit(None, None, None)

    def _exit(self, *exc) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.__exit__(*exc)

    def __enter__(self) -> "Session":
        return self.open()

    def __exit__(self, *exc) -> None:
        self._exit(*exc)   # an exception skips the outputs' flush

    # ------------------------------------------------------------------ avatar state (render thread)
    def make_rig(self, avatar: Avatar, solver: str, hair: dict | None = None, *, play: bool = True) -> AvatarRig:
        """A rig with the run's drive options, ``hair`` settings (default: the config's) and
        body motion program (:attr:`motion_setup`; with ``play`` false only its options: the
        caller hands the running program over with :meth:`AvatarRig.take_motion_from`).
        Touches no render-thread state (the try-on worker builds rigs with it). Raises
        ValueError for an avatar it cannot drive, bad hair settings or a clip it cannot play
        (ClipError)."""
        hair = self.cfg.hair if hair is None else hair
        setup = self.motion_setup
        rig = AvatarRig(avatar, solver=solver, drive=DriveOptions(**self.cfg.drive), hair=hair or None,
                        mirror=self.cfg.mirror, motion=setup.options if setup is not None else None,
                        body=self._body)
        if setup is not None and play:
            setup.apply(rig)
        if self.cfg.calibration:
            from tracking import ExpressionCalibration

            rig.expressions.calibrate(ExpressionCalibration({k: tuple(v) for k, v in self.cfg.calibration.items()}))
        return rig

    def set_calibration(self, ranges: dict) -> None:
        """Use the per-user input ranges ``ranges`` ({blendshape: [lo, hi]}, the config's
        ``[calibration]``) from the next frame on, on this rig and every later one (render
        thread). Raises ValueError for bad ranges; nothing changes then."""
        from dataclasses import replace

        from tracking import ExpressionCalibration

        cal = ExpressionCalibration({k: tuple(v) for k, v in ranges.items()})
        for r in (self.rig, self.companion):
            if r is not None:
                r.expressions.calibrate(cal)
        self.cfg = replace(self.cfg, calibration=dict(ranges))

    def companion_solver(self, solver: str) -> str:
        """The compare mode's other solver for a rig running ``solver``."""
        return (SolverMode.LEGACY if solver != SolverMode.LEGACY else SolverMode.REST_SHAPE).value

    def make_companion(self, rig: AvatarRig) -> AvatarRig:
        """The compare mode's companion of a fresh ``rig``: its avatar and hair settings with
        the other solver, the same body motion. Touches no render-thread state, as
        :meth:`make_rig`. Raises ValueError as :meth:`make_rig`."""
        companion = self.make_rig(rig.avatar, self.companion_solver(rig.solver), rig.hair_params)
        if rig.motion is not None and companion.motion is not None:
            companion.take_motion_from(rig)       # the same body on both sides
        return companion

    def swap_rig(self, rig: AvatarRig, *, keep_hair: bool = False, framing: Framing | None = None,
                 companion: AvatarRig | None = None) -> None:
        """Simulate and draw ``rig`` from now on: the one way the rig changes (the ``s`` key,
        ``POST /hair`` with a solver, ``POST /avatar``, compare mode). Its hair starts at rest
        under the current pose, or, with ``keep_hair``, goes on from the motion ``rig``
        carries (a solver switch: :meth:`AvatarRig.with_solver`). In compare mode a companion
        with the other solver is built for it (starting with the same hair); a new avatar is
        uploaded and framed (with ``framing`` when given: cameras computed beforehand, see
        :meth:`FrameDrawer.framing`). ``companion``: that companion built beforehand (off this
        thread; used when compare mode is on and it is ``rig``'s avatar with the other solver).
        Parameter changes do not swap the rig: :meth:`AvatarRig.set_hair`.

        Raises:
            ValueError: the companion cannot be built, or a chain set steps another h (the
                current rig stays).
        """
        prepared, companion = companion, None
        if self.compare:
            other = self.companion_solver(rig.solver)
            if keep_hair:
                companion = rig.with_solver(other)
            elif prepared is not None and prepared.avatar is rig.avatar and prepared.solver == other:
                companion = prepared
            else:
                companion = self.make_companion(rig)
        self.loop.set_rig(rig, (companion,) if companion is not None else (), reset=not keep_hair)
        if rig.avatar is not self.rig.avatar:
            self.drawer.set_avatar(rig.avatar, rig.world, framing=framing)
            if self.vmc_sender is not None:
                self.vmc_sender.set_avatar(rig.avatar)
        self.rig, self.companion = rig, companion

    def switch_solver(self, solver: str) -> None:
        """Run the hair with ``solver`` from the next substep on, its motion carried over (the
        ``s`` key, ``POST /hair {"solver": ...}``). Raises ValueError for an unknown solver."""
        if solver != self.rig.solver:
            self.swap_rig(self.rig.with_solver(SolverMode.parse(solver).value), keep_hair=True)

    def set_hair(self, hair: dict | None) -> None:
        """Retune the running hair in place (``[hair]`` settings; the companion too in compare
        mode). Raises ValueError for bad settings; nothing is changed then."""
        self.rig.set_hair(hair)
        if self.companion is not None:
            self.companion.set_hair(hair)

    def set_motion(self, setup: MotionSetup, *, speed: float | None = None, layer: str | None = None) -> None:
        """Play ``setup``'s program from the next substep, cross-fading (the ``m`` key,
        ``POST /motion``); ``speed`` / ``layer`` change the playback in place.

        Raises:
            ValueError: the run has no body motion (``--motion none``), a bad speed or layer,
                or a clip the avatar cannot play (ClipError): nothing changes then, the
                previous clip keeps playing.
        """
        rigs = [r for r in (self.rig, self.companion) if r is not None]
        if any(r.motion is None for r in rigs):
            raise ValueError("this run has no body motion (--motion none); restart with --motion idle or a clip")
        if speed is not None and not (speed > 0 and speed == speed and speed != float("inf")):
            raise ValueError(f"speed {speed!r} must be > 0")
        from .rig.motion import LAYERS

        if layer is not None and layer not in LAYERS:
            raise ValueError(f"layer {layer!r} is not one of {', '.join(LAYERS)}")
        program = setup.program if isinstance(setup.program, str) else list(setup.program)
        for r in rigs:                                   # retarget everywhere before anything plays
            if not isinstance(program, str):
                r.motion.retarget(program)
        for r in rigs:
            r.play_motion(program, loop=setup.loop)
            if speed is not None:
                r.motion.set_speed(speed)
            if layer is not None:
                r.motion.set_layer(layer)
        self.motion_setup = setup

    def set_motion_options(self, *, speed: float | None = None, layer: str | None = None) -> None:
        """Change the playback speed and/or the head layering in place (the clip goes on).
        Raises ValueError without body motion or for a bad value; nothing changes then."""
        rigs = [r for r in (self.rig, self.companion) if r is not None]
        if any(r.motion is None for r in rigs):
            raise ValueError("this run has no body motion (--motion none)")
        from .rig.motion import LAYERS

        if speed is not None and not (speed > 0 and speed != float("inf")):
            raise ValueError(f"speed {speed!r} must be > 0")
        if layer is not None and layer not in LAYERS:
            raise ValueError(f"layer {layer!r} is not one of {', '.join(LAYERS)}")
        for r in rigs:
            if speed is not None:
                r.motion.set_speed(speed)
            if layer is not None:
                r.motion.set_layer(layer)

    def next_motion(self) -> str:
        """The ``m`` key: the next clip of the ``--motion`` file (the idle after the last one).
        Returns the name of what plays now."""
        from avatars.clips import load_file, parse_spec

        if self._motion_cycle is None:
            clip = self.cfg.motion_clip
            clips = []
            if clip not in ("idle", "rest", "none"):
                clips = load_file(parse_spec(clip).path, bone_map=self.cfg.motion.get("bone_map"),
                                  unit_scale=self.cfg.motion.get("bvh_scale"))
            self._motion_cycle = clips
        cycle = self._motion_cycle
        self._motion_index = (self._motion_index + 1) % (len(cycle) + 1)
        base = self.motion_setup.options if self.motion_setup is not None else None
        if base is None:
            raise ValueError("this run has no body motion (--motion none)")
        if self._motion_index == len(cycle):
            self.set_motion(MotionSetup("idle", base, None, "idle"))
            return "idle"
        c = cycle[self._motion_index]
        self.set_motion(MotionSetup((c,), base, None, c.name))
        return c.name

    def set_compare(self, on: bool) -> None:
        """Compare mode on (the rig and a companion with the other solver, side by side, both
        restarted at rest) or off."""
        was = self.compare
        self.compare = bool(on)
        try:
            self.swap_rig(self.rig)
        except ValueError:
            self.compare = was
            raise
        self.drawer.reframe(self.rig.world)
        if self.compare:
            self.say(f"compare: left {self.rig.solver}, right {self.companion.solver}")

    # ------------------------------------------------------------------ run
    def stop(self) -> None:
        """Ask the run to end after the current frame (thread-safe)."""
        self._stop.set()

    def run(self) -> RunResult:
        """Draw frames until the end of the source (or the duration), ``q``, a closed window,
        :meth:`stop`, Ctrl-C, SIGTERM or SIGHUP.

        Raises:
            RunError: an output failed. The tracking thread's error, if it failed.
        """
        if self._stack is None:
            raise RuntimeError("open the session first: with Session(cfg) as session: session.run()")
        result = RunResult(outputs=[o.name for o in self.output_specs])
        if self.service is not None:
            self.service.start()
            url = f"http://127.0.0.1:{self.service.address[1]}"
            self.say(f"control panel: {url}/ (status: {url}/status)")
        if self.tryon.prewarm and self.live:
            self.tryon.start_prewarm()
        t_start = time.perf_counter()   # processing time of the run (a measurement, not run time)
        self.pose_input.start(self.clock)
        with sigterm_as_interrupt() as sig:
            # an interrupt ends the run between frames and commands, never inside one
            whole = sig.deferring
            try:
                if self.live:
                    if self._window:
                        self.say(f"live: {KEY_HELP}" if not self.cfg.kiosk else "kiosk mode: q/esc quits")
                    run_live(self.clock, self.fps, self.duration_ns, draw=whole(self._live_frame),
                             between=whole(self._between_frames), stop=self._stop, dropped=self._dropped_frames,
                             arrivals=self.pose_input.arrivals if self.cfg.frame_lock else None)
                else:
                    run_offline(self.clock, self.fps, self.duration_ns, draw=whole(self.loop.frame),
                                between=whole(self._between_frames), stop=self._stop, progress=self.progress,
                                pace=self._window)
            except KeyboardInterrupt:
                result.interrupted = True
                result.signal = sig.received or signal.SIGINT
        result.duration_s = time.perf_counter() - t_start
        st = self.pose_input.status()
        if st.frames_tracked is not None:
            result.tracked_frames, result.face_frames = st.frames_tracked, st.faces
        result.frames = self.metrics.frames
        result.summary = self.metrics.summary()
        return result

    def _dropped_frames(self, n: int) -> None:
        self.metrics.drop(frames=n)

    def _live_frame(self, t_ns: int) -> bool:
        """One live frame; False once the source has ended (and no duration was asked for).
        Raises the tracking thread's error."""
        st = self.pose_input.status()
        if st.error is not None:
            raise st.error
        self.loop.frame(t_ns, latency_from_ns=st.newest_capture_ns)
        self.tryon.frame_drawn()          # the try-on worker's Python steps run while this thread sleeps
        return not (st.finished and self.duration_ns is None)

    def _between_frames(self) -> None:
        """The control service's work, a hairstyle ready to swap in, the window's events, the
        kiosk's recenter on a new face (unless ``--no-recenter``)."""
        self.commands.drain()
        self.tryon.poll()
        self.handle_events()
        if self.cfg.kiosk and self.cfg.recenter:
            new_faces = self.pose_input.status().new_faces
            if new_faces > self._faces_seen:
                self._faces_seen = new_faces
                self.pose_input.recenter()

    def handle_events(self) -> None:
        """Window events: close ends the run, keys go to :attr:`keys`."""
        for ev in self.context.poll_events():
            if ev.kind == "close":
                self.stop()
            elif ev.kind == "key":
                self.keys.press(ev.key)

    def _draw(self, info: FrameInfo) -> None:
        panel = self.panel
        if panel is not None:
            info.expressions = panel.expressions(info.expressions)
        self.drawer.draw(info, self.rig, self.companion)
        wall_ns = self.clock.wall_ns()
        self.outputs.send(wall_ns)
        if panel is not None:
            panel.frame_drawn(self.renderer, wall_ns, self.loop.draw_sample)
        if self.vmc_sender is not None:
            st = self.pose_input.status()
            self.vmc_sender.send_frame(info.world, info.expressions or {}, self.clock.now_ns() * 1e-9,
                                       found=st.face_found, calibrated=st.faces > 0 or st.face_found)
        if self.on_frame is not None:
            self.on_frame(info, self.rig)


def _track_has_body(source: str | None) -> bool:
    """A ``.jsonl`` source recorded from a VMC performer (it carries a whole-body pose)."""
    if not source or not source.endswith(".jsonl"):
        return False
    try:
        with open(source, encoding="utf-8", errors="replace") as f:
            for _, line in zip(range(200), f):
                if '"body"' in line:
                    return True
    except OSError:
        return False
    return False


def run(cfg: RunConfig, **options) -> RunResult:
    """Open a :class:`Session` for ``cfg`` (``options`` as its keywords), run it, close it."""
    with Session(cfg, **options) as session:
        return session.run()


__all__ = ["AvatarError", "RunError", "RunResult", "Session", "run"]
