"""Anti-aliasing: MSAA (resolved by the render targets) or an FXAA pass, and the choice
between them.

- ``"msaa"``: the scene is drawn into a multisampled framebuffer (4 samples unless asked
  otherwise) and resolved into the output (in linear light: the buffers are sRGB).
- ``"fxaa"``: the scene is drawn into a single-sampled texture and one full-screen pass
  (glsl/fxaa.frag) writes the output; it smooths edges between colours, not sub-pixel
  detail.
- ``"off"``: drawn straight into the output.
- ``"auto"`` (the default): MSAA on GPUs; on software rasterisers (llvmpipe), where 4x MSAA
  costs about five times the frame and FXAA adds a full-screen pass, :data:`SOFTWARE_AUTO`
  (measured with ``swaycam bench render --antialias ...``; see render/docs/antialiasing.md).
"""

from __future__ import annotations

from typing import Literal

from ._gl import GL

from .gpu import Ledger, VertexArray
from .shaders import Program

Antialias = Literal["auto", "msaa", "fxaa", "off"]
MODES = ("auto", "msaa", "fxaa", "off")
MSAA_SAMPLES = 4
_TEXTURE_SRGB_DECODE_EXT, _SKIP_DECODE_EXT = 0x8A48, 0x8A4A  # EXT_texture_sRGB_decode
#: What "auto" means on a software rasteriser.
SOFTWARE_AUTO: Antialias = "off"


def resolve_mode(mode: str, samples: int | None, software: bool) -> tuple[str, int]:
    """(mode, MSAA samples) actually used for ``mode`` (one of :data:`MODES`) and an
    explicit ``samples`` count (None: the mode's own; a count > 0 with "auto" means MSAA,
    0 means no MSAA, as the renderer's ``samples`` option always did).

    Raises:
        ValueError: an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"antialias {mode!r}: expected one of {', '.join(MODES)}")
    if mode == "auto":
        if samples is not None:
            return ("msaa", int(samples)) if samples > 0 else ("off", 0)
        mode = SOFTWARE_AUTO if software else "msaa"
    if mode == "msaa":
        n = MSAA_SAMPLES if samples is None else int(samples)
        return ("msaa", n) if n > 0 else ("off", 0)
    return mode, 0


class FxaaPass:
    """The FXAA pass: reads the scene's sRGB texture (premultiplied, without decoding), writes
    the bound framebuffer. Needs EXT_texture_sRGB_decode (Mesa, NVIDIA, AMD, Intel have it)."""

    def __init__(self, ledger: Ledger):
        self.program = Program(ledger, "post.vert", "fxaa.frag", common=False)
        self.program.set_samplers(u_tex=0)
        self._vao = VertexArray(ledger)

    def draw(self, texture, rect: tuple[int, int, int, int]) -> None:
        """Anti-alias ``rect`` = (x, y, width, height) pixels of ``texture`` into the bound
        framebuffer (same size), with the GL state it needs (no depth, no blending)."""
        x, y, w, h = rect
        GL.glViewport(x, y, w, h)
        GL.glDisable(GL.GL_DEPTH_TEST)
        GL.glDisable(GL.GL_BLEND)
        GL.glDisable(GL.GL_CULL_FACE)
        self.program.use()
        self.program.set_vec("u_texel", (1.0 / texture.width, 1.0 / texture.height))
        texture.bind(0)
        GL.glBindSampler(0, 0)  # the texture's own clamped, linear filtering
        GL.glTexParameteri(GL.GL_TEXTURE_2D, _TEXTURE_SRGB_DECODE_EXT, _SKIP_DECODE_EXT)
        srgb = GL.glIsEnabled(GL.GL_FRAMEBUFFER_SRGB)
        GL.glDisable(GL.GL_FRAMEBUFFER_SRGB)  # encoded in, encoded out
        self._vao.bind()
        GL.glDrawArrays(GL.GL_TRIANGLES, 0, 3)
        if srgb:
            GL.glEnable(GL.GL_FRAMEBUFFER_SRGB)

    def release(self) -> None:
        self.program.release()
        self._vao.release()


def is_software(renderer_string: str) -> bool:
    """True for software rasterisers (llvmpipe, softpipe, swrast)."""
    from .targets import SOFTWARE_RENDERERS

    s = (renderer_string or "").lower()
    return any(k in s for k in SOFTWARE_RENDERERS)


__all__ = ["Antialias", "FxaaPass", "MODES", "MSAA_SAMPLES", "SOFTWARE_AUTO", "is_software", "resolve_mode"]
