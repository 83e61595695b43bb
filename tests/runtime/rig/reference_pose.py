"""Reference posing for the rig tests: the start-of-issue-13 numpy path (head drive with
numpy quaternion ops, local matrices by mat_compose, whole-skeleton FK level by level),
kept here as the independent yardstick of the compiled path."""

from __future__ import annotations

import numpy as np

from avatars import Avatar
from avatars.math3d import mat_compose, mat_decompose, quat_conj, quat_mul, quat_slerp, vec_transform_quat

IDENTITY_Q = np.array([0.0, 0.0, 0.0, 1.0])


class NumpyHeadDrive:
    """The head drive's formulas (module doc of :mod:`runtime.rig.drive`) in numpy."""

    def __init__(self, avatar: Avatar, neck_share=0.35, lean_share=0.5, max_lean=0.08):
        sk = avatar.skeleton
        self.share, self.lean_share, self.max_lean = neck_share, lean_share, max_lean
        self.head = avatar.humanoid["head"]
        self.neck = avatar.humanoid.get("neck", -1)
        if self.neck >= 0 and int(sk.parents[self.head]) != self.neck:
            self.neck = -1
        self.hips = avatar.humanoid.get("hips", -1)
        rest_rot = mat_decompose(sk.rest_world)[1]
        self.r0_head = rest_rot[self.head]
        self.r0_neck = rest_rot[self.neck] if self.neck >= 0 else None
        p = int(sk.parents[self.neck if self.neck >= 0 else self.head])
        self.r0_parent = rest_rot[p] if p >= 0 else IDENTITY_Q
        self.rest_hips_t = sk.rest_translation[self.hips].copy() if self.hips >= 0 else None
        hp = int(sk.parents[self.hips]) if self.hips >= 0 else -1
        self.hips_parent_rot = rest_rot[hp] if hp >= 0 else IDENTITY_Q

    def apply(self, q, translation, local_rot, local_t):
        if self.neck >= 0:
            d_neck = quat_slerp(IDENTITY_Q, q, self.share)
            w_neck = quat_mul(d_neck, self.r0_neck)
            local_rot[self.neck] = quat_mul(quat_conj(self.r0_parent), w_neck)
            local_rot[self.head] = quat_mul(quat_conj(w_neck), quat_mul(q, self.r0_head))
        else:
            local_rot[self.head] = quat_mul(quat_conj(self.r0_parent), quat_mul(q, self.r0_head))
        if self.rest_hips_t is not None:
            if translation is None:
                local_t[self.hips] = self.rest_hips_t
            else:
                lean = np.clip(np.asarray(translation) * self.lean_share, -self.max_lean, self.max_lean)
                local_t[self.hips] = self.rest_hips_t + vec_transform_quat(lean, quat_conj(self.hips_parent_rot))


def reference_world(avatar: Avatar, drive: NumpyHeadDrive, static_rotations: dict, q, translation) -> np.ndarray:
    """(N, 4, 4) whole-skeleton FK with the drive applied and the static rotations set."""
    sk = avatar.skeleton
    rot = np.array(sk.rest_rotation)
    t = np.array(sk.rest_translation)
    for n, r in static_rotations.items():
        rot[n] = r
    drive.apply(np.asarray(q, np.float64), translation, rot, t)
    return sk.world_matrices(mat_compose(t, rot, sk.rest_scale))
