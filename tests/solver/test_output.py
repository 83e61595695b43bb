"""Output for skinning: local rotations, patched world matrices, interpolation."""

from __future__ import annotations

import numpy as np
import pytest

from avatars.clips.head_turn import head_turn_rotation
from avatars.math3d import mat3_from_quat, mat_compose
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser

from .conftest import run

ROUNDING = 1e-12


def _fk_with(sk, world_in, local_q, nodes):
    """Forward kinematics: ``world_in`` with ``nodes`` (and their subtrees) re-posed from
    their local rotations ``local_q`` (N, 4)."""
    w = world_in.copy()
    moved = set()
    for level in sk.levels:
        for n in level:
            p = sk.parents[n]
            if p >= 0 and (n in nodes or p in moved):
                loc = mat_compose(sk.rest_translation[n], local_q[n], sk.rest_scale[n])
                w[n] = w[p] @ loc
                moved.add(n)
    return w


@pytest.mark.parametrize("name", ["godette", "smoke"])
def test_local_rotations_and_apply_reproduce_the_tails(name, request):
    av = request.getfixturevalue(name)
    sk = av.skeleton
    cs = ChainSet.from_avatar(av)
    poser = SubtreePoser(sk, av.head_node())
    w, _ = run(cs, poser, head_turn_rotation, 1.3)
    q = sk.rest_rotation.copy()
    cs.write_local_rotations(w, q, alpha=1.0)
    nodes = set(cs.segment_nodes.tolist())
    fk = _fk_with(sk, w, q, nodes)
    patched = w.copy()
    cs.apply(patched, alpha=1.0)
    np.testing.assert_allclose(patched, fk, rtol=0, atol=ROUNDING)
    # every simulated joint's tail point lands on the simulated tail
    for i, n in enumerate(cs.segment_nodes):
        tloc = np.linalg.solve(sk.rest_world[n], np.append(cs._rest_tails[i], 1.0))[:3]
        np.testing.assert_allclose(patched[n, :3, :3] @ tloc + patched[n, :3, 3], cs.tails[i], rtol=0, atol=1e-10)
    # rotations are unit and only hair joints were written
    others = np.setdiff1d(np.arange(sk.node_count), cs.segment_nodes)
    np.testing.assert_array_equal(q[others], sk.rest_rotation[others])
    np.testing.assert_allclose(np.linalg.norm(q[cs.segment_nodes], axis=1), 1.0, atol=1e-12)
    # nodes that are not hair and not below hair are untouched by apply()
    below = {m for n in nodes for m in sk.descendants(n)}
    rest_nodes = [n for n in range(sk.node_count) if n not in below]
    np.testing.assert_array_equal(patched[rest_nodes], w[rest_nodes])


def test_rest_pose_output_is_the_rest_rotation(godette):
    cs = ChainSet.from_avatar(godette)
    w = godette.skeleton.rest_world.copy()
    cs.step(w)
    q = np.zeros((godette.skeleton.node_count, 4))
    cs.write_local_rotations(w, q)
    r = mat3_from_quat(q[cs.segment_nodes])
    r0 = mat3_from_quat(godette.skeleton.rest_rotation[cs.segment_nodes])
    np.testing.assert_allclose(r, r0, atol=1e-12)


def test_interpolation_between_the_last_two_substeps(godette):
    cs = ChainSet.from_avatar(godette)
    poser = SubtreePoser(godette.skeleton, godette.head_node())
    w, _ = run(cs, poser, head_turn_rotation, 0.5)
    np.testing.assert_array_equal(cs.interpolated_tails(0.0), cs.prev_tails)
    np.testing.assert_array_equal(cs.interpolated_tails(1.0), cs.tails)
    mid = cs.interpolated_tails(0.25)
    np.testing.assert_allclose(mid, 0.75 * cs.prev_tails + 0.25 * cs.tails, atol=ROUNDING)
    before = cs.tails.copy(), cs.velocities.copy(), cs.prev_tails.copy()
    cs.apply(w.copy(), alpha=0.3)
    cs.write_local_rotations(w, np.zeros((godette.skeleton.node_count, 4)), alpha=0.7)
    for a, b in zip(before, (cs.tails, cs.velocities, cs.prev_tails)):
        np.testing.assert_array_equal(a, b)   # drawing never changes the physics
