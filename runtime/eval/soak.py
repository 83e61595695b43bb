"""The soak run (``swaycam soak``, issue 16): a live run left going for a given time at a
small size while the avatar is reloaded, the solver switched, compare mode toggled and an
extra output opened and closed on a schedule; resident memory, live GL objects, open file
descriptors and threads are sampled over time.

The run is an ordinary :class:`runtime.session.Session` (headless EGL; the turn-test pose
track played in real time, then held; the generated idle on the body; a video output in a
temporary folder), with the schedule run between frames, where keys and service commands
run too:

- every ``reload_s``: the next avatar of ``avatars`` loaded and driven (:meth:`runtime.stage.Stage.swap_rig`,
  as ``POST /avatar`` does);
- every ``solver_s``: the next solver (as the ``s`` key);
- every ``compare_s``: compare mode on or off (as the ``c`` key);
- every ``output_s``: an extra video file opened, fed the drawn frames for ``output_open_s``,
  closed and deleted (as a recording started and stopped).

Before each sample a full garbage collection runs and the C heap's free pages are handed
back (:func:`trim_heap`), so RSS is memory in use, not garbage waiting for the collector.
Samples are taken while the extra output is closed (a video writer's pipe and reader thread
are not a leak) and ``settle_s`` after a reload (the swapped-out rig released, the new one's
companion and reduced meshes built), one more just before each reload (a visit's last
state: with the default schedule the periodic samples of a visit can all fall in one compare
state), and name the avatar shown and its *visit* (the reloads so far: each reload starts one). After ``warmup_s`` (compiled kernels loaded, every avatar,
solver and compare pane seen once), a healthy run keeps GL objects, file descriptors and
threads the same at every sample of the same avatar, and each avatar's resident memory flat
from visit to visit (:mod:`runtime.eval.soak_report`: the samples and the verdict).
"""

from __future__ import annotations

import gc
import logging
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from solver.modes import SOLVER_NAMES

from ..config import RunConfig
from ..session import Session
from .soak_report import RSS_GROWTH_LIMIT_MB, SETTLE_S, Sample, SoakOptions, SoakReport, rss_growth, visit_floors

__all__ = ["RSS_GROWTH_LIMIT_MB", "SETTLE_S", "Sample", "SoakOptions", "SoakReport", "rss_growth", "soak",
           "visit_floors"]

log = logging.getLogger(__name__)


def trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``; nothing
    elsewhere), so that RSS measures memory in use rather than the allocator's free lists:
    loading an avatar frees tens of MB in many arenas (one per thread), which glibc keeps."""
    global _libc
    if _libc is None:
        import ctypes

        try:
            _libc = ctypes.CDLL("libc.so.6")
            _libc.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _libc = False
    if _libc:
        _libc.malloc_trim(0)


_libc = None


def rss_mb() -> float:
    """Resident set size of this process, MB (/proc/self/status VmRSS)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) - 1      # minus the listing's own


