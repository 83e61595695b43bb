"""Head pose inputs of the loop: pose tracks, offline tracking of files, live tracking.

All of them answer ``sample(t_ns, out)`` in the loop's time base:

- :class:`TrackInput`: a recorded or synthetic :class:`tracking.PoseTrack` (deterministic).
- :class:`OfflineTracking`: a file (video, GIF, image, folder) tracked frame by frame as the
  loop reaches each frame's media time (``pump``), reading one source frame ahead so the
  pose between two frames is interpolated, never held. Deterministic; no thread.
- :class:`LiveInput`: a webcam or a file played in real time, tracked on its own thread
  (the newest frame wins; tracking never blocks rendering) into a :class:`PoseFilter`
  that the loop samples with a small delay (DESIGN §2, live latency rule).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace

from tracking.face_tracker import FaceTracker, FaceTrackerOptions
from tracking.pose_filter import PoseFilter, PoseFilterOptions
from tracking.pose_track import PoseSample, PoseTrack, TrackHeader
from tracking.sources import FrameSource
from tracking.track_io import PoseTrackWriter

from .metrics import LiveMetrics

log = logging.getLogger(__name__)


def _header(source: FrameSource, pose: PoseFilterOptions) -> TrackHeader:
    """The header of a ``--record`` track: where the poses came from and the filter used."""
    from tracking.pipeline import jsonable

    info = source.info
    return TrackHeader(frame="avatar", source=info.name, settings={
        "pose": jsonable(pose), "width": info.width, "height": info.height, "fps": info.fps})


class TrackInput:
    """A pose track as loop input.

    Offline its own times are the loop times. Played live (``start(clock)``), track time
    ``start_ns`` is mapped to the loop time at which :meth:`start` is called, and
    :attr:`finished` turns True past the track's end.
    """

    def __init__(self, track: PoseTrack):
        self.track = track
        self.start_ns = track.start_ns
        self.end_ns = track.end_ns
        self._offset = 0
        self._clock = None

    def start(self, clock_ns=time.perf_counter_ns) -> "TrackInput":
        self._clock = clock_ns
        self._offset = clock_ns() - self.track.start_ns
        return self

    @property
    def finished(self) -> bool:
        return self._clock is not None and self._clock() - self._offset > self.end_ns

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        out = self.track.sample(t_ns - self._offset, out=out)
        out.t_ns = t_ns
        return out

    def recenter(self) -> None:
        """A recorded track is already neutral-relative; nothing to do."""


class OfflineTracking:
    """Track a file source synchronously as the loop advances (see module doc).

    Loop time = media time (the first frame is at its container time, usually 0). The pose
    filter runs with no delay: frames up to one source frame past t are always tracked.
    """

    def __init__(self, source: FrameSource, *, tracker: FaceTrackerOptions = FaceTrackerOptions(),
                 pose: PoseFilterOptions = PoseFilterOptions(), metrics: LiveMetrics | None = None,
                 record: str | None = None):
        self.source = source
        self.filter = PoseFilter(replace(pose, delay_ns=0))
        self.metrics = metrics
        self._writer = PoseTrackWriter(record, _header(source, self.filter.options)) if record else None
        self._rec = PoseSample()
        self.frames = 0
        self.faces = 0
        self._tracker = FaceTracker(tracker)
        fps = source.info.fps or 25.0
        self._lookahead = int(1e9 / fps) + 1
        self._next = source.read()
        self.start_ns = self._next.timestamp_ns if self._next is not None else 0
        self.last_frame_ns = self.start_ns

    def _track(self, frame) -> None:
        t0 = time.perf_counter()
        obs = self._tracker.process_frame(frame)
        ms = (time.perf_counter() - t0) * 1e3
        self.filter.push(obs)
        self.frames += 1
        self.faces += bool(obs.found)
        if self.metrics is not None:
            self.metrics.tracker(ms, face_found=bool(obs.found))
        if self._writer is not None:
            self.filter.sample(frame.timestamp_ns, out=self._rec)
            self._writer.write_sample(self._rec)

    def pump(self, t_ns: int) -> None:
        """Track every source frame with media time <= t + one frame interval."""
        while self._next is not None and self._next.timestamp_ns <= t_ns + self._lookahead:
            self._track(self._next)
            self.last_frame_ns = self._next.timestamp_ns
            self._next = self.source.read()

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        return self.filter.sample(t_ns, out=out)

    def recenter(self) -> None:
        self.filter.recenter()

    def close(self) -> None:
        self._tracker.close()
        if self._writer is not None:
            self._writer.close()
        self.source.close()


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
                 pose: PoseFilterOptions = PoseFilterOptions(), metrics: LiveMetrics | None = None,
                 record: str | None = None, clock_ns=time.perf_counter_ns):
        from tracking.live import LiveTracking

        self._clock = clock_ns
        self.source = source if source.info.live else PlayedAsCamera(source, clock_ns)
        self.metrics = metrics
        self.newest_capture_ns: int | None = None
        self.frames = 0
        self.faces = 0
        self._writer = PoseTrackWriter(record, _header(source, pose)) if record else None
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
