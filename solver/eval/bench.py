"""Solver benchmark (``swaycam bench solver [--json]``): cost of one substep and of one 60 fps
frame (2 substeps), median and p95 in microseconds, per chain set.

Sets: Godette (the real VRM 0.x avatar, if the shared assets are present: :mod:`avatars.assets`), the generated
layered avatar (when the generator is available), and synthetic hair caps of 64, 256 and
1024 joints with 16 colliders (:func:`solver.eval.synthetic.hair_cap_avatar`). The head follows
``motion`` (t seconds -> xyzw rotation relative to rest; the runtime passes the standard
head turn of DESIGN §4.5) so contact and motion are realistic. World matrices for every
substep are computed before timing: only :meth:`ChainSet.step` is timed, one call per
sample with ``time.perf_counter_ns`` (the timer's own cost, ~0.05-0.1 µs, is included).

This is a measurement, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from avatars import Avatar
from avatars.assets import GODETTE, find_asset

from ..chains import ChainSet
from .posing import SubtreePoser
from .synthetic import hair_cap_avatar

log = logging.getLogger(__name__)

Motion = Callable[[float], np.ndarray]

#: Substeps of motion pre-posed and cycled through while timing (4 s at 120 Hz).
POSES = 480
SAMPLES = 4000


def default_motion(t: float) -> np.ndarray:
    """Fallback head motion when none is passed: yaw 60°·sin(2π·0.5 t), pitch 15°·sin(2π·0.7 t)."""
    yaw = math.radians(60.0) * math.sin(math.pi * t)
    pitch = math.radians(15.0) * math.sin(2 * math.pi * 0.7 * t)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    return np.array([cy * sp, sy * cp, -sy * sp, cy * cp])


def default_sets() -> list[tuple[str, Callable[[], Avatar]]]:
    """(name, avatar factory) of the benchmark sets that exist on this machine."""
    sets: list[tuple[str, Callable[[], Avatar]]] = []
    godette = find_asset(*GODETTE)
    if godette is not None:
        from avatars import load_avatar
        sets.append(("godette", lambda: load_avatar(godette)))
    layered = _layered_factory()
    if layered is not None:
        sets.append(("layered", layered))
    for j in (64, 256, 1024):
        sets.append((f"synthetic-{j}", lambda j=j: hair_cap_avatar(j, colliders=16)))
    return sets


def _layered_factory() -> Callable[[], Avatar] | None:
    try:
        from avatars.generate import layered_avatar_path
    except ImportError:  # the generator is optional here
        return None
    from avatars import load_avatar
    return lambda: load_avatar(layered_avatar_path())


def _percentiles(ns: np.ndarray) -> dict:
    us = ns / 1000.0
    return {"median": float(np.median(us)), "p95": float(np.percentile(us, 95)), "min": float(us.min())}


def bench_avatar(avatar: Avatar, motion: Motion, *, samples: int = SAMPLES, solver: str = "rest-shape") -> dict:
    """Time one avatar: returns joints, colliders, collider refs and the substep / frame stats (µs)."""
    cs = ChainSet.from_avatar(avatar, solver=solver)
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    worlds = [poser.world(motion((n + 1) / 120.0)).copy() for n in range(POSES)]
    for w in worlds[:8]:
        cs.step(w)                       # compile / load the cached kernels
    cs.reset(worlds[0])
    step = cs.step
    clock = time.perf_counter_ns
    sub = np.empty(samples, np.int64)
    for i in range(samples):
        w = worlds[i % POSES]
        t0 = clock()
        step(w)
        sub[i] = clock() - t0
    cs.reset(worlds[0])
    frames = np.empty(samples // 2, np.int64)
    for i in range(samples // 2):
        w0 = worlds[(2 * i) % POSES]
        w1 = worlds[(2 * i + 1) % POSES]
        t0 = clock()
        step(w0)
        step(w1)
        frames[i] = clock() - t0
    # the same frames as one compiled call (step_many on a preallocated (2, N, 4, 4) buffer)
    cs.reset(worlds[0])
    buf = np.empty((2,) + worlds[0].shape)
    step_many = cs.step_many
    batched = np.empty(samples // 2, np.int64)
    for i in range(samples // 2):
        buf[0] = worlds[(2 * i) % POSES]
        buf[1] = worlds[(2 * i + 1) % POSES]
        t0 = clock()
        step_many(buf)
        batched[i] = clock() - t0
    return {
        "joints": cs.segment_count,
        "chains": cs.chain_count,
        "colliders": cs.collider_count,
        "collider_refs": cs.report.collider_refs,
        "substep_us": _percentiles(sub),
        "frame_60fps_us": _percentiles(frames),
        "frame_60fps_one_call_us": _percentiles(batched),
        "per_joint_frame_us": float(np.median(frames)) / 1000.0 / max(cs.segment_count, 1),
    }


#: three-vrm frames run before the timed ones (V8 compiles the update in the first hundreds)
REFERENCE_WARMUP = 500


def bench_threevrm(avatar: Avatar, motion: Motion, *, frames: int) -> dict:
    """three-vrm 3.5.5's ``VRMSpringBoneManager.update`` on the same avatar and motion, one
    Verlet step per 60 fps frame (:func:`solver.eval.reference.run_threevrm`): frame stats (µs)
    after :data:`REFERENCE_WARMUP` untimed frames."""
    from .reference import run_threevrm

    r = run_threevrm(avatar, motion, frames=REFERENCE_WARMUP + frames, rate_hz=60.0)
    return _percentiles(r["frame_ns"][REFERENCE_WARMUP:].astype(np.float64))


def run_solver_bench(*, json_out: bool = False, motion: Motion | None = None,
                     sets: Sequence[tuple[str, Callable[[], Avatar]]] | None = None,
                     samples: int = SAMPLES, solver: str = "rest-shape", stream=None,
                     reference: bool = False) -> dict:
    """Run the solver benchmark.

    Args:
        json_out: print the result as JSON (else a table) to ``stream`` (stdout).
        motion: head rotation relative to rest, t seconds -> (4,) xyzw; the runtime passes
            ``solver.eval.head_turn.head_turn_rotation``. Defaults to :func:`default_motion`.
        sets: (name, avatar factory) pairs; :func:`default_sets` when None.
        samples: timed substeps per set (frames: half as many).
        solver: "rest-shape", "legacy" or "vrm".
        reference: also time three-vrm 3.5.5 on each set right after ours
            (:func:`bench_threevrm`; needs Node.js and npm, see :mod:`solver.eval.reference`) and
            report our one-call frame as a ratio of three-vrm's frame: this machine is
            shared and its speed changes from minute to minute, a ratio measured seconds
            apart much less.

    Returns:
        {"machine": ..., "solver": ..., "sets": {name: bench_avatar(...)}}.
    """
    import numba

    motion = motion or default_motion
    out = {
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
                    "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "solver": solver,
        "unit": "microseconds",
        "sets": {},
    }
    for name, factory in (default_sets() if sets is None else sets):
        avatar = factory()
        res = bench_avatar(avatar, motion, samples=samples, solver=solver)
        if reference:
            ref = bench_threevrm(avatar, motion, frames=samples // 2)
            res["threevrm_frame_us"] = ref
            res["ratio_to_threevrm"] = res["frame_60fps_one_call_us"]["median"] / ref["median"]
        out["sets"][name] = res
        log.info("%s: %s", name, res)
    stream = stream or sys.stdout
    if json_out:
        json.dump(out, stream, indent=2)
        stream.write("\n")
    else:
        stream.write(f"solver bench ({solver}), µs: median / p95\n")
        stream.write(f"{'set':<16}{'joints':>7}{'coll':>6}{'substep':>18}{'60 fps frame':>20}"
                     f"{'frame, 1 call':>20}{'µs/joint':>10}"
                     + (f"{'three-vrm frame':>20}{'ours/three-vrm':>16}" if reference else "") + "\n")
        for name, r in out["sets"].items():
            s, f, b = r["substep_us"], r["frame_60fps_us"], r["frame_60fps_one_call_us"]
            line = (f"{name:<16}{r['joints']:>7}{r['colliders']:>6}{s['median']:>9.2f} /{s['p95']:>7.2f}"
                    f"{f['median']:>11.2f} /{f['p95']:>7.2f}{b['median']:>11.2f} /{b['p95']:>7.2f}"
                    f"{r['per_joint_frame_us']:>10.3f}")
            if reference:
                t = r["threevrm_frame_us"]
                line += f"{t['median']:>11.2f} /{t['p95']:>7.2f}{r['ratio_to_threevrm']:>16.3f}"
            stream.write(line + "\n")
    return out
