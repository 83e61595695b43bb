"""LiveTracking: the worker thread feeding the pose buffer (fakes, then the real tracker)."""

import math
import queue
import time

import numpy as np

from avatars.math3d import euler_from_quat, quat_from_euler
from tracking.face_tracker import FaceTrackerOptions
from tracking.live import LiveTracking
from tracking.observation import FaceObservation
from tracking.pose_filter import PoseFilterOptions
from tracking.frame_sources import Frame, SourceInfo, open_source

MS = 1_000_000
WAIT_S = 5.0


def wait_until(cond):
    end = time.monotonic() + WAIT_S
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.002)


class FakeLive:
    info = SourceInfo("fake camera", 64, 48, 30.0, None, live=True)

    def __init__(self):
        self.q = queue.Queue()

    def read(self, timeout_s=None):
        try:
            return self.q.get(timeout=timeout_s)
        except queue.Empty:
            return None


class FakeTracker:
    def __init__(self):
        self.closed = False

    def process_frame(self, frame):
        yaw = math.radians(frame.index)
        return FaceObservation(frame.timestamp_ns, True, quat_from_euler(yaw, 0, 0), np.array([0, 0, -0.5]), confidence=1.0)

    def close(self):
        self.closed = True


def test_worker_feeds_the_pose_filter_and_measures_latency():
    src, tr = FakeLive(), FakeTracker()
    clock = {"t": 0}
    opts = PoseFilterOptions(recenter_at_start=False, delay_ns=0)
    with LiveTracking(src, tracker=tr, pose_options=opts, clock_ns=lambda: clock["t"]) as live:
        for k in range(10):
            clock["t"] = k * 33 * MS + 12 * MS  # each frame is processed 12 ms after capture
            src.q.put(Frame(np.zeros((4, 4, 3), np.uint8), k * 33 * MS, k))
            wait_until(lambda: live.frames == k + 1)
        s = live.pose_filter.sample(9 * 33 * MS)
        assert s.found and math.degrees(euler_from_quat(s.rotation)[0]) < -1.0  # mirrored, moving
        assert live.latency_ms() == (12.0, 12.0)
    assert tr.closed and live.error is None


def test_real_tracker_on_a_file_source(android_gif, model_path):
    with open_source(android_gif) as src:
        live = LiveTracking(src, tracker_options=FaceTrackerOptions(model_path=model_path))
        with live:
            wait_until(lambda: live._thread is None or not live._thread.is_alive())
        assert live.frames == 75 and live.error is None
        assert live.pose_filter.state == "tracking"
        assert live.pose_filter.sample(74 * 80 * MS + live.pose_filter.options.delay_ns).found


class IndexTracker(FakeTracker):
    def __init__(self):
        super().__init__()
        self.seen = []

    def process_frame(self, frame):
        self.seen.append(frame.index)
        return super().process_frame(frame)


def test_stride_tracks_every_other_frame_and_changes_while_running():
    src, tr = FakeLive(), IndexTracker()
    with LiveTracking(src, tracker=tr, stride=2) as live:
        for k in range(6):
            src.q.put(Frame(np.zeros((4, 4, 3), np.uint8), k * 33 * MS, k))
        wait_until(lambda: live.frames == 3)
        assert tr.seen == [1, 3, 5] and live.skipped == 3
        live.stride = 1                              # the governor steps back up
        for k in range(6, 9):
            src.q.put(Frame(np.zeros((4, 4, 3), np.uint8), k * 33 * MS, k))
        wait_until(lambda: live.frames == 6)
        assert tr.seen == [1, 3, 5, 6, 7, 8] and live.skipped == 3


def test_stride_out_of_range_is_refused():
    import pytest

    with pytest.raises(ValueError, match="tracking stride 0: a whole number in 1..8"):
        LiveTracking(FakeLive(), tracker=FakeTracker(), stride=0)


def test_nice_applies_to_the_worker_thread_only():
    import os
    import sys
    import threading

    import pytest

    if not sys.platform.startswith("linux"):
        pytest.skip("per-thread nice values are a Linux feature")
    seen = {}

    class NiceTracker(FakeTracker):
        def process_frame(self, frame):
            seen["thread"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
            return super().process_frame(frame)

    base = os.getpriority(os.PRIO_PROCESS, os.getpid())
    if base + 3 > 19:
        pytest.skip(f"the process already runs at nice {base}")
    src = FakeLive()
    with LiveTracking(src, tracker=NiceTracker(), nice=3) as live:
        src.q.put(Frame(np.zeros((4, 4, 3), np.uint8), 0, 0))
        wait_until(lambda: live.frames == 1)
        assert seen["thread"] == base + 3 and live.nice_applied == 3
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base   # this thread untouched
