"""The pipelined offline frame path (issue 20): tracking runs ahead on its own thread.

Offline, the serial path (:class:`runtime.pose_inputs.OfflineTracking` with ``ahead=0``)
decodes and tracks each source frame on the render thread when the loop reaches its media
time, so the render thread waits for MediaPipe (~10 ms of CPU per 640×360 frame) and the
rasteriser waits for the tracker. Pipelined, a :class:`TrackAhead` worker decodes and
tracks frames in source order into a bounded queue while the render thread simulates,
draws and reads back the frames before; the encoder already runs on its own thread
(:class:`render.sinks.base.BackgroundWriter` feeding ffmpeg's process) and readback goes
through the renderer's PBO double buffer (:mod:`render.readback`).

Determinism: the worker only does what has no shared state with the loop — decoding and
``FaceTracker.process_frame``, in source order (MediaPipe's VIDEO mode sees the same frames
with the same timestamps, so the same results). Everything the loop reads — the pose
filter, its recording, the face counts — is fed on the render thread in ``pump`` exactly as
the serial path feeds it (same observations, same order, same loop times). The output is
therefore bit-identical to the serial path's whatever the timing
(``tests/runtime/test_pipeline.py`` compares the video frames, the recorded pose track and
the hair states).

Bounded: at most ``depth`` tracked frames wait in the queue (the worker blocks when it is
full), so nothing grows; MediaPipe releases the GIL while it runs, OpenCV while it decodes.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass

from tracking.face_tracker import FaceTracker
from tracking.frame_sources import Frame, FrameSource
from tracking.observation import FaceObservation

log = logging.getLogger(__name__)

#: Tracked frames the worker may hold ahead of the loop (offline default). Two cores: one
#: frame being drawn while the next two are tracked keeps both busy; more only costs memory.
DEFAULT_DEPTH = 3


@dataclass(frozen=True)
class TrackedFrame:
    """One source frame after tracking.

    Attributes:
        timestamp_ns: the frame's media time, ns.
        observation: what the tracker made of it (its timestamp is ``timestamp_ns``).
        tracker_ms: the tracker's own wall time for this frame, ms (a measurement).
    """

    timestamp_ns: int
    observation: FaceObservation
    tracker_ms: float


class _End:
    """The queue's end marker (the source is exhausted, or the worker failed: ``error``)."""

    def __init__(self, error: BaseException | None = None):
        self.error = error


class TrackAhead:
    """Decode and track ``source`` on a worker thread, in order, ``depth`` frames ahead.

    Args:
        source: the file source (read only by the worker from now on).
        tracker: the face tracker (used only by the worker from now on).
        first: a frame already read from ``source`` (tracked first), or None.
        depth: tracked frames that may wait in the queue (>= 1).

    :meth:`next` returns the tracked frames in source order and None at the end; an error of
    the worker (decoding, MediaPipe) is raised there, on the caller's thread. :meth:`close`
    stops the worker (it does not close the source or the tracker: their owner does, after).
    """

    def __init__(self, source: FrameSource, tracker: FaceTracker, *, first: Frame | None = None,
                 depth: int = DEFAULT_DEPTH):
        if depth < 1:
            raise ValueError(f"depth {depth}: must be >= 1")
        self._source, self._tracker, self._first = source, tracker, first
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._run, name="swaycam-track-ahead", daemon=True)
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        frame, self._first = self._first, None
        try:
            if frame is None:
                frame = self._source.read()
            while frame is not None and not self._stop.is_set():
                t0 = time.perf_counter()
                obs = self._tracker.process_frame(frame)
                ms = (time.perf_counter() - t0) * 1e3   # the tracker's own cost, a measurement
                if not self._put(TrackedFrame(frame.timestamp_ns, obs, ms)):
                    return
                frame = self._source.read()
        except BaseException as exc:  # noqa: BLE001 - handed to the loop's thread
            log.debug("track-ahead worker failed", exc_info=True)
            self._put(_End(exc))
            return
        self._put(_End())

    def next(self) -> TrackedFrame | None:
        """The next tracked frame in source order (waits for the worker), or None at the end.

        Raises:
            The worker's error (a :class:`tracking.errors.TrackingError`, OSError, ...).
        """
        if self._done:
            return None
        item = self._queue.get()
        if isinstance(item, _End):
            self._done = True
            if item.error is not None:
                raise item.error
            return None
        return item

    def close(self) -> None:
        """Stop the worker and wait for it (a frame in MediaPipe finishes first). Idempotent."""
        self._stop.set()
        while self._thread.is_alive():
            try:
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(timeout=0.05)


__all__ = ["DEFAULT_DEPTH", "TrackAhead", "TrackedFrame"]
