"""An avatar's GPU upload spread over frames (issue 34 finding 6: alternating ``POST /avatar``
dropped frames because Godette's textures and mipmaps, 6-44 ms on llvmpipe, were uploaded
on the render thread between two frames).

:class:`AvatarUpload` runs :func:`render.upload.avatar_upload_steps` (the material table,
each texture in row bands and one mipmap level at a time, the joint palette, each
primitive's buffers) and then links the shader programs it will draw with, one per step,
a few milliseconds of work per :meth:`~AvatarUpload.step` call, while the previous avatar is
still drawn; :meth:`render.Renderer.set_avatar` then swaps the finished one in at once. The
result is the same as :func:`render.upload.upload_avatar`'s (tests/render/test_staged_upload.py
compares every texel of every mipmap level and the rendered frames).

Every call needs the renderer's context current (the render thread).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from avatars import Avatar

from .gpu import Ledger
from .upload import GpuAvatar, avatar_upload_steps

#: Work (s) one :meth:`AvatarUpload.step` starts pieces within by default: a piece started
#: before it is over is finished (the largest, a 1024² texture's first mipmap level, takes
#: about 5 ms on llvmpipe).
STEP_BUDGET_S = 0.004

#: A piece reading at least this many texels (a mipmap level from 512² up) starts a step of
#: its own, so one step is never a heavy piece on top of the budget.
HEAVY_TEXELS = 1 << 18


class AvatarUpload:
    """An upload of ``avatar`` in steps (see the module). ``link``: called with the finished
    :class:`GpuAvatar`, returns callables that each link one shader program (the renderer's
    :meth:`render.passes.MeshPass.link_steps`), run in later steps; None: no linking.

    Attributes:
        avatar: the avatar uploaded.
        steps: :meth:`step` calls made so far; pieces: pieces of work done so far.
    """

    def __init__(self, ledger: Ledger, avatar: Avatar, *, force_mipmaps: bool = True, joint_storage: str = "auto",
                 detail: Mapping[tuple[int, int], np.ndarray] | None = None, link=None):
        self.avatar = avatar
        self._made: list = []
        self._steps = avatar_upload_steps(ledger, avatar, self._made, force_mipmaps=force_mipmaps,
                                          joint_storage=joint_storage, detail=detail, staged=True)
        self._link = link
        self._links: list | None = None
        self._gpu: GpuAvatar | None = None
        self._taken = self._cancelled = False
        self._next_cost = 0               # texels the next piece reads (0: unknown, light)
        self.steps = self.pieces = 0

    @property
    def done(self) -> bool:
        """Every piece uploaded and every program linked: :meth:`take` may be called."""
        return self._gpu is not None and not self._links

    def step(self, budget_s: float = STEP_BUDGET_S) -> bool:
        """Do pieces of the upload until ``budget_s`` seconds have gone (at least one piece).
        Returns :attr:`done`. Raises RuntimeError once cancelled or taken."""
        if self._cancelled or self._taken:
            raise RuntimeError("this avatar upload was cancelled or already taken")
        self.steps += 1
        t0 = time.perf_counter()
        while not self.done:
            self._piece()
            self.pieces += 1
            if time.perf_counter() - t0 >= budget_s or self._next_cost >= HEAVY_TEXELS:
                break
        return self.done

    def _piece(self) -> None:
        if self._gpu is None:
            try:
                cost = next(self._steps)
                self._next_cost = cost if isinstance(cost, int) else 0
            except StopIteration as finished:
                self._gpu = finished.value
                self._links = list(self._link(self._gpu)) if self._link is not None else []
            return
        self._links.pop(0)()

    def finish(self) -> GpuAvatar:
        """Do the rest at once and :meth:`take` the result."""
        while not self.step(float("inf")):
            pass
        return self.take()

    def take(self) -> GpuAvatar:
        """The finished :class:`GpuAvatar`, now the caller's to release. Raises RuntimeError
        before :attr:`done`, or once cancelled or taken."""
        if not self.done or self._cancelled or self._taken:
            raise RuntimeError("this avatar upload is not finished, was cancelled or already taken")
        self._taken = True
        return self._gpu

    def cancel(self) -> None:
        """Free every GL object made so far (unless taken). Idempotent."""
        if self._taken or self._cancelled:
            return
        self._cancelled = True
        self._steps.close()
        if self._gpu is not None:
            self._gpu.release()
        else:
            for obj in reversed(self._made):
                obj.release()
        self._made.clear()


__all__ = ["AvatarUpload", "HEAVY_TEXELS", "STEP_BUDGET_S"]
