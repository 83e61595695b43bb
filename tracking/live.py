"""Live tracking: a worker thread runs source -> tracker -> pose filter (docs/design.md §2).

The webcam's capture thread keeps only the newest frame; this worker takes it, runs
MediaPipe (VIDEO mode) and pushes the observation into a :class:`PoseFilter`, which the
runtime samples at every substep time from its own thread. MediaPipe's LIVE_STREAM mode
was measured against this design on the selfie clip fed at 30 fps: capture-to-result
latency median 13.1 ms vs 12.7 ms here (p95 14.6 vs 14.5 ms), so no gain: VIDEO mode it is.

Latency is measured on the capture clock: ``now_ns() − frame.timestamp_ns`` when the
observation is pushed (``clock_ns`` must be the clock that stamped the frames; webcams
use ``time.perf_counter_ns``).

Under load (issue 32) the worker can track only every ``stride``-th camera frame it reads
(the pose filter interpolates across the frames skipped; the runtime's quality governor sets
it), and its thread can run at another nice value than the process's (``nice``: Linux sets a
thread's nice value by its native id; raising priority, a negative change, needs
``CAP_SYS_NICE`` or ``RLIMIT_NICE``, and is logged and ignored when refused).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Callable

import numpy as np

from .face_tracker import FaceTracker, FaceTrackerOptions
from .observation import FaceObservation
from .pose_filter import PoseFilter, PoseFilterOptions
from .frame_sources import FrameSource

log = logging.getLogger(__name__)

#: Seconds of tracking failing on every frame after which the live worker gives up.
GIVE_UP_S = 30.0


class LiveTracking:
    """Owns a tracker and a worker thread feeding ``pose_filter``; a context manager.

    Args:
        source: a live source (``read(timeout_s)`` returns the newest unseen frame).
        pose_filter: where observations go (default: a new :class:`PoseFilter`).
        tracker: a :class:`FaceTracker`-like object with ``process_frame`` and ``close``
            (default: one built from ``tracker_options``); it is closed with this object.
        clock_ns: the capture clock, for latency statistics.
        on_observation: optional callback (e.g. a :class:`PoseTrackWriter` recorder).
        stride: track every ``stride``-th frame read (1: every one); :attr:`stride` may be
            changed from any thread while it runs.
        nice: the worker thread's nice value relative to the process's (None or 0: the same;
            Linux only, see the module doc); :attr:`nice_applied` says what took effect.

    Call :meth:`start`, then sample ``pose_filter`` at any time; :meth:`close` stops the
    worker, then closes the tracker (the source belongs to the caller).

    A frame whose tracking raises counts as a frame without a face (the avatar holds, then
    eases to neutral, and follows again when tracking works): the first failure is logged
    with its traceback, later ones are counted in :attr:`errors`. Only when tracking has
    failed for :data:`GIVE_UP_S` seconds without a success does the worker stop (then
    :attr:`error` is set and the run ends with it).
    """

    def __init__(self, source: FrameSource, *, pose_filter: PoseFilter | None = None, tracker=None,
                 tracker_options: FaceTrackerOptions = FaceTrackerOptions(),
                 pose_options: PoseFilterOptions = PoseFilterOptions(),
                 clock_ns: Callable[[], int] = time.perf_counter_ns,
                 on_observation: Callable[[FaceObservation], None] | None = None,
                 stride: int = 1, nice: int | None = None) -> None:  # fmt: skip
        self.source = source
        self.pose_filter = pose_filter or PoseFilter(pose_options)
        self.tracker = tracker if tracker is not None else FaceTracker(tracker_options)
        self._clock = clock_ns
        self._on_obs = on_observation
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._latencies: list[int] = []
        self.frames = 0
        self.errors = 0
        self._failing_since: int | None = None
        self.error: BaseException | None = None
        self.stride = stride
        self.nice = nice
        #: the nice change that took effect on the worker thread (0: none)
        self.nice_applied = 0
        #: frames read but not tracked (``stride``)
        self.skipped = 0
        self._read = 0

    @property
    def stride(self) -> int:
        return self._stride

    @stride.setter
    def stride(self, n: int) -> None:
        if int(n) != n or not 1 <= n <= 8:
            raise ValueError(f"tracking stride {n!r}: a whole number in 1..8")
        self._stride = int(n)

    def _renice(self) -> None:
        """On the worker thread: its nice value, ``nice`` above the process's (module doc)."""
        if not self.nice or not sys.platform.startswith("linux"):
            return
        tid = threading.get_native_id()
        try:
            base = os.getpriority(os.PRIO_PROCESS, os.getpid())
            os.setpriority(os.PRIO_PROCESS, tid, min(19, base + int(self.nice)))
            self.nice_applied = os.getpriority(os.PRIO_PROCESS, tid) - base
        except OSError as exc:
            log.warning("tracking thread: nice %+d refused (%s); it runs at the process's priority",
                        self.nice, exc.strerror)

    def start(self) -> "LiveTracking":
        self._thread = threading.Thread(target=self._run, name="swaycam-tracking", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        self._renice()
        try:
            while not self._stop.is_set():
                live = self.source.info.live
                frame = self.source.read(timeout_s=0.1) if live else self.source.read()
                if frame is None:
                    if live:
                        continue
                    return  # a file source ended
                self._read += 1
                if self._read % self._stride:        # skipped: the filter bridges it
                    self.skipped += 1
                    continue
                try:
                    obs = self.tracker.process_frame(frame)
                except Exception as exc:  # noqa: BLE001 - a failing frame is a frame without a face
                    obs = self._failed(exc, frame)
                else:
                    self._failing_since = None
                self.pose_filter.push(obs)
                self._latencies.append(self._clock() - frame.timestamp_ns)
                if len(self._latencies) > 1000:
                    del self._latencies[:500]
                self.frames += 1
                if self._on_obs is not None:
                    self._on_obs(obs)
        except BaseException as exc:  # noqa: BLE001 - kept for the owner to inspect
            self.error = exc
            log.error("live tracking stopped: %s: %s", type(exc).__name__, exc)

    def _failed(self, exc: Exception, frame) -> FaceObservation:
        """A frame whose tracking raised: logged once, counted, a frame without a face;
        raises when tracking has failed for GIVE_UP_S without a success."""
        self.errors += 1
        now = int(frame.timestamp_ns)     # capture time: failures are timed by the frames they spoil
        if self._failing_since is None:
            self._failing_since = now
        if self.errors == 1:
            log.warning("tracking a frame failed (%s: %s); the face counts as lost until tracking works again "
                        "(later failures are counted, not logged)", type(exc).__name__, exc, exc_info=True)
        if (now - self._failing_since) * 1e-9 > GIVE_UP_S:
            raise RuntimeError(f"tracking has failed for {GIVE_UP_S:g} s ({self.errors} frames); "
                               f"last: {type(exc).__name__}: {exc}") from exc
        return FaceObservation.empty(frame.timestamp_ns, index=getattr(frame, "index", -1))

    @property
    def running(self) -> bool:
        """True while the worker runs (False before start, after close, or when a file ended)."""
        return self._thread is not None and self._thread.is_alive()

    def latency_ms(self) -> tuple[float, float]:
        """(median, p95) capture-to-pose-buffer latency of recent frames, ms (nan if none)."""
        lat = np.array(self._latencies[-500:], dtype=np.float64)
        if lat.size == 0:
            return float("nan"), float("nan")
        return float(np.median(lat) * 1e-6), float(np.percentile(lat, 95) * 1e-6)

    def close(self) -> None:
        """Stop the worker and close the tracker. Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        if self.tracker is not None:
            self.tracker.close()
            self.tracker = None

    def __enter__(self) -> "LiveTracking":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
