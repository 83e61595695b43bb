"""``swaycam run``: one session opens the pose input, the renderer, the service and the
outputs, runs the frames, does the work between them, and closes everything.

Use it as a context manager::

    with Session(cfg, say=print) as session:     # opens everything (or nothing)
        result = session.run()                   # frames until the end, 'q' or stop()

Opening goes through one :class:`contextlib.ExitStack`, in this order: the pose input, the
GL context, the renderer, the control service (bound, so a busy port fails before any
output file is opened) and the outputs (video files last). A failure while opening closes
what was opened, in reverse order; so does closing.

What is on stage — the rig, compare mode, the base avatar, the body motion, and every change
to them — is the session's :class:`runtime.stage.Stage` (``stage``), with the run-time
settings it owns (:class:`runtime.live_settings.LiveSettings`). The window keys call the
session's :class:`runtime.controls.Controls` (``controls``, a
:class:`runtime.run_controls.RunControls`); the control service calls its controller
(``controller``), which hands render-thread work to the command queue drained between
frames; with a hairstyle (``--hair``, ``[tryon] style``) the first avatar is the
try-on of that style, and later switches are fitted off the render thread by the
:class:`runtime.tryon.StyleSwitcher` (``tryon``) and swapped in between frames.

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

from avatars import AvatarError

from render.orbit import Orbit

from .clock import NO_CAP, Clock, MonotonicClock, ReplayClock
from .commands import CommandQueue, RenderIdle
from .config import RunConfig, tryon_settings, video_preset
from .controller import SessionController
from .drawing import FrameDrawer
from .keys import KEY_HELP, Keys
from .live_settings import LiveSettings
from .loop import FrameInfo, Loop
from .outputs import Outputs, OutputSpec, needs_window, open_outputs, plan_outputs
from .panel.outputs_control import OutputControl
from .panel.state import PanelState
from .lipsync.input import VoiceInput
from .pose_inputs import PoseInput, open_pose_input
from .pose_inputs.track import TrackInput
from .results import RunError, RunResult
from .run_controls import RunControls
from .schedule import pacing_text, run_live, run_offline, sigterm_as_interrupt
from .stage import Stage
from .telemetry import Telemetry
from .tryon import HairStyles, StyleSwitcher
from .tryon.note import StyleNote
from .rest_note import RestWatch
from .settle import SettleMeter
from .view import View

log = logging.getLogger(__name__)


class Session:
    """One ``swaycam run``.

    Args:
        cfg: the run configuration (see :class:`runtime.config.RunConfig`; frozen).
        clock: the run's clock (default: :class:`ReplayClock` offline, :class:`MonotonicClock` live).
        say: where user-facing lines go (the CLI prints them).
        on_frame: called as ``on_frame(info, rig)`` after each frame is drawn and sent (tests, tools).
        progress: offline runs call ``progress(k, n)`` after frame k of about n (the CLI's
            progress line).

    Attributes:
        stage: what is on stage (:class:`runtime.stage.Stage`), its ``settings`` the live ones.
        tryon: the hairstyle switcher; ``controller``: the control service's controller;
            ``commands``: the render thread's command queue; ``panel``: the panel's state
            (triggered expressions, hotkeys, preview, calibration; :class:`PanelState`);
            ``output_control``: the run-time outputs (panel).
        controls, keys: the window's actions and key table (set by :meth:`open`).

    Render-thread state (set by :meth:`open`): ``pose_input``, ``loop``, ``context``,
    ``renderer``, ``drawer``, ``outputs``, ``service``, ``vmc_sender``. :meth:`stop`,
    ``controller``, ``commands`` and ``tryon``'s requests may be used from other threads.
    """

    def __init__(self, cfg: RunConfig, *, clock: Clock | None = None, say=print, on_frame=None, progress=None):
        self.cfg = cfg
        self.say = say
        self.on_frame = on_frame
        self.progress = progress
        self.clock: Clock | None = clock
        self.metrics = Telemetry()
        self.commands = CommandQueue()
        self.render_idle = RenderIdle()
        self.stage = Stage(cfg, settings=LiveSettings(cfg), say=say)
        self.tryon = StyleSwitcher(self.stage, HairStyles(cfg.hair_dir), functools.partial(tryon_settings, cfg.tryon),
                                   prewarm=bool(cfg.kiosk if cfg.tryon.prewarm is None else cfg.tryon.prewarm))
        self.output_control = OutputControl(self, self.stage.settings, record_dir=cfg.record_dir,
                                            video_preset=cfg.video_preset, source=cfg.source)
        self.panel = PanelState(self.stage.settings, lambda: list(self.stage.rig.avatar.expressions),
                                self.output_control, now_ns=self._wall_ns)
        self.controller = SessionController(self)
        self.controls: RunControls | None = None
        self._replay_views = False
        #: the settle time of the "move-then-settle" clip (runtime/settle.py)
        self.settle = SettleMeter()
        #: compare mode's "both at rest" note (runtime/rest_note.py)
        self.rest_watch = RestWatch()
        #: the HUD's hairstyle line (runtime/tryon/note.py)
        self.style_note = StyleNote()
        self.keys: Keys | None = None
        self.output_specs: list[OutputSpec] = []
        self.pose_input: PoseInput | None = None
        self.duration_ns: int | None = None
        self.live = False
        self.fps = 0.0
        #: how frames are paced (runtime.schedule.pacing_text): the window title; the HUD has it short
        self.pacing = ""
        self.loop: Loop | None = None
        self.context = None
        self.renderer = None
        self.drawer: FrameDrawer | None = None
        self.outputs: Outputs | None = None
        self.service = None
        #: VMC Performer (``--vmc-send``): the drawn frames sent out, or None
        self.vmc_sender = None
        #: the quality governor of a live run (:class:`runtime.quality.RunQuality`), None offline
        self.quality = None
        self._window = False
        self._faces_seen = 0
        self._stop = threading.Event()
        self._stack: ExitStack | None = None

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
        rig = self.stage.first_rig(self.tryon)
        with ExitStack() as stack:
            self.pose_input, self.duration_ns = open_pose_input(cfg, metrics=self.metrics)
            stack.enter_context(self.pose_input)
            if isinstance(self.pose_input, VoiceInput):   # --audio: the panel's voice calibration
                self.panel.voice.attach(self.pose_input.voice)
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
                                      view=View(framing=cfg.framing, inspect=cfg.inspect, roots=cfg.guide_roots),
                                      pacing=pacing_text(**pace, short=True),
                                      overlays=cfg.overlays and not cfg.kiosk, hud=cfg.hud and not cfg.kiosk)
            self.drawer.set_avatar(rig.avatar, rig.world)
            # a pose track recorded with the viewer's orbit replays it, into every output
            self._replay_views = isinstance(self.pose_input, TrackInput) and self.pose_input.track.view is not None
            self.drawer.view.follow = self.drawer.view.follow or self._replay_views
            self.controls = RunControls(stage=self.stage, tryon=self.tryon, drawer=self.drawer, clock=self.clock,
                                        recenter=self.recenter, stop=self.stop, hotkey=self.panel.hotkey,
                                        say=self.say)
            self.keys = Keys(self.controls, kiosk=cfg.kiosk)
            stack.callback(self.panel.close)              # after the service stops, before the GL context goes
            if cfg.service:
                self.service = self._bind_service()
                stack.callback(self.service.close)
            if cfg.vmc_send:
                from .vmc import VmcSender, parse_target

                self.vmc_sender = stack.enter_context(VmcSender(
                    rig.avatar, [parse_target(t) for t in cfg.vmc_send], divisor=cfg.vmc.divisor,
                    names=cfg.vmc.names))
            self.outputs = stack.enter_context(open_outputs(specs, context=self.context, renderer=self.renderer,
                                                            fps=self.fps, live=self.live,
                                                            video_preset=video_preset(cfg.video_preset, self.live)))
            for o in specs:
                if o.kind in ("video", "png"):
                    self.say(f"writing {o.kind} to {o.target}")
            if self.live:
                self._open_quality()
            # offline every substep runs (no debt dropped); live, the cap keeps a stall from spiralling
            self.loop = Loop(rig, self.pose_input, max_substeps=cfg.max_substeps if self.live else NO_CAP,
                             metrics=self.metrics, clock=self.clock, draw=self._draw)
            self.stage.attach(rig, loop=self.loop, drawer=self.drawer, vmc_sender=self.vmc_sender)
            self.tryon.paced = self.live
            self.render_idle.paced = self.live
            if (self.live or cfg.service) and self.tryon.styles.styles():
                self.tryon.prepare()              # before the first frame, not during a switch
            stack.callback(self.tryon.close)      # first to close: a fit in flight is dropped
            self._stack = stack.pop_all()
        return self

    def _open_quality(self) -> None:
        """The live run's quality governor (``quality``; offline runs never adapt)."""
        from .governor import GovernorOptions
        from .quality import RunQuality

        try:
            self.quality = RunQuality(self.renderer, self.outputs, self.pose_input, fps=self.fps,
                                      window=self._window, options=GovernorOptions(pin=self.cfg.quality))
        except ValueError as exc:
            raise RunError(f"quality: {exc}") from None
        self.metrics.watch("quality", self.quality.status)
        self.drawer.quality = self.quality.text

    def _check_outputs(self) -> list[OutputSpec]:
        from render.platform import has_display

        specs = plan_outputs(self.cfg.output, background=self.cfg.background, display=has_display(), say=self.say)
        self._window = needs_window(specs)
        if not self._window:
            os.environ.setdefault("SWAYCAM_GL", "egl")
        self.output_specs = specs
        return specs

    def _bind_service(self):
        """The control service with the panel's routes, bound to 127.0.0.1:``port`` (0: a
        free port) but not serving yet. Raises RunError when the port is taken."""
        from .panel.routes import PanelRoutes
        from .service import ControlService
        from .service.security import make_token

        cfg = self.cfg
        token = make_token(cfg.service_token)
        avatar_dir = Path(cfg.avatar_dir) if cfg.avatar_dir else None
        motion_dir = Path(cfg.motion_dir) if cfg.motion_dir else None
        panel = PanelRoutes(self.panel, self.controller, avatar_dir=avatar_dir, motion_dir=motion_dir)
        try:
            service = ControlService(self.controller, port=cfg.port, avatar_dir=avatar_dir, motion_dir=motion_dir,
                                     hair_dirs=self.tryon.styles.folders, routes=panel.table(), token=token,
                                     gate=self.render_idle.wait)
        except OSError as exc:
            raise RunError(f"control service: cannot listen on 127.0.0.1:{cfg.port} ({exc.strerror}); "
                           "choose another --port") from None
        if cfg.service_token == "auto":
            log.warning("control service token: %s (the panel opens at /?token=%s; other clients send "
                        "'Authorization: Bearer %s')", token, token, token)
        return service

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

    # ------------------------------------------------------------------ what the controller asks of the run
    def live_status(self) -> dict:
        """The live metrics, ``paused`` and ``face_found`` (any thread: counters and plain
        attributes only)."""
        out = self.metrics.summary()
        out.update(paused=self.clock.paused, face_found=self.pose_input.status().face_found)
        return out

    def recenter(self) -> None:
        """Take the current head pose as neutral (render thread)."""
        self.pose_input.recenter()

    def frame_png(self) -> bytes | None:
        """The last drawn frame as PNG, read now (render thread), or None before the first."""
        return self.drawer.png()

    def _wall_ns(self) -> int:
        c = self.clock
        return c.wall_ns() if c is not None else time.perf_counter_ns()

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
            token = self.service.policy.token
            login = f"?token={token}" if token else ""      # the panel's nonce cookie comes with it
            self.say(f"control panel: {url}/{login} (status: {url}/status)")
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
                             arrivals=self.pose_input.arrivals if self.cfg.frame_lock else None,
                             divisor=self._rate_divisor)
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
        if self.quality is not None:
            self.quality.dropped(n)

    def _rate_divisor(self) -> int:
        return 1 if self.quality is None else self.quality.divisor

    def _live_frame(self, t_ns: int) -> bool:
        """One live frame; False once the source has ended (and no duration was asked for).
        Raises the tracking thread's error. The frame's work (its start to its hand-over to
        the outputs) goes to the quality governor."""
        st = self.pose_input.status()
        if st.error is not None:
            raise st.error
        q = self.quality
        if q is not None:
            q.before_frame()
        w0 = self.clock.wall_ns()
        self.loop.frame(t_ns, latency_from_ns=st.newest_capture_ns)
        if q is not None:
            q.frame((self.clock.wall_ns() - w0) / 1e6)
        self.tryon.frame_drawn()          # the try-on worker's Python steps run while this thread sleeps
        self.render_idle.frame_drawn()    # so do the service's (an avatar load, many spring patterns)
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
        """Window events: close ends the run, keys go to :attr:`keys`, mouse drags orbit (pan
        with the right or middle button or shift) and the wheel zooms (:attr:`controls`)."""
        for ev in self.context.poll_events():
            if ev.kind == "close":
                self.stop()
            elif ev.kind == "key":
                self.keys.press(ev.key)
            elif ev.kind == "drag":        # window pixels -> output pixels (the window may be scaled)
                s = self.renderer.size[1] / max(self.context.size[1], 1)
                self.controls.orbit(ev.delta[0] * s, ev.delta[1] * s, pan=ev.button != 1 or "shift" in ev.mods)
            elif ev.kind == "wheel":
                self.controls.zoom(ev.delta[1])

    def _draw(self, info: FrameInfo) -> None:
        if self._replay_views:              # a pose track recorded with the viewer's orbit: replayed
            v = self.pose_input.view_at(self.loop.driver.last_time_ns)
            self.drawer.view.orbit = Orbit(float(v[0]), float(v[1]), float(v[2]), (float(v[3]), float(v[4])))
        self.settle.frame(self.stage.rig, self.loop.driver.last_time_ns)     # "move then settle"
        self.drawer.settle = self.settle.text()
        self.rest_watch.frame(self.stage.rig, self.stage.companion, self.loop.driver.last_time_ns * 1e-9)
        self.drawer.rest_note = self.rest_watch.text()
        self.drawer.style_note = self.style_note.update(self.tryon, self.loop.driver.last_time_ns * 1e-9)
        panel = self.panel
        info.expressions = panel.expressions(info.expressions)
        wall_ns = self.clock.wall_ns()
        if self.drawer.split and self.outputs.needs_pixels and getattr(self.renderer, "reader", None) is None:
            # the viewer orbits and the stream does not follow: the outputs' frame first (its
            # readback is queued), then the viewer's for the window and the panel preview
            self.drawer.draw(info, self.stage.rig, self.stage.companion, viewer=False)
            self.outputs.send_fed(wall_ns)
            self.drawer.draw(info, self.stage.rig, self.stage.companion)
            self.outputs.send_shown(wall_ns)
        else:
            self.drawer.draw(info, self.stage.rig, self.stage.companion)
            self.outputs.send(wall_ns)
        o = self.drawer.view.orbit
        panel.frame_drawn(self.renderer, wall_ns, self.loop.draw_sample,
                          view=None if o.is_identity else (o.yaw, o.pitch, o.zoom, *o.pan))
        if self.vmc_sender is not None:
            st = self.pose_input.status()
            self.vmc_sender.send_frame(info.world, info.expressions or {}, self.clock.now_ns() * 1e-9,
                                       found=st.face_found, calibrated=st.faces > 0 or st.face_found)
        if self.on_frame is not None:
            self.on_frame(info, self.stage.rig)


def run(cfg: RunConfig, **options) -> RunResult:
    """Open a :class:`Session` for ``cfg`` (``options`` as its keywords), run it, close it."""
    with Session(cfg, **options) as session:
        return session.run()


__all__ = ["AvatarError", "RunError", "RunResult", "Session", "run"]
