"""The orbit camera's math (render/orbit.py) exactly, the hair and back framings
(render/camera.py), and rendered frames of the three inspection views of a fitted style
through headless EGL (render/inspection.py): cyan guides on a fitted long01, none in the raw
mesh view, orange ones when guides are rejected, yellow suggested roots on request."""

from __future__ import annotations

import math

import numpy as np
import pytest

from avatars.math3d import mat_look_at
from render.camera import Camera, CameraOptions, frame_camera, hair_bounds, head_bounds
from render.inspection import INSPECT_MODES, GuideLines, guide_segments, next_mode
from render.orbit import MAX_PITCH, RAD_PER_PIXEL, ZOOM_STEP, Orbit, metres_per_pixel
from render.overlays import Overlays

BASE = Camera(position=np.array([0.0, 1.5, 2.0]), target=np.array([0.0, 1.5, 0.0]))


def test_a_drag_orbits_by_0_005_rad_per_pixel_about_the_target():
    o = Orbit().dragged(100, 0)
    assert o.yaw == -100 * RAD_PER_PIXEL == -0.5 and o.pitch == 0.0
    cam = o.apply(BASE)
    want = np.array([0.0, 1.5, 0.0]) + 2.0 * np.array([math.sin(-0.5), 0.0, math.cos(-0.5)])
    assert np.allclose(cam.position, want, atol=1e-12, rtol=0)
    assert np.allclose(cam.target, BASE.target, atol=0, rtol=0)
    assert np.allclose(cam.view_matrix(), mat_look_at(want, BASE.target, BASE.up), atol=1e-12, rtol=0)
    # dragging right turns the avatar to its right: the eye went to -X (the avatar's right hand)
    assert cam.position[0] < 0


def test_a_drag_down_looks_from_above_and_the_pitch_stops_at_85_degrees():
    cam = Orbit().dragged(0, 40).apply(BASE)
    assert math.asin((cam.position[1] - 1.5) / 2.0) == pytest.approx(0.2, abs=1e-12)
    far = Orbit().dragged(0, 10_000)
    assert far.pitch == MAX_PITCH == math.radians(85.0)
    cam = far.apply(BASE)
    assert cam.position[1] - 1.5 == pytest.approx(2.0 * math.sin(math.radians(85.0)), abs=1e-12)
    assert Orbit().dragged(0, -10_000).apply(BASE).position[1] - 1.5 == pytest.approx(-2.0 * math.sin(MAX_PITCH))


def test_the_wheel_zooms_1_1_per_notch_and_pan_moves_eye_and_target_together():
    o = Orbit().wheeled(3)
    assert o.zoom == pytest.approx(ZOOM_STEP ** 3, rel=1e-15)
    cam = o.apply(BASE)
    assert np.linalg.norm(cam.position - cam.target) == pytest.approx(2.0 / 1.331, rel=1e-12)
    assert Orbit().wheeled(-1000).zoom == 0.1 and Orbit().wheeled(1000).zoom == 20.0
    mpp = metres_per_pixel(BASE, 720)
    assert mpp == pytest.approx(2 * 2.0 * math.tan(math.radians(15)) / 720, rel=1e-12)
    p = Orbit().panned(10, 20, mpp).apply(BASE)        # the avatar follows the pointer: the view goes left, up
    assert np.allclose(p.target - BASE.target, [-10 * mpp, 20 * mpp, 0.0], atol=1e-12, rtol=0)
    assert np.allclose(p.position - p.target, BASE.position - BASE.target, atol=1e-12, rtol=0)
    assert Orbit().apply(BASE) is BASE


def test_orbit_to_dict_round_trips_and_names_bad_values():
    o = Orbit().dragged(33, -12).wheeled(2).panned(4, 5, 0.001)
    assert Orbit.from_dict(o.to_dict()) == o
    with pytest.raises(ValueError, match=r"orbit.zoom: expected 0.1..20.0"):
        Orbit.from_dict({"zoom": 0})
    with pytest.raises(ValueError, match=r"orbit.yaw: expected a finite number"):
        Orbit.from_dict({"yaw": float("nan")})


