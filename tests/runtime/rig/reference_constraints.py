"""Reference node constraints for the rig tests: the VRMC_node_constraint 1.0 README's
pseudocode ("Example of Implementation") in numpy with avatars.math3d, evaluated in a given
order with whole-skeleton FK before every aim — an independent yardstick of the compiled
plan (different arithmetic, the spec's formulation rather than three-vrm's)."""

from __future__ import annotations

import numpy as np

from avatars import AimConstraint, RollConstraint, Skeleton
from avatars.math3d import (
    mat_compose, mat_decompose, quat_conj, quat_from_vecs, quat_mul, quat_slerp, vec_transform_quat,
)

IDENTITY_Q = np.array([0.0, 0.0, 0.0, 1.0])


def apply_constraints(sk: Skeleton, constraints, rot: np.ndarray, t: np.ndarray,
                      scale: np.ndarray | None = None) -> None:
    """Write each constraint's destination rotation into ``rot`` (N, 4), in the given order,
    from the current ``rot`` / ``t`` (N, 3) / ``scale`` (N, 3); rest rotations are the file's."""
    scale = sk.rest_scale if scale is None else scale
    for c in constraints:
        d = sk.rest_rotation[c.node]
        s0 = sk.rest_rotation[c.source]
        if isinstance(c, RollConstraint):
            delta = quat_mul(quat_conj(s0), rot[c.source])
            in_parent = quat_mul(s0, quat_mul(delta, quat_conj(s0)))
            in_dst = quat_mul(quat_conj(d), quat_mul(in_parent, d))
            to = vec_transform_quat(c.axis, in_dst)
            from_to = quat_from_vecs(c.axis, to / np.linalg.norm(to))
            target = quat_mul(d, quat_mul(quat_conj(from_to), in_dst))
        elif isinstance(c, AimConstraint):
            world = sk.world_matrices(mat_compose(t, rot, scale))
            parent = int(sk.parents[c.node])
            pq = mat_decompose(world[parent])[1] if parent >= 0 else IDENTITY_Q
            pw = world[parent] if parent >= 0 else np.eye(4)
            from_v = vec_transform_quat(c.axis, quat_mul(pq, d))
            to = world[c.source, :3, 3] - (pw @ np.append(t[c.node], 1.0))[:3]
            from_to = quat_from_vecs(from_v, to / np.linalg.norm(to))
            target = quat_mul(quat_conj(pq), quat_mul(from_to, quat_mul(pq, d)))
        else:
            target = quat_mul(d, quat_mul(quat_conj(s0), rot[c.source]))
        rot[c.node] = quat_slerp(d, target, c.weight)
