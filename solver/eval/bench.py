"""Solver benchmark (``swaycam bench solver [--json]``): cost of one substep and of one 60 fps
frame (2 substeps), median and p95 in microseconds, per chain set.

Sets: Godette (the real VRM 0.x avatar, if the shared assets are present: :mod:`avatars.assets`), the generated
default and layered avatars (when the generator is available), and synthetic hair caps of 64, 256 and
1024 joints with 16 colliders (:func:`solver.eval.synthetic.hair_cap_avatar`). The head follows
``motion`` (t seconds -> xyzw rotation relative to rest; the runtime passes the standard
head turn of docs/design.md §4.5) so contact and motion are realistic. World matrices for every
substep are computed before timing: only :meth:`ChainSet.step` is timed, one call per
sample with ``time.perf_counter_ns`` (the timer's own cost, ~0.05-0.1 µs, is included).

With a ``rig`` factory (the runtime injects one: solver/ never imports runtime/), every set
the factory can drive (an avatar with a humanoid head) is also timed the way the runtime
runs it (:func:`bench_posed`): ``substep_with_pose_us`` (pose input sample at t_n, head
drive, posing of what the solver reads, kernel) and ``frame_60fps_with_pose_us`` (two of
those, then the draw pose: sample at the draw time, whole-skeleton FK, hair applied, and
the skinning matrices), with ``substep_with_pose_ratio``, the first's median over the
kernel-only substep median measured in the same process a few seconds earlier.

This is a measurement, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from avatars import Avatar
from avatars.assets import GODETTE, find_asset

from ..chains import ChainSet
from ..params import NS_PER_S, RATE_HZ
from avatars.clips.head_turn import head_turn_rotation
from .posing import SubtreePoser
from .synthetic import hair_cap_avatar

log = logging.getLogger(__name__)

Motion = Callable[[float], np.ndarray]


class PosedSubstep(Protocol):
    """The runtime's substep and drawn frame of one avatar, as :func:`bench_posed` times them.

    The head follows the runtime's own pose input (the standard head turn as a pose track),
    sampled at the times given (integer ns on the 120 Hz grid)."""

    def reset(self, t_ns: int) -> None:
        """Hair at rest under the pose at ``t_ns``."""

    def substep(self, t_ns: int) -> None:
        """Pose input sampled at t_ns, head drive, posing, one solver substep."""

    def draw(self, t_ns: int, alpha: float) -> None:
        """Pose input sampled at the draw time, whole-skeleton FK, hair interpolated by alpha
        and applied, skinning matrices."""


#: (avatar, solver) -> the runtime's substep for it, or None when it cannot drive that avatar
RigFactory = Callable[[Avatar, str], "PosedSubstep | None"]

#: Substeps of motion pre-posed and cycled through while timing (4 s at 120 Hz).
POSES = 480
SAMPLES = 4000


def default_sets() -> list[tuple[str, Callable[[], Avatar]]]:
    """(name, avatar factory) of the benchmark sets that exist on this machine."""
    sets: list[tuple[str, Callable[[], Avatar]]] = []
    godette = find_asset(*GODETTE)
    if godette is not None:
        from avatars import load_avatar
        sets.append(("godette", lambda: load_avatar(godette)))
    default, layered = _generated_factories()
    if default is not None:
        sets.append(("default", default))
    if layered is not None:
        sets.append(("layered", layered))
    for j in (64, 256, 1024):
        sets.append((f"synthetic-{j}", lambda j=j: hair_cap_avatar(j, colliders=16)))
    return sets


def _generated_factories() -> tuple[Callable[[], Avatar] | None, Callable[[], Avatar] | None]:
    """(default, layered) avatar factories of the generator, or (None, None) without it."""
    try:
        from avatars.generate import default_avatar_path, layered_avatar_path
    except ImportError:  # the generator is optional here
        return None, None
    from avatars import load_avatar
    return (lambda: load_avatar(default_avatar_path())), (lambda: load_avatar(layered_avatar_path()))


def _percentiles(ns: np.ndarray) -> dict:
    us = ns / 1000.0
    return {"median": float(np.median(us)), "p95": float(np.percentile(us, 95)), "min": float(us.min())}


def bench_avatar(avatar: Avatar, motion: Motion, *, samples: int = SAMPLES, solver: str = "rest-shape") -> dict:
    """Time one avatar: returns joints, colliders, collider refs and the substep / frame stats (µs)."""
    cs = ChainSet.from_avatar(avatar, solver=solver)
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    worlds = [poser.world(motion((n + 1) / RATE_HZ)).copy() for n in range(POSES)]
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


def bench_posed(posed: PosedSubstep, *, samples: int = SAMPLES) -> dict:
    """Time the runtime's substep and 60 fps frame (:class:`PosedSubstep`) over the first
    :data:`POSES` substeps of the head turn, cycled (like :func:`bench_avatar`).

    Returns {"substep_with_pose_us": stats, "frame_60fps_with_pose_us": stats} (µs). A frame
    is substeps t_n and t_n+1, then the draw at t_n + h/2 with alpha 0.5."""
    h_ns = NS_PER_S // RATE_HZ
    times = [(n + 1) * NS_PER_S // RATE_HZ for n in range(POSES)]
    for t in times[:8]:
        posed.substep(t)                 # compile / load the cached kernels
    posed.draw(times[7] - h_ns // 2, 0.5)   # between the last two substeps, as in a frame
    posed.reset(0)
    clock = time.perf_counter_ns
    substep, draw = posed.substep, posed.draw
    sub = np.empty(samples, np.int64)
    for i in range(samples):
        t = times[i % POSES]
        t0 = clock()
        substep(t)
        sub[i] = clock() - t0
    posed.reset(0)
    frames = np.empty(samples // 2, np.int64)
    for i in range(samples // 2):
        ta = times[(2 * i) % POSES]
        tb = times[(2 * i + 1) % POSES]
        td = tb - h_ns // 2
        t0 = clock()
        substep(ta)
        substep(tb)
        draw(td, 0.5)
        frames[i] = clock() - t0
    return {"substep_with_pose_us": _percentiles(sub), "frame_60fps_with_pose_us": _percentiles(frames)}


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
                     reference: bool = False, rig: RigFactory | None = None) -> dict:
    """Run the solver benchmark.

    Args:
        json_out: print the result as JSON (else a table) to ``stream`` (stdout).
        motion: head rotation relative to rest, t seconds -> (4,) xyzw; default: the standard
            head turn (:func:`avatars.clips.head_turn.head_turn_rotation`, docs/design.md §4.5).
        sets: (name, avatar factory) pairs; :func:`default_sets` when None.
        samples: timed substeps per set (frames: half as many).
        solver: "rest-shape", "legacy" or "vrm".
        reference: also time three-vrm 3.5.5 on each set right after ours
            (:func:`bench_threevrm`; needs Node.js and npm, see :mod:`solver.eval.reference`) and
            report our one-call frame as a ratio of three-vrm's frame: this machine is
            shared and its speed changes from minute to minute, a ratio measured seconds
            apart much less.
        rig: the runtime's substep for an avatar (:data:`RigFactory`); sets it can drive also
            get the keys of :func:`bench_posed` and ``substep_with_pose_ratio``.

    Returns:
        {"machine": ..., "solver": ..., "sets": {name: bench_avatar(...)}}.
    """
    import numba

    motion = motion or head_turn_rotation
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
        posed = rig(avatar, solver) if rig is not None else None
        if posed is not None:
            res.update(bench_posed(posed, samples=samples))
            res["substep_with_pose_ratio"] = res["substep_with_pose_us"]["median"] / res["substep_us"]["median"]
        if reference:
            ref = bench_threevrm(avatar, motion, frames=samples // 2)
            res["threevrm_frame_us"] = ref
            res["ratio_to_threevrm"] = res["frame_60fps_one_call_us"]["median"] / ref["median"]
        out["sets"][name] = res
        log.info("%s: %s", name, res)
    if stream is None:          # the caller prints (solver/ writes to no console of its own)
        return out
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
        posed = [(name, r) for name, r in out["sets"].items() if "substep_with_pose_us" in r]
        if posed:
            stream.write("\nwith the runtime's posing (pose input, head drive, posing; frame: + draw pose and "
                         "skinning matrices), µs: median / p95\n")
            stream.write(f"{'set':<16}{'substep':>18}{'vs kernel':>11}{'60 fps frame':>20}\n")
            for name, r in posed:
                s_, f_ = r["substep_with_pose_us"], r["frame_60fps_with_pose_us"]
                stream.write(f"{name:<16}{s_['median']:>9.2f} /{s_['p95']:>7.2f}{r['substep_with_pose_ratio']:>10.2f}x"
                             f"{f_['median']:>11.2f} /{f_['p95']:>7.2f}\n")
    return out
