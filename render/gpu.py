"""Thin owners of OpenGL objects with explicit ``release()`` and a ledger of live objects.

Every object made here is counted in a :class:`Ledger` (one per renderer) by kind, so tests
can prove that reloading avatars and rendering many frames leaves no GL object behind.
All calls need the owning context current. ``release()`` is idempotent.
"""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np
from ._gl import GL

from avatars import Sampler

log = logging.getLogger(__name__)

_MIPMAP_FILTERS = {GL.GL_NEAREST_MIPMAP_NEAREST, GL.GL_LINEAR_MIPMAP_NEAREST, GL.GL_NEAREST_MIPMAP_LINEAR,
                   GL.GL_LINEAR_MIPMAP_LINEAR}


class Ledger:
    """Counts live GL objects by kind ("buffer", "texture", "vertex_array", ...)."""

    def __init__(self) -> None:
        self.live: Counter[str] = Counter()
        self.created: Counter[str] = Counter()

    def add(self, kind: str) -> None:
        self.live[kind] += 1
        self.created[kind] += 1

    def remove(self, kind: str) -> None:
        self.live[kind] -= 1

    def snapshot(self) -> dict[str, int]:
        """Live counts, kinds with zero omitted."""
        return {k: v for k, v in self.live.items() if v}


class GLObject:
    """Base: a GL name owned by one ledger."""

    kind = "object"

    def __init__(self, ledger: Ledger, name: int):
        self.ledger = ledger
        self.id = int(name)
        ledger.add(self.kind)

    def _delete(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def release(self) -> None:
        """Delete the GL object. Idempotent."""
        if self.id:
            self._delete()
            self.id = 0
            self.ledger.remove(self.kind)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class Buffer(GLObject):
    """A buffer object (vertex, index, uniform, pixel pack)."""

    kind = "buffer"

    def __init__(self, ledger: Ledger, target: int, data: np.ndarray | None = None, *, size: int = 0,
                 usage: int = GL.GL_STATIC_DRAW):
        super().__init__(ledger, GL.glGenBuffers(1))
        self.target = target
        self.usage = usage
        self.size = 0
        self.allocate(data, size=size)

    def allocate(self, data: np.ndarray | None = None, *, size: int = 0) -> None:
        """(Re)allocate storage from ``data`` (C-contiguous) or ``size`` bytes uninitialised."""
        GL.glBindBuffer(self.target, self.id)
        if data is not None:
            data = np.ascontiguousarray(data)
            self.size = data.nbytes
            GL.glBufferData(self.target, data.nbytes, data, self.usage)
        else:
            self.size = int(size)
            GL.glBufferData(self.target, self.size, None, self.usage)

    def update(self, data: np.ndarray, offset: int = 0) -> None:
        """Write ``data`` at byte ``offset``; grows the buffer when needed (orphaning it)."""
        data = np.ascontiguousarray(data)
        GL.glBindBuffer(self.target, self.id)
        if offset + data.nbytes > self.size:
            self.allocate(size=max(offset + data.nbytes, 2 * self.size))
            GL.glBindBuffer(self.target, self.id)
        GL.glBufferSubData(self.target, offset, data.nbytes, data)

    def _delete(self) -> None:
        GL.glDeleteBuffers(1, [self.id])


class VertexArray(GLObject):
    """A vertex array object."""

    kind = "vertex_array"

    def __init__(self, ledger: Ledger):
        super().__init__(ledger, GL.glGenVertexArrays(1))

    def bind(self) -> None:
        GL.glBindVertexArray(self.id)

    def attribute(self, location: int, buffer: Buffer, components: int, gl_type: int = GL.GL_FLOAT,
                  *, integer: bool = False, normalized: bool = False) -> None:
        """Bind ``buffer`` (tightly packed) to attribute ``location`` of this VAO."""
        GL.glBindVertexArray(self.id)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, buffer.id)
        GL.glEnableVertexAttribArray(location)
        if integer:
            GL.glVertexAttribIPointer(location, components, gl_type, 0, None)
        else:
            GL.glVertexAttribPointer(location, components, gl_type, normalized, 0, None)

    def _delete(self) -> None:
        GL.glDeleteVertexArrays(1, [self.id])


