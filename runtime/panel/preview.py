"""The panel's live preview: JPEG frames of what the outputs show, at a capped rate, read back
only while a client watches, encoded off the render thread.

Render thread, after each drawn frame (:meth:`PreviewTap.frame_drawn`):

    a frame requested earlier, finished by the GPU (or MAX_DEFER_FRAMES later)?
                                    ─> take it from the tap's PBO (no stall)
                                    ─> copy into the encoder's buffer (when the encoder is idle)
    a client connected, the period (1 / max_fps) elapsed, the encoder idle?
                                 ─> request this frame (:class:`render.frame_tap.FrameTap`)

The tap blits the output down to ``width`` on the GPU side before reading it back (a quarter
of the pixels or less). Encoder thread: RGBA ─> BGR, JPEG (OpenCV releases the GIL) ─> :meth:`PreviewTap.latest` / :meth:`PreviewTap.wait_next` for the stream
handlers (``GET /preview.mjpg``). With no client nothing is read back and the encoder sleeps.
``swaycam bench panel`` measures what it costs the render loop.
"""

from __future__ import annotations

import logging
import threading
import time

import numpy as np

log = logging.getLogger(__name__)

#: Preview defaults: frames per second at most, width in pixels, JPEG quality (0-100).
PREVIEW_MAX_FPS = 10.0
PREVIEW_WIDTH = 480
PREVIEW_QUALITY = 75
#: Frames a requested preview frame may stay unfinished by the GPU before the render thread
#: waits for it (software GL finishes work when something waits for it).
MAX_DEFER_FRAMES = 4


class PreviewTap:
    """Frames for preview clients (see the module doc).

    Args:
        max_fps: cap on frames read back and encoded per second (> 0).
        width: preview width in pixels (the height keeps the aspect; never upscaled).
        quality: JPEG quality 1..100.

    Attributes:
        frames_read: frames read back so far; frames_encoded: JPEGs made so far.
    """

    def __init__(self, *, max_fps: float = PREVIEW_MAX_FPS, width: int = PREVIEW_WIDTH,
                 quality: int = PREVIEW_QUALITY):
        if not max_fps > 0:
            raise ValueError(f"preview max_fps {max_fps!r} must be > 0")
        self.period_ns = int(1e9 / max_fps)
        self.width = int(width)
        self.quality = int(quality)
        self.frames_read = 0
        self.frames_encoded = 0
        self._tap = None
        self._buf: np.ndarray | None = None
        self._last_request_ns: int | None = None
        self._waited = 0            # frames the pending request has not been ready
        self._cond = threading.Condition()
        self._clients = 0
        self._busy = False          # the encoder owns _buf
        self._jpeg: bytes | None = None
        self._seq = 0
        self._closed = False
        self._thread = threading.Thread(target=self._encode_loop, name="swaycam-preview", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ clients (any thread)
    @property
    def clients(self) -> int:
        return self._clients

    def connect(self) -> None:
        """A client starts watching (pair with :meth:`disconnect`)."""
        with self._cond:
            self._clients += 1

    def disconnect(self) -> None:
        with self._cond:
            self._clients = max(0, self._clients - 1)

    def latest(self) -> tuple[int, bytes | None]:
        """(sequence number, JPEG bytes) of the newest encoded frame (None before the first)."""
        with self._cond:
            return self._seq, self._jpeg

    def wait_next(self, after_seq: int, timeout_s: float) -> tuple[int, bytes | None]:
        """The first frame newer than ``after_seq``, waiting up to ``timeout_s`` seconds
        (returns the same ``after_seq`` and None on a timeout or after :meth:`close`)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self._seq <= after_seq and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return after_seq, None
                self._cond.wait(left)
            if self._seq <= after_seq:
                return after_seq, None
            return self._seq, self._jpeg

    # ------------------------------------------------------------------ render thread
    def frame_drawn(self, renderer, wall_ns: int) -> None:
        """After a frame is drawn (render thread, GL current): take the frame requested last
        time, request this one when a client watches and the period has elapsed."""
        if self._tap is None:
            if not self._clients:
                return
            from render.frame_tap import FrameTap

            self._tap = FrameTap(renderer, width=self.width)
        tap = self._tap
        if tap.pending:
            if tap.ready or self._waited >= MAX_DEFER_FRAMES or self._closed:
                self._waited = 0
                self._take(tap)
            else:
                self._waited += 1      # not finished by the GPU yet: look again next frame
                return
        if (self._clients and not self._busy and not self._closed
                and (self._last_request_ns is None or wall_ns - self._last_request_ns >= self.period_ns)):
            tap.request(wall_ns)
            self._last_request_ns = wall_ns

    def _take(self, tap) -> None:
        w, h = tap.size
        if self._buf is None or self._buf.shape[:2] != (h, w):
            self._buf = np.empty((h, w, 4), np.uint8)
        with self._cond:
            if self._busy:             # never happens (no request while busy); keep the frame out
                return
        got = tap.take(self._buf)
        if got is None:
            return
        self.frames_read += 1
        with self._cond:
            self._busy = True
            self._cond.notify_all()

    def release(self) -> None:
        """Free the GL objects (render thread)."""
        if self._tap is not None:
            self._tap.release()
            self._tap = None

    # ------------------------------------------------------------------ encoder thread
    def _encode_loop(self) -> None:
        while True:
            with self._cond:
                while not self._busy and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                rgba = self._buf
            try:
                import cv2      # here, not when the thread starts: a run nobody watches never loads OpenCV

                h, w = rgba.shape[:2]
                bgr = cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGR)
                if w > self.width:
                    bgr = cv2.resize(bgr, (self.width, max(1, round(h * self.width / w))),
                                     interpolation=cv2.INTER_AREA)
                ok, enc = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
                jpeg = enc.tobytes() if ok else None
            except Exception:  # noqa: BLE001 - a preview failure must never reach the render loop
                log.exception("preview: encoding failed")
                jpeg = None
            with self._cond:
                self._busy = False
                if jpeg is not None:
                    self._jpeg = jpeg
                    self._seq += 1
                    self.frames_encoded += 1
                self._cond.notify_all()

    def close(self) -> None:
        """Stop the encoder and wake every waiting client (any thread; idempotent)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=2)
