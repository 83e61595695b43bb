"""The panel's Outputs card through its JSON endpoints, against a running session: the virtual
camera on / off (pyvirtualcam's registered test backend), a video recording started and
stopped mid-run (a valid mp4 holding exactly the frames the run drew meanwhile), and a pose
track recording that replays to the same poses."""

from __future__ import annotations

import http.client
import json
import threading
import time

import numpy as np
import pytest

from runtime.config import RunConfig
from runtime.session import Session
from tests.render.test_sinks import RecordingBackend
from tests.runtime.test_run_e2e import read_video
from tracking.track_io import load_track

SIZE = (160, 90)
#: H.264 (crf 18, yuv420p) against the lossless PNG of the same frame: mean |difference| (0..255).
VIDEO_MEAN_DIFF_MAX = 4.0
#: Replayed rotations against the recorded ones (quaternion components; JSON keeps floats exactly).
POSE_TOL = 1e-9
RECORD_FRAMES = 12


def call(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request(method, path, body=None if body is None else json.dumps(body),
              headers={"Content-Type": "application/json"} if body is not None else {})
    r = c.getresponse()
    data = json.loads(r.read())
    c.close()
    return r.status, data


@pytest.fixture()
def test_backend(monkeypatch):
    import pyvirtualcam
    from pyvirtualcam.camera import BACKENDS

    RecordingBackend.instances.clear()
    pyvirtualcam.register_backend("swaycam-test", RecordingBackend)
    monkeypatch.setenv("SWAYCAM_VCAM_BACKEND", "swaycam-test")
    yield RecordingBackend
    BACKENDS.pop("swaycam-test", None)


def _live_session(tmp_path, script, **cfg):
    """A run on the head turn with the service and a lossless PNG output; ``script(port, log)``
    runs on its own thread once frames flow, then the run stops. ``log``: per drawn frame
    (png frames delivered, the panel's video sink or None, its frames, pose recording on)."""
    frames = []
    answers = {}
    config = RunConfig(source="turn-test", fps=30, duration=600.0, size=SIZE, background="#305070",
                       output=(f"png:{tmp_path / 'png'}",), service=True, port=0, record_dir=str(tmp_path / "rec"),
                       **cfg)

    def run_script():
        try:
            script(session.service.address[1], answers, frames)
        finally:
            session.stop()

    def on_frame(info, rig):
        oc = session.panel.outputs
        png = session.outputs.sinks[0]
        v = oc.video[0] if oc.video is not None else None
        frames.append((png.frames, v, v.frames if v is not None else 0, oc.poses is not None,
                       session.loop.draw_sample.copy()))
        if len(frames) == 3:
            threading.Thread(target=run_script, daemon=True).start()

    session = Session(config, say=lambda s: None, on_frame=on_frame)
    with session:
        result = session.run()
    assert not result.interrupted
    return answers, frames


def wait_frames(frames, n):
    k0 = len(frames)
    deadline = time.monotonic() + 60
    while len(frames) < k0 + n:
        assert time.monotonic() < deadline, "the run stopped drawing frames"
        time.sleep(0.01)


def test_virtual_camera_on_and_off(tmp_path, test_backend):
    def script(port, answers, frames):
        answers["before"] = call(port, "GET", "/outputs")
        answers["on"] = call(port, "POST", "/vcam", {"on": True})
        answers["again"] = call(port, "POST", "/vcam", {"on": True})
        wait_frames(frames, RECORD_FRAMES)
        answers["off"] = call(port, "POST", "/vcam", {"on": False})
        answers["bad"] = call(port, "POST", "/vcam", {"on": "yes"})
        answers["cam_frames"] = len(test_backend.instances[-1].frames)

    answers, frames = _live_session(tmp_path, script)
    assert answers["before"][1]["vcam"] == {"on": False, "panel": False, "device": None}
    status, body = answers["on"]
    assert status == 200 and body["vcam"] == {"on": True, "panel": True, "device": "test-cam"}
    assert answers["again"][0] == 200
    status, body = answers["off"]
    assert status == 200 and body["vcam"]["on"] is False
    assert answers["bad"][0] == 400
    (cam,) = test_backend.instances
    assert cam.closed and (cam.width, cam.height, cam.fps) == (*SIZE, 30)
    assert len(cam.frames) == answers["cam_frames"] >= RECORD_FRAMES
    # every camera frame is the PNG output's frame of the same delivery, exactly (RGB)
    from PIL import Image

    pngs = sorted((tmp_path / "png").glob("*.png"))
    imgs = [np.asarray(Image.open(p).convert("RGB")) for p in pngs]
    got = [f.reshape(SIZE[1], SIZE[0], 3) for f in cam.frames]
    k = next(i for i, im in enumerate(imgs) if np.array_equal(im, got[0]))
    for i, g in enumerate(got):
        assert np.array_equal(g, imgs[k + i]), f"camera frame {i}"


def test_no_virtual_camera_is_503(tmp_path, monkeypatch):
    monkeypatch.setenv("SWAYCAM_VCAM_BACKEND", "no-such-backend")

    def script(port, answers, frames):
        answers["on"] = call(port, "POST", "/vcam", {"on": True})

    answers, _ = _live_session(tmp_path, script)
    status, body = answers["on"]
    assert status == 503 and "not available" in body["error"]


def test_record_a_video_and_a_pose_track_then_replay_the_track(tmp_path):
    def script(port, answers, frames):
        answers["video"] = call(port, "POST", "/record", {"kind": "video", "on": True, "name": "take1.mp4"})
        answers["poses"] = call(port, "POST", "/record", {"kind": "poses", "on": True, "name": "take1.jsonl"})
        answers["twice"] = call(port, "POST", "/record", {"kind": "video", "on": True})
        answers["escape"] = call(port, "POST", "/record", {"kind": "poses", "on": True, "name": "../x.jsonl"})
        wait_frames(frames, RECORD_FRAMES)
        answers["during"] = call(port, "GET", "/outputs")
        answers["video_off"] = call(port, "POST", "/record", {"kind": "video", "on": False})
        answers["poses_off"] = call(port, "POST", "/record", {"kind": "poses", "on": False})
        answers["not_running"] = call(port, "POST", "/record", {"kind": "poses", "on": False})

    answers, frames = _live_session(tmp_path, script)
    rec = tmp_path / "rec"
    assert answers["video"][0] == 200 and answers["video"][1]["recording"]["video"]["path"] == str(rec / "take1.mp4")
    assert answers["poses"][0] == 200
    assert answers["twice"][0] == 409 and answers["escape"][0] == 400 and answers["not_running"][0] == 409
    during = answers["during"][1]["recording"]
    assert during["video"]["path"].endswith("take1.mp4") and during["poses"]["path"].endswith("take1.jsonl")

    # the video: valid mp4, exactly the frames delivered to it, each the PNG output's frame
    status, body = answers["video_off"]
    assert status == 200 and body["recording"]["video"] is None
    n = body["stopped"]["frames"]
    delivered = [(p, vf) for p, v, vf, _, _ in frames if v is not None]
    assert n == delivered[-1][1] >= RECORD_FRAMES - 1
    meta, video = read_video(rec / "take1.mp4")
    assert meta["size"] == SIZE and len(video) == n
    from PIL import Image

    p0, v0 = next((p, vf) for p, vf in delivered if vf > 0)
    offset = p0 - v0                          # PNG index of the video's frame 0 (same deliveries)
    for i in range(n):
        png = np.asarray(Image.open(tmp_path / "png" / f"frame_{offset + i:06d}.png").convert("RGB")).astype(float)
        assert np.abs(video[i].astype(float) - png).mean() < VIDEO_MEAN_DIFF_MAX, f"video frame {i}"

    # the pose track: one pose per frame drawn while it recorded, the poses those frames used
    status, body = answers["poses_off"]
    recorded = [s for *_, on, s in frames if on]
    assert status == 200 and body["stopped"]["frames"] == len(recorded) >= RECORD_FRAMES
    track = load_track(rec / "take1.jsonl")
    assert track.header.frame == "avatar" and len(track) == len(recorded)
    assert np.array_equal(track.t_ns, [s.t_ns for s in recorded])
    assert np.abs(track.rotations - np.array([s.rotation for s in recorded])).max() < POSE_TOL

    # ...and it replays: a run on it draws the recorded poses
    replayed = []
    cfg = RunConfig(source=str(rec / "take1.jsonl"), fps=30, size=SIZE, output=(f"png:{tmp_path / 'replay'}",),
                    duration=(len(recorded) + 1) / 30)
    with Session(cfg, say=lambda s: None,
                 on_frame=lambda info, rig: replayed.append(s.loop.draw_sample.copy())) as s:
        s.run()
    # (the run's frames fall between the recorded ones: compare with the track at the same times)
    span = [b for b in replayed if recorded[0].t_ns <= b.t_ns <= recorded[-1].t_ns]
    assert len(span) >= len(recorded) - 1 and replayed[0].t_ns == recorded[0].t_ns
    for b in span:
        want = track.sample(b.t_ns)
        assert b.found and np.abs(want.rotation - b.rotation).max() < POSE_TOL
    k = [i for i, b in enumerate(replayed) if b.t_ns in {a.t_ns for a in recorded}]
    for i in k:
        a = next(a for a in recorded if a.t_ns == replayed[i].t_ns)
        assert np.abs(a.rotation - replayed[i].rotation).max() < POSE_TOL


def test_a_transparent_background_never_reaches_an_output_without_alpha(tmp_path, test_backend):
    """The panel's twin of the CLI rule (issue 16): POST /background "transparent" while a
    virtual camera or a video recording runs is 409 (they would show black), and neither
    can start while the background is transparent; PNG keeps alpha, so alone it is fine."""
    def script(port, answers, frames):
        answers["vcam_on"] = call(port, "POST", "/vcam", {"on": True})
        answers["bg_with_vcam"] = call(port, "POST", "/background", {"background": "transparent"})
        answers["vcam_off"] = call(port, "POST", "/vcam", {"on": False})
        answers["bg_png_only"] = call(port, "POST", "/background", {"background": "transparent"})
        answers["vcam_when_transparent"] = call(port, "POST", "/vcam", {"on": True})
        answers["video_when_transparent"] = call(port, "POST", "/record", {"kind": "video", "on": True})
        answers["poses_when_transparent"] = call(port, "POST", "/record", {"kind": "poses", "on": True})
        answers["poses_off"] = call(port, "POST", "/record", {"kind": "poses", "on": False})
        answers["bg_green"] = call(port, "POST", "/background", {"background": "green"})
        answers["video_on"] = call(port, "POST", "/record", {"kind": "video", "on": True})
        answers["bg_with_video"] = call(port, "POST", "/background", {"background": "transparent"})
        answers["video_off"] = call(port, "POST", "/record", {"kind": "video", "on": False})

    answers, _ = _live_session(tmp_path, script)
    no_alpha = "H.264 video and virtual cameras have no alpha"
    assert answers["vcam_on"][0] == 200
    status, body = answers["bg_with_vcam"]
    assert status == 409 and body["error"].startswith("output vcam (panel): " + no_alpha)
    assert answers["vcam_off"][0] == 200
    assert answers["bg_png_only"] == (200, {"background": "transparent"})
    status, body = answers["vcam_when_transparent"]
    assert status == 409 and body["error"].startswith("a virtual camera with the transparent background: " + no_alpha)
    status, body = answers["video_when_transparent"]
    assert status == 409 and body["error"].startswith("a video recording with the transparent background: ")
    assert answers["poses_when_transparent"][0] == 200 and answers["poses_off"][0] == 200
    assert answers["bg_green"][0] == 200 and answers["video_on"][0] == 200
    status, body = answers["bg_with_video"]
    assert status == 409 and "(recording)" in body["error"]
    assert answers["video_off"][0] == 200
    assert len(test_backend.instances) == 1                 # the refused vcam was never opened


def test_a_take_is_never_overwritten(tmp_path):
    """Recording again under the same name silently overwrote the take (issue 34 finding 2):
    the same name is 409 now, and names left to the run are numbered when taken."""
    def script(port, answers, frames):
        call(port, "POST", "/record", {"kind": "poses", "on": True, "name": "take1.jsonl"})
        wait_frames(frames, 3)
        call(port, "POST", "/record", {"kind": "poses", "on": False})
        answers["again"] = call(port, "POST", "/record", {"kind": "poses", "on": True, "name": "take1.jsonl"})
        answers["auto"] = []
        for _ in range(2):
            answers["auto"].append(call(port, "POST", "/record", {"kind": "poses", "on": True}))
            call(port, "POST", "/record", {"kind": "poses", "on": False})

    answers, _ = _live_session(tmp_path, script)
    assert answers["again"][0] == 409 and "exists" in answers["again"][1]["error"]
    autos = [a[1]["recording"]["poses"]["path"] for a in answers["auto"]]
    assert all(a[0] == 200 for a in answers["auto"]) and autos[0] != autos[1]
    assert (tmp_path / "rec" / "take1.jsonl").stat().st_size > 0
