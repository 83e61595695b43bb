"""The webcam capture thread, driven by injected VideoCapture-like fakes: newest frame
only, capture timestamps, reconnect with backoff after the device disappears."""

import queue
import threading
import time

import numpy as np
import pytest

from tracking.webcam import WebcamOptions, WebcamSource

WAIT_S = 5.0  # generous upper bound for thread hand-offs on a loaded machine


def wait_until(cond, timeout=WAIT_S):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("condition not reached in time")
        time.sleep(0.002)


class ScriptedCapture:
    """grab() blocks until the test pushes a frame; a pushed None means 'unplugged'."""

    def __init__(self, opened=True):
        self.opened = opened
        self.props = {}
        self.frames = queue.Queue()
        self.released = False
        self._img = None

    def isOpened(self):
        return self.opened

    def set(self, prop, value):
        self.props[prop] = value
        return True

    def get(self, prop):
        return self.props.get(prop, 0.0)

    def grab(self):
        if self.released:
            return False
        try:
            item = self.frames.get(timeout=0.01)
        except queue.Empty:
            return False  # a real camera would block; an empty read is a failure
        if item is None:
            self.opened = False
            return False
        self._img = item
        return True

    def retrieve(self):
        return True, self._img

    def release(self):
        self.released = True


def bgr(value):
    img = np.zeros((4, 6, 3), np.uint8)
    img[..., 0] = value  # blue channel in BGR -> last channel in RGB
    return img


class Clock:
    def __init__(self):
        self.t = 0
        self.lock = threading.Lock()

    def __call__(self):
        with self.lock:
            self.t += 1_000_000
            return self.t


def test_only_the_newest_frame_is_delivered_with_its_capture_time():
    cap = ScriptedCapture()
    clock = Clock()
    with WebcamSource(WebcamOptions(device=0, width=640, height=480, fps=60), capture_factory=lambda d, b: cap,
                      clock_ns=clock) as cam:  # fmt: skip
        import cv2

        assert cap.props[cv2.CAP_PROP_FRAME_WIDTH] == 640 and cap.props[cv2.CAP_PROP_FPS] == 60
        assert cap.props[cv2.CAP_PROP_FOURCC] == cv2.VideoWriter_fourcc(*"MJPG")
        for v in range(5):
            cap.frames.put(bgr(v))
        wait_until(lambda: cam.frames_captured == 5)
        f = cam.read(timeout_s=WAIT_S)
        assert f.index == 4 and int(f.image[0, 0, 2]) == 4  # the newest, converted to RGB
        assert cam.frames_dropped == 4
        assert cam.latest() is None  # nothing newer: never the same frame twice
        assert cam.read(timeout_s=0.05) is None
        cap.frames.put(bgr(9))
        f2 = cam.read(timeout_s=WAIT_S)
        assert f2.index == 5 and int(f2.image[0, 0, 2]) == 9
        assert f2.timestamp_ns > f.timestamp_ns
    assert cap.released and cam.state == "closed"


def test_reconnects_with_exponential_backoff_after_unplug():
    first, second = ScriptedCapture(), ScriptedCapture()
    dead = [ScriptedCapture(opened=False) for _ in range(3)]
    script = [first, *dead, second]
    calls = []

    def factory(device, backend):
        calls.append(time.monotonic())
        return script[min(len(calls) - 1, len(script) - 1)]

    opts = WebcamOptions(device="/dev/video0", lost_after_s=0.05, reconnect_initial_s=0.02, reconnect_max_s=0.05)
    with WebcamSource(opts, capture_factory=factory) as cam:
        first.frames.put(bgr(1))
        assert cam.read(timeout_s=WAIT_S).image[0, 0, 2] == 1
        first.frames.put(None)  # unplugged
        wait_until(lambda: cam.reconnects == 1)
        assert first.released and all(d.released for d in dead)
        second.frames.put(bgr(2))
        f = cam.read(timeout_s=WAIT_S)
        assert int(f.image[0, 0, 2]) == 2 and cam.state == "running"
    gaps = np.diff(calls[1:])  # between reconnect attempts: 0.02, 0.04, 0.05 (capped)
    assert len(calls) == 5
    assert gaps[0] >= 0.02 and gaps[1] >= 0.04 and gaps[2] >= 0.05


def test_close_unblocks_a_waiting_reader():
    cap = ScriptedCapture()
    cam = WebcamSource(WebcamOptions(), capture_factory=lambda d, b: cap)
    result = []
    t = threading.Thread(target=lambda: result.append(cam.read()))
    t.start()
    time.sleep(0.05)
    cam.close()
    t.join(WAIT_S)
    assert result == [None] and not t.is_alive()
    cam.close()  # idempotent


def test_factory_that_raises_is_a_clear_error():
    def boom(device, backend):
        raise RuntimeError("driver crashed")

    from tracking.errors import SourceError

    with pytest.raises(SourceError, match="webcam 2: could not be opened"):
        WebcamSource(WebcamOptions(device=2), capture_factory=boom)


def test_a_driver_exception_counts_as_a_lost_device():
    class Raising(ScriptedCapture):
        def grab(self):
            raise OSError("USB reset")

    good = ScriptedCapture()
    caps = [Raising(), good]
    opts = WebcamOptions(lost_after_s=0.02, reconnect_initial_s=0.01)
    with WebcamSource(opts, capture_factory=lambda d, b: caps.pop(0) if caps else good) as cam:
        wait_until(lambda: cam.reconnects == 1)
        good.frames.put(bgr(7))
        assert int(cam.read(timeout_s=WAIT_S).image[0, 0, 2]) == 7