class Texture(GLObject):
    """A 2D texture. Use the constructors :func:`texture_rgba8` and :func:`texture_empty`."""

    kind = "texture"

    def __init__(self, ledger: Ledger, width: int, height: int, internal_format: int):
        super().__init__(ledger, GL.glGenTextures(1))
        self.width, self.height, self.internal_format = int(width), int(height), internal_format
        self.mipmapped = False

    def bind(self, unit: int) -> None:
        GL.glActiveTexture(GL.GL_TEXTURE0 + unit)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self.id)

    def _delete(self) -> None:
        GL.glDeleteTextures(1, [self.id])


def texture_rgba8(ledger: Ledger, rgba: np.ndarray, *, srgb: bool = True, mipmaps: bool = True) -> Texture:
    """Upload an (H, W, 4) uint8 image, row 0 first (glTF uv (0, 0) is the image's top-left,
    which is texel row 0, so uvs are used unflipped). ``srgb``: sampled values are linear."""
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    h, w = rgba.shape[:2]
    fmt = GL.GL_SRGB8_ALPHA8 if srgb else GL.GL_RGBA8
    tex = Texture(ledger, w, h, fmt)
    GL.glBindTexture(GL.GL_TEXTURE_2D, tex.id)
    GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
    GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, fmt, w, h, 0, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, rgba)
    if mipmaps:
        GL.glGenerateMipmap(GL.GL_TEXTURE_2D)
    tex.mipmapped = bool(mipmaps)
    GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER,
                       GL.GL_LINEAR_MIPMAP_LINEAR if mipmaps else GL.GL_LINEAR)
    GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAG_FILTER, GL.GL_LINEAR)
    return tex


def texture_rgba8_steps(ledger: Ledger, rgba: np.ndarray, *, srgb: bool = True, mipmaps: bool = True,
                        band_bytes: int = 1 << 18):
    """:func:`texture_rgba8` in steps, for an upload spread over frames: a generator that
    yields after the allocation, after each band of rows (about ``band_bytes`` bytes,
    ``glTexSubImage2D``) and after each mipmap level (``glGenerateMipmap`` with the base and
    max level set to that level and the next: each level is filtered from the one above, as
    one ``glGenerateMipmap`` does, so the texels are the same;
    tests/render/test_staged_upload.py compares every level). The first value yielded is the
    :class:`Texture` (made and counted then: the caller releases it if it stops early), each
    later one the texels the next piece reads (its cost, for
    :class:`render.staged.AvatarUpload`); the return value (``StopIteration.value``) is the
    texture again."""
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    h, w = rgba.shape[:2]
    fmt = GL.GL_SRGB8_ALPHA8 if srgb else GL.GL_RGBA8
    tex = Texture(ledger, w, h, fmt)
    yield tex
    yield w * h // 4                     # the allocation
    GL.glBindTexture(GL.GL_TEXTURE_2D, tex.id)
    GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
    GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, fmt, w, h, 0, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, None)
    rows = max(1, band_bytes // max(1, 4 * w))
    for y in range(0, h, rows):
        yield w * min(rows, h - y) // 4  # a copy, cheaper than filtering
        GL.glBindTexture(GL.GL_TEXTURE_2D, tex.id)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        band = np.ascontiguousarray(rgba[y:y + rows])
        GL.glTexSubImage2D(GL.GL_TEXTURE_2D, 0, 0, y, w, band.shape[0], GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, band)
    if mipmaps:
        levels = max(w, h).bit_length() - 1
        for k in range(levels):
            yield max(1, w >> k) * max(1, h >> k)
            GL.glBindTexture(GL.GL_TEXTURE_2D, tex.id)
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_BASE_LEVEL, k)
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAX_LEVEL, k + 1)
            GL.glGenerateMipmap(GL.GL_TEXTURE_2D)
        GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_BASE_LEVEL, 0)
        GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAX_LEVEL, 1000)
    tex.mipmapped = bool(mipmaps)
    GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER,
                       GL.GL_LINEAR_MIPMAP_LINEAR if mipmaps else GL.GL_LINEAR)
    GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAG_FILTER, GL.GL_LINEAR)
    return tex


def texture_empty(ledger: Ledger, width: int, height: int, internal_format: int, fmt: int, gl_type: int,
                  *, filter: int = GL.GL_NEAREST, data: np.ndarray | None = None) -> Texture:
    """An uninitialised (or ``data``-filled) texture without mipmaps, clamped, ``filter`` sampled."""
    tex = Texture(ledger, width, height, internal_format)
    GL.glBindTexture(GL.GL_TEXTURE_2D, tex.id)
    GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
    GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, internal_format, int(width), int(height), 0, fmt, gl_type, data)
    for p, v in ((GL.GL_TEXTURE_MIN_FILTER, filter), (GL.GL_TEXTURE_MAG_FILTER, filter),
                 (GL.GL_TEXTURE_WRAP_S, GL.GL_CLAMP_TO_EDGE), (GL.GL_TEXTURE_WRAP_T, GL.GL_CLAMP_TO_EDGE)):
        GL.glTexParameteri(GL.GL_TEXTURE_2D, p, v)
    return tex


