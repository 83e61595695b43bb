"""The renderer's framebuffers.

Colour buffers are ``SRGB8_ALPHA8`` and drawn with ``GL_FRAMEBUFFER_SRGB`` on: shaders
write linear values, blending happens in linear space, storage is sRGB-encoded, with no
extra encoding pass (on llvmpipe every full-screen pass costs 7-13 ms at 720p). The
projection is flipped vertically, so stored rows are top-down and readback needs no flip.

- ``final``: the output image (RGBA8 sRGB, row 0 = top) that readback, sinks and the window
  see. Colours are premultiplied by alpha (identical to straight alpha wherever alpha is 0
  or 1); readback turns the partly transparent pixels into straight alpha
  (:func:`unpremultiply_srgb`).
- ``scene``: where the avatar is drawn: a multisampled framebuffer resolved into ``final``
  when ``samples`` > 0; with ``fxaa``, a single-sampled framebuffer whose colour texture
  (``scene_tex``) the FXAA pass reads into ``final``; else ``final`` itself (with a depth
  buffer).
"""

from __future__ import annotations

import numpy as np
from ._gl import GL

from .gpu import Framebuffer, Ledger, Renderbuffer, Texture, texture_empty

SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swrast", "software rasterizer")


def default_samples() -> int:
    """MSAA samples to use when not specified: 4 on GPUs, 0 on software rasterisers, where
    4x MSAA doubles the frame time."""
    renderer = (GL.glGetString(GL.GL_RENDERER) or b"").decode().lower()
    return 0 if any(s in renderer for s in SOFTWARE_RENDERERS) else 4


class RenderTargets:
    """Framebuffers of one size. ``samples`` is clamped to GL_MAX_SAMPLES.

    ``slots`` output images (``final``) take turns (:meth:`select`): a frame is drawn into
    one while an earlier one is still rasterised or read back from another (frames in
    flight, :mod:`render.frame_reader`); the scene buffers (MSAA, FXAA input, depth) are
    shared, since a frame is finished with them once it is resolved. ``final``,
    ``final_tex`` and ``scene`` are the selected slot's.
    """

    def __init__(self, ledger: Ledger, size: tuple[int, int], samples: int, *, fxaa: bool = False, slots: int = 1):
        w, h = self.size = (int(size[0]), int(size[1]))
        if w <= 0 or h <= 0:
            raise ValueError(f"framebuffer size {size}: must be positive")
        if slots < 1:
            raise ValueError(f"slots {slots}: must be >= 1")
        self.samples = max(0, min(int(samples), int(GL.glGetIntegerv(GL.GL_MAX_SAMPLES))))
        self.fxaa = bool(fxaa) and not self.samples
        self.scene_tex: Texture | None = None
        self._owned: list = []

        def own(obj):
            self._owned.append(obj)
            return obj

        #: the output image of every slot, and its framebuffer
        self.final_texs: list[Texture] = [own(texture_empty(ledger, w, h, GL.GL_SRGB8_ALPHA8, GL.GL_RGBA,
                                                            GL.GL_UNSIGNED_BYTE, filter=GL.GL_LINEAR))
                                          for _ in range(slots)]
        if self.samples:
            self.finals = [own(Framebuffer(ledger, color=t)) for t in self.final_texs]
            color = own(Renderbuffer(ledger, w, h, GL.GL_SRGB8_ALPHA8, self.samples))
            depth = own(Renderbuffer(ledger, w, h, GL.GL_DEPTH_COMPONENT24, self.samples))
            self.scenes = [own(Framebuffer(ledger, color=color, depth=depth))] * slots
        elif self.fxaa:
            self.finals = [own(Framebuffer(ledger, color=t)) for t in self.final_texs]
            self.scene_tex = own(texture_empty(ledger, w, h, GL.GL_SRGB8_ALPHA8, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE,
                                               filter=GL.GL_LINEAR))
            depth = own(Renderbuffer(ledger, w, h, GL.GL_DEPTH_COMPONENT24))
            self.scenes = [own(Framebuffer(ledger, color=self.scene_tex, depth=depth))] * slots
        else:
            depth = own(Renderbuffer(ledger, w, h, GL.GL_DEPTH_COMPONENT24))
            self.finals = self.scenes = [own(Framebuffer(ledger, color=t, depth=depth)) for t in self.final_texs]
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)
        self.slot = 0
        self.select(0)

    @property
    def slots(self) -> int:
        return len(self.final_texs)

    def select(self, slot: int) -> None:
        """Draw into and read from output slot ``slot`` from now on."""
        self.slot = int(slot)
        self.final_tex = self.final_texs[self.slot]
        self.final = self.finals[self.slot]
        self.scene = self.scenes[self.slot]

    def resolve(self, rect: tuple[int, int, int, int] | None = None) -> None:
        """Multisample resolve of the scene into ``final`` (no-op without MSAA), of the
        (x, y, width, height) pixel ``rect`` only when given (a pane: what is outside it in
        ``final``, such as another pane's HUD, is kept)."""
        if not self.samples:
            return
        x, y, w, h = rect if rect is not None else (0, 0, *self.size)
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self.scene.id)
        GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, self.final.id)
        GL.glBlitFramebuffer(x, y, x + w, y + h, x, y, x + w, y + h, GL.GL_COLOR_BUFFER_BIT, GL.GL_NEAREST)

    def release(self) -> None:
        for obj in reversed(self._owned):
            obj.release()
        self._owned.clear()


_DECODE = np.where(np.arange(256) / 255.0 <= 0.04045, np.arange(256) / 255.0 / 12.92,
                   ((np.arange(256) / 255.0 + 0.055) / 1.055) ** 2.4).astype(np.float32)
_ENCODE_STEPS = 4096
_lin = np.arange(_ENCODE_STEPS + 1) / _ENCODE_STEPS
_ENCODE = np.round(255.0 * np.where(_lin <= 0.0031308, _lin * 12.92,
                                    1.055 * _lin ** (1 / 2.4) - 0.055)).astype(np.uint8)


def unpremultiply_srgb(rgba: np.ndarray) -> np.ndarray:
    """In place: sRGB-encoded premultiplied colours -> straight alpha, for pixels with
    0 < alpha < 255 only (others are unchanged: for them both conventions agree; alpha 0
    has colour 0). The division happens on linear values (IEC 61966-2-1 transfer).

    Args:
        rgba: (H, W, 4) uint8, modified in place and returned.
    """
    flat = rgba.reshape(-1, 4)
    a = flat[:, 3]
    idx = np.flatnonzero((a - np.uint8(1)) < np.uint8(254))  # 1 <= a <= 254, uint8 wraparound
    if idx.size:
        px = flat[idx]
        lin = _DECODE[px[:, :3]] / (px[:, 3:4].astype(np.float32) / 255.0)
        q = np.clip(np.rint(lin * _ENCODE_STEPS), 0, _ENCODE_STEPS).astype(np.int32)
        flat[idx, :3] = _ENCODE[q]
    return rgba
