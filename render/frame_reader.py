"""Frames in flight: a frame is read back on a thread of its own while the next one is drawn
(issue 20).

On llvmpipe the rasteriser threads start a frame's pixels when it is flushed, and reading
any output image back from the drawing context waits for *every* queued frame (Mesa's
``llvmpipe_flush_resource`` finishes the whole pipe when the image was a render target of a
queued scene). So the drawing thread could not bin frame n + 1 while frame n rasterised:
draw calls (~5 ms of a 1280×720 frame) and rasterisation (~5-10 ms) took turns.

A :class:`FrameReader` owns a second EGL context sharing the renderer's objects
(:meth:`render.egl.EglContext.shared`) on its own thread. The renderer draws frame n into
output slot n % ``slots`` (:class:`render.targets.RenderTargets`), puts a fence after it and
flushes; the reader thread waits for that fence, reads the slot's image with
``glReadPixels`` from its own context (which has queued nothing, so nothing else is waited
for) into the slot's own buffer, and turns partly transparent pixels into straight alpha.
Meanwhile the drawing thread simulates and draws frame n + 1 into the next slot. Frames come
back in the order they were drawn; the pixels are those the drawing context would have
read (the same image, the same bytes).

EGL only (a window's context cannot be shared this way here); the renderer falls back to
its PBO double buffer otherwise (:meth:`render.Renderer.start_reader`).
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable

import numpy as np

from ._gl import GL

log = logging.getLogger(__name__)

#: Output slots in flight: one drawn while the other is rasterised and read.
DEFAULT_SLOTS = 2
#: Longest wait for one frame's fence, ns (a stuck rasteriser is an error, not a hang).
FENCE_TIMEOUT_NS = 10_000_000_000


class FrameReader:
    """Reads the renderer's output slots back on a thread with a shared context (module doc).

    Args:
        context: the drawing context (an :class:`render.egl.EglContext`); must be current on
            the calling thread, which is the drawing thread.
        textures: GL names of the slots' output textures (RGBA8 sRGB, ``size``).
        size: (width, height) pixels.
        straight: called on the reader thread with each frame (H, W, 4) uint8 before it is
            returned (the renderer turns premultiplied pixels into straight alpha there).

    Raises:
        render.ContextError: no shared context could be made.
    """

    def __init__(self, context, textures: list[int], size: tuple[int, int], *,
                 straight: Callable[[np.ndarray], Any] | None = None):
        self.size = (int(size[0]), int(size[1]))
        w, h = self.size
        self.slots = len(textures)
        self._textures = [int(t) for t in textures]
        self._straight = straight
        self._buffers = [np.empty((h, w, 4), np.uint8) for _ in textures]
        self._tags: list[Any] = [None] * self.slots
        self._pending: list[int] = []              # slots submitted and not yet returned, in order
        self._done = [threading.Event() for _ in textures]
        self._errors: list[BaseException | None] = [None] * self.slots
        self._jobs: queue.Queue = queue.Queue()
        self._shared = context.shared()
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="swaycam-readback", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._start_error is not None:
            self._thread.join()
            raise self._start_error
        #: frames read back so far
        self.frames = 0

    # ------------------------------------------------------------------ reader thread
    def _run(self) -> None:
        fbos = []
        try:
            self._shared.make_current()
            for tex in self._textures:            # framebuffers are per context: this one's own
                fbo = int(GL.glGenFramebuffers(1))
                GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, fbo)
                GL.glFramebufferTexture2D(GL.GL_READ_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT0, GL.GL_TEXTURE_2D, tex, 0)
                fbos.append(fbo)
            GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)
            GL.glBindBuffer(GL.GL_PIXEL_PACK_BUFFER, 0)
        except BaseException as exc:  # noqa: BLE001 - handed to the constructor
            self._start_error = exc
            self._ready.set()
            self._shared.release()
            return
        self._ready.set()
        w, h = self.size
        try:
            while True:
                job = self._jobs.get()
                if job is None:
                    return
                slot, fence = job
                try:
                    status = GL.glClientWaitSync(fence, 0, FENCE_TIMEOUT_NS)
                    GL.glDeleteSync(fence)
                    if status == GL.GL_TIMEOUT_EXPIRED:
                        raise RuntimeError(f"frame readback: the frame in slot {slot} was not finished "
                                           f"after {FENCE_TIMEOUT_NS / 1e9:g} s")
                    GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, fbos[slot])
                    GL.glReadPixels(0, 0, w, h, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, self._buffers[slot])
                    if self._straight is not None:
                        self._straight(self._buffers[slot])
                except BaseException as exc:  # noqa: BLE001 - raised by collect() on the drawing thread
                    self._errors[slot] = exc
                self._done[slot].set()
        finally:
            GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, 0)
            for fbo in fbos:
                GL.glDeleteFramebuffers(1, [fbo])
            self._shared.release()

    # ------------------------------------------------------------------ drawing thread
    @property
    def pending(self) -> int:
        """Frames submitted and not yet returned."""
        return len(self._pending)

    def submit(self, slot: int, tag: Any = None) -> None:
        """Read slot ``slot`` (just drawn by the drawing context) once the GPU is done with it:
        puts a fence after its commands and flushes them (the rasteriser starts now)."""
        if slot in self._pending:
            raise RuntimeError(f"frame readback: slot {slot} is still in flight")
        fence = GL.glFenceSync(GL.GL_SYNC_GPU_COMMANDS_COMPLETE, 0)
        try:
            GL.glFlush()
        except BaseException:
            GL.glDeleteSync(fence)
            raise
        self._done[slot].clear()        # only now in flight: a failed fence leaves nothing to wait for
        self._tags[slot] = tag
        self._pending.append(slot)
        self._jobs.put((slot, fence))

    def busy(self, slot: int) -> bool:
        """``slot`` is in flight (submitted and not returned by :meth:`collect`)."""
        return slot in self._pending

    def collect(self, *, wait: bool = True) -> tuple[np.ndarray, Any] | None:
        """The oldest frame in flight, (rgba (H, W, 4) uint8, its tag), waiting for it unless
        ``wait`` is False (then None while it is not read yet); None when none is in flight.
        The array is the slot's buffer: valid until that slot is submitted again.

        Raises:
            RuntimeError: the readback of that frame failed (its cause chained).
        """
        if not self._pending:
            return None
        slot = self._pending[0]
        if not wait and not self._done[slot].is_set():
            return None
        self._done[slot].wait()
        self._pending.pop(0)
        err, self._errors[slot] = self._errors[slot], None
        if err is not None:
            raise RuntimeError(f"frame readback failed: {err}") from err
        self.frames += 1
        return self._buffers[slot], self._tags[slot]

    def close(self) -> None:
        """Stop the thread (frames still in flight are dropped: :meth:`collect` them first).
        Idempotent."""
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join()
        self._pending.clear()


__all__ = ["DEFAULT_SLOTS", "FrameReader"]