def float_texture(ledger: Ledger, data: np.ndarray) -> Texture:
    """An (H, W, 4) float32 array as an RGBA32F texture (for texelFetch lookups)."""
    data = np.ascontiguousarray(data, dtype=np.float32)
    h, w = data.shape[:2]
    return texture_empty(ledger, w, h, GL.GL_RGBA32F, GL.GL_RGBA, GL.GL_FLOAT, data=data)


def needs_mipmaps(sampler: Sampler) -> bool:
    return sampler.min_filter in _MIPMAP_FILTERS


class SamplerObject(GLObject):
    """A GL sampler object from a glTF :class:`avatars.Sampler` (filters and wrap modes)."""

    kind = "sampler"

    def __init__(self, ledger: Ledger, sampler: Sampler, *, max_anisotropy: float = 1.0):
        super().__init__(ledger, GL.glGenSamplers(1))
        valid_min = _MIPMAP_FILTERS | {GL.GL_NEAREST, GL.GL_LINEAR}
        mn = sampler.min_filter if sampler.min_filter in valid_min else GL.GL_LINEAR_MIPMAP_LINEAR
        mg = sampler.mag_filter if sampler.mag_filter in (GL.GL_NEAREST, GL.GL_LINEAR) else GL.GL_LINEAR
        wraps = {GL.GL_REPEAT, GL.GL_CLAMP_TO_EDGE, GL.GL_MIRRORED_REPEAT}
        GL.glSamplerParameteri(self.id, GL.GL_TEXTURE_MIN_FILTER, mn)
        GL.glSamplerParameteri(self.id, GL.GL_TEXTURE_MAG_FILTER, mg)
        for pname, wrap in ((GL.GL_TEXTURE_WRAP_S, sampler.wrap_s), (GL.GL_TEXTURE_WRAP_T, sampler.wrap_t)):
            GL.glSamplerParameteri(self.id, pname, wrap if wrap in wraps else GL.GL_REPEAT)

    def bind(self, unit: int) -> None:
        GL.glBindSampler(unit, self.id)

    def _delete(self) -> None:
        GL.glDeleteSamplers(1, [self.id])


class Renderbuffer(GLObject):
    """A (multisampled) renderbuffer."""

    kind = "renderbuffer"

    def __init__(self, ledger: Ledger, width: int, height: int, internal_format: int, samples: int = 0):
        super().__init__(ledger, GL.glGenRenderbuffers(1))
        GL.glBindRenderbuffer(GL.GL_RENDERBUFFER, self.id)
        if samples > 0:
            GL.glRenderbufferStorageMultisample(GL.GL_RENDERBUFFER, samples, internal_format, width, height)
        else:
            GL.glRenderbufferStorage(GL.GL_RENDERBUFFER, internal_format, width, height)

    def _delete(self) -> None:
        GL.glDeleteRenderbuffers(1, [self.id])


class Framebuffer(GLObject):
    """A framebuffer object; attachments are owned (and released) by the caller."""

    kind = "framebuffer"

    def __init__(self, ledger: Ledger, *, color: Texture | Renderbuffer, depth: Renderbuffer | None = None):
        super().__init__(ledger, GL.glGenFramebuffers(1))
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.id)
        if isinstance(color, Texture):
            GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT0, GL.GL_TEXTURE_2D, color.id, 0)
        else:
            GL.glFramebufferRenderbuffer(GL.GL_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT0, GL.GL_RENDERBUFFER, color.id)
        if depth is not None:
            GL.glFramebufferRenderbuffer(GL.GL_FRAMEBUFFER, GL.GL_DEPTH_ATTACHMENT, GL.GL_RENDERBUFFER, depth.id)
        status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            self.release()
            raise RuntimeError(f"framebuffer incomplete (status 0x{int(status):x})")

    def bind(self, target: int = GL.GL_FRAMEBUFFER) -> None:
        GL.glBindFramebuffer(target, self.id)

    def _delete(self) -> None:
        GL.glDeleteFramebuffers(1, [self.id])
