"""Video files (mp4, webm, avi, ...) through OpenCV, with imageio-ffmpeg as the fallback.

Timestamps come from the container (OpenCV's ``CAP_PROP_POS_MSEC``, the presentation time
of the frame just decoded), converted to integer ns from 0. When a backend reports no
usable time (not increasing), ``k · 10⁹ / fps`` is used instead. imageio-ffmpeg always uses
``k · 10⁹ / fps`` (it decodes at a constant rate).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Callable

import numpy as np

from .errors import SourceError
from .frame_sources import Frame, FrameSource, SourceInfo, check_file

log = logging.getLogger(__name__)


class Pacer:
    """Delivers media times in real time: ``wait(t_media_ns)`` sleeps until the wall clock
    has advanced as far since the first call. Clock and sleep are injectable."""

    def __init__(self, clock_ns: Callable[[], int] = time.perf_counter_ns,
                 sleep: Callable[[float], None] = time.sleep) -> None:  # fmt: skip
        self._clock, self._sleep = clock_ns, sleep
        self._origin: int | None = None  # wall time minus media time

    def wait(self, t_media_ns: int) -> None:
        now = self._clock()
        if self._origin is None:
            self._origin = now - t_media_ns
            return
        dt = self._origin + t_media_ns - now
        if dt > 0:
            self._sleep(dt * 1e-9)


class VideoFileSource(FrameSource):
    """A video file, decoded frame by frame.

    Args:
        path: the file.
        realtime: pace delivery at media time (a :class:`Pacer`), else as fast as possible.
        pacer: a custom pacer (tests).

    Raises:
        SourceError: the file is missing, empty, or neither OpenCV nor ffmpeg can decode a
            frame of it (the message names the file and both failures).
    """

    def __init__(self, path: str | os.PathLike, *, realtime: bool = False, pacer: Pacer | None = None) -> None:
        import cv2

        self.path = check_file(path, "video file")
        self._pacer = pacer or (Pacer() if realtime else None)
        self._cap = None
        self._ff = None
        self._k = 0
        self._last_t = -1
        cap = cv2.VideoCapture(str(self.path))
        first = None
        opened = cap.isOpened()
        if opened:
            ok, img = cap.read()
            if ok and img is not None:
                first = img
        if first is not None:
            self._cap = cap
            self._backend = "opencv"
            fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
            count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0) or None
            h, w = first.shape[:2]
            self._pending = (cv2.cvtColor(first, cv2.COLOR_BGR2RGB), self._opencv_time())
        else:
            cap.release()
            opencv_why = "decoded no frame" if opened else "could not open it"
            try:
                import imageio_ffmpeg

                self._ff = imageio_ffmpeg.read_frames(str(self.path), pix_fmt="rgb24")
                meta = next(self._ff)
                w, h = meta["size"]
                fps = float(meta.get("fps") or 0.0)
                count = None
                raw = next(self._ff)
            except Exception as exc:  # noqa: BLE001 - reported with the file name
                self._close_ff()
                why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise SourceError(f"video file {self.path}: not a readable video "
                                  f"(OpenCV {opencv_why}; ffmpeg: {why})") from None  # fmt: skip
            self._backend = "ffmpeg"
            self._pending = (np.frombuffer(raw, np.uint8).reshape(h, w, 3).copy(), None)
        self._fps = fps if fps > 0 else 25.0
        self.info = SourceInfo(str(self.path), int(w), int(h), fps, count)
        log.debug("opened %s with %s: %dx%d @ %.3g fps", self.path, self._backend, w, h, fps)

    def _opencv_time(self) -> int | None:
        import cv2

        ms = self._cap.get(cv2.CAP_PROP_POS_MSEC)
        return int(round(ms * 1e6)) if ms is not None and ms >= 0 else None

    def _next_raw(self):
        if self._pending is not None:
            item, self._pending = self._pending, None
            return item
        if self._cap is not None:
            import cv2

            ok, img = self._cap.read()
            if not ok or img is None:
                return None
            return cv2.cvtColor(img, cv2.COLOR_BGR2RGB), self._opencv_time()
        if self._ff is not None:
            try:
                raw = next(self._ff)
            except StopIteration:
                return None
            h, w = self.info.height, self.info.width
            return np.frombuffer(raw, np.uint8).reshape(h, w, 3).copy(), None
        return None

    def read(self) -> Frame | None:
        item = self._next_raw()
        if item is None:
            return None
        img, t = item
        if t is None or t <= self._last_t:  # no container time: constant rate
            t = max(int(round(self._k * 1e9 / self._fps)), self._last_t + 1)
        self._last_t = t
        k = self._k
        self._k += 1
        if self._pacer is not None:
            self._pacer.wait(t)
        return Frame(img, t, k)

    def _close_ff(self) -> None:
        if self._ff is not None:
            try:
                self._ff.close()
            except Exception:  # noqa: BLE001 - best effort at shutdown
                pass
            self._ff = None

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None
        self._close_ff()
