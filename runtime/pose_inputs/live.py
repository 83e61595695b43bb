"""Live tracking as loop input: a webcam, or a file played in real time.

:class:`LiveInput` tracks on its own thread (the newest frame wins; tracking never blocks
rendering) into a :class:`tracking.PoseFilter` that the loop samples with a small delay
(docs/design.md §2, live latency rule). A file goes through :class:`PlayedAsCamera` first, which
delivers it the way a webcam would.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
import threading
import time

from tracking.face_tracker import FaceTrackerOptions
from tracking.frame_sources import FrameSource
from tracking.pose_filter import PoseFilterOptions
from tracking.pose_track import ARM_W, PoseSample
from tracking.timeline import Timeline
from tracking.track_io import PoseTrackWriter

from ..clock import NS_PER_S, RATE_HZ, Clock
from ..pose_lock import PoseArrivals, ReadDelay
from ..telemetry import Telemetry
from .base import InputStatus, PoseInput
from .offline import track_header

log = logging.getLogger(__name__)


class PlayedAsCamera(FrameSource):
    """A file played in real time the way a webcam delivers frames: a capture thread reads
    it at media pace and keeps only the newest frame (stamped on the loop clock); a slow
    consumer skips frames instead of falling behind. A live source (``info.live``):
    ``read(timeout_s)`` returns the newest unseen frame, or None on timeout; :attr:`ended`
    is set once the file is exhausted."""

    def __init__(self, source: FrameSource, clock_ns=time.perf_counter_ns):
        self.source, self.info, self._clock = source, dataclasses.replace(source.info, live=True), clock_ns
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
        """The newest unseen frame; None after ``timeout_s`` without one, as a camera would (also
        once the file has ended: a consumer polling with a timeout waits, it does not spin),
        or at once after the end when no timeout is given."""
        with self._cond:
            ok = self._cond.wait_for(lambda: self._stop.is_set() or (timeout_s is None and self.ended.is_set())
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


class LiveInput(PoseInput):
    """Live tracking (:class:`tracking.live.LiveTracking`: its own thread, newest frame wins)
    as a loop input, with metrics and optional recording (see :class:`PoseInput`).

    Webcam frames carry monotonic capture times (the clock's wall time); a file played in
    real time goes through :class:`PlayedAsCamera` (newest frame wins, wall-clock
    timestamps), which keeps playing while the run is paused, as a camera would. The filter
    is sampled at the wall time of the loop time asked for (:meth:`Clock.to_wall_ns`), so
    after a pause the avatar follows the camera again.

    Args:
        source: a webcam (``info.live``) or a file (played as a camera).
        tracker, pose: face landmarker and pose filter options.
        metrics: telemetry to report tracker latency and face found to.
        record: path of a ``.jsonl`` pose track to write (one pose per observation), or None.
        clock_ns: the wall clock of the capture timestamps (latency statistics, playback).
        follow_newest: read the filter at the newest observation while frames are locked one
            per pose (:mod:`runtime.pose_lock`): the read delay eases to the tracker's latency
            (capture -> filter) less the draw's one-substep lag, instead of ``pose.delay_ns``
            (which stays the delay otherwise).
        tracker_nice: the tracking thread's nice value above the process's
            (:class:`tracking.live.LiveTracking` ``nice``).
        voice: the ``--audio`` timeline (:class:`tracking.audio.stream.VoiceTimeline`, on the
            capture clock) whose value at each recorded pose's time is recorded with it, or None.

    Attributes:
        arrivals: the observations reaching the filter (:class:`runtime.pose_lock.PoseArrivals`);
            the live schedule sets its ``frames_per_pose``.
    """

    def __init__(self, source: FrameSource, *, tracker: FaceTrackerOptions = FaceTrackerOptions(),
                 pose: PoseFilterOptions = PoseFilterOptions(), metrics: Telemetry | None = None,
                 record: str | None = None, clock_ns=time.perf_counter_ns, follow_newest: bool = False,
                 tracker_nice: int = 0, voice=None):
        from tracking.live import LiveTracking

        self._clock_ns = clock_ns
        self._clock: Clock | None = None
        self._played = None if source.info.live else PlayedAsCamera(source, clock_ns)
        self.source = source if self._played is None else self._played
        self.metrics = metrics
        self.newest_capture_ns: int | None = None
        #: (capture ns, wall ns when its observation reached the pose filter) of the newest
        #: observations (latency by stage, ``swaycam bench loop``)
        self.results: deque[tuple[int, int]] = deque(maxlen=64)
        self.frames = 0
        self.faces = 0
        self._found = False
        self._closed = False
        self._writer = PoseTrackWriter(record, track_header(source, pose)) if record else None
        self._rec = PoseSample()
        self._voice = voice
        #: the arm poses of the tracked frames (``--hands``: tracking.hands), on the capture clock
        self.arms = Timeline(ARM_W, 256) if tracker.hands else None
        self.tracking = LiveTracking(self.source, tracker_options=tracker, pose_options=pose, clock_ns=clock_ns,
                                     on_observation=self._observed, nice=tracker_nice)
        self.filter = self.tracking.pose_filter
        self.arrivals = PoseArrivals()
        self._read_delay = ReadDelay(self.filter.options.delay_ns, self.arrivals, NS_PER_S // RATE_HZ) if follow_newest else None

    def _observed(self, obs) -> None:
        """On the tracking thread, per observation."""
        now = self._clock_ns()
        self.results.append((obs.timestamp_ns, now))
        if self.arms is not None and obs.arms is not None:
            self.arms.append(obs.timestamp_ns, obs.arms)
        self.arrivals.arrived(obs.timestamp_ns, now)
        self.newest_capture_ns = obs.timestamp_ns
        self.frames += 1
        self.faces += bool(obs.found)
        self._found = bool(obs.found)
        if self.metrics is not None:
            self.metrics.tracker((self._clock_ns() - obs.timestamp_ns) * 1e-6, face_found=bool(obs.found))
        if self._writer is not None:
            self.filter.sample(obs.timestamp_ns + self.filter.options.delay_ns, out=self._rec)
            self._rec.t_ns = obs.timestamp_ns
            if self._voice is not None:
                self._voice.sample(obs.timestamp_ns, self._rec.voice)
            self._writer.write_sample(self._rec)

    def start(self, clock: Clock) -> None:
        """Start playback (a file) and the tracking thread."""
        self._clock = clock
        if self._played is not None:
            self._played.start()
        self.tracking.start()

    def pump(self, t_ns: int) -> None:
        """Nothing to do: the tracking thread feeds the filter."""

    def _finished(self) -> bool:
        if self.tracking.error is not None:
            return True
        return self._played is not None and self._played.ended.is_set() and self.newest_capture_ns is not None \
            and self._clock_ns() - self.newest_capture_ns > 2 * self.filter.options.delay_ns

    def status(self) -> InputStatus:
        """``finished``: a played file ended (and its last pose was shown), or tracking failed."""
        return InputStatus(live=True, finished=self._finished(), error=self.tracking.error, face_found=self._found,
                           newest_capture_ns=self.newest_capture_ns, frames_tracked=self.frames, faces=self.faces,
                           start_ns=0)

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        wall = t_ns if self._clock is None else self._clock.to_wall_ns(t_ns)
        if self._read_delay is not None:     # the filter's own delay is then the configured one
            wall += self.filter.options.delay_ns - self._read_delay.at(t_ns)
        out = self.filter.sample(wall, out=out)
        if self.arms is not None:
            self.arms.sample(wall, out.arms)
        out.t_ns = t_ns
        return out

    @property
    def read_delay_ns(self) -> int:
        """How far behind the wall time the filter is read now, ns (module doc, ``follow_newest``)."""
        return self.filter.options.delay_ns if self._read_delay is None else int(self._read_delay.delay_ns)

    @property
    def stride(self) -> int:
        """Camera frames per tracked frame (the quality governor's ``tracker`` step sets 2)."""
        return self.tracking.stride

    @stride.setter
    def stride(self, n: int) -> None:
        self.tracking.stride = n

    def recenter(self) -> None:
        self.filter.recenter()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.tracking.close()
        self.source.close()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
