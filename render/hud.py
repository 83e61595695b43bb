"""Heads-up display: a few lines of text (fps, tracker latency, substeps) in a corner.

Text is rasterised with Pillow's built-in font into an RGBA texture, only when it changes
(callers should round values, e.g. to 0.1, so the texture is not rebuilt every frame), and
blended over the output image (in linear space, like everything else), after the background.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from ._gl import GL
from PIL import Image, ImageDraw, ImageFont

from .gpu import Ledger, Texture, texture_rgba8


@dataclass(frozen=True)
class HudInfo:
    """HUD values.

    Attributes:
        fps: rendered frames per second.
        tracker_latency_ms: capture-to-pose latency of the tracker, milliseconds (None: not shown).
        substeps: solver substeps run for this frame (None: not shown).
        extra: more (label, value) lines, already formatted.
    """

    fps: float | None = None
    tracker_latency_ms: float | None = None
    substeps: int | None = None
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    def lines(self) -> list[str]:
        out = []
        if self.fps is not None:
            out.append(f"fps {self.fps:6.1f}  ({1000.0 / self.fps if self.fps > 0 else 0.0:5.1f} ms)")
        if self.tracker_latency_ms is not None:
            out.append(f"tracker {self.tracker_latency_ms:6.1f} ms")
        if self.substeps is not None:
            out.append(f"substeps {self.substeps:d}")
        out.extend(f"{k} {v}" for k, v in self.extra)
        return out


def rasterize(lines: list[str], *, size: int = 14, padding: int = 6) -> np.ndarray:
    """Text lines on a translucent dark panel as an (H, W, 4) uint8 sRGB straight-alpha image."""
    try:
        font = ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):  # Pillow without FreeType: the fixed bitmap font
        font = ImageFont.load_default()
    spacing = int(size * 1.3)
    width = max((int(font.getlength(s)) for s in lines), default=0) + 2 * padding
    height = spacing * len(lines) + 2 * padding
    img = Image.new("RGBA", (max(width, 1), max(height, 1)), (0, 0, 0, 150))
    d = ImageDraw.Draw(img)
    for k, s in enumerate(lines):
        d.text((padding, padding + k * spacing), s, font=font, fill=(255, 255, 255, 255))
    return np.asarray(img, np.uint8)


class HudRenderer:
    """Owns the text texture; re-rasterises when the text changes."""

    def __init__(self, ledger: Ledger, *, font_size: int = 14, corner: tuple[int, int] = (8, 8)):
        self.ledger = ledger
        self.font_size = font_size
        self.corner = corner
        self._text: list[str] | None = None
        self._texture: Texture | None = None

    def draw(self, program, info: HudInfo, target_size: tuple[int, int]) -> None:
        """Blend the HUD into the bound output framebuffer (``target_size`` = (w, h) px)."""
        lines = info.lines()
        if not lines:
            return
        if lines != self._text or self._texture is None:
            if self._texture is not None:
                self._texture.release()
            self._texture = texture_rgba8(self.ledger, rasterize(lines, size=self.font_size), srgb=True,
                                          mipmaps=False)
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER, GL.GL_NEAREST)
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAG_FILTER, GL.GL_NEAREST)
            self._text = lines
        tex = self._texture
        program.use()
        program.set_vec("u_rect", (self.corner[0], self.corner[1], tex.width, tex.height))
        program.set_vec("u_target", target_size)
        tex.bind(0)
        GL.glBindSampler(0, 0)
        GL.glEnable(GL.GL_BLEND)
        GL.glBlendFuncSeparate(GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA, GL.GL_ONE, GL.GL_ONE_MINUS_SRC_ALPHA)
        GL.glDrawArrays(GL.GL_TRIANGLE_STRIP, 0, 4)
        GL.glDisable(GL.GL_BLEND)

    def release(self) -> None:
        if self._texture is not None:
            self._texture.release()
            self._texture = None
