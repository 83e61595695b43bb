"""An occasional, asynchronous, downscaled copy of the renderer's output for a preview (the
control panel's): the output is blitted (linear filter) into a small framebuffer of its own,
read through its own pair of pixel-pack buffers, so it never disturbs the outputs' readback
stream (:meth:`render.Renderer.read_rgba_async`) and moves a fraction of the pixels.

Frame n is requested with :meth:`FrameTap.request` right after it is drawn; a later frame
maps it with :meth:`FrameTap.take` once :attr:`FrameTap.ready` says the GPU finished it (no
pipeline stall; software GL may take several frames). Nothing is
read back unless asked. GL objects: render thread only; :meth:`FrameTap.release` frees them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._gl import GL
from .gpu import Framebuffer, texture_empty
from .readback import PboReadback


class FrameTap:
    """Asynchronous copies of ``renderer``'s output image ((H, W, 4) uint8, sRGB, row 0 = top;
    colour premultiplied by alpha when the background is transparent, i.e. composited over
    black, which is what a preview shows)."""

    def __init__(self, renderer, *, width: int | None = None):
        self.renderer = renderer
        self.width = width
        self._pbo: PboReadback | None = None
        self._fbo: Framebuffer | None = None
        self._tex = None
        self.reads = 0

    @property
    def size(self) -> tuple[int, int]:
        """(w, h) of the copies: the output's, scaled down to ``width`` (never up)."""
        w, h = self.renderer.size
        if self.width is None or self.width >= w:
            return int(w), int(h)
        return int(self.width), max(1, round(h * self.width / w))

    @property
    def pending(self) -> bool:
        """A requested frame has not been taken yet."""
        return self._pbo is not None and self._pbo.pending > 0

    def request(self, tag: Any = None) -> None:
        """Start copying the frame just drawn (``tag`` comes back with it)."""
        size = self.size
        full = tuple(self.renderer.size)
        if self._pbo is None or self._pbo.size != size:
            self.release()
            self._pbo = PboReadback(self.renderer.ledger, size)
            if size != full:
                self._tex = texture_empty(self.renderer.ledger, size[0], size[1], GL.GL_SRGB8_ALPHA8, GL.GL_RGBA,
                                          GL.GL_UNSIGNED_BYTE)
                self._fbo = Framebuffer(self.renderer.ledger, color=self._tex)
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self.renderer.targets.final.id)
        if self._fbo is not None:
            GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, self._fbo.id)
            GL.glBlitFramebuffer(0, 0, full[0], full[1], 0, 0, size[0], size[1], GL.GL_COLOR_BUFFER_BIT, GL.GL_LINEAR)
            GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, 0)
            GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self._fbo.id)
        self._pbo.request(tag)
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, 0)
        GL.glFlush()            # start the copy now, so that its fence signals without anyone waiting
        self.reads += 1

    @property
    def ready(self) -> bool:
        """The requested frame can be taken without waiting for the GPU (never waits)."""
        return self._pbo is not None and self._pbo.ready()

    def take(self, out: np.ndarray | None = None) -> tuple[np.ndarray, Any] | None:
        """The requested frame and its tag (waits for the GPU if it is not done), or None when
        nothing is pending. ``out``: (H, W, 4) uint8 to fill."""
        if self._pbo is None:
            return None
        return self._pbo.flush(out)

    def release(self) -> None:
        for obj in (self._pbo, self._fbo, self._tex):
            if obj is not None:
                obj.release()
        self._pbo = self._fbo = self._tex = None
