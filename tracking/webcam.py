"""Webcam capture: a thread that keeps only the newest frame, with reconnect and backoff.

docs/design.md §2: "never queue stale frames". The capture thread grabs continuously; each grab
replaces the single slot (image + capture timestamp + sequence number). The consumer
takes the newest frame it has not seen yet; frames it was too slow for are counted as
dropped, never delivered late.

The capture timestamp is the monotonic clock (``time.perf_counter_ns``, injectable) read
right after ``grab()`` returns, before the (possibly MJPG) decode in ``retrieve()``.

When reads keep failing for ``lost_after_s`` (the device was unplugged), the thread
releases the device and re-opens it with exponential backoff (``reconnect_initial_s``
doubling up to ``reconnect_max_s``) until it succeeds or the source is closed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .errors import SourceError
from .frame_sources import Frame, FrameSource, SourceInfo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WebcamOptions:
    """Webcam settings.

    Attributes:
        device: OpenCV camera index, or a device path such as ``/dev/video2``.
        width, height: requested resolution in pixels (None: the driver's default).
        fps: requested frame rate (None: the driver's default).
        mjpg: ask for MJPG (USB cameras reach higher rates at high resolutions).
        backend: an OpenCV ``CAP_*`` API preference (None: automatic).
        lost_after_s: reads failing this long mean the device is gone -> reconnect.
        reconnect_initial_s, reconnect_max_s: backoff between reconnect attempts.
    """

    device: int | str = 0
    width: int | None = 640
    height: int | None = 480
    fps: float | None = 30.0
    mjpg: bool = True
    backend: int | None = None
    lost_after_s: float = 1.0
    reconnect_initial_s: float = 0.5
    reconnect_max_s: float = 8.0


def _default_capture(device: int | str, backend: int | None) -> Any:
    import cv2

    return cv2.VideoCapture(device) if backend is None else cv2.VideoCapture(device, backend)


class WebcamSource(FrameSource):
    """A live camera (module doc).

    Args:
        options: :class:`WebcamOptions`.
        capture_factory: ``(device, backend) -> VideoCapture-like`` (``isOpened``, ``set``,
            ``get``, ``grab``, ``retrieve``, ``release``); OpenCV's by default. Tests inject fakes.
        clock_ns: the capture clock.

    Raises:
        SourceError: the device cannot be opened.
    """

    def __init__(self, options: WebcamOptions = WebcamOptions(), *,
                 capture_factory: Callable[[int | str, int | None], Any] = _default_capture,
                 clock_ns: Callable[[], int] = time.perf_counter_ns) -> None:  # fmt: skip
        self.options = options
        self._factory, self._clock = capture_factory, clock_ns
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._slot: tuple[np.ndarray, int, int] | None = None  # (BGR image, t_ns, seq)
        self._seq = 0
        self._taken = -1
        self.frames_captured = 0
        self.frames_dropped = 0
        self.reconnects = 0
        self.state = "opening"
        dev = options.device
        if (capture_factory is _default_capture and isinstance(dev, str) and dev.startswith("/dev/")
                and not os.path.exists(dev)):
            raise SourceError(f"webcam {dev!r}: could not be opened: no such device "
                              "(is the camera plugged in? `ls /dev/video*` lists the ones there are)")
        self._cap = self._open()
        if self._cap is None:
            raise SourceError(f"webcam {dev!r}: could not be opened "
                              "(not connected, no permission, or in use by another program)")  # fmt: skip
        import cv2

        w = int(self._cap.get(cv2.CAP_PROP_FRAME_WIDTH) or options.width or 0)
        h = int(self._cap.get(cv2.CAP_PROP_FRAME_HEIGHT) or options.height or 0)
        fps = float(self._cap.get(cv2.CAP_PROP_FPS) or options.fps or 0.0)
        self.info = SourceInfo(f"webcam {options.device}", w, h, fps, None, live=True)
        self.state = "running"
        self._thread = threading.Thread(target=self._run, name=f"webcam-{options.device}", daemon=True)
        self._thread.start()

    def _open(self):
        import cv2

        o = self.options
        try:
            cap = self._factory(o.device, o.backend)
        except Exception as exc:  # noqa: BLE001 - a failed open is reported as not opened
            log.debug("webcam %r: open raised %s", o.device, exc)
            return None
        if cap is None or not cap.isOpened():
            if cap is not None:
                cap.release()
            return None
        if o.mjpg:
            cap.set(cv2.CAP_PROP_FOURCC, float(cv2.VideoWriter_fourcc(*"MJPG")))
        if o.width:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, float(o.width))
        if o.height:
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, float(o.height))
        if o.fps:
            cap.set(cv2.CAP_PROP_FPS, float(o.fps))
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1.0)  # keep the driver's queue short
        return cap

    def _run(self) -> None:
        o = self.options
        last_ok = self._clock()
        while not self._stop.is_set():
            cap = self._cap
            img = None
            try:
                ok = bool(cap.grab())
                t = self._clock()
                if ok:
                    ok, img = cap.retrieve()
                    ok = bool(ok) and img is not None
            except Exception as exc:  # noqa: BLE001 - a driver error is a failed read
                log.debug("webcam %r: read raised %s", o.device, exc)
                ok, t = False, self._clock()
            if ok:
                last_ok = t
                with self._cond:
                    self._slot = (img, t, self._seq)
                    self._seq += 1
                    self.frames_captured += 1
                    self._cond.notify_all()
                continue
            if (t - last_ok) * 1e-9 < o.lost_after_s:
                self._stop.wait(0.005)
                continue
            self._reconnect()
            last_ok = self._clock()

    def _reconnect(self) -> None:
        o = self.options
        log.warning("webcam %r: no frames for %.1f s; reconnecting", o.device, o.lost_after_s)
        self.state = "reconnecting"
        self._cap.release()
        delay = o.reconnect_initial_s
        while not self._stop.wait(delay):
            cap = self._open()
            if cap is not None:
                self._cap = cap
                self.reconnects += 1
                self.state = "running"
                log.info("webcam %r: reconnected", o.device)
                return
            delay = min(delay * 2.0, o.reconnect_max_s)

    def _take(self) -> Frame | None:
        import cv2

        img, t, seq = self._slot
        self.frames_dropped += seq - self._taken - 1
        self._taken = seq
        return Frame(np.ascontiguousarray(cv2.cvtColor(img, cv2.COLOR_BGR2RGB)), t, seq)

    def latest(self) -> Frame | None:
        """The newest frame not yet returned, or None (non-blocking)."""
        with self._cond:
            if self._slot is None or self._slot[2] <= self._taken:
                return None
            return self._take()

    def read(self, timeout_s: float | None = None) -> Frame | None:
        """Wait for a frame newer than the last one returned; None when closed or on timeout."""
        with self._cond:
            ok = self._cond.wait_for(
                lambda: self._stop.is_set() or (self._slot is not None and self._slot[2] > self._taken), timeout_s
            )
            if not ok or self._stop.is_set():
                return None
            return self._take()

    def close(self) -> None:
        """Stop the capture thread and release the device. Idempotent."""
        if self._stop.is_set():
            return
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._thread.join(timeout=5.0)
        if self._cap is not None:
            self._cap.release()
        self.state = "closed"
