"""Head pose inputs of the loop: pose tracks, offline tracking of files, live tracking.

All of them answer ``sample(t_ns, out)`` in the loop's time base:

- :class:`TrackInput`: a recorded or synthetic :class:`tracking.PoseTrack` (deterministic).
- :class:`OfflineTracking`: a file (video, GIF, image, folder) tracked frame by frame as the
  loop reaches each frame's media time (``pump``), reading one source frame ahead so the
  pose between two frames is interpolated, never held. Deterministic; no thread.
- :class:`LiveTracking`: a webcam or a file played in real time, tracked on its own thread
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
from tracking.pose_track import PoseSample, PoseTrack
from tracking.sources import FrameSource
from tracking.track_io import PoseTrackWriter

from .metrics import LiveMetrics

log = logging.getLogger(__name__)


class TrackInput:
    """A pose track as loop input; its own times are the loop times."""

    def __init__(self, track: PoseTrack):
        self.track = track
        self.start_ns = track.start_ns
        self.end_ns = track.end_ns

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        return self.track.sample(t_ns, out=out)

    def recenter(self) -> None:
        """A recorded track is already neutral-relative; nothing to do."""


class _Tracked:
    """Shared parts: tracker, pose filter, optional recording of avatar-frame samples."""

    def __init__(self, source: FrameSource, *, tracker: FaceTrackerOptions, pose: PoseFilterOptions,
                 metrics: LiveMetrics | None, record: str | None):
        self.source = source
        self.filter = PoseFilter(pose)
        self.metrics = metrics
        self._tracker_options = tracker
        self._writer = PoseTrackWriter(record) if record else None
        self._rec = PoseSample()
        self.frames = 0
        self.faces = 0

    def _track(self, tracker: FaceTracker, frame, t_loop: int) -> None:
        t0 = time.perf_counter()
        obs = tracker.process(frame.image, t_loop, index=frame.index)
        ms = (time.perf_counter() - t0) * 1e3
        self.filter.push(obs)
        self.frames += 1
        self.faces += bool(obs.found)
        if self.metrics is not None:
            self.metrics.tracker(ms, face_found=bool(obs.found))
        if self._writer is not None:
            self.filter.sample(t_loop + self.filter.options.delay_ns, out=self._rec)
            self._rec.t_ns = t_loop
            self._writer.write_sample(self._rec)

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        return self.filter.sample(t_ns, out=out)

    def recenter(self) -> None:
        self.filter.recenter()

    def _close_writer(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class OfflineTracking(_Tracked):
    """Track a file source synchronously as the loop advances (see module doc).

    Loop time = media time (the first frame is at its container time, usually 0). The pose
    filter runs with no delay: frames up to one source frame past t are always tracked.
    """

    def __init__(self, source: FrameSource, *, tracker: FaceTrackerOptions = FaceTrackerOptions(),
                 pose: PoseFilterOptions = PoseFilterOptions(), metrics: LiveMetrics | None = None,
                 record: str | None = None):
        super().__init__(source, tracker=tracker, pose=replace(pose, delay_ns=0), metrics=metrics, record=record)
        self._tracker = FaceTracker(tracker)
        fps = source.info.fps or 25.0
        self._lookahead = int(1e9 / fps) + 1
        self._next = source.read()
        self.start_ns = self._next.timestamp_ns if self._next is not None else 0
        self.last_frame_ns = self.start_ns
        self.exhausted = self._next is None

    def pump(self, t_ns: int) -> None:
        """Track every source frame with media time <= t + one frame interval."""
        while self._next is not None and self._next.timestamp_ns <= t_ns + self._lookahead:
            frame = self._next
            self._track(self._tracker, frame, frame.timestamp_ns)
            self.last_frame_ns = frame.timestamp_ns
            self._next = self.source.read()
        self.exhausted = self._next is None

    def close(self) -> None:
        self._tracker.close()
        self._close_writer()
        self.source.close()


class LiveTracking(_Tracked):
    """Track a live source on its own thread (see module doc).

    Webcam frames carry monotonic capture times (the loop's clock); frames of a file played
    in real time carry media times, mapped to the loop clock at the first frame.
    """

    def __init__(self, source: FrameSource, *, tracker: FaceTrackerOptions = FaceTrackerOptions(),
                 pose: PoseFilterOptions = PoseFilterOptions(), metrics: LiveMetrics | None = None,
                 record: str | None = None, clock_ns=time.perf_counter_ns):
        super().__init__(source, tracker=tracker, pose=pose, metrics=metrics, record=record)
        self._clock = clock_ns
        self._offset: int | None = 0 if source.info.live else None
        self._stop = threading.Event()
        self.newest_capture_ns: int | None = None
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="swaycam-tracker", daemon=True)

    def start(self) -> "LiveTracking":
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            with FaceTracker(self._tracker_options) as tracker:
                while not self._stop.is_set():
                    frame = self.source.read()
                    if frame is None:
                        break
                    if self._offset is None:
                        self._offset = self._clock() - frame.timestamp_ns
                    t_loop = frame.timestamp_ns + self._offset
                    self._track(tracker, frame, t_loop)
                    self.newest_capture_ns = t_loop
        except BaseException as exc:  # noqa: BLE001 - reported to the loop, never silently lost
            self.error = exc
            log.error("tracking stopped: %s", exc)
        finally:
            self.finished.set()

    def close(self) -> None:
        self._stop.set()
        self.source.close()
        self._thread.join(timeout=5)
        self._close_writer()
