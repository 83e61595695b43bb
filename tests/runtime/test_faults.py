"""Faults in a live run, each injected (issue 16): the camera gone and back, an exception
in the tracking thread, an output failing mid-run, non-finite pose samples."""

from __future__ import annotations

import errno
import json
import logging
import math
import time

import numpy as np
import pytest
from PIL import Image

from runtime.config import RunConfig
from runtime.config_sections import MotionSection
from runtime.session import RunError, Session
from tests.tracking.test_live import FakeLive, FakeTracker
from tests.tracking.test_webcam import ScriptedCapture, bgr
from tracking import live as live_module
from tracking.frame_sources import Frame
from tracking.live import LiveTracking
from tracking.observation import FaceObservation
from tracking.pose_filter import PoseFilter, PoseFilterOptions
from tracking.track_io import load_track
from tracking.webcam import WebcamOptions, WebcamSource

MS = 1_000_000
WAIT_S = 10.0


def wait_until(cond, timeout=WAIT_S):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.002)


class FlakyTracker(FakeTracker):
    """Raises on the frames whose index is in ``bad``."""

    def __init__(self, bad):
        super().__init__()
        self.bad = set(bad)

    def process_frame(self, frame):
        if frame.index in self.bad:
            raise RuntimeError(f"mediapipe exploded on frame {frame.index}")
        return super().process_frame(frame)


def feed(src, live, k):
    src.q.put(Frame(np.zeros((4, 4, 3), np.uint8), k * 33 * MS, k))
    wait_until(lambda: live.frames == k + 1)


def test_an_exception_in_the_tracking_thread_is_a_lost_face_logged_once(caplog):
    src, tr = FakeLive(), FlakyTracker(bad=range(3, 9))
    clock = {"t": 0}
    opts = PoseFilterOptions(recenter_at_start=False, delay_ns=0)
    with caplog.at_level(logging.WARNING, logger="tracking.live"):
        with LiveTracking(src, tracker=tr, pose_options=opts, clock_ns=lambda: clock["t"]) as live:
            for k in range(3):
                clock["t"] = k * 33 * MS
                feed(src, live, k)
            assert live.pose_filter.state == "tracking"
            for k in range(3, 9):
                clock["t"] = k * 33 * MS
                feed(src, live, k)
                assert live.pose_filter.state == "lost" and live.running and live.error is None
            s = live.pose_filter.sample(8 * 33 * MS)
            assert not s.found and np.all(np.isfinite(s.rotation))
            for k in range(9, 12):                   # tracking works again: the face is followed again
                clock["t"] = k * 33 * MS
                feed(src, live, k)
            assert live.pose_filter.state == "tracking" and live.errors == 6 and live.error is None
    records = [r for r in caplog.records if r.name == "tracking.live"]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    assert "mediapipe exploded on frame 3" in records[0].getMessage() and records[0].exc_info is not None


def test_tracking_that_keeps_failing_gives_up_with_its_error(monkeypatch):
    monkeypatch.setattr(live_module, "GIVE_UP_S", 0.1)
    src, tr = FakeLive(), FlakyTracker(bad=range(0, 100))
    clock = {"t": 0}
    with LiveTracking(src, tracker=tr, pose_options=PoseFilterOptions(delay_ns=0), clock_ns=lambda: clock["t"]) as lt:
        for k in range(5):
            clock["t"] = k * 50 * MS                 # 0.2 s of failures > GIVE_UP_S
            src.q.put(Frame(np.zeros((4, 4, 3), np.uint8), k * 50 * MS, k))
        wait_until(lambda: not lt.running)
        assert str(lt.error).startswith("tracking has failed for 0.1 s (4 frames); last: RuntimeError: "
                                        "mediapipe exploded on frame 3")


