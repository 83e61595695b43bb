"""Joint matrices for vertex-shader skinning, stored in a float texture (no uniform limit).

Per frame, for every skin ``s`` and joint ``j``: ``M = world[skin.joints[j]] @ skin.inverse_bind[j]``
(glTF 2.0 §3.7.3: the mesh node's own transform is ignored for skinned meshes). Rigid
(unskinned) mesh instances get one matrix, their node's world matrix. All matrices of an
avatar go into one RGBA32F texture, 64 matrices per row, each matrix as four texels holding
its columns, so skeletons of any size fit (64 x GL_MAX_TEXTURE_SIZE matrices; VRoid
avatars have a few hundred joints).
"""

from __future__ import annotations

import numpy as np
from OpenGL import GL

from avatars import Avatar

from .gpu import Ledger, Texture, texture_empty

MATRICES_PER_ROW = 64


class JointPalette:
    """The skinning texture of one avatar.

    Attributes:
        skin_base: first matrix index of each skin (len = number of skins).
        instance_base: first matrix index of each mesh instance (its skin's base, or its own
            rigid matrix).
        count: number of matrices.
    """

    def __init__(self, ledger: Ledger, avatar: Avatar):
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
        self._nodes = np.concatenate(nodes) if nodes else np.zeros(1, np.int64)
        self._ibm = np.concatenate(ibms) if ibms else np.eye(4)[None]
        rows = (self.count + MATRICES_PER_ROW - 1) // MATRICES_PER_ROW
        self._world = np.empty((self.count, 4, 4))
        self._mats = np.empty((self.count, 4, 4))
        self._texels = np.zeros((rows * MATRICES_PER_ROW, 4, 4), np.float32)
        self.texture: Texture = texture_empty(ledger, 4 * MATRICES_PER_ROW, rows, GL.GL_RGBA32F, GL.GL_RGBA,
                                              GL.GL_FLOAT)

    @property
    def current(self) -> np.ndarray:
        """The matrices (count, 4, 4) of the last :meth:`update` / :meth:`matrices` call."""
        return self._mats

    def matrices(self, world: np.ndarray) -> np.ndarray:
        """Skinning matrices (count, 4, 4) float64 for node world matrices ``world`` (N, 4, 4).
        The returned array is reused by the next call."""
        np.take(world, self._nodes, axis=0, out=self._world)
        np.matmul(self._world, self._ibm, out=self._mats)
        return self._mats

    def update(self, world: np.ndarray) -> None:
        """Compute and upload the matrices for ``world`` (N, 4, 4) float64 node world matrices."""
        mats = self.matrices(world)
        # Texel c of matrix k holds column c: the transposed matrix, row-major.
        self._texels[: self.count] = mats.transpose(0, 2, 1)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self.texture.id)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 4)
        GL.glTexSubImage2D(GL.GL_TEXTURE_2D, 0, 0, 0, self.texture.width, self.texture.height, GL.GL_RGBA,
                           GL.GL_FLOAT, self._texels)

    def release(self) -> None:
        self.texture.release()
