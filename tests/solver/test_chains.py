"""Building the chain set from avatars/ data."""

from __future__ import annotations

import numpy as np
import pytest

from solver.chains import ChainSet
from solver.params import SpringOverride
from solver.eval.synthetic import branched_avatar, strand_avatar


def test_godette_chains(godette):
    cs = ChainSet.from_avatar(godette)
    assert cs.chain_count == 8 and cs.segment_count == 16       # 8 chains of 2 joints, virtual tails
    assert cs.collider_count == 4 and cs.report.collider_refs == 20
    assert set(cs.chain_anchor.tolist()) == {godette.humanoid["head"], godette.humanoid["chest"]}
    assert "torso capsule off" in cs.report.torso                # chest spheres cover the torso
    # the front strands overlap the head sphere in the authored rest pose (reported, allowed)
    assert {(c, n) for c, n, _, _ in cs.report.rest_overlaps} == {
        ("boneGroup0/FrontHair_R", 20), ("boneGroup0/FrontHair_L", 18)}
    # every mapped parameter is per second and finite
    assert np.all(np.isfinite(cs.stiffness)) and np.all(cs.stiffness > 0)
    assert np.all(cs.damping > 0) and np.all(cs.gravity == 0.0)


def test_vrm1_last_joint_has_no_segment(smoke):
    cs = ChainSet.from_avatar(smoke)
    joints = [j.node for j in smoke.springs[0].joints]
    assert cs.segment_count == 3
    assert cs.segment_nodes.tolist() == joints[:3]
    np.testing.assert_allclose(cs.rest_lengths, 0.05, atol=1e-7)


def test_torso_capsule_is_fitted_when_uncovered(smoke):
    cs = ChainSet.from_avatar(smoke, torso_capsule="auto")
    assert cs.collider_count == 1 and "torso capsule added" in cs.report.torso
    # the smoke chain hangs through the neck: it lies in the capsule at rest, so not for it
    assert cs.report.torso_chains == ()
    assert any("torso capsule" in n for n in cs.report.notes)
    assert ChainSet.from_avatar(smoke, torso_capsule="off").collider_count == 0


def test_overrides_and_options(godette):
    ov = {"boneGroup2/*": SpringOverride(k=123.0, c=4.0, g=(0.0, -9.81, 0.0), hit_radius=0.005)}
    cs = ChainSet.from_avatar(godette, overrides=ov)
    balls = np.array(["HairBall" in cs.chain_names[k] for k in cs.segment_chain])
    assert np.all(cs.stiffness[balls] == 123.0) and np.all(cs.damping[balls] == 4.0)
    assert np.all(cs.hit_radii[balls] == 0.005) and np.all(cs.gravity[balls, 1] == -9.81)
    assert np.all(cs.stiffness[~balls] != 123.0)
    with pytest.raises(ValueError):
        ChainSet.from_avatar(godette, solver="xpbd")
    with pytest.raises(ValueError):
        ChainSet.from_avatar(godette, torso_capsule="maybe")


def test_branch_order_and_anchor():
    av = branched_avatar()
    cs = ChainSet.from_avatar(av)
    assert cs.chain_names == ("A", "B")
    # B hangs from simulated a1; its anchor (rest arc frame) is the head
    assert cs.chain_anchor.tolist() == [0, 0]


def test_generated_avatars_build(generated_default, generated_layered):
    for av in (generated_default, generated_layered):
        cs = ChainSet.from_avatar(av)
        assert cs.segment_count == sum(len(s.joints) - 1 for s in av.springs)
        assert cs.collider_count >= len(av.colliders)


def test_state_starts_at_rest():
    av = strand_avatar([(0, 0, 0), (0, -0.1, 0), (0, -0.2, 0)])
    cs = ChainSet.from_avatar(av)
    np.testing.assert_allclose(cs.tails, [[0, -0.1, 0], [0, -0.2, 0]], atol=1e-15)
    assert np.all(cs.velocities == 0.0)


def test_fitted_torso_capsule_collides_with_the_chains_that_reach_it():
    from avatars.math3d import quat_from_axis_angle
    from solver.eval.posing import SubtreePoser
    from solver.eval.synthetic import hair_cap_avatar

    from .geometry import point_segment_distance, segment_distance

    av = hair_cap_avatar(64, colliders=1)                 # only the head sphere: torso uncovered
    cs = ChainSet.from_avatar(av, overrides=SpringOverride(g=(0.0, -9.81, 0.0)))
    assert "torso capsule added" in cs.report.torso and cs.collider_count == 2
    assert len(cs.report.torso_chains) > 0
    assert ChainSet.from_avatar(av, torso_capsule="off").collider_count == 1
    poser = SubtreePoser(av.skeleton, av.head_node())
    w = poser.rest.copy()
    touched = 0
    for n in range(1, 241):
        # the head tips back 34° and drops 6 cm: the back hair lands on the upper back
        a = min(n / 120, 1.0)
        poser.world(quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), -0.6 * a), out=w,
                    offset=np.array([0.0, -0.06 * a, 0.03 * a]))
        cs.step(w)
        if n % 4:
            continue
        a, b, r = cs.collider_world[1, :3], cs.collider_world[1, 3:6], cs.collider_world[1, 6]
        for i in range(cs.segment_count):
            if 1 not in cs.collider_refs(i):
                continue
            sp = cs.simulated_parents[i]
            root = cs.tails[sp] if sp >= 0 else w[cs.segment_nodes[i], :3, 3]
            if point_segment_distance(root, a, b) < r + cs.hit_radii[i]:
                continue
            d, _ = segment_distance(root, cs.tails[i], a, b, iters=60)
            assert d > r + cs.hit_radii[i] - 1e-6
            touched += d < r + cs.hit_radii[i] + 1e-4
    assert touched > 0                                     # the strands did reach the torso
