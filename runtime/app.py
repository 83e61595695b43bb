"""``swaycam run``: wire avatar, pose input, loop, renderer and outputs, and run them.

Offline (pose tracks, files not played in real time): a :class:`ReplayClock` steps through
the render frame times ``t0 + k·1e9/fps``; every frame is rendered and written, so the
output has the source's duration whatever the machine's speed. Live (webcam, or a file
with ``--realtime``): the monotonic clock, tracking on its own thread, frames paced to the
target fps (or vsync), keys and the control service handled between frames.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from avatars import Avatar, AvatarError, load_avatar
from solver.modes import SolverMode

from .clock import MonotonicClock, frame_times
from .config import RunConfig
from .drive import DriveOptions
from .loop import FrameInfo, Loop
from .outputs import check_writable, default_outputs, needs_window, open_sinks, parse_outputs
from .pose_inputs import open_pose_input
from .rig import AvatarRig
from .telemetry import Telemetry

log = logging.getLogger(__name__)

KEY_HELP = ("r recenter · o overlays · h HUD · s switch solver · c compare solvers side by side · "
            "space pause · p screenshot · q/esc quit")


class RunError(RuntimeError):
    """A run cannot start (no display for a window, an avatar it cannot drive, a port in use,
    an output it cannot write); the message says what and where."""


@dataclass
class RunResult:
    """What a run produced. ``signal`` is the signal number that interrupted it, if any."""

    frames: int = 0
    outputs: list[str] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    duration_s: float = 0.0
    interrupted: bool = False
    signal: int | None = None
    tracked_frames: int | None = None
    face_frames: int | None = None


class App:
    """One ``swaycam run`` session; also the control service's controller.

    Args:
        cfg: the run configuration (see :class:`runtime.config.RunConfig`).
        say: where user-facing lines go (the CLI prints them).
        on_frame: called as ``on_frame(info, rig)`` after each frame is drawn (tests, tools).
    """

    def __init__(self, cfg: RunConfig, *, say=print, on_frame=None):
        self.cfg = cfg
        self.say = say
        self.on_frame = on_frame
        self.service = None
        self.metrics = Telemetry()
        self._commands: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self.overlays = cfg.overlays and not cfg.kiosk
        self.hud = cfg.hud and not cfg.kiosk
        self.compare = False
        self._last_png: bytes | None = None
        self._last_rgba: np.ndarray | None = None
        self._screenshot_index = 0

    # ------------------------------------------------------------------ setup
    def _load_avatar(self, path) -> Avatar:
        if path is None:
            from avatars.generate import default_avatar_path

            path = default_avatar_path()
        return load_avatar(path)

    def _make_rig(self, avatar: Avatar, solver: str, hair: dict | None = None) -> AvatarRig:
        """A rig with the run's drive options and ``hair`` settings (default: the config's).
        Raises ValueError for an avatar it cannot drive or bad hair settings."""
        hair = self.cfg.hair if hair is None else hair
        return AvatarRig(avatar, solver=solver, drive=DriveOptions(**self.cfg.drive), hair=hair or None,
                         mirror=self.cfg.mirror)

    # ------------------------------------------------------------------ controller (service thread)
    def _call(self, fn, timeout: float = 10.0):
        fut: Future = Future()
        self._commands.put((fn, fut))
        return fut.result(timeout=timeout)

    def status(self) -> dict:
        s = self.metrics.summary()
        s.update({"solver": self.rig.solver, "avatar": self.rig.avatar.path, "paused": self.loop.paused})
        return s

    def recenter(self) -> None:
        self._call(lambda: self.pose_input.recenter())

    def load_avatar(self, path: Path) -> dict:
        def do():
            avatar = load_avatar(path)  # AvatarError is a ValueError: the service answers 422
            self._swap_avatar(avatar)
            return {"avatar": str(path), "springs": len(avatar.springs), "warnings": [str(w) for w in avatar.warnings]}
        return self._call(do, timeout=60.0)

    def set_hair(self, solver: str | None, params: dict) -> dict:
        def do():
            rig = self._make_rig(self.rig.avatar, solver or self.rig.solver, params)
            self.loop.set_rig(rig, self.loop.driver.last_time_ns)
            self.rig = rig
            return {"solver": rig.solver, "params": rig.hair_params}
        return self._call(do)

    def frame_png(self) -> bytes | None:
        if self._last_rgba is None:
            return None
        import io

        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(self._last_rgba, "RGBA").save(buf, format="PNG", compress_level=1)
        return buf.getvalue()

    def _swap_avatar(self, avatar: Avatar) -> None:
        rig = self._make_rig(avatar, self.rig.solver)  # ValueError (no head): refused, old avatar kept
        rig.warm_up()
        if self.compare:
            self._set_compare(False)
        self.loop.set_rig(rig, self.loop.driver.last_time_ns)
        self.rig = rig
        self.renderer.set_avatar(avatar)
        self.renderer.reframe(self._camera_options(), world=rig.world)

    def _drain_commands(self) -> None:
        while True:
            try:
                fn, fut = self._commands.get_nowait()
            except queue.Empty:
                return
            try:
                fut.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed back to the service thread
                fut.set_exception(exc)

    # ------------------------------------------------------------------ drawing
    def _camera_options(self):
        from render import CameraOptions

        return CameraOptions(framing=self.cfg.framing)

    def _draw(self, info: FrameInfo) -> None:
        from render import HudInfo, avatar_overlays

        r = self.renderer
        hud = None
        if self.hud:
            s = self.metrics
            lat = s.latency_ms.pct(50)
            extra = (("solver", self.rig.solver),)
            if lat is not None:
                extra += (("latency", f"{lat:.0f} ms p50, {s.latency_ms.pct(95):.0f} ms p95"),)
            hud = HudInfo(fps=s.fps(), tracker_latency_ms=s.tracker_ms.pct(50), substeps=info.substeps,
                          extra=extra)
        ov = avatar_overlays(self.rig.avatar, info.world) if self.overlays else None
        if self.compare and self._companion is not None:
            left = self._render_one(info.world, info.expressions, ov, hud)
            cw = self._companion.draw_pose(self.loop._draw_sample, info.alpha)
            ov2 = avatar_overlays(self._companion.avatar, cw) if self.overlays else None
            right = self._render_one(cw, info.expressions, ov2, None)
            rgba = np.ascontiguousarray(np.hstack([left, right]))
        else:
            rgba = self._render_one(info.world, info.expressions, ov, hud)
        self._last_rgba = rgba
        for s, name in zip(self.sinks, self._sink_names):
            try:
                s.send(rgba, info.t_ns)
            except Exception as exc:  # an output failed mid-run: stop with what and where
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise RunError(f"output {name} failed: {first}") from exc
        if self.on_frame is not None:
            self.on_frame(info, self.rig)

    def _render_one(self, world, expressions, overlays, hud) -> np.ndarray:
        self.renderer.draw(world, expressions, overlays=overlays, hud=hud)
        return self.renderer.read_rgba()

    def _set_compare(self, on: bool) -> None:
        w, h = self.size
        self.compare = on
        if on:
            other = "legacy" if self.rig.solver != "legacy" else "rest-shape"
            self._companion = self._make_rig(self.rig.avatar, other)
            self._companion.reset(self.loop._sample)
            self.loop.companions = [self._companion]
            self.renderer.resize((w // 2, h))
            self.say(f"compare: left {self.rig.solver}, right {other}")
        else:
            self.loop.companions = []
            self._companion = None
            self.renderer.resize((w, h))
        self.renderer.reframe(self._camera_options(), world=self.rig.world)

    # ------------------------------------------------------------------ keys
    def stop(self) -> None:
        """Ask the run to end after the current frame (thread-safe)."""
        self._stop.set()

    def handle_events(self) -> None:
        for ev in self.context.poll_events():
            if ev.kind == "close":
                self._stop.set()
            elif ev.kind == "key":
                self._key(ev.key)

    def _key(self, key: str) -> None:
        if key in ("q", "escape"):
            self._stop.set()
        elif key == "r":
            self.pose_input.recenter()
        elif key == "o" and not self.cfg.kiosk:
            self.overlays = not self.overlays
        elif key == "h" and not self.cfg.kiosk:
            self.hud = not self.hud
        elif key == "space":
            self.loop.paused = not self.loop.paused
        elif key == "s":
            nxt = SolverMode(self.rig.solver).next().value
            rig = self._make_rig(self.rig.avatar, nxt)
            self.loop.set_rig(rig, self.loop.driver.last_time_ns)
            self.rig = rig
            self.say(f"solver: {nxt}")
        elif key == "c":
            self._set_compare(not self.compare)
        elif key == "p" and self._last_rgba is not None:
            from render import snapshot

            self._screenshot_index += 1
            path = Path("out") / f"screenshot-{time.strftime('%Y%m%d-%H%M%S')}-{self._screenshot_index}.png"
            snapshot(path, self._last_rgba)
            self.say(f"screenshot: {path}")

    # ------------------------------------------------------------------ run
    def run(self) -> RunResult:
        cfg = self.cfg
        from render.platform import has_display

        outputs = parse_outputs(cfg.output) if cfg.output else default_outputs(has_display())
        self.size = cfg.size
        if needs_window(outputs) and not has_display():
            raise RunError("--output window needs a display (DISPLAY / WAYLAND_DISPLAY is not set); "
                           "use video:PATH.mp4, png:DIR or vcam instead")
        if not needs_window(outputs):
            os.environ.setdefault("SWAYCAM_GL", "egl")
        if cfg.background.strip().lower() == "transparent" and any(o.kind in ("video", "vcam") for o in outputs):
            self.say("note: mp4 and virtual cameras have no alpha; the transparent background shows as black "
                     "there (png:DIR keeps alpha, --background green gives a chroma key)")
        for note in check_writable(outputs):
            self.say(note)
        avatar = self._load_avatar(cfg.avatar)
        try:
            self.rig = self._make_rig(avatar, cfg.solver)
        except ValueError as exc:
            raise RunError(str(exc)) from None
        self.rig.warm_up()
        self._companion = None
        self.pose_input, live, duration_ns = open_pose_input(cfg, metrics=self.metrics)
        fps = cfg.fps or (60.0 if live else 30.0)
        result = RunResult(outputs=[f"{o.kind}:{o.target}" if o.target else o.kind for o in outputs])
        from render import Renderer, create_context

        self.context = create_context("window" if needs_window(outputs) else "egl", size=cfg.size,
                                      vsync=cfg.fps is None, fullscreen=cfg.kiosk)
        self.service = None
        try:
            self.renderer = Renderer(self.context, cfg.size)
            self.renderer.set_background(cfg.background)
            self.renderer.set_avatar(avatar)
            self.renderer.reframe(self._camera_options(), world=self.rig.world)
            if cfg.service:
                # bound now (a busy port fails before any output file is opened), served below
                from .service import ControlService

                try:
                    self.service = ControlService(self, port=cfg.port, avatar_dir=Path(cfg.avatar_dir)
                                                  if cfg.avatar_dir else None)
                except OSError as exc:
                    raise RunError(f"control service: cannot listen on 127.0.0.1:{cfg.port} ({exc.strerror}); "
                                   "choose another --port") from None
            self.sinks = open_sinks(outputs, context=self.context, renderer=self.renderer, fps=fps,
                                    size=cfg.size, live=live)
            self._sink_names = [f"{o.kind}:{o.target}" if o.target else o.kind for o in outputs]
            for o in outputs:
                if o.kind in ("video", "png"):
                    self.say(f"writing {o.kind} to {o.target}")
            # offline every substep runs (no debt is ever dropped); live, the cap keeps a stall from spiralling
            self.loop = Loop(self.rig, self.pose_input, max_substeps=cfg.max_substeps if live else 1_000_000,
                             metrics=self.metrics,
                             draw=self._draw)
            if self.service is not None:
                self.service.start()
                self.say(f"control service: http://127.0.0.1:{self.service.address[1]}/status")
            t_start = time.perf_counter()
            with _sigterm_as_interrupt() as sig:
                try:
                    if live:
                        self._run_live(fps, duration_ns, show_keys=needs_window(outputs))
                    else:
                        self._run_offline(fps, duration_ns)
                except KeyboardInterrupt:
                    result.interrupted = True
                    result.signal = sig.received or signal.SIGINT
            result.duration_s = time.perf_counter() - t_start
            tracked = getattr(self.pose_input, "frames", None)
            if tracked is not None:
                result.tracked_frames = int(tracked)
                result.face_frames = int(getattr(self.pose_input, "faces", 0))
        finally:
            if self.service is not None:
                self.service.close()
            for s in getattr(self, "sinks", []):
                try:
                    s.close()
                except Exception as exc:  # noqa: BLE001 - keep closing the others
                    log.debug("closing %s: %s", type(s).__name__, exc)
            close = getattr(self.pose_input, "close", None)
            if close is not None:
                close()
            if getattr(self, "renderer", None) is not None:
                self.renderer.release()
            self.context.release()
        result.frames = self.metrics.frames
        result.summary = self.metrics.summary()
        return result

    def _run_offline(self, fps: float, duration_ns: int) -> None:
        start = int(getattr(self.pose_input, "start_ns", 0))
        times = list(frame_times(fps, duration_ns, start_ns=start, include_end=False))
        n = len(times)
        for k, t in enumerate(times):
            if self._stop.is_set():
                break
            self._drain_commands()
            self.loop.frame(t)
            if sys.stderr.isatty() and (k % 10 == 0 or k == n - 1):
                print(f"\rrendering {k + 1}/{n} frames", end="", file=sys.stderr, flush=True)
        if sys.stderr.isatty():
            print(file=sys.stderr)

    def _run_live(self, fps: float, duration_ns: int | None, *, show_keys: bool = True) -> None:
        clock = MonotonicClock()
        start = getattr(self.pose_input, "start", None)
        if start is not None:
            start()
        frame_ns = int(1e9 / fps)
        t0 = clock.now_ns()
        next_t = t0
        kiosk = self.cfg.kiosk
        if show_keys:
            self.say(f"live: {KEY_HELP}" if not kiosk else "kiosk mode: q/esc quits")
        while not self._stop.is_set():
            t = clock.now_ns()
            if duration_ns is not None and t - t0 > duration_ns:
                break
            self._drain_commands()
            self.handle_events()
            if self._stop.is_set():
                break
            if kiosk and getattr(self.pose_input, "new_face", False):
                self.pose_input.new_face = False
                self.pose_input.recenter()
            latency_from = getattr(self.pose_input, "newest_capture_ns", None)
            self.loop.frame(t, latency_from_ns=latency_from)
            if getattr(self.pose_input, "finished", False) and duration_ns is None:
                err = getattr(self.pose_input, "error", None)
                if err is not None:
                    raise err
                break
            next_t += frame_ns
            if next_t < clock.now_ns():
                self.metrics.drop(frames=(clock.now_ns() - next_t) // frame_ns)
                next_t = clock.now_ns()
            clock.sleep_until(next_t)


class _sigterm_as_interrupt:
    """SIGTERM and SIGHUP (the terminal closed) behave like Ctrl-C during the run, so outputs
    are flushed and devices released; ``received`` remembers which signal it was (for the
    exit code, 128 + signal)."""

    SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s)

    def __enter__(self):
        self._old = {}
        self.received: int | None = None
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self._old[s] = signal.signal(s, self._handler)
        return self

    def _handler(self, signum, frame):
        self.received = signum
        raise KeyboardInterrupt

    def __exit__(self, *exc):
        for s, old in self._old.items():
            signal.signal(s, old)
        return False


__all__ = ["App", "RunError", "RunResult", "AvatarError"]
