"""Joint matrices for vertex-shader skinning, in a uniform buffer or a float texture.

Per frame, for every skin ``s`` and joint ``j``: ``M = world[skin.joints[j]] @ skin.inverse_bind[j]``
(glTF 2.0 §3.7.3: the mesh node's own transform is ignored for skinned meshes). Rigid
(unskinned) mesh instances get one matrix, their node's world matrix. The matrices are
affine, so each is stored as its top three rows (48 bytes).

Storage: a uniform block (``Joints``, binding :data:`render.shaders.JOINTS_BINDING`) when the
avatar's matrices fit in GL_MAX_UNIFORM_BLOCK_SIZE (1365 matrices at 64 KiB, 341 at the
16 KiB minimum), which llvmpipe reads ~40 % faster than texels; otherwise an RGBA32F
texture, 64 matrices (192 texels) per row, so skeletons of any size fit
(64 x GL_MAX_TEXTURE_SIZE matrices). VRoid avatars have a few hundred joints.
"""

from __future__ import annotations

import numpy as np
from ._gl import GL

from avatars import Avatar

from .gpu import Buffer, Ledger, Texture, texture_empty
from .joint_matrices import JointMatrices
from .shaders import JOINTS_BINDING, joint_capacity

MATRICES_PER_ROW = 64


class JointPalette:
    """The skinning texture of one avatar.

    Attributes:
        skin_base: first matrix index of each skin (len = number of skins).
        instance_base: first matrix index of each mesh instance (its skin's base, or its own
            rigid matrix).
        count: number of matrices.
        storage: "ubo" or "texture" (see module doc).
    """

    def __init__(self, ledger: Ledger, avatar: Avatar, *, storage: str = "auto"):
        self._jm = JointMatrices(avatar)
        self.skin_base: list[int] = self._jm.skin_base
        self.instance_base: list[int] = self._jm.instance_base
        self.count = self._jm.count
        if storage == "auto":
            storage = "ubo" if self.count <= joint_capacity() else "texture"
        if storage not in ("ubo", "texture"):
            raise ValueError(f"joint storage {storage!r}: expected auto, ubo or texture")
        if storage == "ubo" and self.count > joint_capacity():
            raise ValueError(f"{self.count} joint matrices do not fit a uniform block ({joint_capacity()})")
        self.storage = storage
        self.texture: Texture | None = None
        self.buffer: Buffer | None = None
        if storage == "texture":
            rows = (self.count + MATRICES_PER_ROW - 1) // MATRICES_PER_ROW
            self._jm = JointMatrices(avatar, pad_to=rows * MATRICES_PER_ROW)  # whole texture rows
            self.texture = texture_empty(ledger, 3 * MATRICES_PER_ROW, rows, GL.GL_RGBA32F, GL.GL_RGBA, GL.GL_FLOAT)
        else:
            # Allocated at the block's full declared size (drivers may reject smaller ranges).
            self.buffer = Buffer(ledger, GL.GL_UNIFORM_BUFFER, size=joint_capacity() * 48, usage=GL.GL_DYNAMIC_DRAW)
        self._rows = self._jm.rows    # (rows, 3, 4) float32, filled by every compute

    @property
    def current(self) -> np.ndarray:
        """The matrices (count, 4, 4) of the last :meth:`update` / :meth:`matrices` call."""
        return self._jm.current

    def matrices(self, world: np.ndarray) -> np.ndarray:
        """Skinning matrices (count, 4, 4) float64 for node world matrices ``world`` (N, 4, 4)
        (one compiled call, :mod:`render.joint_matrices`). The returned array is reused by the
        next call."""
        return self._jm.compute(world)

    def update(self, world: np.ndarray) -> None:
        """Compute and upload the matrices for ``world`` (N, 4, 4) float64 node world matrices."""
        self._jm.compute(world)
        if self.texture is not None:
            GL.glBindTexture(GL.GL_TEXTURE_2D, self.texture.id)
            GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 4)
            GL.glTexSubImage2D(GL.GL_TEXTURE_2D, 0, 0, 0, self.texture.width, self.texture.height, GL.GL_RGBA,
                               GL.GL_FLOAT, self._rows)
        else:
            self.buffer.update(self._rows)

    def bind(self, unit: int) -> None:
        """Bind the storage: the texture to ``unit``, or the buffer to the Joints block."""
        if self.texture is not None:
            self.texture.bind(unit)
            GL.glBindSampler(unit, 0)
        else:
            GL.glBindBufferBase(GL.GL_UNIFORM_BUFFER, JOINTS_BINDING, self.buffer.id)

    def release(self) -> None:
        for obj in (self.texture, self.buffer):
            if obj is not None:
                obj.release()
