"""Offline tracking of a file (video, GIF, image, folder) as loop input.

:class:`OfflineTracking` tracks each source frame as the loop reaches its media time
(``pump``), reading one source frame ahead so the pose between two frames is interpolated,
never held. Deterministic. With ``ahead`` > 0 the frames are decoded and tracked on a
worker thread that runs up to that many frames ahead (:class:`runtime.pipeline.TrackAhead`);
the pose filter is still fed here, in ``pump``, exactly as without it, so the output is
bit-identical.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from tracking.face_tracker import FaceTracker, FaceTrackerOptions
from tracking.frame_sources import FrameSource
from tracking.pose_filter import PoseFilter, PoseFilterOptions
from tracking.pose_track import ARM_W, PoseSample, TrackHeader
from tracking.timeline import Timeline
from tracking.track_io import PoseTrackWriter

from ..clock import NS_PER_S, Clock
from ..telemetry import Telemetry
from .base import InputStatus, PoseInput

log = logging.getLogger(__name__)


def track_header(source: FrameSource, pose: PoseFilterOptions) -> TrackHeader:
    """The header of a ``--record`` track: where the poses came from and the filter used."""
    from tracking.pipeline import jsonable

    info = source.info
    return TrackHeader(frame="avatar", source=info.name, settings={
        "pose": jsonable(pose), "width": info.width, "height": info.height, "fps": info.fps})


class OfflineTracking(PoseInput):
    """Track a file source synchronously as the loop advances (see module doc and
    :class:`PoseInput`).

    Media time maps to loop time at :meth:`start` (the first frame's media time, usually 0,
    is the loop time of ``start``; without it loop time is media time). The pose filter runs
    with no delay: frames up to one source frame past t are always tracked.

    Args:
        source: the file (read from this thread; closed with the input).
        tracker: MediaPipe face landmarker options.
        pose: pose filter options (its delay is set to 0).
        metrics: telemetry to report tracker time and face found to.
        record: path of a ``.jsonl`` pose track to write (one pose per tracked frame), or None.
        ahead: tracked frames a worker thread may hold ahead of the loop (0: decode and track
            on the loop's thread, the serial path).
        voice: the ``--audio`` timeline (:class:`tracking.audio.stream.VoiceTimeline`, media
            time) whose value at each recorded frame's time is recorded with it, or None.
    """

    def __init__(self, source: FrameSource, *, tracker: FaceTrackerOptions = FaceTrackerOptions(),
                 pose: PoseFilterOptions = PoseFilterOptions(), metrics: Telemetry | None = None,
                 record: str | None = None, ahead: int = 0, voice=None):
        self.source = source
        self.filter = PoseFilter(replace(pose, delay_ns=0))
        self.metrics = metrics
        self._writer = PoseTrackWriter(record, track_header(source, self.filter.options)) if record else None
        self._rec = PoseSample()
        self._voice = voice
        #: the arm poses of the tracked frames (``--hands``: tracking.hands), media time
        self.arms = Timeline(ARM_W, 256) if tracker.hands else None
        self.frames = 0
        self.faces = 0
        self._found = False
        self._offset = 0
        self._closed = False
        self._tracker = FaceTracker(tracker)
        fps = source.info.fps or 25.0
        self._lookahead = int(NS_PER_S / fps) + 1
        first = source.read()
        self.start_ns = first.timestamp_ns if first is not None else 0
        self.last_frame_ns = self.start_ns
        self._ahead = None
        if ahead > 0 and first is not None:
            from ..pipeline import TrackAhead

            self._ahead = TrackAhead(source, self._tracker, first=first, depth=ahead)
            self._next = self._ahead.next()
        else:
            self._next = first

    def start(self, clock: Clock) -> None:
        self._offset = clock.now_ns() - self.start_ns

    def _track(self, frame) -> None:
        if self._ahead is not None:     # a TrackedFrame: tracked on the worker already
            obs, ms = frame.observation, frame.tracker_ms
        else:
            t0 = time.perf_counter()
            obs = self._tracker.process_frame(frame)
            ms = (time.perf_counter() - t0) * 1e3   # the tracker's own cost, a measurement (not run time)
        self.filter.push(obs)
        if self.arms is not None and obs.arms is not None:
            self.arms.append(frame.timestamp_ns, obs.arms)
        self.frames += 1
        self.faces += bool(obs.found)
        self._found = bool(obs.found)
        if self.metrics is not None:
            self.metrics.tracker(ms, face_found=bool(obs.found))
        if self._writer is not None:
            self.filter.sample(frame.timestamp_ns, out=self._rec)
            if self._voice is not None:
                self._voice.sample(frame.timestamp_ns, self._rec.voice)
            self._writer.write_sample(self._rec)

    def pump(self, t_ns: int) -> None:
        """Track every source frame with media time <= t + one frame interval."""
        media = t_ns - self._offset
        while self._next is not None and self._next.timestamp_ns <= media + self._lookahead:
            self._track(self._next)
            self.last_frame_ns = self._next.timestamp_ns
            self._next = self.source.read() if self._ahead is None else self._ahead.next()

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        out = self.filter.sample(t_ns - self._offset, out=out)
        if self.arms is not None:
            self.arms.sample(t_ns - self._offset, out.arms)
        out.t_ns = t_ns
        return out

    def status(self) -> InputStatus:
        return InputStatus(live=False, finished=self._next is None, face_found=self._found,
                           frames_tracked=self.frames, faces=self.faces, start_ns=self.start_ns)

    def recenter(self) -> None:
        self.filter.recenter()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._ahead is not None:
            self._ahead.close()
        self._tracker.close()
        if self._writer is not None:
            self._writer.close()
        self.source.close()
