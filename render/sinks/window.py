"""Show frames in a window context.

With the renderer that drew the frame (same context), the output framebuffer is blitted
to the window directly (no upload); otherwise the RGBA frame is uploaded to a texture and
blitted. Either way the image is scaled to fit with letterboxing, then swapped.
"""

from __future__ import annotations

import numpy as np
from .._gl import GL

from ..gpu import Framebuffer, Ledger, Texture, texture_empty
from .base import check_frame


class WindowSink:
    """Present frames in ``context`` (a window context from :func:`render.create_context`).

    Args:
        context: the window context (must be current when ``send`` is called).
        renderer: the renderer drawing into this context; when given, ``send`` presents its
            output framebuffer and ignores ``rgba`` (which may then be None).
        swap: call ``context.swap()`` after presenting (False when the caller swaps).

    Attributes:
        needs_pixels: False with a renderer (nothing is read back), True without.
    """

    def __init__(self, context, renderer=None, *, swap: bool = True):
        self.context, self.renderer, self.swap = context, renderer, swap
        self.needs_pixels = renderer is None
        self.frames = 0
        self._ledger = Ledger()
        self._tex: Texture | None = None
        self._fbo: Framebuffer | None = None
        self._closed = False

    def send(self, rgba: np.ndarray | None, t_ns: int = 0) -> None:
        """Present one frame (see class doc)."""
        if self._closed:
            raise RuntimeError("sink is closed")
        if self.renderer is not None:
            self.renderer.present(self._target_size())
        else:
            self._upload_and_blit(check_frame(rgba))
        if self.swap:
            self.context.swap()
        self.frames += 1

    def _upload_and_blit(self, rgba: np.ndarray) -> None:
        h, w = rgba.shape[:2]
        if self._tex is None or (self._tex.width, self._tex.height) != (w, h):
            self._release_gl()
            self._tex = texture_empty(self._ledger, w, h, GL.GL_RGBA8, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE,
                                      filter=GL.GL_LINEAR)
            self._fbo = Framebuffer(self._ledger, color=self._tex)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self._tex.id)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        GL.glTexSubImage2D(GL.GL_TEXTURE_2D, 0, 0, 0, w, h, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE,
                           np.ascontiguousarray(rgba))
        ww, wh = self._target_size()
        scale = min(ww / w, wh / h)
        dw, dh = int(round(w * scale)), int(round(h * scale))
        x0, y0 = (ww - dw) // 2, (wh - dh) // 2
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self._fbo.id)
        GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, 0)
        GL.glViewport(0, 0, ww, wh)
        GL.glClearColor(0.0, 0.0, 0.0, 1.0)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT)
        GL.glBlitFramebuffer(0, 0, w, h, x0, y0 + dh, x0 + dw, y0, GL.GL_COLOR_BUFFER_BIT, GL.GL_LINEAR)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)

    def _target_size(self) -> tuple[int, int]:
        return self.context.framebuffer_size

    def _release_gl(self) -> None:
        if self._fbo is not None:
            self._fbo.release()
            self._fbo = None
        if self._tex is not None:
            self._tex.release()
            self._tex = None

    def close(self) -> None:
        """Free the upload texture (the window itself belongs to its context). Idempotent."""
        if not self._closed:
            self._closed = True
            self._release_gl()

    def __enter__(self) -> "WindowSink":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
