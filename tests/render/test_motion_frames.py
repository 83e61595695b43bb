"""Rendered frames of the default avatar walking with its hair (issue 15): the library's
Walk_Loop retargeted onto the generated A-posed avatar (in place), the hair simulated at
120 Hz from t = 0 with the head still, front and side views at two times of the stride,
against goldens (regenerate with ``SWAYCAM_REGEN_GOLDEN=1`` after looking at them).

Beside the goldens, checks that survive a golden change: the side view shows the stride
(the feet apart along z), and the ponytail swings (its tip moves between the two times)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import render
from avatars.clips import load_file
from render.camera import Camera, CameraOptions, frame_camera
from runtime.rig import AvatarRig, MotionOptions
from tests.conftest import asset
from tracking.pose_track import PoseSample

from .conftest import REGEN_GOLDEN
from .imaging import changed_pixels

pytestmark = pytest.mark.gl

GOLDEN_DIR = Path(__file__).with_name("golden")
SIZE = (180, 240)
BACKGROUND = "#303840"
TIMES_S = (0.75, 1.1)          # two moments of the stride (the loop is 1.33 s)
CHANNEL_TOLERANCE = 8
MAX_DIFFERENT_FRACTION = 0.005
UAL = ("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")


@pytest.fixture(scope="module")
def walking(default_avatar):
    """{time: world matrices} of the default avatar walking, hair applied."""
    (walk,) = load_file(asset(*UAL), names=["Walk_Loop"])
    rig = AvatarRig(default_avatar, motion=MotionOptions(in_place=True))
    rig.play_motion([walk])
    s = PoseSample()
    rig.reset(s)
    out = {}
    n = 0
    for t in TIMES_S:
        while n < round(t * 120):
            n += 1
            s.t_ns = n * 1_000_000_000 // 120
            rig.substep(s)
        out[t] = rig.draw_pose(s, 1.0).copy()
    return out


def _camera(avatar, view: str) -> Camera:
    c = frame_camera(avatar, SIZE[0] / SIZE[1], CameraOptions(framing="full"))
    if view == "front":
        return c
    d = np.linalg.norm(c.position - c.target)
    return Camera(position=c.target + np.array([d, 0.0, 0.0]), target=c.target, fov_y=c.fov_y, near=c.near, far=c.far)


def _fingerprint() -> str:
    from avatars.generate import generator_fingerprint

    return generator_fingerprint()


@pytest.mark.parametrize("t", TIMES_S)
@pytest.mark.parametrize("view", ["front", "side"])
def test_walking_frames_match_their_goldens(make_renderer, default_avatar, walking, view, t, tmp_path):
    r = make_renderer(SIZE, background=BACKGROUND, samples=0)
    r.set_avatar(default_avatar)
    r.camera = _camera(default_avatar, view)
    r.draw(walking[t], None)
    img = r.read_rgba()
    path = GOLDEN_DIR / f"default_walk_{view}_{int(t * 100):03d}_{SIZE[0]}x{SIZE[1]}.png"
    manifest_path = GOLDEN_DIR / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    if REGEN_GOLDEN:
        render.snapshot(path, img)
        manifest[path.name] = {"generator": _fingerprint(), "clip": "UAL Walk_Loop, in place"}
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        return
    if not path.exists():
        pytest.fail(f"golden image {path.name} is missing: run with SWAYCAM_REGEN_GOLDEN=1 to create it")
    if manifest.get(path.name, {}).get("generator") != _fingerprint():
        pytest.skip(f"{path.name} was made with another version of avatars.generate; regenerate after looking")
    golden = np.asarray(Image.open(path).convert("RGBA"))
    diff = changed_pixels(img, golden, CHANNEL_TOLERANCE)
    if diff.mean() > MAX_DIFFERENT_FRACTION:
        render.snapshot(tmp_path / path.name, img)
        pytest.fail(f"{path.name}: {diff.mean():.2%} of pixels differ by more than {CHANNEL_TOLERANCE}; "
                    f"actual image in {tmp_path}")


def test_the_stride_and_the_ponytail_swing(default_avatar, walking):
    h = default_avatar.humanoid
    w0, w1 = walking[TIMES_S[0]], walking[TIMES_S[1]]
    gap = [abs(w[h["leftFoot"], 2, 3] - w[h["rightFoot"], 2, 3]) for w in (w0, w1)]
    assert max(gap) > 0.2                                  # a stride, not a stand
    tip = next(int(j.node) for s in default_avatar.springs if s.name == "Ponytail" for j in s.joints[-1:])
    assert np.linalg.norm(w0[tip, :3, 3] - w1[tip, :3, 3]) > 0.005
