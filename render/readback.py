"""Frame readback into RGBA numpy arrays: synchronous, through two pixel-pack buffers, or on
the readback thread; :class:`OutputReadback` is the renderer's output side of all three.

Asynchronous path (no pipeline stall): frame n is copied into PBO n % 2 with a fence;
the call for frame n maps PBO (n - 1) % 2, which the GPU finished meanwhile, and returns
frame n - 1. One frame of latency; the first call returns None, and :meth:`PboReadback.flush`
returns the last frame at the end of a stream. Frames in flight (headless EGL): the
readback thread of :mod:`render.frame_reader` reads output slot n % slots while the next
frame is drawn into the next slot.
"""

from __future__ import annotations

import ctypes
import logging
from typing import Any, Callable

import numpy as np
from ._gl import GL

from .frame_reader import FrameReader
from .gpu import Buffer, Ledger
from .targets import RenderTargets

log = logging.getLogger(__name__)


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


class OutputReadback:
    """Reading a renderer's output (:class:`render.targets.RenderTargets`) back: synchronously
    (:meth:`read_rgba`), through the PBO double buffer (:meth:`read_rgba_async`,
    :meth:`flush`) or, with :attr:`slots` > 1, on the readback thread (frames in flight:
    :class:`render.frame_reader.FrameReader`), every frame in straight alpha by ``straight``.

    The renderer makes its targets with :attr:`slots` slots and :meth:`attach` es them; before
    each frame it calls :meth:`begin_frame`, which selects the next free slot when frames are
    in flight.

    Args:
        ledger: the renderer's GL object ledger.
        context: the drawing context (the readback thread shares it); None: no thread.
        straight: (H, W, 4) uint8 -> the same array in straight alpha (the renderer's, which
            depends on its background), applied to every frame read.

    Attributes:
        slots: output slots the targets are made with (1: no readback thread).
        reader: the readback thread, or None.
        pixel_reads: framebuffer -> CPU copies started so far (:meth:`read_rgba`, and
            :meth:`read_rgba_async` per queued frame); presenting in a window copies nothing.
    """

    def __init__(self, ledger: Ledger, context, straight: Callable[[np.ndarray], np.ndarray]):
        self.ledger = ledger
        self.context = context
        self._straight = straight
        self.slots = 1
        self.reader: FrameReader | None = None
        self.pixel_reads = 0
        self._targets: RenderTargets | None = None
        self._pbo: PboReadback | None = None
        self._frame_open = False                     # the current slot holds a frame not yet queued

    @property
    def pending(self) -> int:
        """Frames waiting in the PBO double buffer (0, 1 or 2)."""
        return self._pbo.pending if self._pbo is not None else 0

    def attach(self, targets: RenderTargets) -> bool:
        """Read from ``targets`` (made with :attr:`slots` slots): a PBO pair of their size and,
        with :attr:`slots` > 1, the readback thread. Returns False when the thread could not
        start (no shared EGL context): :attr:`slots` is then 1 and nothing is attached — make
        the targets again and attach them."""
        self._targets = targets
        self._pbo = PboReadback(self.ledger, targets.size)
        self._frame_open = False
        if self.slots > 1:
            try:
                self.reader = FrameReader(self.context, [t.id for t in targets.final_texs], targets.size,
                                          straight=self._straight)
            except Exception as exc:  # noqa: BLE001 - no shared context here: the PBO path
                log.warning("frames read back on the drawing thread (no shared EGL context: %s)", exc)
                self.slots = 1
                self.detach()
                return False
        return True

    def detach(self) -> None:
        """Stop the readback thread and free the PBOs (frames still queued are dropped). Idempotent."""
        if self.reader is not None:
            self.reader.close()
            self.reader = None
        if self._pbo is not None:
            self._pbo.release()
            self._pbo = None
        self._targets = None

    def begin_frame(self) -> None:
        """Before a frame is drawn: with frames in flight, select the next output slot (once
        per frame; panes drawn after the first go to the same slot).

        Raises:
            RuntimeError: that slot's frame has not been returned yet by :meth:`read_rgba_async`.
        """
        if self.reader is None or self._frame_open:
            return
        t = self._targets
        nxt = (t.slot + 1) % t.slots
        if self.reader.busy(nxt):
            raise RuntimeError("frames in flight: read_rgba_async() returns a slot's frame before it is drawn again")
        t.select(nxt)
        self._frame_open = True

    def read_rgba(self, out: np.ndarray | None = None) -> np.ndarray:
        """The last drawn frame as (H, W, 4) uint8 sRGB, straight alpha, row 0 = top
        (synchronous: waits for the GPU)."""
        t = self._targets
        w, h = t.size
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, t.final.id)
        self.pixel_reads += 1
        return self._straight(read_pixels(w, h, out))

    def read_rgba_async(self, tag: Any = None, out: np.ndarray | None = None) -> tuple[np.ndarray, Any] | None:
        """Queue the last drawn frame and return the previous queued one, (rgba, tag), or None
        on the first call (:meth:`render.Renderer.read_rgba_async`).

        Raises:
            RuntimeError: the readback thread failed to read a frame.
        """
        self.pixel_reads += 1
        t = self._targets
        if self.reader is not None:
            self.reader.submit(t.slot, tag)
            self._frame_open = False
            if not self.reader.busy((t.slot + 1) % t.slots):
                return None
            return _copy(self.reader.collect(), out)
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, t.final.id)
        self._pbo.request(tag)
        got = self._pbo.fetch(out)
        if got is not None:
            self._straight(got[0])
        return got

    def flush(self, out: np.ndarray | None = None) -> tuple[np.ndarray, Any] | None:
        """The oldest queued frame not returned yet, (rgba, tag), or None; reads no new pixels
        (:meth:`render.Renderer.flush_readback`)."""
        if self.reader is not None:
            return _copy(self.reader.collect(), out)
        got = self._pbo.flush(out)
        if got is not None:
            self._straight(got[0])
        return got


def _copy(got, out: np.ndarray | None):
    """``got`` (rgba, tag) with rgba copied into ``out`` when given."""
    if got is None or out is None:
        return got
    np.copyto(out, got[0])
    return out, got[1]
