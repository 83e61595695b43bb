"""Compare mode's "both at rest" note (runtime/rest_note.py, issue 34 finding 9): shown only
once both sides' hair tips have been slower than REST_SPEED_MM_S for QUIET_S."""

from __future__ import annotations

import numpy as np
import pytest

from runtime.rest_note import NOTE, QUIET_S, REST_SPEED_MM_S, RestWatch, max_speed_mm_s


class _Chains:
    def __init__(self, tips):
        self.tails = np.asarray(tips, dtype=float)

    def tips(self):
        return np.arange(len(self.tails))


class _Rig:
    def __init__(self, tips):
        self.chains = _Chains(tips)


def test_max_speed_is_the_fastest_tip_in_mm_per_second():
    a = np.zeros((2, 3))
    b = np.array([[0, 0, 0.001], [0.002, 0, 0]])
    assert max_speed_mm_s(a, b, 0.5) == pytest.approx(4.0)
    assert max_speed_mm_s(np.zeros((0, 3)), np.zeros((0, 3)), 0.1) == 0.0
    with pytest.raises(ValueError, match="dt_s"):
        max_speed_mm_s(a, b, 0.0)
    with pytest.raises(ValueError, match="shape"):
        max_speed_mm_s(a, b[:1], 0.1)


def test_the_note_needs_both_sides_still_for_the_quiet_time():
    rig, comp = _Rig([[0, 0, 0]]), _Rig([[0, 0, 0]])
    w = RestWatch()
    dt = 1 / 30
    step = 0.5 * REST_SPEED_MM_S * dt * 1e-3       # half the bound: at rest
    t = 0.0
    for _ in range(int(QUIET_S / dt)):              # still, but not yet QUIET_S
        rig.chains.tails[0, 0] += step
        w.frame(rig, comp, t)
        t += dt
    assert w.text() is None
    for _ in range(3):
        w.frame(rig, comp, t)
        t += dt
    assert w.at_rest() and w.text() == NOTE
    comp.chains.tails[0, 1] += 3 * REST_SPEED_MM_S * dt * 1e-3    # the companion moves: no note
    w.frame(rig, comp, t)
    assert w.text() is None
    w.frame(rig, None, t + 2 * QUIET_S)            # compare mode off: reset
    assert w.text() is None


def test_a_new_rig_restarts_the_watch():
    rig, comp = _Rig([[0, 0, 0]]), _Rig([[0, 0, 0]])
    w = RestWatch()
    for i in range(40):
        w.frame(rig, comp, i / 30)
    assert w.text() == NOTE
    w.frame(_Rig([[1, 0, 0]]), comp, 40 / 30)      # a solver switch: other chains, not a 1 m jump
    assert w.text() is None
    w.frame(rig, _Rig([[0, 0, 0]]), 41 / 30)
    assert not w.at_rest()


def test_no_hair_gives_no_note():
    w = RestWatch()
    bald = _Rig([[0, 0, 0]])
    bald.chains = None
    for i in range(60):
        w.frame(bald, _Rig([[0, 0, 0]]), i / 30)
    assert w.text() is None