def native_threads() -> int:
    """Threads of this process (Python's and native ones: MediaPipe, numba, ffmpeg readers)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return threading.active_count()


def _avatar_path(name: str) -> str:
    if name == "default":
        from avatars.generate import default_avatar_path

        return str(default_avatar_path())
    if name == "godette":
        from avatars.assets import assets_dir

        return str(assets_dir() / "vrm" / "Godette_vrm_v4.vrm")
    return name


class _SoakSession(Session):
    def __init__(self, cfg: RunConfig, options: SoakOptions, report: SoakReport, tmp: Path):
        super().__init__(cfg, say=lambda s: log.info("%s", s))
        self.opt, self.report, self.tmp = options, report, tmp
        self.t0 = None
        self.counts = {"reloads": 0, "solver_switches": 0, "compare_toggles": 0, "outputs_opened": 0}
        self._next = {}
        self._extra = None
        self._extra_until = 0.0
        self._avatar_index = 0
        self._reloaded_at = float("-inf")

    def _between_frames(self) -> None:
        super()._between_frames()
        now = time.monotonic()
        if self.t0 is None:
            self.t0 = now
            o = self.opt
            self._next = {"sample": now, "reload": now + o.reload_s, "solver": now + o.solver_s,
                          "compare": now + o.compare_s, "output": now + o.output_s}
        t = now - self.t0
        if now >= self._next["reload"]:
            if self._extra is None and now >= self._reloaded_at + self.opt.settle_s:
                self._sample(t)       # the visit's last state too (the periodic ones may all share one)
            self._next["reload"] += self.opt.reload_s
            self._reload()
        if now >= self._next["solver"]:
            self._next["solver"] += self.opt.solver_s
            names = list(SOLVER_NAMES)
            self.stage.switch_solver(names[(names.index(self.stage.rig.solver) + 1) % len(names)])
            self.counts["solver_switches"] += 1
        if now >= self._next["compare"]:
            self._next["compare"] += self.opt.compare_s
            self.stage.set_compare(not self.stage.compare)
            self.counts["compare_toggles"] += 1
        if self._extra is None and now >= self._next["output"]:
            self._next["output"] += self.opt.output_s
            self._open_extra(now)
        elif self._extra is not None and now >= self._extra_until:
            self._close_extra()
        # samples wait while the extra output is open and for settle_s after a reload
        settled = self._extra is None and now >= self._reloaded_at + self.opt.settle_s
        if now >= self._next["sample"] and settled:
            while self._next["sample"] <= now:
                self._next["sample"] += self.opt.sample_s
            self._sample(t)
        if t >= self.opt.duration_s and settled:
            self._sample(t)
            self.stop()

    def _reload(self) -> None:
        from avatars import load_avatar

        self._avatar_index = (self._avatar_index + 1) % len(self.opt.avatars)
        avatar = load_avatar(_avatar_path(self.opt.avatars[self._avatar_index]))
        rig = self.stage.make_rig(avatar, self.stage.rig.solver)
        rig.warm_up()
        self.stage.swap_rig(rig)
        self.counts["reloads"] += 1
        self._reloaded_at = time.monotonic()

    def _open_extra(self, now: float) -> None:
        from render.sinks import VideoFileSink

        self._extra = VideoFileSink(self.tmp / "extra.mp4", self.opt.fps, self.cfg.size)
        self._extra_until = now + self.opt.output_open_s
        self.counts["outputs_opened"] += 1

    def _close_extra(self) -> None:
        sink, self._extra = self._extra, None
        sink.close()
        (self.tmp / "extra.mp4").unlink(missing_ok=True)

    def _draw(self, info) -> None:
        super()._draw(info)
        if self._extra is not None:
            self._extra.send(self.drawer.read())

    def _sample(self, t: float) -> None:
        gc.collect()          # the swapped-out rig's cycles: freed now, not at the next full collection
        trim_heap()
        gl = sum(self.renderer.ledger.snapshot().values())
        self.report.samples.append(Sample(t_s=round(t, 2), frames=self.drawer.frames,
                                          avatar=self.opt.avatars[self._avatar_index], rss_mb=round(rss_mb(), 2),
                                          gl_objects=gl, fds=open_fds(), threads=native_threads(),
                                          compare=bool(self.stage.compare), **self.counts))

    def _exit(self, *exc) -> None:
        if self._extra is not None:
            self._close_extra()
        if getattr(self, "renderer", None) is not None:
            self.report.gl_by_kind = dict(self.renderer.ledger.snapshot())
        super()._exit(*exc)


def soak(options: SoakOptions = SoakOptions()) -> SoakReport:
    """Run the soak (module doc) and return its samples.

    Raises:
        RunError, AvatarError: the run could not start or an output failed.
    """
    report = SoakReport(options)
    tmp = Path(tempfile.mkdtemp(prefix="swaycam-soak-"))
    t = time.perf_counter()
    try:
        cfg = RunConfig(source="turn-test", realtime=True, output=(f"video:{tmp / 'run.mp4'}",), size=options.size,
                        fps=options.fps, duration=options.duration_s + 60.0, avatar=_avatar_path(options.avatars[0]))
        with _SoakSession(cfg, options, report, tmp) as session:
            session.run()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        report.seconds = time.perf_counter() - t
    return report
