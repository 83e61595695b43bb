"""Issue 34 item 10: a CMU BVH walk played in place drifted toward and away from the camera
(the avatar's height in frame 400 -> 320 -> 468 px, feet cut off): in place removed only the
straight line from the first key to the last, and a capture that starts from standing and
stops again travels along that line at a changing speed. A clip that does not loop now also
loses the rest of its slow horizontal path; the sway of each step and the vertical bob stay,
and a looping clip is retargeted exactly as before."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.clips import load_file
from avatars.generate import default_avatar_path
from runtime.rig import RetargetOptions
from runtime.rig.retarget import retarget
from tests.avatars.clip_files import bvh_text, cmu_walk_path

FPS = 30
DURATION = 6.0
#: The walk in place may stray from the rest hips by at most this share more than its sway.
SWAY_MARGIN = 0.25


@pytest.fixture(scope="module")
def avatar():
    return load_avatar(default_avatar_path())


def _hips_xz(tmp_path, avatar, name, *, loop=False, **path):
    fname = f"{name}_loop.bvh" if loop else f"{name}.bvh"
    f = tmp_path / fname
    f.write_text(bvh_text(frames=int(DURATION * FPS) + 1, frame_time=1 / FPS,
                          hips_path=cmu_walk_path(DURATION, **path)))
    (clip,) = load_file(f)
    assert clip.loop is loop
    placed = retarget(clip, avatar, options=RetargetOptions(in_place=True))
    moved = retarget(clip, avatar, options=RetargetOptions(in_place=False))
    rest = avatar.skeleton.rest_translation[placed.hips]
    return placed.hips_local - rest, moved.hips_local - rest


def test_a_capture_walk_in_place_stays_over_its_spot(tmp_path, avatar):
    walk, travelled = _hips_xz(tmp_path, avatar, "02_01")
    sway, _ = _hips_xz(tmp_path, avatar, "sway", speed=0.0)       # the same steps without going anywhere
    reach = np.linalg.norm(walk[:, [0, 2]], axis=1).max()
    sway_reach = np.linalg.norm(sway[:, [0, 2]], axis=1).max()
    assert 0.02 < sway_reach < 0.05                                  # ~4 cm of sway (metres)
    assert reach <= (1 + SWAY_MARGIN) * sway_reach
    assert np.ptp(travelled[:, 2]) > 3.0                              # the capture walks > 3 m
    assert np.allclose(walk[:, 1], travelled[:, 1])                   # the bob stays
    assert np.linalg.norm(walk[-1, [0, 2]] - walk[0, [0, 2]]) < 1e-9


def test_forward_and_back_is_what_moved_the_avatar_before(tmp_path, avatar):
    """The linear removal alone (today's loop rule) leaves the speed changes: ~0.5 m forward
    and back, the camera distance changing by a third."""
    walk, travelled = _hips_xz(tmp_path, avatar, "02_01")
    t = np.linspace(0.0, 1.0, len(travelled))[:, None]
    linear = travelled - t * (travelled[-1] - travelled[0]) * [1, 0, 1]
    assert np.abs(linear[:, 2]).max() > 0.3
    assert np.abs(walk[:, 2]).max() < 0.1 * np.abs(linear[:, 2]).max()


def test_a_looping_clip_keeps_the_linear_rule(tmp_path, avatar):
    walk, travelled = _hips_xz(tmp_path, avatar, "walk", loop=True, ramp=1e-3)
    t = np.linspace(0.0, 1.0, len(travelled))[:, None]
    assert np.allclose(walk, travelled - t * (travelled[-1] - travelled[0]) * [1, 0, 1], atol=1e-12)
