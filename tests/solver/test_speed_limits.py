"""Anchor speed limits (solver/kernels/inertia.py): the excess of a fast anchor motion over the
limits carries the chain rigidly, so the hair moves relative to its anchor as under an anchor
moving at the limit; below the limits nothing changes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from avatars.math3d import mat3_from_quat, quat_from_axis_angle
from solver.build_options import BuildOptions
from solver.chains import ChainSet
from solver.errors import SolverOptionError
from solver.params import SpringOverride
from tests.solver.conftest import H, run, yaw_ramp

from solver.eval.posing import SubtreePoser

#: equal to round-off: the two runs do the same arithmetic at different absolute positions (m)
ROUND_OFF_M = 1e-9
#: the hair must move measurably differently without the limit (m)
VISIBLE_M = 1e-3
STEPS = 120


def _translated(rest, offset):
    w = rest.copy()
    w[:, :3, 3] += offset
    return w


def _relative_tails_translating(avatar, speed, **options):
    """Tails relative to the translation after STEPS substeps of the whole body moving along +X
    at ``speed`` m/s from rest (a sudden start: the hardest case for the hair)."""
    cs = ChainSet.from_avatar(avatar, **options)
    rest = avatar.skeleton.rest_world
    cs.reset(rest)
    out = []
    for n in range(1, STEPS + 1):
        off = np.array([speed * n * H, 0.0, 0.0])
        cs.step(_translated(rest, off))
        out.append(cs.tails - off)
    return np.array(out)


def test_translation_beyond_the_limit_moves_the_hair_as_at_the_limit(generated_default):
    fast = _relative_tails_translating(generated_default, 3.0, speed_limit=1.0)
    at_limit = _relative_tails_translating(generated_default, 1.0, speed_limit=math.inf)
    unlimited = _relative_tails_translating(generated_default, 3.0, speed_limit=math.inf)
    assert np.abs(fast - at_limit).max() < ROUND_OFF_M
    assert np.abs(unlimited - at_limit).max() > VISIBLE_M


def _spin_relative(avatar, deg_s, **options):
    """Tails in the head's frame after STEPS substeps of the whole body spinning about the
    vertical through the head origin at ``deg_s`` (gravity off: it would not turn with the body)."""
    head = avatar.head_node()
    cs = ChainSet.from_avatar(avatar, overrides={"*": SpringOverride(g=(0.0, 0.0, 0.0))},
                              gravity_preload=False, **options)
    rest = avatar.skeleton.rest_world
    o = rest[head, :3, 3]
    cs.reset(rest)
    out = []
    for n in range(1, STEPS + 1):
        r = mat3_from_quat(quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), math.radians(deg_s) * n * H))
        m = np.eye(4)
        m[:3, :3] = r
        m[:3, 3] = o - r @ o
        w = np.einsum("ij,njk->nik", m, rest)
        cs.step(w)
        out.append((cs.tails - o) @ r)      # rᵀ (x − o), row vectors
    return np.array(out)


def test_spin_beyond_the_limit_moves_the_hair_as_at_the_limit(generated_default):
    fast = _spin_relative(generated_default, 900.0, rotation_speed_limit_deg=300.0, speed_limit=math.inf)
    at_limit = _spin_relative(generated_default, 300.0, rotation_speed_limit_deg=math.inf, speed_limit=math.inf)
    unlimited = _spin_relative(generated_default, 900.0, rotation_speed_limit_deg=math.inf, speed_limit=math.inf)
    assert np.abs(fast - at_limit).max() < ROUND_OFF_M
    assert np.abs(unlimited - at_limit).max() > VISIBLE_M


def test_below_the_limits_nothing_changes(generated_default):
    """The standard head turn's head neither travels nor turns faster than the defaults: the
    same bits as with the limits off."""
    head = generated_default.head_node()
    tails = []
    for opts in ({}, {"speed_limit": math.inf, "rotation_speed_limit_deg": math.inf}):
        cs = ChainSet.from_avatar(generated_default, **opts)
        poser = SubtreePoser(generated_default.skeleton, head)
        cs.reset(poser.rest)
        run(cs, poser, yaw_ramp(60.0, 0.5), 1.5)
        tails.append(cs.tails.copy())
    assert np.array_equal(tails[0], tails[1])


@pytest.mark.parametrize("field", ["speed_limit", "rotation_speed_limit_deg"])
@pytest.mark.parametrize("value", [0.0, -1.0, True, "fast"])
def test_bad_speed_limits_are_refused(field, value):
    with pytest.raises(SolverOptionError, match=field):
        BuildOptions(**{field: value})


def test_speed_limits_per_spring_pattern(generated_default):
    """{pattern: number}: the first matching pattern wins, unmatched springs keep the defaults;
    the chain rows carry the limits (model m/s, rad/s)."""
    from solver.build_options import ROTATION_SPEED_LIMIT_DEG, SPEED_LIMIT

    first = generated_default.springs[0].name
    cs = ChainSet.from_avatar(generated_default, speed_limit={first: 1.5, "*": 0.5},
                              rotation_speed_limit_deg={first: math.inf})
    kv = cs.sections["chains"]
    for k, name in enumerate(cs.chain_names):
        assert kv.speed_limit[k] == (1.5 if name == first else 0.5)
        assert kv.rotation_speed_limit[k] == (math.inf if name == first else math.radians(ROTATION_SPEED_LIMIT_DEG))
    plain = ChainSet.from_avatar(generated_default).sections["chains"]
    assert set(plain.speed_limit) == {SPEED_LIMIT}
    with pytest.raises(SolverOptionError, match="speed_limit of pattern 'Hair\\*'"):
        BuildOptions(speed_limit={"Hair*": 0.0})
