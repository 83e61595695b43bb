"""Animated world matrices for tests, calibration and benchmarks (numpy, no allocation per call).

The runtime has its own forward kinematics; this helper produces the same input for the
solver when only one bone moves: the rest pose with a world-space rotation applied to a
node's subtree about that node's origin. For the head that is exactly the standard head
turn of docs/design.md §4.5 ("the head's world rotation is R applied to its rest world rotation"),
with every hair joint at its rest local rotation. An optional root transform places (e.g.
scales or translates) the whole avatar.
"""

from __future__ import annotations

import numpy as np

from avatars import Skeleton
from avatars.math3d import mat3_from_quat


class SubtreePoser:
    """World matrices (N, 4, 4) with node ``node``'s subtree rotated by a world rotation.

    Args:
        skeleton: the avatar skeleton (rest pose).
        node: the node whose subtree turns (usually the humanoid head).
        root: optional (4, 4) transform applied to everything (avatar placement / scale).
    """

    def __init__(self, skeleton: Skeleton, node: int, *, root: np.ndarray | None = None):
        self.skeleton = skeleton
        self.node = int(node)
        rest = np.asarray(skeleton.rest_world, np.float64)
        self.root = np.eye(4) if root is None else np.asarray(root, np.float64)
        self._rest = np.ascontiguousarray(np.einsum("ij,njk->nik", self.root, rest))
        self.subtree = np.array(sorted(skeleton.descendants(self.node)), np.int64)
        self._sub_rest = self._rest[self.subtree].copy()
        self._pivot = self._rest[self.node, :3, 3].copy()
        self._m = np.eye(4)
        self._tmp = np.empty_like(self._sub_rest)

    @property
    def rest(self) -> np.ndarray:
        """(N, 4, 4) the placed rest pose (read it, do not modify)."""
        return self._rest

    def world(self, q_xyzw: np.ndarray, out: np.ndarray | None = None,
              offset: np.ndarray | None = None) -> np.ndarray:
        """World matrices with the subtree turned by the world rotation ``q_xyzw`` (4,) about
        the node's placed rest origin, optionally translated by ``offset`` (3,) metres.

        Args:
            q_xyzw: unit quaternion, relative to rest, world frame.
            out: (N, 4, 4) to write into (it must hold the placed rest pose outside the
                subtree, e.g. a previous output of this method or a copy of :attr:`rest`).
            offset: optional translation of the subtree (e.g. a head bob).
        """
        if out is None:
            out = self._rest.copy()
        r = mat3_from_quat(np.asarray(q_xyzw, np.float64))
        m = self._m
        m[:3, :3] = r
        m[:3, 3] = self._pivot - r @ self._pivot
        if offset is not None:
            m[:3, 3] += offset
        np.matmul(m, self._sub_rest, out=self._tmp)
        out[self.subtree] = self._tmp
        return out
