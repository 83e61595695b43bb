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
back (:func:`trim_heap`), so RSS is memory in use, not garbage waiting for the collector. Samples are taken while the extra output is closed (a video writer's pipe and reader thread
are not a leak) and name the avatar shown: the two avatars have different GL objects and
memory, so "flat" is judged per avatar. After ``warmup_s`` (compiled kernels loaded, every
avatar, solver and compare pane seen once, the allocator's pools grown), a healthy run keeps
GL objects, file descriptors and threads the same at every sample of the same avatar, and
the resident memory of each avatar's samples within a small bound (:func:`SoakReport.check`).
"""

from __future__ import annotations

import gc
import logging
import os
import shutil
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from solver.modes import SOLVER_NAMES

from ..config import RunConfig
from ..session import Session

log = logging.getLogger(__name__)

#: RSS growth allowed after warm-up, MB (the issue's goal for the hour: < 5 MB).
RSS_GROWTH_LIMIT_MB = 5.0


@dataclass(frozen=True)
class SoakOptions:
    """What the soak does and for how long (seconds of wall time)."""

    duration_s: float = 120.0
    sample_s: float = 5.0
    warmup_s: float = 30.0
    size: tuple[int, int] = (160, 96)
    fps: float = 30.0
    avatars: tuple[str, ...] = ("default", "godette")
    reload_s: float = 15.0
    solver_s: float = 5.0
    compare_s: float = 9.0
    output_s: float = 11.0
    output_open_s: float = 3.0

    def __post_init__(self):
        for name in ("duration_s", "sample_s", "reload_s", "solver_s", "compare_s", "output_s", "output_open_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"soak {name}: must be > 0")
        if not 0 <= self.warmup_s < self.duration_s:
            raise ValueError("soak warmup_s: must be >= 0 and shorter than the duration")


@dataclass
class Sample:
    """One measurement: ``t_s`` seconds into the run."""

    t_s: float
    frames: int
    avatar: str
    rss_mb: float
    gl_objects: int
    fds: int
    threads: int
    reloads: int = 0
    solver_switches: int = 0
    compare_toggles: int = 0
    outputs_opened: int = 0


@dataclass
class SoakReport:
    options: SoakOptions
    samples: list[Sample] = field(default_factory=list)
    gl_by_kind: dict = field(default_factory=dict)     # at the end
    seconds: float = 0.0

    def after_warmup(self) -> list[Sample]:
        return [s for s in self.samples if s.t_s >= self.options.warmup_s]

    def figures(self) -> dict:
        """Over the samples after warm-up, per avatar: first/last/min/max of each measure;
        ``rss_growth_mb``: the largest last-minus-first RSS of one avatar's samples (MB)."""
        w = self.after_warmup()
        if not w:
            return {}
        out = {"samples": len(w), "frames": self.samples[-1].frames, "from_s": w[0].t_s, "to_s": w[-1].t_s,
               "by_avatar": {}}
        growth = []
        for name in sorted({s.avatar for s in w}):
            a = [s for s in w if s.avatar == name]
            d = out["by_avatar"][name] = {"samples": len(a)}
            for key in ("rss_mb", "gl_objects", "fds", "threads"):
                v = [getattr(s, key) for s in a]
                d[key] = {"first": v[0], "last": v[-1], "min": min(v), "max": max(v)}
            d["rss_growth_mb"] = round(a[-1].rss_mb - a[0].rss_mb, 2)
            if len(a) > 1:
                growth.append(d["rss_growth_mb"])
        out["rss_growth_mb"] = max(growth) if growth else 0.0
        last = self.samples[-1]
        out["events"] = {"reloads": last.reloads, "solver_switches": last.solver_switches,
                         "compare_toggles": last.compare_toggles, "outputs_opened": last.outputs_opened}
        return out

    def check(self, rss_growth_limit_mb: float = RSS_GROWTH_LIMIT_MB) -> list[str]:
        """What is not flat after warm-up (empty: healthy)."""
        f = self.figures()
        if not f:
            return ["no sample after the warm-up"]
        problems = []
        for name, d in f["by_avatar"].items():
            for key in ("gl_objects", "fds", "threads"):
                if d[key]["max"] != d[key]["min"]:
                    problems.append(f"{key} with {name}: {d[key]['first']} -> {d[key]['last']} "
                                    f"(range {d[key]['min']}..{d[key]['max']})")
        if sum(d["samples"] > 1 for d in f["by_avatar"].values()) == 0:
            problems.append("no avatar was sampled twice after the warm-up (run longer)")
        if f["rss_growth_mb"] > rss_growth_limit_mb:
            problems.append(f"RSS grew {f['rss_growth_mb']:.1f} MB after warm-up (limit {rss_growth_limit_mb:g} MB)")
        return problems

    def as_dict(self) -> dict:
        return {"options": asdict(self.options), "seconds": round(self.seconds, 1), "figures": self.figures(),
                "problems": self.check(), "gl_by_kind": self.gl_by_kind, "samples": [asdict(s) for s in self.samples]}

    def table(self) -> str:
        lines = ["| t (s) | frames | avatar | RSS (MB) | GL objects | FDs | threads | reloads | solvers | compare | "
                 "outputs |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for s in self.samples:
            lines.append(f"| {s.t_s:.0f} | {s.frames} | {s.avatar} | {s.rss_mb:.1f} | {s.gl_objects} | {s.fds} | "
                         f"{s.threads} | "
                         f"{s.reloads} | {s.solver_switches} | {s.compare_toggles} | {s.outputs_opened} |")
        f = self.figures()
        for name, d in (f.get("by_avatar") or {}).items():
            lines.append(f"after {self.options.warmup_s:g} s warm-up, {name} ({d['samples']} samples): RSS "
                         f"{d['rss_mb']['first']:.1f} -> {d['rss_mb']['last']:.1f} MB ({d['rss_growth_mb']:+.2f} MB), "
                         f"GL objects {d['gl_objects']['min']}..{d['gl_objects']['max']}, FDs "
                         f"{d['fds']['min']}..{d['fds']['max']}, threads {d['threads']['min']}..{d['threads']['max']}")
        problems = self.check()
        lines.append("healthy" if not problems else "NOT FLAT: " + "; ".join(problems))
        return "\n".join(lines)


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
        if now >= self._next["sample"] and self._extra is None:     # (deferred while the extra output is open)
            while self._next["sample"] <= now:
                self._next["sample"] += self.opt.sample_s
            self._sample(t)
        if t >= self.opt.duration_s and self._extra is None:
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
                                          gl_objects=gl, fds=open_fds(), threads=native_threads(), **self.counts))

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
