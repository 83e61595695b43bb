"""Frame readback into RGBA numpy arrays: synchronous, or through two pixel-pack buffers.

Asynchronous path (no pipeline stall): frame n is copied into PBO n % 2 with a fence;
the call for frame n maps PBO (n - 1) % 2, which the GPU finished meanwhile, and returns
frame n - 1. One frame of latency; the first call returns None, and :meth:`PboReadback.flush`
returns the last frame at the end of a stream.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from ._gl import GL

from .gpu import Buffer, Ledger


def read_pixels(width: int, height: int, out: np.ndarray | None = None) -> np.ndarray:
    """Read the bound read framebuffer (rows as stored: the renderer's output is top-down)
    into (H, W, 4) uint8, synchronously."""
    if out is None:
        out = np.empty((height, width, 4), np.uint8)
    GL.glBindBuffer(GL.GL_PIXEL_PACK_BUFFER, 0)
    GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)
    GL.glReadPixels(0, 0, width, height, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, out)
    return out


class PboReadback:
    """Double-buffered PBO readback of a ``size`` = (w, h) RGBA8 framebuffer."""

    def __init__(self, ledger: Ledger, size: tuple[int, int]):
        self.size = (int(size[0]), int(size[1]))
        nbytes = self.size[0] * self.size[1] * 4
        self._pbos = [Buffer(ledger, GL.GL_PIXEL_PACK_BUFFER, size=nbytes, usage=GL.GL_STREAM_READ)
                      for _ in range(2)]
        GL.glBindBuffer(GL.GL_PIXEL_PACK_BUFFER, 0)
        self._fences: list[Any] = [None, None]
        self._tags: list[Any] = [None, None]
        self._next = 0

    def request(self, tag: Any = None) -> None:
        """Start copying the bound read framebuffer into the next PBO; ``tag`` comes back with it."""
        k = self._next
        w, h = self.size
        GL.glBindBuffer(GL.GL_PIXEL_PACK_BUFFER, self._pbos[k].id)
        GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)
        GL.glReadPixels(0, 0, w, h, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, ctypes.c_void_p(0))
        GL.glBindBuffer(GL.GL_PIXEL_PACK_BUFFER, 0)
        if self._fences[k] is not None:
            GL.glDeleteSync(self._fences[k])
        self._fences[k] = GL.glFenceSync(GL.GL_SYNC_GPU_COMMANDS_COMPLETE, 0)
        self._tags[k] = tag
        self._next = 1 - k

    def fetch(self, out: np.ndarray | None = None) -> tuple[np.ndarray, Any] | None:
        """Map the older PBO (the frame before the last request) and copy it out.

        Returns:
            (rgba (H, W, 4) uint8, tag), or None when no older frame is pending.
        """
        return self._take(self._next, out)

    def flush(self, out: np.ndarray | None = None) -> tuple[np.ndarray, Any] | None:
        """Map the oldest frame not fetched yet, whichever PBO holds it: at the end of a
        stream, the last request, which no later request returns. Call until it returns None.
        Waits for the GPU.

        Returns:
            (rgba (H, W, 4) uint8, tag), or None when nothing is pending.
        """
        older = self._take(self._next, out)   # normally fetched already; never lose it
        if older is not None:
            return older
        return self._take(1 - self._next, out)

    def ready(self) -> bool:
        """The oldest request not fetched yet is finished by the GPU (mapping it would not wait);
        False when nothing is pending. Never waits."""
        k = self._next if self._fences[self._next] is not None else 1 - self._next
        fence = self._fences[k]
        if fence is None:
            return False
        return GL.glClientWaitSync(fence, 0, 0) in (GL.GL_ALREADY_SIGNALED, GL.GL_CONDITION_SATISFIED)

    @property
    def pending(self) -> int:
        """Requests not fetched yet (0, 1 or 2)."""
        return sum(f is not None for f in self._fences)

    def _take(self, k: int, out: np.ndarray | None) -> tuple[np.ndarray, Any] | None:
        fence = self._fences[k]
        if fence is None:
            return None
        GL.glClientWaitSync(fence, GL.GL_SYNC_FLUSH_COMMANDS_BIT, 1_000_000_000)
        GL.glDeleteSync(fence)
        self._fences[k] = None
        w, h = self.size
        if out is None:
            out = np.empty((h, w, 4), np.uint8)
        GL.glBindBuffer(GL.GL_PIXEL_PACK_BUFFER, self._pbos[k].id)
        ptr = GL.glMapBufferRange(GL.GL_PIXEL_PACK_BUFFER, 0, w * h * 4, GL.GL_MAP_READ_BIT)
        try:
            ctypes.memmove(out.ctypes.data, ptr, w * h * 4)
        finally:
            GL.glUnmapBuffer(GL.GL_PIXEL_PACK_BUFFER)
            GL.glBindBuffer(GL.GL_PIXEL_PACK_BUFFER, 0)
        return out, self._tags[k]

    def release(self) -> None:
        for k, f in enumerate(self._fences):
            if f is not None:
                GL.glDeleteSync(f)
                self._fences[k] = None
        for b in self._pbos:
            b.release()