def test_hair_and_back_framings(fitted_long01):
    av = fitted_long01.avatar
    lo, hi = hair_bounds(av)
    hlo, hhi = head_bounds(av)
    assert lo[1] < hlo[1] - 0.1          # long01 hangs well below the head box
    assert np.all(lo <= hlo) and np.all(hi >= hhi)
    size = (320, 400)
    cam = frame_camera(av, size[0] / size[1], CameraOptions(framing="hair"))
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    px = cam.project(corners, size)
    assert px[:, 0].min() >= 0 and px[:, 0].max() <= size[0] and px[:, 1].min() >= 0 and px[:, 1].max() <= size[1]
    bust = frame_camera(av, 0.8, CameraOptions(framing="bust"))
    back = frame_camera(av, 0.8, CameraOptions(framing="back"))
    assert bust.position[2] > bust.target[2] and back.position[2] < back.target[2]
    assert np.allclose(back.target, bust.target) and back.position[1] == bust.position[1]


def test_guide_segments_colour_by_state():
    pts = np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [1, 0, 0], [1, 1, 0]], float)
    g = GuideLines(pts, np.array([0, 3, 5]), np.array([0, 2]), roots=np.array([[0, 0, 0], [1, 0, 0]]))
    pos, col = guide_segments(g)
    assert len(pos) == 2 * (2 + 1) + 2 * 3 * 2           # 3 curve segments, 2 roots x 3 axes
    assert np.array_equal(pos[:6], [[0, 0, 0], [0, 1, 0], [0, 1, 0], [0, 2, 0], [1, 0, 0], [1, 1, 0]])
    assert col[0].tolist() == pytest.approx([0.0, 0.85, 1.0, 1.0]) and col[4].tolist() == pytest.approx([1, .35, 0, 1])
    with pytest.raises(ValueError, match="states"):
        guide_segments(GuideLines(pts, np.array([0, 5]), np.array([0, 1])))
    assert [next_mode(m) for m in INSPECT_MODES] == ["mesh+guides", "guides", "weights", "mesh"]


# ---------------------------------------------------------------------------- rendered frames

@pytest.fixture(scope="module")
def fitted_long01():
    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from avatars.hair import load_hair
    from avatars.tryon import TryOnSettings, try_on
    from tests.conftest import asset

    return try_on(load_avatar(default_avatar_path()), load_hair(asset("hair", "long01", "long01.obj")), TryOnSettings())


def _lines(res, roots=False, depth=False) -> GuideLines:
    gs = res.guide_set
    return GuideLines(gs.points, gs.offsets, gs.state, gs.suggested_root if roots else None, depth=depth)


def cyan(img):
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return int(((r < 90) & (g > 150) & (b > 190)).sum())


def orange(img):
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return int(((r > 200) & (g > 70) & (g < 190) & (b < 80)).sum())


def yellow(img):
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return int(((r > 200) & (g > 180) & (b < 90)).sum())


def brown(img):
    """Pixels of long01's brown: red over green over blue, darker than the skin."""
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return int(((r < 150) & (r > g + 8) & (g > b) & (r - b > 20)).sum())


def _render(make_renderer, res, *, overlays=None, hide=(), framing="hair", orbit=Orbit()):
    r = make_renderer((240, 300), background="#202430", antialias="off")
    r.set_avatar(res.avatar)
    cam = orbit.apply(frame_camera(res.avatar, 240 / 300, CameraOptions(framing=framing)))
    r.draw(camera=cam, overlays=overlays, hide=hide)
    return r.read_rgba()


