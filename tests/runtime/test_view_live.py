"""The viewer in a running session through the control service (runtime/view.py, POST /view,
POST /playback, GET /hairstyle/guides): the guides of the style drawn validate against their
schema with the fit's counts; the inspection view draws them; a drag orbits the viewer's
frame while the video output keeps its framing; a reset brings the viewer back onto the
output's view; pause, single substeps, compare mode, restart without a clip (422)."""

from __future__ import annotations

import json
import time

import jsonschema
import numpy as np

from avatars.tryon.cache import TryOnCache
from avatars.tryon.guide_export import SCHEMA_PATH
from runtime.config import RunConfig
from runtime.config_sections import MotionSection, TryOnSection
from runtime.session import Session
from tests.runtime.test_run_e2e import read_video
from tests.runtime.test_tryon_live import _call

SIZE = (240, 160)


def cyan(rgb) -> int:
    r, g, b = (rgb[..., k].astype(int) for k in range(3))
    return int(((r < 90) & (g > 150) & (b > 190)).sum())


def differ(a, b, level=40) -> float:
    """Share of pixels whose largest channel difference exceeds ``level``."""
    return float((np.abs(a.astype(int) - b.astype(int)).max(-1) > level).mean())


def test_view_guides_orbit_and_playback_through_the_service(tmp_path):
    out = tmp_path / "live.mp4"
    cfg = RunConfig(source="turn-test", realtime=True, fps=30, duration=600.0, size=SIZE, output=(f"video:{out}",),
                    service=True, port=0, tryon=TryOnSection(style="short02"), motion=MotionSection(clip="none"),
                    record_dir=str(tmp_path / "rec"))
    answers = {}

    def requests():
        try:
            port = session.service.address[1]
            answers["guides"] = _call(port, "GET", "/hairstyle/guides")
            answers["view0"] = _call(port, "GET", "/view")
            answers["paused"] = _call(port, "POST", "/playback", {"paused": True})
            answers["hair0"] = _call(port, "GET", "/hair")
            answers["step"] = _call(port, "POST", "/playback", {"steps": 12})
            answers["hair1"] = _call(port, "GET", "/hair")
            answers["front"] = _call(port, "GET", "/frame.png")
            answers["inspect"] = _call(port, "POST", "/view", {"inspect": "mesh+guides"})
            answers["guided"] = _call(port, "GET", "/frame.png")
            answers["drag"] = _call(port, "POST", "/view", {"inspect": "mesh", "drag": [100, 0], "height": 80})
            answers["turned"] = _call(port, "GET", "/frame.png")
            answers["reset"] = _call(port, "POST", "/view", {"reset": True})
            answers["front2"] = _call(port, "GET", "/frame.png")
            answers["bad"] = _call(port, "POST", "/view", {"framing": "side"})
            answers["bad_drag"] = _call(port, "POST", "/view", {"drag": [1, float("nan")]})
            answers["restart"] = _call(port, "POST", "/playback", {"restart": True})
            answers["compare"] = _call(port, "POST", "/playback", {"compare": True, "paused": False})
            # a pose track recorded while the view is orbited carries the orbit
            _call(port, "POST", "/playback", {"compare": False})
            answers["drag2"] = _call(port, "POST", "/view", {"drag": [50, 0], "height": 160})
            answers["rec_on"] = _call(port, "POST", "/record", {"kind": "poses", "on": True, "name": "take.jsonl"})
            time.sleep(1.0)
            answers["rec_off"] = _call(port, "POST", "/record", {"kind": "poses", "on": False})
        finally:
            session.stop()

    def on_frame(info, rig):
        if session.drawer.frames == 3:
            import threading

            threading.Thread(target=requests, daemon=True).start()

    session = Session(cfg, say=lambda line: None, on_frame=on_frame)
    session.tryon.cache = TryOnCache(tmp_path / "cache")
    with session:
        result = session.run()
    assert not result.interrupted

    status, doc = answers["guides"]
    assert status == 200
    jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text())).validate(doc)
    assert doc["style"] == "short02" and doc["counts"] == {"candidates": 18, "attached": 18, "joined": 0, "rejected": 0}
    status, v = answers["view0"]
    assert status == 200 and v["framing"] == "bust" and v["inspect"] == "mesh" and v["orbit"]["yaw"] == 0.0
    assert v["guides"] == doc["counts"] and v["paused"] is False and v["compare"] is False
    assert answers["paused"][1]["paused"] is True
    # 12 single substeps while paused: exactly 12 more chain steps
    assert answers["hair1"][1]["steps"] - answers["hair0"][1]["steps"] == 12
    # the inspection view draws the guides (cyan), the mesh view none
    assert cyan(answers["guided"][1]) > 100 and cyan(answers["front"][1]) == 0
    # a drag of 100 px of an 80 px high preview = 200 output px (160 high) = 1.0 rad of orbit
    status, v = answers["drag"]
    assert status == 200 and abs(v["orbit"]["yaw"] + 1.0) < 1e-12
    assert differ(answers["turned"][1], answers["front"][1]) > 0.03
    assert answers["reset"][1]["orbit"]["yaw"] == 0.0
    assert differ(answers["front2"][1], answers["front"][1]) < 0.002     # paused: the same frame again
    assert answers["bad"][0] == 400 and "framing" in answers["bad"][1]["error"]
    assert answers["bad_drag"][0] == 400
    assert answers["restart"][0] == 422 and "no body motion" in answers["restart"][1]["error"]
    status, v = answers["compare"]
    assert status == 200 and v["compare"] is True and v["solvers"] == ["rest-shape", "legacy"] and not v["paused"]
    # the video output kept its framing while the viewer orbited: no frame of it is the turned view
    _, video = read_video(out)
    turned = answers["turned"][1]
    assert min(differ(f, turned) for f in video) > 0.02
    assert min(differ(f, answers["front"][1]) for f in video) < 0.01
    # the recorded pose track carries the orbit of each frame; a replay follows it into the outputs
    assert answers["rec_on"][0] == 200 and answers["rec_off"][0] == 200, answers["rec_off"]
    from tracking.track_io import load_track

    take = load_track(tmp_path / "rec" / "take.jsonl")
    assert len(take) > 3 and take.view is not None
    assert np.array_equal(take.view, np.tile([-0.25, 0.0, 1.0, 0.0, 0.0], (len(take), 1)))


