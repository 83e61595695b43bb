"""``swaycam bench TARGET``: benchmarks (never timed tests). Medians and p95; noisy machine."""

from __future__ import annotations

import argparse
import importlib
import sys

TARGETS = {
    "solver": "solver.eval.bench",      # µs per substep / per 60 fps frame
    "render": "render.bench",      # ms per frame (draw, readback) per size
    "tracker": "runtime.cli.track",     # MediaPipe ms per frame (via bench-tracker)
    "loop": "runtime.loop_bench",       # offline × real time, live latency
}


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="benchmarks: solver, render, tracker, loop, or all",
                       description="Run a benchmark; options after the target go to it "
                       "(e.g. 'swaycam bench solver --json', 'swaycam bench render --size 640x360').")
    p.add_argument("target", choices=(*TARGETS, "all"))
    p.add_argument("rest", nargs=argparse.REMAINDER, help="options for the benchmark")
    p.set_defaults(func=run)


def _run_one(target: str, rest: list[str]) -> int:
    if target == "tracker":
        from runtime.cli import main as cli_main

        return cli_main(["bench-tracker", *rest])
    mod = importlib.import_module(TARGETS[target])
    if target == "solver":
        from runtime.rig_bench import posed_rig
        from solver.eval.head_turn import head_turn_rotation

        return int(mod.main(rest, motion=head_turn_rotation, rig=posed_rig) or 0)
    return int(mod.main(rest) or 0)


def run(args) -> int:
    from avatars import AvatarError
    from tracking.errors import TrackingError

    targets = list(TARGETS) if args.target == "all" else [args.target]
    rc = 0
    for t in targets:
        if len(targets) > 1:
            print(f"== {t}")
        try:
            rc |= _run_one(t, args.rest if len(targets) == 1 else [])
        except (AvatarError, TrackingError, ValueError, OSError, ZeroDivisionError, IndexError) as exc:
            print(f"swaycam bench {t}: {exc}", file=sys.stderr)
            rc |= 1
    return rc