@pytest.mark.gl
def test_the_three_inspection_views_of_long01(make_renderer, fitted_long01):
    res = fitted_long01
    mesh = _render(make_renderer, res)
    both = _render(make_renderer, res, overlays=Overlays(guides=_lines(res)))
    only = _render(make_renderer, res, overlays=Overlays(guides=_lines(res, depth=True)), hide=(res.hair_instance,))
    xray = _render(make_renderer, res, overlays=Overlays(guides=_lines(res)), hide=(res.hair_instance,))
    assert cyan(mesh) == 0 and orange(mesh) == 0
    assert cyan(both) > 2000 and orange(both) == 0          # 70 attached guides, none rejected
    assert cyan(only) > 2000
    assert cyan(only) < cyan(xray) - 300       # depth-tested: the guides behind the head are hidden
    # guides only: the hair mesh is gone
    assert brown(mesh) > 3000 and brown(only) < brown(mesh) / 20     # measured 4152 and 81
    roots = _render(make_renderer, res, overlays=Overlays(guides=_lines(res, roots=True)))
    assert yellow(roots) > 50 and yellow(both) == 0


@pytest.mark.gl
def test_rejected_guides_are_orange(make_renderer):
    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from avatars.hair import load_hair
    from avatars.tryon import TryOnSettings, try_on
    from tests.conftest import asset

    res = try_on(load_avatar(default_avatar_path()), load_hair(asset("hair", "short02", "short02.obj")),
                 TryOnSettings(attach_distance=0.02))       # 1 attached, 7 joined, 10 rejected
    img = _render(make_renderer, res, overlays=Overlays(guides=_lines(res)))
    assert orange(img) > 200 and cyan(img) > 0


@pytest.mark.gl
def test_an_orbit_changes_the_rendered_frame(make_renderer, fitted_long01):
    front = _render(make_renderer, fitted_long01, framing="bust")
    turned = _render(make_renderer, fitted_long01, framing="bust", orbit=Orbit().dragged(200, 0))
    back = _render(make_renderer, fitted_long01, framing="back")
    half = _render(make_renderer, fitted_long01, framing="bust", orbit=Orbit().dragged(-math.pi / RAD_PER_PIXEL, 0))
    assert (np.abs(front.astype(int) - turned.astype(int)).max(-1) > 30).mean() > 0.05
    # half a turn of drag is the back view (same camera up to rounding)
    assert (np.abs(back.astype(int) - half.astype(int)).max(-1) > 30).mean() < 0.002


def test_heat_ramp():
    from render.inspection import heat

    assert heat(np.array([0.0, 0.5, 1.0]))[:, :3].tolist() == [[0, 0, 1], [0, 1, 0], [1, 0, 0]]


@pytest.mark.gl
def test_the_weights_view_colours_the_hair_by_one_chain(make_renderer, fitted_long01):
    """The "weights" view of chain 0 (runtime/view.py) drawn on long01: the chain's own strand
    green to red (its weights, up to 0.94), the rest of the hair blue (0)."""
    from render.inspection import WeightPoints
    from runtime.view import GuideSkin

    res = fitted_long01
    skin = GuideSkin.of(res.avatar, res.guide_set, res.hair_instance)
    assert len(skin.chains()) == 24 and all(name.startswith("TryOn") or name for name, _ in skin.chains())
    w = skin.chain_weights(0)
    world = res.avatar.skeleton.rest_world
    verts = skin.vertices(world)
    assert w.shape == (len(verts),) and 0 < (w > 0.5).sum() < len(w) / 10   # one strand of 24 (measured 22)
    img = _render(make_renderer, res, overlays=Overlays(weights=WeightPoints(verts, w)), hide=(res.hair_instance,),
                  framing="back")
    r, g, b = (img[..., k].astype(int) for k in range(3))
    warm = int((((g > 150) | (r > 150)) & (b < 100)).sum())
    blue = int(((b > 200) & (r < 80) & (g < 80)).sum())
    assert warm > 20 and blue > 20 * warm                     # measured 60 and 4922 pixels
    assert not np.array_equal(skin.chain_weights(1), w) and skin.chain_weights(24) is w   # the index wraps
