"""The pipelined offline path (tracking ahead on a worker thread) against the serial one:
the same video file, PNG frames, recorded pose track and hair states, byte for byte."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from runtime.config import RunConfig
from runtime.pipeline import TrackAhead
from runtime.session import Session
from tests.conftest import asset

SIZE = (320, 180)
SECONDS = 1.6          # 40 frames of the 25 fps selfie clip: tracking, lost-face-free, hair moving


def run_offline(tmp_path, selfie_mp4, ahead: int):
    out = tmp_path / f"ahead{ahead}"
    out.mkdir()
    hair = []

    def on_frame(info, rig):
        tails, vels = rig.hair_state()
        hair.append((info.draw_t_ns, tails.copy(), vels.copy()))

    cfg = RunConfig(source=str(selfie_mp4), size=SIZE, fps=25.0, duration=SECONDS, track_ahead=ahead,
                    face_model=str(asset("models", "face_landmarker_v2_with_blendshapes.task")),
                    record=str(out / "poses.jsonl"), output=(f"video:{out / 'out.mp4'}", f"png:{out / 'png'}"))
    with Session(cfg, say=lambda s: None, on_frame=on_frame) as session:
        assert session.pose_input._ahead is None if ahead == 0 else session.pose_input._ahead is not None
        result = session.run()
    pngs = sorted((out / "png").glob("*.png"))
    return result, out, pngs, hair


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_pipelined_offline_output_is_bit_identical_to_serial(tmp_path, selfie_mp4):
    serial = run_offline(tmp_path, selfie_mp4, 0)
    piped = run_offline(tmp_path, selfie_mp4, 3)
    r0, out0, png0, hair0 = serial
    r1, out1, png1, hair1 = piped
    assert r0.frames == r1.frames == 40
    assert r0.tracked_frames == r1.tracked_frames and r0.face_frames == r1.face_frames > 30
    # the frames: every PNG, and the encoded video file itself
    assert len(png0) == len(png1) == 40
    assert [digest(p) for p in png0] == [digest(p) for p in png1]
    assert digest(out0 / "out.mp4") == digest(out1 / "out.mp4")
    # the recorded pose track
    assert (out0 / "poses.jsonl").read_bytes() == (out1 / "poses.jsonl").read_bytes()
    # the hair at every drawn frame (tails and velocities of every joint)
    assert len(hair0) == len(hair1) == 40
    for (t0, x0, v0), (t1, x1, v1) in zip(hair0, hair1):
        assert t0 == t1 and np.array_equal(x0, x1) and np.array_equal(v0, v1)
    moved = max(float(np.abs(x - hair0[0][1]).max()) for _, x, _ in hair0)
    assert moved > 1e-3                     # the hair did move: the comparison means something


class _Frames:
    """A frame source of ``n`` frames that fails at frame ``fail`` (None: never)."""

    def __init__(self, n: int, fail: int | None = None):
        self.n, self.fail, self.k = n, fail, 0

    def read(self):
        from tracking.frame_sources import Frame

        if self.k >= self.n:
            return None
        if self.k == self.fail:
            raise OSError(f"frame {self.k}: cannot decode")
        self.k += 1
        return Frame(np.zeros((4, 4, 3), np.uint8), (self.k - 1) * 40_000_000, self.k - 1)


class _Tracker:
    def __init__(self):
        self.seen = []

    def process_frame(self, frame):
        from tracking.observation import FaceObservation

        self.seen.append(frame.index)
        return FaceObservation.empty(frame.timestamp_ns, image_size=(4, 4), index=frame.index)


def test_track_ahead_keeps_source_order_and_is_bounded():
    tracker = _Tracker()
    ahead = TrackAhead(_Frames(10), tracker, depth=2)
    got = []
    while (item := ahead.next()) is not None:
        got.append(item.timestamp_ns)
        assert len(tracker.seen) <= len(got) + 2 + 1     # queued (depth) + one in the tracker
    ahead.close()
    assert got == [k * 40_000_000 for k in range(10)] and tracker.seen == list(range(10))
    assert ahead.next() is None


def test_track_ahead_raises_the_workers_error_on_the_callers_thread():
    ahead = TrackAhead(_Frames(10, fail=3), _Tracker(), depth=2)
    assert [ahead.next().timestamp_ns for _ in range(3)] == [0, 40_000_000, 80_000_000]
    with pytest.raises(OSError, match="frame 3: cannot decode"):
        ahead.next()
    ahead.close()


def test_track_ahead_close_stops_a_worker_blocked_on_a_full_queue():
    tracker = _Tracker()
    ahead = TrackAhead(_Frames(1000), tracker, depth=1)
    ahead.next()
    ahead.close()
    assert not ahead._thread.is_alive() and len(tracker.seen) < 10
