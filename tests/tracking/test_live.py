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
