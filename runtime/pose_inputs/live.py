"""Live tracking as loop input: a webcam, or a file played in real time.

:class:`LiveInput` tracks on its own thread (the newest frame wins; tracking never blocks
rendering) into a :class:`tracking.PoseFilter` that the loop samples with a small delay
(DESIGN §2, live latency rule). A file goes through :class:`PlayedAsCamera` first, which
delivers it the way a webcam would.
"""

from __future__ import annotations

import logging
import threading
import time

from tracking.face_tracker import FaceTrackerOptions
from tracking.frame_sources import FrameSource
from tracking.pose_filter import PoseFilterOptions
from tracking.pose_track import PoseSample
from tracking.track_io import PoseTrackWriter

from ..telemetry import Telemetry
from .offline import track_header

log = logging.getLogger(__name__)


class PlayedAsCamera:
    """A file played in real time the way a webcam delivers frames: a capture thread reads
    it at media pace and keeps only the newest frame (stamped on the loop clock); a slow
    consumer skips frames instead of falling behind. ``read(timeout_s)`` returns the newest
    unseen frame, or None on timeout; :attr:`ended` is set once the file is exhausted."""

    live = True

    def __init__(self, source: FrameSource, clock_ns=time.perf_counter_ns):
        self.source, self.info, self._clock = source, source.info, clock_ns
        self._cond = threading.Condition()
        self._slot = None
        self._taken = -1
        self._seq = 0
        self.frames_dropped = 0
        self.ended = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="swaycam-playback", daemon=True)

    def start(self) -> None:
        """Start playing (the loop calls this when its clock starts, not at set-up)."""
        if not self._thread.is_alive() and not self.ended.is_set():
            self._thread.start()

    def _run(self) -> None:
        offset = None
        try:
            while not self._stop.is_set():
                frame = self.source.read()  # the source paces itself (realtime=True)
                if frame is None:
                    break
                if offset is None:
                    offset = self._clock() - frame.timestamp_ns
                frame.timestamp_ns += offset
                with self._cond:
                    self._slot = (frame, self._seq)
                    self._seq += 1
                    self._cond.notify_all()
        finally:
            self.ended.set()
            with self._cond:
                self._cond.notify_all()

    def read(self, timeout_s: float | None = None):
        with self._cond:
            ok = self._cond.wait_for(lambda: self._stop.is_set() or self.ended.is_set()
                                     or (self._slot is not None and self._slot[1] > self._taken), timeout_s)
            if not ok or self._slot is None or self._slot[1] <= self._taken:
                return None
            frame, seq = self._slot
            self.frames_dropped += seq - self._taken - 1
            self._taken = seq
            return frame

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.source.close()


class LiveInput:
    """Live tracking (:class:`tracking.live.LiveTracking`: its own thread, newest frame wins)
    as a loop input, with metrics and optional recording.

    Webcam frames carry monotonic capture times (the loop's clock); a file played in real
    time goes through :class:`PlayedAsCamera` (newest frame wins, loop-clock timestamps).
    """

    def __init__(self, source: FrameSource, *, tracker: FaceTrackerOptions = FaceTrackerOptions(),
                 pose: PoseFilterOptions = PoseFilterOptions(), metrics: Telemetry | None = None,
                 record: str | None = None, clock_ns=time.perf_counter_ns):
        from tracking.live import LiveTracking

        self._clock = clock_ns
        self.source = source if source.info.live else PlayedAsCamera(source, clock_ns)
        self.metrics = metrics
        self.newest_capture_ns: int | None = None
        self.frames = 0
        self.faces = 0
        self._writer = PoseTrackWriter(record, track_header(source, pose)) if record else None
        self._rec = PoseSample()
        self.tracking = LiveTracking(self.source, tracker_options=tracker, pose_options=pose, clock_ns=clock_ns,
                                     on_observation=self._observed)
        self.filter = self.tracking.pose_filter

    def _observed(self, obs) -> None:
        self.newest_capture_ns = obs.timestamp_ns
        self.frames += 1
        self.faces += bool(obs.found)
        if self.metrics is not None:
            self.metrics.tracker((self._clock() - obs.timestamp_ns) * 1e-6, face_found=bool(obs.found))
        if self._writer is not None:
            self.filter.sample(obs.timestamp_ns + self.filter.options.delay_ns, out=self._rec)
            self._rec.t_ns = obs.timestamp_ns
            self._writer.write_sample(self._rec)

    def start(self) -> "LiveInput":
        start = getattr(self.source, "start", None)
        if start is not None:
            start()
        self.tracking.start()
        return self

    @property
    def finished(self) -> bool:
        """A file source ended (or tracking failed: see :attr:`error`)."""
        if self.tracking.error is not None:
            return True
        ended = getattr(self.source, "ended", None)
        return ended is not None and ended.is_set() and self.newest_capture_ns is not None and \
            self._clock() - self.newest_capture_ns > 2 * self.filter.options.delay_ns

    @property
    def error(self) -> BaseException | None:
        return self.tracking.error

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        return self.filter.sample(t_ns, out=out)

    def recenter(self) -> None:
        self.filter.recenter()

    def close(self) -> None:
        self.tracking.close()
        self.source.close()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