def test_the_camera_gone_and_back_reconnects_and_the_avatar_holds_then_eases():
    first, second = ScriptedCapture(), ScriptedCapture()
    dead = [ScriptedCapture(opened=False) for _ in range(2)]
    script = [first, *dead, second]
    attempts = []

    def factory(device, backend):
        attempts.append(time.monotonic())
        return script[min(len(attempts) - 1, len(script) - 1)]

    opts = WebcamOptions(device="/dev/video0", lost_after_s=0.05, reconnect_initial_s=0.02, reconnect_max_s=0.05)
    filt = PoseFilterOptions(recenter_at_start=False, delay_ns=0)
    with WebcamSource(opts, capture_factory=factory) as cam, \
            LiveTracking(cam, tracker=FakeTracker(), pose_options=filt) as lt:
        for v in range(1, 4):
            first.frames.put(bgr(v))
            wait_until(lambda: lt.frames >= v)
        pf = lt.pose_filter
        t_last = pf._newest_obs
        held = pf.sample(t_last + 10 * MS)
        first.frames.put(None)                              # unplugged
        wait_until(lambda: cam.reconnects == 1)
        # while it is gone: the tracking thread keeps polling (no freeze), the pose holds, then eases
        assert lt.running and lt.error is None
        lost = filt.lost
        hold = pf.sample(t_last + int(0.5 * lost.hold_s * 1e9))
        eased = pf.sample(t_last + int((lost.hold_s + lost.ease_s + 1.0) * 1e9))
        assert np.allclose(hold.rotation, held.rotation, atol=1e-9)
        assert abs(eased.rotation[3]) == pytest.approx(1.0, abs=1e-9) and not eased.found
        frames_before = lt.frames
        second.frames.put(bgr(7))                           # back
        wait_until(lambda: lt.frames > frames_before)
        assert cam.state == "running" and pf.state == "tracking" and lt.error is None
    gaps = np.diff(attempts[1:])
    assert len(attempts) >= 4 and gaps[0] >= 0.02 and gaps[1] >= 0.04     # backoff doubles


def test_non_finite_observations_are_rejected_and_counted():
    pf = PoseFilter(PoseFilterOptions(recenter_at_start=False, delay_ns=0))
    good = FaceObservation(0, True, np.array([0.0, 0.1, 0.0, 1.0]) / math.hypot(0.1, 1.0), np.array([0, 0, -0.5]),
                           confidence=1.0)
    pf.push(good)
    before = pf.sample(10 * MS)
    for k, bad in enumerate(["rotation", "translation", "blendshapes", "zero"]):
        o = FaceObservation(0, True, good.rotation.copy(), good.translation.copy(), confidence=1.0)
        o.timestamp_ns = (k + 1) * 33 * MS
        if bad == "zero":
            o.rotation[:] = 0.0
        else:
            getattr(o, bad)[0] = math.nan if k % 2 else math.inf
        pf.push(o)
    assert pf.rejected == 4 and pf.observations == 1
    after = pf.sample(10 * MS)
    assert np.array_equal(after.rotation, before.rotation) and np.all(np.isfinite(pf.sample(200 * MS).rotation))


def test_a_pose_track_with_nan_samples_loads_with_them_rejected(tmp_path):
    p = tmp_path / "t.jsonl"
    lines = [json.dumps({"schema": "swaycam.posetrack", "version": 1, "frame": "avatar"})]
    for k in range(5):
        rot = [0.0, 0.0, 0.0, 1.0]
        lines.append(json.dumps({"t_ns": k * 33 * MS, "rotation": rot, "translation": [0, 0, 0]}))
    lines[2] = lines[2].replace("[0, 0, 0]", "[NaN, 0, 0]")
    lines[4] = lines[4].replace("[0.0, 0.0, 0.0, 1.0]", "[0.0, Infinity, 0.0, 1.0]")
    p.write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning, match=r"2 observation\(s\) with NaN/inf rejected \(first: .*t\.jsonl line 3: "
                                         r"translation has nan\)"):
        track = load_track(p)
    assert track.rejected == 2 and len(track) == 3 and list(track.t_ns) == [0, 66 * MS, 132 * MS]
    assert np.all(np.isfinite(track.translations)) and np.all(np.isfinite(track.rotations))


def test_an_output_failing_mid_run_stops_with_a_clear_message_and_valid_files(tmp_path, monkeypatch):
    out = tmp_path / "frames"
    real_save = Image.Image.save
    written = []

    def save(self, fp, *a, **k):
        if len(written) >= 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(fp)
        return real_save(self, fp, *a, **k)

    monkeypatch.setattr(Image.Image, "save", save)
    cfg = RunConfig(output=(f"png:{out}",), size=(96, 64), fps=10, duration=2.0, motion=MotionSection(clip="none"))
    with pytest.raises(RunError, match=r"^output png:\S+frames failed: .*No space left on device"):
        with Session(cfg, say=lambda s: None) as session:
            session.run()
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [f"frame_{i:06d}.png" for i in range(4)]     # no partial file left
    for f in files:
        with Image.open(f) as im:
            im.verify()
