"""The 120 Hz path allocates nothing (docs/design.md §7): pose input sample -> head drive -> posing
-> ChainSet.step, measured with tracemalloc over 1,000 substeps of the standard head turn.

What is asserted, for each avatar:

- net growth: a snapshot diff before/after the 1,000 substeps, over every traced line except
  tracemalloc's own bookkeeping and the one line reading the totals, is exactly 0 bytes;
- transient peak: ``tracemalloc.reset_peak()`` just before the substeps and
  ``get_traced_memory()`` just after: peak − current is exactly 0 bytes, i.e. no substep
  ever holds one byte more than before it started (not even a Python int or a numpy view
  that is freed at once).

What makes that true: every per-substep piece is one compiled call (numba, no NRT) on
preallocated arrays; the Python between them only loads attributes and calls (CPython 3.11
creates no bound-method or frame objects for that). The sampled confidence (a float) and the
kernel's (confidence, found) tuple come from CPython's float and tuple free lists, which the
previous substep's objects refill: no allocator call. The harness itself allocates nothing
inside the measured window (the times are a prebuilt list, the iterator exists beforehand,
the bound methods are bound beforehand) — :func:`test_the_harness_sees_one_allocation`
proves the measurement is not blind.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from avatars import load_avatar
from avatars.constraint_avatar import build_constrained_avatar
from avatars.generate import default_avatar_path, layered_avatar_path
from runtime.pose_inputs import TrackInput, head_turn_track
from runtime.rig import AvatarRig
from tracking.pose_track import PoseSample

SUBSTEPS = 1000
WARM = 100


@pytest.fixture(scope="module", params=["godette", "default", "layered", "constrained"])
def avatar(request, godette_path):
    if request.param == "constrained":   # node constraints (roll, aim, rotation) on the substep path
        return load_avatar("constrained.vrm", data=build_constrained_avatar())
    path = {"godette": godette_path, "default": default_avatar_path(), "layered": layered_avatar_path()}
    return load_avatar(path[request.param])


def _read_memory() -> tuple[int, int]:
    return tracemalloc.get_traced_memory()   # its result (a tuple, two ints) is the harness's own


_READ_LINE = _read_memory.__code__.co_firstlineno + 1


def _measure(step, times: list[int]) -> tuple[int, int]:
    """(net growth, transient peak) in bytes of ``step(t)`` for every t of ``times``."""
    it = iter(times)              # created outside the window; exhausting it frees nothing
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        tracemalloc.reset_peak()
        for t in it:
            step(t)
        current, peak = _read_memory()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, __file__, _READ_LINE)]
    diff = after.filter_traces(ignore).compare_to(before.filter_traces(ignore), "traceback")
    grown = sum(st.size_diff for st in diff)
    return grown, peak - current


def _substep_fn(avatar):
    rig = AvatarRig(avatar)
    inp = TrackInput(head_turn_track())
    sample = PoseSample()
    sample_at, substep = inp.sample, rig.substep

    def step(t_ns: int) -> None:
        substep(sample_at(t_ns, sample))

    times = [n * 1_000_000_000 // 120 for n in range(WARM + SUBSTEPS)]
    rig.reset(inp.sample(0, sample))
    for t in times[:WARM]:           # compiled paths loaded, free lists warm
        step(t)
    return step, times[WARM:], rig


def test_substep_path_allocates_nothing(avatar):
    step, times, rig = _substep_fn(avatar)
    steps0 = rig.chains.steps
    grown, transient = _measure(step, times)
    assert rig.chains.steps - steps0 == SUBSTEPS
    assert grown == 0, f"{grown} bytes kept over {SUBSTEPS} substeps"
    assert transient == 0, f"a substep allocated {transient} bytes transiently"


def test_the_harness_sees_one_allocation(godette_path):
    """The same measurement of the same path plus one 8-byte numpy array per substep (freed
    at once) reports a transient peak: the zeros above are not a blind spot."""
    step, times, _ = _substep_fn(load_avatar(godette_path))
    keep = []

    def leaky(t):
        step(t)
        np.empty(1)

    def leaking(t):
        step(t)
        keep.append(t)

    assert _measure(leaky, times)[1] > 0
    assert _measure(leaking, times)[0] > 0


def test_draw_pose_allocates_nothing(avatar):
    """The drawn frame's pose too: sample at the draw time, whole-skeleton FK, hair applied."""
    _, times, rig = _substep_fn(avatar)
    inp = TrackInput(head_turn_track())
    sample = PoseSample()
    sample_at, draw_pose = inp.sample, rig.draw_pose

    def draw(t_ns: int) -> None:
        draw_pose(sample_at(t_ns, sample), 0.5)

    for t in times[:20]:
        draw(t)
    grown, transient = _measure(draw, times[:200])
    assert (grown, transient) == (0, 0)
