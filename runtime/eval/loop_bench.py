"""Loop benchmarks: offline processing speed (× real time) and live latency.

- offline: ``swaycam run`` on a file source, every frame tracked, simulated, drawn and
  encoded; speed = media duration / wall time (> 1 is faster than real time).
- live: the same file played in real time through the live path (tracking thread, newest
  frame wins, monotonic clock); capture -> output latency p50/p95 per rendered frame, render
  fps, tracker latency, drops.

Run it as ``swaycam bench loop`` (its options are declared in runtime/cli/bench.py).
"""

from __future__ import annotations

import tempfile
import time

from ..config import RunConfig
from ..session import run


def bench_offline(source: str, *, avatar: str | None = None, size=(1280, 720), fps: float = 25.0) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = RunConfig(source=source, avatar=avatar, size=size, fps=fps, output=(f"video:{tmp}/b.mp4",))
        t0 = time.perf_counter()
        res = run(cfg, say=lambda s: None)
        wall = time.perf_counter() - t0
    media_s = res.frames / fps
    return {"source": source, "size": f"{size[0]}x{size[1]}", "fps": fps, "frames": res.frames,
            "media_s": round(media_s, 3), "wall_s": round(wall, 3), "x_realtime": round(media_s / wall, 3),
            "ms_per_frame": round(1000 * wall / max(res.frames, 1), 2)}


def bench_live(source: str, *, avatar: str | None = None, size=(1280, 720), fps: float = 30.0) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        res = run(RunConfig(source=source, avatar=avatar, size=size, fps=fps, realtime=True,
                            output=(f"video:{tmp}/b.mp4",)), say=lambda s: None)
    return {"source": source, "size": f"{size[0]}x{size[1]}", "target_fps": fps, **res.summary}
