"""Loop benchmarks: offline processing speed (× real time) and live latency.

- offline: ``swaycam run`` on a file source, every frame tracked, simulated, drawn and
  encoded; speed = media duration / wall time (> 1 is faster than real time).
- live: the same file played in real time through the live path (tracking thread, newest
  frame wins, monotonic clock); capture -> output latency p50/p95 per rendered frame, render
  fps, tracker latency, drops.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time

from avatars.assets import SELFIE_CLIP, asset_path

from .session import run
from .config import RunConfig, parse_size


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="swaycam bench loop", description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", help="a video file (default: the shared selfie clip)")
    ap.add_argument("--avatar", help="avatar file (default: the generated avatar)")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    src = args.source or str(asset_path(*SELFIE_CLIP))
    size = parse_size(args.size)
    out = {"offline": bench_offline(src, avatar=args.avatar, size=size),
           "live": bench_live(src, avatar=args.avatar, size=size)}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        o, lv = out["offline"], out["live"]
        print(f"offline  {o['size']}: {o['frames']} frames, {o['ms_per_frame']} ms/frame, "
              f"{o['x_realtime']}x real time")
        print(f"live     {lv['size']}: fps {lv['fps']}, latency p50 {lv['latency_ms_p50']} ms p95 "
              f"{lv['latency_ms_p95']} ms, tracker p50 {lv['tracker_ms_p50']} ms, dropped {lv['dropped_frames']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
