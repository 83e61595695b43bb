"""An occasional, asynchronous copy of the renderer's output for a preview (the control
panel's): its own pair of pixel-pack buffers on the output framebuffer, so it never
disturbs the outputs' readback stream (:meth:`render.Renderer.read_rgba_async`).

Frame n is requested with :meth:`FrameTap.request` right after it is drawn; one frame later
:meth:`FrameTap.take` maps it (the GPU finished it meanwhile: no pipeline stall). Nothing is
read back unless asked. GL objects: render thread only; :meth:`FrameTap.release` frees them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._gl import GL
from .readback import PboReadback


class FrameTap:
    """Asynchronous copies of ``renderer``'s output image ((H, W, 4) uint8, sRGB, row 0 = top;
    colour premultiplied by alpha when the background is transparent, i.e. composited over
    black, which is what a preview shows)."""

    def __init__(self, renderer):
        self.renderer = renderer
        self._pbo: PboReadback | None = None
        self.reads = 0

    @property
    def pending(self) -> bool:
        """A requested frame has not been taken yet."""
        return self._pbo is not None and self._pbo.pending > 0

    def request(self, tag: Any = None) -> None:
        """Start copying the frame just drawn (``tag`` comes back with it)."""
        size = tuple(self.renderer.size)
        if self._pbo is None or self._pbo.size != size:
            if self._pbo is not None:
                self._pbo.release()
            self._pbo = PboReadback(self.renderer.ledger, size)
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self.renderer.targets.final.id)
        self._pbo.request(tag)
        self.reads += 1

    def take(self, out: np.ndarray | None = None) -> tuple[np.ndarray, Any] | None:
        """The requested frame and its tag (waits for the GPU if it is not done), or None when
        nothing is pending. ``out``: (H, W, 4) uint8 to fill."""
        if self._pbo is None:
            return None
        return self._pbo.flush(out)

    def release(self) -> None:
        if self._pbo is not None:
            self._pbo.release()
            self._pbo = None