def test_a_replay_of_a_track_with_views_reproduces_the_view(tmp_path):
    from tracking.track_io import PoseTrackWriter, load_track

    views = {}
    for name, view in (("plain", None), ("turned", [-0.8, 0.2, 1.3, 0.01, 0.0])):
        track = tmp_path / f"{name}.jsonl"
        with PoseTrackWriter(track) as w:
            for i in range(20):
                w.write(i * 50_000_000, [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0] * 52, 1.0, True, view=view)
        assert (load_track(track).view is None) == (view is None)
        out = tmp_path / name
        cfg = RunConfig(source=str(track), duration=0.5, fps=10, size=(96, 64), output=(f"png:{out}",),
                        motion=MotionSection(clip="rest"))
        s = Session(cfg, say=lambda line: None)
        with s:
            s.run()
            views[name] = (s.drawer.view.orbit, s.drawer.view.follow)
        from PIL import Image

        views[name] += (np.asarray(Image.open(sorted(out.glob("*.png"))[-1]).convert("RGB")),)
    from render.orbit import Orbit

    assert views["plain"][:2] == (Orbit(), False)
    assert views["turned"][:2] == (Orbit(-0.8, 0.2, 1.3, (0.01, 0.0)), True)
    assert differ(views["turned"][2], views["plain"][2]) > 0.05        # the video shows the recorded view
