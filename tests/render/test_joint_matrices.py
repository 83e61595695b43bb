"""CPU skinning matrices (render.joint_matrices), no GL context needed."""

from __future__ import annotations

import numpy as np

from avatars import load_avatar
from avatars.generate import layered_avatar_path
from render.joint_matrices import JointMatrices

#: float64 products in another order than numpy's matmul: rounding only
MATRIX_TOL = 1e-13


def test_matrices_are_world_times_inverse_bind(godette_path):
    for avatar in (load_avatar(godette_path), load_avatar(layered_avatar_path())):
        jm = JointMatrices(avatar, pad_to=200)
        rng = np.random.default_rng(2)
        world = np.array(avatar.skeleton.rest_world)
        world[:, :3, :] += rng.normal(scale=0.1, size=world[:, :3, :].shape)
        ibm = np.concatenate([s.inverse_bind for s in avatar.skins]
                             + [np.eye(4)[None] for mi in avatar.mesh_instances if mi.skin < 0])
        want = world[jm.nodes] @ ibm
        got = jm.compute(world)
        assert got.shape == (jm.count, 4, 4) and jm.rows.shape == (max(200, jm.count), 3, 4)
        assert np.abs(got - want).max() < MATRIX_TOL
        assert np.array_equal(jm.rows[:jm.count], got[:, :3, :].astype(np.float32))
        assert not jm.rows[jm.count:].any()
        for i, mi in enumerate(avatar.mesh_instances):
            base = jm.instance_base[i]
            assert base == (jm.skin_base[mi.skin] if mi.skin >= 0 else base)
