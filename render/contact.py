"""Uniforms of the per-vertex contact (:mod:`avatars.contact`, ``glsl/contact.glsl``) of an
uploaded avatar's mesh instances that have one (the try-on hair; no loaded avatar has any).

Per instance: the head envelope as an R32F texture (azimuth cells wide, elevation cells
high, read with texelFetch). Per frame (:meth:`ContactUniforms.update`, from the drawn world
matrices): the envelope frame matrices and the collider axes
(:func:`avatars.contact.contact_frame`). Meshes without contact cost one uniform per draw.
"""

from __future__ import annotations

import numpy as np
from ._gl import GL

from avatars import Avatar
from avatars.contact import MAX_COLLIDERS, contact_frame

from .gpu import Ledger, Texture, texture_empty
from .shaders import UNIT_CONTACT, Program


class ContactUniforms:
    """Envelope textures and per-frame contact inputs of one avatar."""

    def __init__(self, ledger: Ledger, avatar: Avatar):
        self.avatar = avatar
        self.textures: dict[int, Texture] = {}
        self._frames: dict[int, tuple] = {}
        for k, mi in enumerate(avatar.mesh_instances):
            c = mi.contact
            if c is None:
                continue
            if len(c.colliders) > MAX_COLLIDERS:
                raise ValueError(f"mesh instance {k}: {len(c.colliders)} contact colliders (at most {MAX_COLLIDERS})")
            if c.head >= 0:
                g = np.ascontiguousarray(c.grid, np.float32)
                self.textures[k] = texture_empty(ledger, g.shape[1], g.shape[0], GL.GL_R32F, GL.GL_RED, GL.GL_FLOAT,
                                                 data=g)
            self._frames[k] = ()

    def update(self, world: np.ndarray) -> None:
        """The contact inputs of every contact instance for node world matrices ``world``."""
        for k in self._frames:
            f = contact_frame(self.avatar, self.avatar.mesh_instances[k].contact, world)
            a = np.zeros((len(f.capsules), 4), np.float32)
            b = np.zeros((len(f.capsules), 4), np.float32)
            a[:, :3], a[:, 3], b[:, :3] = f.capsules[:, 0:3], f.capsules[:, 6], f.capsules[:, 3:6]
            env = None if f.to_env is None else (f.to_env.T.astype(np.float32).ravel(),
                                                 f.from_env.T.astype(np.float32).ravel())
            self._frames[k] = (a, b, env)

    def bind(self, prog: Program, instance: int) -> None:
        """Set ``prog``'s contact uniforms for a draw of mesh instance ``instance``."""
        fr = self._frames.get(instance)
        if not fr:
            prog.set_int("u_contact", 0)
            return
        a, b, env = fr
        prog.set_int("u_contact", 1)
        prog.set_int("u_contact_env", 0 if env is None else 1)
        if env is not None:
            self.textures[instance].bind(UNIT_CONTACT)
            GL.glBindSampler(UNIT_CONTACT, 0)
            GL.glUniformMatrix4fv(prog.loc("u_contact_to_env"), 1, GL.GL_FALSE, env[0])
            GL.glUniformMatrix4fv(prog.loc("u_contact_from_env"), 1, GL.GL_FALSE, env[1])
        prog.set_int("u_contact_count", len(a))
        if len(a):
            GL.glUniform4fv(prog.loc("u_contact_a[0]"), len(a), a)
            GL.glUniform4fv(prog.loc("u_contact_b[0]"), len(b), b)

    def release(self) -> None:
        for t in self.textures.values():
            t.release()
        self.textures.clear()
