"""Offline tracking of a file (video, GIF, image, folder) as loop input.

:class:`OfflineTracking` tracks each source frame as the loop reaches its media time
(``pump``), reading one source frame ahead so the pose between two frames is interpolated,
never held. Deterministic; no thread.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from tracking.face_tracker import FaceTracker, FaceTrackerOptions
from tracking.frame_sources import FrameSource
from tracking.pose_filter import PoseFilter, PoseFilterOptions
from tracking.pose_track import PoseSample, TrackHeader
from tracking.track_io import PoseTrackWriter

from ..telemetry import Telemetry

log = logging.getLogger(__name__)


def track_header(source: FrameSource, pose: PoseFilterOptions) -> TrackHeader:
    """The header of a ``--record`` track: where the poses came from and the filter used."""
    from tracking.pipeline import jsonable

    info = source.info
    return TrackHeader(frame="avatar", source=info.name, settings={
        "pose": jsonable(pose), "width": info.width, "height": info.height, "fps": info.fps})


class OfflineTracking:
    """Track a file source synchronously as the loop advances (see module doc).

    Loop time = media time (the first frame is at its container time, usually 0). The pose
    filter runs with no delay: frames up to one source frame past t are always tracked.
    """

    def __init__(self, source: FrameSource, *, tracker: FaceTrackerOptions = FaceTrackerOptions(),
                 pose: PoseFilterOptions = PoseFilterOptions(), metrics: Telemetry | None = None,
                 record: str | None = None):
        self.source = source
        self.filter = PoseFilter(replace(pose, delay_ns=0))
        self.metrics = metrics
        self._writer = PoseTrackWriter(record, track_header(source, self.filter.options)) if record else None
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
