"""The renderer's framebuffers.

- scene: RGBA16F premultiplied linear colour + 24-bit depth, multisampled when
  ``samples`` > 0 (resolved into ``resolved``), else rendered straight into ``resolved``;
- output: RGBA8 sRGB-encoded, straight alpha, rows top-down (row 0 = image top), the image
  that readback, sinks and the window see.
"""

from __future__ import annotations

from OpenGL import GL

from .gpu import Framebuffer, Ledger, Renderbuffer, Texture, texture_empty


class RenderTargets:
    """Framebuffers of one size. ``samples`` is clamped to GL_MAX_SAMPLES."""

    def __init__(self, ledger: Ledger, size: tuple[int, int], samples: int):
        w, h = self.size = (int(size[0]), int(size[1]))
        if w <= 0 or h <= 0:
            raise ValueError(f"framebuffer size {size}: must be positive")
        self.samples = max(0, min(int(samples), int(GL.glGetIntegerv(GL.GL_MAX_SAMPLES))))
        self._owned = []
        self.resolved: Texture = texture_empty(ledger, w, h, GL.GL_RGBA16F, GL.GL_RGBA, GL.GL_HALF_FLOAT)
        self._owned.append(self.resolved)
        if self.samples > 0:
            color = Renderbuffer(ledger, w, h, GL.GL_RGBA16F, self.samples)
            depth = Renderbuffer(ledger, w, h, GL.GL_DEPTH_COMPONENT24, self.samples)
            self.scene = Framebuffer(ledger, color=color, depth=depth)
            self.resolve_fbo = Framebuffer(ledger, color=self.resolved)
            self._owned += [color, depth, self.scene, self.resolve_fbo]
        else:
            depth = Renderbuffer(ledger, w, h, GL.GL_DEPTH_COMPONENT24)
            self.scene = Framebuffer(ledger, color=self.resolved, depth=depth)
            self.resolve_fbo = None
            self._owned += [depth, self.scene]
        self.output_tex: Texture = texture_empty(ledger, w, h, GL.GL_RGBA8, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE,
                                                 filter=GL.GL_LINEAR)
        self.output = Framebuffer(ledger, color=self.output_tex)
        self._owned += [self.output_tex, self.output]
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)

    def resolve(self) -> None:
        """Multisample resolve of the scene colour into ``resolved`` (no-op without MSAA)."""
        if self.resolve_fbo is None:
            return
        w, h = self.size
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self.scene.id)
        GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, self.resolve_fbo.id)
        GL.glBlitFramebuffer(0, 0, w, h, 0, 0, w, h, GL.GL_COLOR_BUFFER_BIT, GL.GL_NEAREST)

    def release(self) -> None:
        for obj in reversed(self._owned):
            obj.release()
        self._owned.clear()
