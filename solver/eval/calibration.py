"""Calibration of the VRM -> (k, c, g) mapping against the reference VRM Verlet at 60 fps.

The reference is this package's "vrm" mode (the three-vrm/UniVRM algorithm, checked against
a line-by-line transcription in tests/solver/test_vrm_mode.py) stepped once per 60 fps
frame with Δ = 1/60 s; the candidate is the rest-shape solver at 120 Hz with the mapped
parameters. Both replay the same head motion (sampled at their own step times) and are
compared at the common times, every 1/60 s: the error is the RMS over time and tails of the
tail distance, in metres (:func:`trajectory_rms`). :func:`fit_vrm_mapping` searches the
gains of :class:`solver.params.VrmMapping` that minimise the sum of squared RMS over a set
of avatars; its result is frozen in :data:`solver.params.DEFAULT_MAPPING`.

The head motion is a parameter: a callable t_seconds -> (4,) xyzw head rotation relative to
rest (solver/ does not import tracking/; pass ``avatars.clips.head_turn.head_turn_rotation``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from avatars import Avatar

from ..chains import ChainSet
from ..params import RATE_HZ, VrmMapping
from .posing import SubtreePoser

Motion = Callable[[float], np.ndarray]


@dataclass(frozen=True)
class CalibrationResult:
    """RMS trajectory errors (metres) of one mapping on one avatar.

    Attributes:
        rms: RMS over common 60 fps times and all tails of |x_ours − x_ref|.
        max: the largest such distance.
        scale: RMS of the reference's tail displacement from rest (how much there was to follow).
    """

    rms: float
    max: float
    scale: float


def _tracks(avatar: Avatar, motion: Motion, *, solver: str, substep: float, steps: int,
            every: int, mapping: VrmMapping, collisions: bool) -> np.ndarray:
    cs = ChainSet.from_avatar(avatar, solver=solver, substep=substep, mapping=mapping, collisions=collisions)
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    w = poser.rest.copy()
    out = np.empty((steps // every + 1, cs.segment_count, 3))
    out[0] = cs.tails
    for n in range(1, steps + 1):
        poser.world(motion(n * substep), out=w)
        cs.step(w)
        if n % every == 0:
            out[n // every] = cs.tails
    return out


def trajectory_rms(avatar: Avatar, motion: Motion, *, seconds: float = 12.0, mapping: VrmMapping,
                   ref_fps: int = 60, rate_hz: int = RATE_HZ, collisions: bool = False) -> CalibrationResult:
    """Compare the rest-shape solver at ``rate_hz`` with the VRM Verlet at ``ref_fps``.

    Args:
        avatar: an avatar with springs and a humanoid head.
        motion: head rotation relative to rest, t seconds -> (4,) xyzw.
        seconds: run length (the standard head turn is 12 s).
        mapping: the VRM -> (k, c, g) mapping under test.
        collisions: include colliders (off by default: the mapping is about the spring
            dynamics; the two contact models differ on purpose, docs/design.md §4.4).

    Returns:
        :class:`CalibrationResult` in metres.
    """
    if rate_hz % ref_fps:
        raise ValueError("rate_hz must be a multiple of ref_fps")
    frames = int(round(seconds * ref_fps))
    ref = _tracks(avatar, motion, solver="vrm", substep=1.0 / ref_fps, steps=frames, every=1, mapping=mapping,
                  collisions=collisions)
    ours = _tracks(avatar, motion, solver="rest-shape", substep=1.0 / rate_hz, steps=frames * (rate_hz // ref_fps),
                   every=rate_hz // ref_fps, mapping=mapping, collisions=collisions)
    d = np.linalg.norm(ours - ref, axis=2)
    scale = np.linalg.norm(ref - ref[0], axis=2)
    return CalibrationResult(float(np.sqrt(np.mean(d * d))), float(d.max()), float(np.sqrt(np.mean(scale * scale))))


def fit_vrm_mapping(avatars: Sequence[Avatar], motion: Motion, *, start: VrmMapping = VrmMapping(),
                    seconds: float = 12.0, rounds: int = 4) -> tuple[VrmMapping, float]:
    """Fit (k_gain, c_gain) by a shrinking coordinate search on the summed squared RMS.

    Gravity gain stays 1 (gravity is a plain per-frame velocity gain in both models). Slow
    (hundreds of runs): used offline to produce :data:`solver.params.DEFAULT_MAPPING`.

    Returns:
        (best mapping, its summed squared RMS in m²).
    """
    def cost(m: VrmMapping) -> float:
        return sum(trajectory_rms(a, motion, seconds=seconds, mapping=m).rms ** 2 for a in avatars)

    best = start
    best_cost = cost(best)
    step = 0.2
    for _ in range(rounds):
        improved = True
        while improved:
            improved = False
            for field in ("k_gain", "c_gain"):
                for sgn in (1.0, -1.0):
                    cand = replace(best, **{field: getattr(best, field) * (1.0 + sgn * step)})
                    c = cost(cand)
                    if c < best_cost:
                        best, best_cost, improved = cand, c, True
        step *= 0.4
    return best, best_cost
