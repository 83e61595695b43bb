"""Skinning matrices on the CPU, without OpenGL: ``M_j = world[joint_j] · IBM_j`` for every
skin joint and one matrix per rigid mesh instance (glTF 2.0 §3.7.3), one compiled call per
frame (numba, ``cache=True``, no NRT), no allocation.

:class:`render.skinning.JointPalette` uploads these; the solver bench times them as part of
the runtime's drawn frame (:mod:`runtime.eval.rig_bench`), which needs no GL context.
"""

from __future__ import annotations

import numpy as np
from numba import njit

import avatars.kernel_cache  # noqa: F401  registers the shared kernel cache before the decorators below
from avatars import Avatar


@njit(cache=True, _nrt=False)
def joint_matrices_kernel(world, nodes, ibm, out, rows):
    """out[j] = world[nodes[j]] @ ibm[j] (4x4, float64) and rows[j] = out[j][:3] (float32).

    Args:
        world: (N, 4, 4) node world matrices.
        nodes: (J,) int64 node of each matrix.
        ibm: (J, 4, 4) inverse bind matrices (identity for rigid instances).
        out: (J, 4, 4) float64.
        rows: (R, 3, 4) float32, R >= J: the top three rows, as uploaded.
    """
    for j in range(nodes.shape[0]):
        n = nodes[j]
        for r in range(4):
            w0, w1, w2, w3 = world[n, r, 0], world[n, r, 1], world[n, r, 2], world[n, r, 3]
            for c in range(4):
                v = w0 * ibm[j, 0, c] + w1 * ibm[j, 1, c] + w2 * ibm[j, 2, c] + w3 * ibm[j, 3, c]
                out[j, r, c] = v
                if r < 3:
                    rows[j, r, c] = v
    return 0


class JointMatrices:
    """The skinning matrices of one avatar (module doc).

    Attributes:
        skin_base: first matrix index of each skin.
        instance_base: first matrix index of each mesh instance (its skin's base, or its own
            rigid matrix).
        count: number of matrices (at least 1).
        nodes: (count,) int64 node of each matrix.
        current: (count, 4, 4) float64 matrices of the last :meth:`compute`.
        rows: (rows, 3, 4) float32 their top three rows (``rows`` >= count; pass ``pad_to``).
    """

    def __init__(self, avatar: Avatar, *, pad_to: int = 0):
        nodes, ibms = [], []
        self.skin_base: list[int] = []
        n = 0
        for skin in avatar.skins:
            self.skin_base.append(n)
            nodes.append(np.asarray(skin.joints, np.int64))
            ibms.append(np.asarray(skin.inverse_bind, np.float64).reshape(-1, 4, 4))
            n += len(skin.joints)
        self.instance_base: list[int] = []
        for mi in avatar.mesh_instances:
            if mi.skin >= 0:
                self.instance_base.append(self.skin_base[mi.skin])
            else:
                self.instance_base.append(n)
                nodes.append(np.array([mi.node], np.int64))
                ibms.append(np.eye(4)[None])
                n += 1
        self.count = max(n, 1)
        self.nodes = np.ascontiguousarray(np.concatenate(nodes) if nodes else np.zeros(1, np.int64))
        self._ibm = np.ascontiguousarray(np.concatenate(ibms) if ibms else np.eye(4)[None])
        self.current = np.empty((self.count, 4, 4))
        self.rows = np.zeros((max(pad_to, self.count), 3, 4), np.float32)

    def compute(self, world: np.ndarray) -> np.ndarray:
        """Matrices (count, 4, 4) for ``world`` (N, 4, 4) float64 C-contiguous; also fills
        :attr:`rows`. Returns :attr:`current` (reused by the next call)."""
        joint_matrices_kernel(world, self.nodes, self._ibm, self.current, self.rows)
        return self.current
