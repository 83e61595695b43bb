"""Frame-rate consistency (docs/design.md §2): the same pose track through the fixed-step driver at
24/30/60/120/144 fps and with jittered frame times gives bit-identical tails and velocities
at every common substep."""

from __future__ import annotations

import numpy as np
import pytest

from avatars.clips.head_turn import head_turn_rotation
from runtime.clock import NS_PER_S, FixedStepDriver
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser

T0 = 987_654_321_000
SECONDS = 3.0


def _replay(avatar, frame_times_ns, solver="rest-shape"):
    """Run the driver over the frame times; record (tails, velocities) per substep index."""
    cs = ChainSet.from_avatar(avatar, solver=solver)
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    w = poser.rest.copy()
    states = {}

    def step(t_ns: int) -> None:
        # the pose is sampled at the substep time, never at the frame time
        poser.world(head_turn_rotation((t_ns - T0) / NS_PER_S), out=w)
        cs.step(w)
        states[len(states) + 1] = (cs.tails.copy(), cs.velocities.copy())

    drv = FixedStepDriver(step, t0_ns=T0, max_substeps=16)
    for t in frame_times_ns:
        drv.advance(t)
        cs.apply(w.copy(), alpha=0.5)       # drawing must not disturb the physics
    assert drv.dropped_substeps == 0
    return states


def _frames(fps):
    return [T0 + (f * NS_PER_S) // fps for f in range(1, int(SECONDS * fps) + 1)]


def _jittered(seed):
    rng = np.random.default_rng(seed)
    t, out = T0, []
    while t < T0 + SECONDS * NS_PER_S:
        t += int(rng.uniform(0.001, 0.06) * NS_PER_S)
        out.append(t)
    return out


@pytest.mark.parametrize("solver", ["rest-shape", "vrm"])
def test_bit_identical_at_every_common_substep(godette, solver):
    reference = _replay(godette, _frames(120), solver)
    assert len(reference) == int(SECONDS * 120)
    runs = {f"{fps} fps": _frames(fps) for fps in (24, 30, 60, 144)}
    runs["jitter a"] = _jittered(1)
    runs["jitter b"] = _jittered(2)
    for label, frames in runs.items():
        states = _replay(godette, frames, solver)
        common = sorted(set(states) & set(reference))
        assert len(common) >= len(reference) - 12, label
        for n in common:
            x, v = states[n]
            xr, vr = reference[n]
            assert np.array_equal(x, xr), f"{label}: tails differ at substep {n}"
            assert np.array_equal(v, vr), f"{label}: velocities differ at substep {n}"
