"""Rest-shape solver (docs/design.md §4.1) on real avatars: roots, rest stability, tentacles, settling."""

from __future__ import annotations

import numpy as np
import pytest

from avatars.clips.head_turn import DURATION_S, head_turn_rotation
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser
from solver.eval.synthetic import branched_avatar
from solver.params import SpringOverride

from .conftest import run, yaw_ramp

REST_DRIFT_M = 1e-9          # issue 7: tails stay at rest within 1e-9 m over 10 s
CREEP_M = 1e-12              # no upward creep from stiffness
TENTACLE_M = 1e-3            # tips back on the rest arc within 1 mm
SETTLE_M = 1e-6              # < 0.001 mm between 30 Hz samples in the last 2 s
ROUNDING = 1e-12             # a few ulps of metre-sized coordinates
EARTH_G = (0.0, -9.81, 0.0)  # real gravity, m/s² (overrides the VRM-mapped value)

REAL = ["godette", "smoke", "smoke_collider"]
GENERATED = ["generated_default", "generated_layered"]
AVATARS = REAL + GENERATED
# (avatar, solver): the legacy solver has no gravity preload, so it only stays at rest where
# gravity is zero or along the links (the real avatars); see test_legacy_sags_under_gravity.
CASES = [(a, "rest-shape") for a in AVATARS] + [(a, "legacy") for a in REAL]


def _still(t):
    return np.array([0.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("name", AVATARS)
def test_roots_never_move_relative_to_their_attachment(name, request):
    av = request.getfixturevalue(name)
    cs = ChainSet.from_avatar(av)
    poser = SubtreePoser(av.skeleton, av.head_node())
    sk = av.skeleton
    w = poser.rest.copy()
    patched = np.empty_like(w)
    for n in range(1, 481):
        poser.world(head_turn_rotation(n / 120), out=w)
        cs.step(w)
        patched[:] = w
        cs.apply(patched)
        for k in range(cs.chain_count):
            first = cs.segment_nodes[np.nonzero(cs.segment_chain == k)[0][0]]
            parent = sk.parents[first]
            expected = (w[parent] @ sk.rest_local[first])[:3, 3]
            # exact: the root is read from the attachment, never integrated
            assert np.array_equal(patched[first, :3, 3], w[first, :3, 3])
            np.testing.assert_allclose(patched[first, :3, 3], expected, rtol=0, atol=ROUNDING)


def test_branch_roots_ride_on_their_simulated_parent():
    av = branched_avatar()
    cs = ChainSet.from_avatar(av)
    sk = av.skeleton
    poser = SubtreePoser(sk, 0)
    w = poser.rest.copy()
    patched = np.empty_like(w)
    b0 = sk.find("b0")
    a1 = sk.find("a1")
    assert cs.chain_names == ("A", "B")          # parents first
    moved = 0.0
    for n in range(1, 361):
        poser.world(head_turn_rotation(n / 120), out=w)
        cs.step(w)
        patched[:] = w
        cs.apply(patched)
        expected = (patched[a1] @ sk.rest_local[b0])[:3, 3]
        np.testing.assert_allclose(patched[b0, :3, 3], expected, rtol=0, atol=ROUNDING)
        moved = max(moved, float(np.linalg.norm(patched[b0, :3, 3] - w[b0, :3, 3])))
    assert moved > 1e-3   # the branch root really moved with the swinging parent


@pytest.mark.parametrize("name,solver", CASES)
def test_rest_stability(name, solver, request):
    av = request.getfixturevalue(name)
    cs = ChainSet.from_avatar(av, solver=solver)
    poser = SubtreePoser(av.skeleton, av.head_node())
    x0 = cs.tails.copy()
    w = poser.rest.copy()
    top = -np.inf
    for n in range(1, 1201):               # 10 s, head still
        cs.step(w)
        top = max(top, float((cs.tails[:, 1] - x0[:, 1]).max()))
    assert np.abs(cs.tails - x0).max() < REST_DRIFT_M
    assert np.abs(cs.velocities).max() < REST_DRIFT_M * 120
    assert top <= CREEP_M


@pytest.mark.parametrize("name", AVATARS)
def test_rest_stability_holds_under_real_gravity(name, request):
    """The rest-pose gravity preload keeps the authored arc the equilibrium of a still head."""
    av = request.getfixturevalue(name)
    cs = ChainSet.from_avatar(av, overrides=SpringOverride(g=EARTH_G))
    x0 = cs.tails.copy()
    w = av.skeleton.rest_world.copy()
    for _ in range(1200):
        cs.step(w)
    assert np.abs(cs.tails - x0).max() < REST_DRIFT_M


def _tentacle(av, solver, overrides=None, collisions=True):
    cs = ChainSet.from_avatar(av, solver=solver, overrides=overrides, collisions=collisions)
    poser = SubtreePoser(av.skeleton, av.head_node())
    w, _ = run(cs, poser, yaw_ramp(60.0, 0.3), 0.3 + 8.0)
    tips = cs.tips()
    return float(np.linalg.norm(cs.tails[tips] - cs.rest_arc_tails(w)[tips], axis=1).max())


@pytest.mark.parametrize("name", AVATARS)
def test_tentacle_rest_shape_tips_return_to_the_rest_arc(name, request):
    """After the turn the rest arc is carried 60° round; on the layered avatar that puts the
    long back strands into the shoulder colliders, which rightly hold them off it, so the
    shape is measured without colliders there (and with them on the real avatars)."""
    av = request.getfixturevalue(name)
    collide = name in REAL
    assert _tentacle(av, "rest-shape", collisions=collide) < TENTACLE_M
    assert _tentacle(av, "rest-shape", SpringOverride(g=EARTH_G), collisions=collide) < TENTACLE_M


@pytest.mark.parametrize("name", ["godette", "generated_default", "generated_layered"])
def test_tentacle_legacy_tips_curl_under_gravity(name, request):
    """Same parameters (VRM-mapped k, c; real gravity on Godette, whose file has none; the
    generated avatars' own gravity): the legacy solver takes each link's restoring direction
    from its already-sagging parent, the sag accumulates down the chain and the tips stay
    off the rest arc; the rest-shape tips are back on it."""
    av = request.getfixturevalue(name)
    ov = SpringOverride(g=EARTH_G) if name == "godette" else None
    rest_shape = _tentacle(av, "rest-shape", ov, collisions=False)
    legacy = _tentacle(av, "legacy", ov, collisions=False)
    print(f"\n{name}: tip off the rest arc after settling: rest-shape {rest_shape * 1e3:.2e} mm, "
          f"legacy {legacy * 1e3:.2f} mm")
    assert rest_shape < TENTACLE_M < legacy


@pytest.mark.parametrize("name,solver", CASES)
def test_settling_after_the_standard_head_turn(name, solver, request):
    av = request.getfixturevalue(name)
    cs = ChainSet.from_avatar(av, solver=solver)
    poser = SubtreePoser(av.skeleton, av.head_node())
    _, samples = run(cs, poser, head_turn_rotation, DURATION_S, sample_every=4)   # 30 Hz
    last = samples[-60:]                                                          # last 2 s
    tips = cs.tips()
    movement = np.linalg.norm(np.diff(last[:, tips], axis=0), axis=2).max()
    assert movement < SETTLE_M
