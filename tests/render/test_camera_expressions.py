"""Camera maths, framing, backgrounds and expression -> morph weights (no GL)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import render
from avatars import Expression, MaterialColorBind, MorphTargetBind, TextureTransformBind

from . import synthetic as syn

EXACT = 1e-9


def test_camera_projects_its_target_to_the_image_centre():
    cam = render.Camera(position=np.array([0.3, 1.5, 2.0]), target=np.array([0.0, 1.4, 0.0]))
    assert np.allclose(cam.project(cam.target, (640, 360)), [320, 180], atol=1e-9)
    # +X world is the screen's right, +Y the top, for a camera on +Z looking at -Z.
    front = render.Camera(position=np.array([0.0, 0.0, 3.0]), target=np.zeros(3))
    px = front.project(np.array([[0.1, 0.0, 0.0], [0.0, 0.1, 0.0]]), (100, 100))
    assert px[0, 0] > 50 and px[1, 1] < 50


def test_projection_matches_field_of_view():
    cam = render.Camera(position=np.array([0.0, 0.0, 1.0]), target=np.zeros(3), fov_y=math.radians(90))
    # at distance 1 with a 90° vertical fov, y = 1 is the top edge
    assert cam.project(np.array([0.0, 1.0, 0.0]), (200, 100))[1] == pytest.approx(0.0, abs=EXACT)


def test_bust_and_full_framing(godette, default_avatar):
    for av in (godette, default_avatar):
        bust = render.frame_camera(av, 16 / 9)
        full = render.frame_camera(av, 16 / 9, render.CameraOptions(framing="full"))
        lo, hi = render.body_bounds(av)
        px = full.project(np.array([lo, hi]), (1600, 900))
        assert px[:, 1].min() >= 0 and px[:, 1].max() <= 900
        assert np.linalg.norm(bust.position - bust.target) < np.linalg.norm(full.position - full.target)
        head_lo, head_hi = render.head_bounds(av)
        assert head_hi[1] - head_lo[1] < 0.6 * (hi[1] - lo[1])
    zoomed = render.frame_camera(default_avatar, 1.0, render.CameraOptions(zoom=2.0, offset=(0.1, 0.0, 0.0)))
    plain = render.frame_camera(default_avatar, 1.0)
    assert zoomed.position[0] - plain.position[0] == pytest.approx(0.1)
    assert zoomed.position[2] < plain.position[2]


def test_bust_of_a_big_headed_avatar_stops_at_the_torso(godette):
    """Godette's head (hair buns included) is 0.54 m of her 1.5 m: 1.1 head heights below it
    would reach the knees; the bust stops halfway between the spine and chest bones."""
    cam = render.frame_camera(godette, 16 / 9)
    sk, hb = godette.skeleton, godette.humanoid
    mid_torso = 0.5 * (sk.rest_world[hb["spine"]][1, 3] + sk.rest_world[hb["chest"]][1, 3])
    knee = sk.rest_world[hb["leftLowerLeg"]][1, 3]
    y_torso, y_knee = cam.project(np.array([[0.0, mid_torso, 0.0], [0.0, knee, 0.0]]), (1600, 900))[:, 1]
    assert 750 < y_torso < 900 < y_knee             # the torso midpoint near the bottom edge, knees out
    head_top = render.head_bounds(godette)[1][1]
    assert 0 <= cam.project(np.array([[0.0, head_top, 0.0]]), (1600, 900))[0, 1] < 150   # hair top near the top


def test_background_parsing():
    B = render.Background
    assert B.parse("transparent") == B("transparent")
    assert B.parse("chroma").color == (0, 255, 0) == B.parse("green").color
    assert B.parse("#FF8000").color == (255, 128, 0) == B.parse("ff8000").color
    assert np.allclose(B.parse("#FFFFFF").linear(), 1.0)


def _expr_avatar(**expressions):
    av = syn.avatar([syn.quad(morph=(0.1, 0.0, 0.0))], [syn.unlit()], target_names=("a",))
    return type(av)(**{**av.__dict__, "expressions": expressions})


def _e(name, weight=1.0, **kw):
    return Expression(name=name, preset=True, morph_target_binds=(MorphTargetBind(node=0, index=0, weight=weight),),
                      **kw)


def test_expression_weights_sum_clamp_binary_and_overrides():
    av = _expr_avatar(aa=_e("aa", 0.6), oh=_e("oh", 0.8), blink=_e("blink"),
                      happy=Expression(name="happy", preset=True, override_blink="block", override_mouth="blend",
                                       is_binary=True))
    w = render.expression_weights
    assert w(av, {"aa": 0.5})[0][0] == pytest.approx(0.3)
    assert w(av, {"aa": 1.0, "oh": 1.0})[0][0] == pytest.approx(1.0)  # summed then clamped
    assert w(av, {"unknown": 1.0})[0][0] == 0.0
    assert w(av, {"blink": 1.0, "happy": 0.4})[0][0] == pytest.approx(1.0)  # binary: 0.4 -> 0, no block
    assert w(av, {"blink": 1.0, "happy": 0.6})[0][0] == pytest.approx(0.0)  # binary 1 blocks blink
    assert w(av, {"aa": 1.0, "happy": 1.0})[0][0] == pytest.approx(0.0)    # blend: scaled by 1 - 1


def test_expression_material_binds_become_overrides():
    mat_bind = MaterialColorBind(material=0, type="color", target=np.array([1.0, 0.0, 0.0, 1.0]))
    uv_bind = TextureTransformBind(material=0, scale=np.array([2.0, 1.0]), offset=np.array([0.5, 0.0]))
    av = _expr_avatar(angry=Expression(name="angry", preset=True, material_color_binds=(mat_bind,),
                                       texture_transform_binds=(uv_bind,)))
    ef = render.expression_frame(av, {"angry": 0.5})
    o = ef.material_overrides[0]
    assert np.allclose(o["color"], [1.0, 0.5, 0.5, 1.0])
    assert np.allclose(o["uv_scale"], [1.5, 1.0]) and np.allclose(o["uv_offset"], [0.25, 0.0])
    assert render.expression_frame(av, {}).material_overrides == {}


def test_expression_color_override_is_drawn(make_renderer):
    mat_bind = MaterialColorBind(material=0, type="color", target=np.array([0.0, 0.0, 1.0, 1.0]))
    av = _expr_avatar(sad=Expression(name="sad", preset=True, material_color_binds=(mat_bind,)))
    r = make_renderer((32, 18))
    r.set_avatar(av)
    r.draw(None, {"sad": 1.0}, camera=syn.CAMERA)
    assert tuple(r.read_rgba()[9, 16, :3]) == (0, 0, 255)
    r.draw(None, {}, camera=syn.CAMERA)
    assert tuple(r.read_rgba()[9, 16, :3]) == (255, 255, 255)


def test_collider_wireframes_lie_on_their_shapes():
    from render.overlays import build_lines, collider_lines

    c, t, r = np.array([0.0, 1.0, 0.0]), np.array([0.0, 1.3, 0.1]), 0.05
    pts = collider_lines("capsule", c, t, r)
    axis = t - c
    u = np.clip((pts - c) @ axis / (axis @ axis), 0.0, 1.0)
    dist = np.linalg.norm(pts - (c + u[:, None] * axis), axis=1)
    assert len(pts) % 2 == 0 and np.allclose(dist, r, atol=1e-9)
    sphere = collider_lines("sphere", c, c, r)
    assert np.allclose(np.linalg.norm(sphere - c, axis=1), r)
    ov = render.Overlays(spring_chains=[np.zeros((4, 3))], colliders=[("sphere", c, c, r)], head_axes=np.eye(4))
    pos, col = build_lines(ov)
    assert pos.shape[0] == col.shape[0] and pos.shape[0] % 2 == 0
    assert pos.shape[0] == 2 * 3 + 2 * 3 * 4 + len(sphere) + 2 * 3  # chain, joint crosses, sphere, axes


def test_avatar_overlays_read_springs_and_colliders(godette):
    ov = render.avatar_overlays(godette, godette.skeleton.rest_world)
    assert len(ov.spring_chains) == len(godette.springs)
    assert len(ov.colliders) == len(godette.colliders)
    assert ov.head_axes is not None
