"""Reduced mesh detail (render.detail): fewer triangles over the same vertices, the surface
within its tolerance at rest and in poses, frames that look like the full mesh's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.ndimage import maximum_filter, minimum_filter

from render.camera import Camera
from render.detail import (PIXEL_ERROR, pixel_size_m, pose_worlds, posed_positions, reduce_avatar,
                           reduce_primitive, resolve_detail)
from render.upload import smooth_normals

SIZE = (640, 360)
BACKGROUND = "chroma"
#: a reduced default avatar draws at most this fraction of its triangles (measured 0.42)
MAX_TRIANGLE_FRACTION = 0.5
#: removed vertices lie within this many tolerances of the reduced surface at rest (1.99 seen)
REST_FACTOR = 2.5
#: ...and in an unseen pose, every node turned up to 0.4 rad (2.0 seen)
POSE_FACTOR = 3.0
UNSEEN_ANGLE = 0.4
#: a pixel "really" differs when a channel is off by more than this from every pixel of the
#: other image's 3x3 neighbourhood (a silhouette moved by less than a pixel does not count)
CHANNEL_TOLERANCE = 24
#: ...and at most this fraction of the avatar's pixels may (0.26 % seen, layered hair)
MAX_DIFFERING_FRACTION = 0.005
TOLERANCE_M = 0.5e-3


def test_detail_auto_follows_the_backend():
    assert resolve_detail("auto", software=True) is True
    assert resolve_detail("auto", software=False) is False
    assert resolve_detail("full", software=True) is False and resolve_detail("reduced", software=False) is True
    with pytest.raises(ValueError, match="detail 'low' is not one of auto, full, reduced"):
        resolve_detail("low", software=True)


def test_pixel_size_is_the_frustum_height_over_the_rows():
    cam = Camera(position=np.array([0.0, 1.5, 2.0]), target=np.array([0.0, 1.5, 0.0]), fov_y=math.radians(30.0))
    assert pixel_size_m(cam, 720) == pytest.approx(2 * 2.0 * math.tan(math.radians(15.0)) / 720, rel=1e-12)


def _primitives(avatar):
    for k, mi in enumerate(avatar.mesh_instances):
        for p in avatar.meshes[mi.mesh].primitives:
            if p.vertex_count and p.indices.size and p.mode == 4:
                yield k, p


def _reduced(avatar, k, p, worlds):
    normals = p.normals if p.normals is not None else smooth_normals(p.positions, p.indices)
    return reduce_primitive(p, TOLERANCE_M, posed_positions(avatar, k, p, worlds), normals=normals, textured=False)


def test_reduced_detail_draws_the_same_vertices_with_fewer_triangles(make_renderer, default_avatar):
    r = make_renderer(SIZE, detail="reduced")
    r.set_avatar(default_avatar)
    assert r.reduced and r.detail_tolerance_m == pytest.approx(PIXEL_ERROR * pixel_size_m(r.camera, SIZE[1]))
    drawn = sum(p.count // 3 for p in r.gpu.primitives)
    total = sum(p.file_triangles for p in r.gpu.primitives)
    assert total == sum(p.indices.size // 3 for _, p in _primitives(default_avatar))
    assert drawn <= MAX_TRIANGLE_FRACTION * total
    reduced = reduce_avatar(default_avatar, r.detail_tolerance_m)
    assert r.detail_for(default_avatar).indices.keys() == reduced.keys()
    for (k, j), idx in reduced.items():
        p = default_avatar.meshes[default_avatar.mesh_instances[k].mesh].primitives[j]
        assert np.array_equal(idx, r.detail_for(default_avatar).indices[(k, j)])      # deterministic
        assert idx.size % 3 == 0 and set(idx.tolist()) <= set(p.indices.tolist())   # its own vertices
        if p.morph_positions.shape[0]:          # what an expression moves is all still drawn
            moved = np.flatnonzero(np.any(p.morph_positions != 0, axis=(0, 2)))
            assert set(moved.tolist()) <= set(idx.tolist())


def test_detail_for_from_other_threads_while_the_render_thread_draws(make_renderer, default_avatar):
    """The try-on worker and the service thread compute reduced detail while the render
    thread draws: the same triangles as on one thread, one result kept per tolerance."""
    import threading

    from avatars import load_avatar

    r = make_renderer(SIZE, detail="reduced")
    r.set_avatar(default_avatar)
    want = reduce_avatar(default_avatar, r.detail_tolerance_m)
    fresh = load_avatar(default_avatar.path)          # not in the cache yet
    got, errors = [], []

    def work():
        try:
            got.append(r.detail_for(fresh, r.camera))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for _ in range(3):
        r.draw()
    r.read_rgba()
    for t in threads:
        t.join(timeout=120)
    assert not errors and len(got) == 3
    for d in got:
        assert d.indices.keys() == want.keys()
        assert all(np.array_equal(d.indices[k], want[k]) for k in want)
    assert any(r.detail_for(fresh, r.camera) is d for d in got)        # one of them is kept, not a 4th


def test_full_detail_is_the_renderers_default(make_renderer, default_avatar):
    r = make_renderer(SIZE)
    r.set_avatar(default_avatar)
    assert not r.reduced and r.detail_tolerance_m == 0.0
    assert all(p.count // 3 == p.file_triangles for p in r.gpu.primitives)


def _point_triangle_distance(p, a, b, c):
    """Distances (N,) from points p to triangles (a, b, c), all (N, 3) (closest point on the
    triangle: inside its plane, else on an edge)."""
    ab, ac = b - a, c - a
    n = np.cross(ab, ac)
    nn = np.maximum((n * n).sum(-1), 1e-30)
    t = ((p - a) * n).sum(-1) / nn
    q = p - t[:, None] * n                                   # projection on the plane
    u = (np.cross(b - q, c - q) * n).sum(-1) / nn
    v = (np.cross(c - q, a - q) * n).sum(-1) / nn
    inside = (u >= 0) & (v >= 0) & (u + v <= 1)
    best = np.where(inside, np.linalg.norm(p - q, axis=-1), np.inf)
    for x, y in ((a, b), (b, c), (c, a)):
        e = y - x
        s = np.clip(((p - x) * e).sum(-1) / np.maximum((e * e).sum(-1), 1e-30), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(p - (x + s[:, None] * e), axis=-1))
    return best


def _surface_distance(points, positions, tris, k: int = 8):
    """Distance (N,) from each point to the triangle list ``tris`` over ``positions``: over the
    triangles around its ``k`` nearest triangle vertices first, then, where that is more than
    the tolerance, over every triangle (exact)."""
    from scipy.spatial import cKDTree

    verts = np.unique(tris)
    around: dict[int, list[int]] = {}
    for t, tri in enumerate(tris):
        for v in tri:
            around.setdefault(int(v), []).append(t)
    _, near = cKDTree(positions[verts]).query(points, k=min(k, len(verts)))
    out = np.empty(len(points))
    for i, row in enumerate(np.atleast_2d(near)):
        cand = tris[sorted({t for j in row for t in around[int(verts[j])]})]
        q = np.repeat(points[i][None], len(cand), 0)
        out[i] = _point_triangle_distance(q, positions[cand[:, 0]], positions[cand[:, 1]], positions[cand[:, 2]]).min()
    far = np.flatnonzero(out > TOLERANCE_M)           # the estimate may be too large: exactly, over every triangle
    a, b, c = (positions[tris[:, j]] for j in range(3))
    for i in far:
        out[i] = _point_triangle_distance(np.repeat(points[i][None], len(tris), 0), a, b, c).min()
    return out


def test_reduced_surface_stays_within_its_tolerance(default_avatar):
    """Every vertex the reduced triangles leave out lies near their surface, at rest and in a
    pose the simplifier never saw (the sleeves, the body and the hair bend)."""
    worlds = pose_worlds(default_avatar)
    unseen = pose_worlds(default_avatar, poses=1, angle=UNSEEN_ANGLE, seed=11)[1]
    worst = {"rest": 0.0, "pose": 0.0}
    checked = 0
    for k, p in _primitives(default_avatar):
        tris = _reduced(default_avatar, k, p, worlds).indices.reshape(-1, 3)
        left_out = np.setdiff1d(np.unique(p.indices), tris)
        if not left_out.size:
            continue
        checked += left_out.size
        for name, world in (("rest", default_avatar.skeleton.rest_world), ("pose", unseen)):
            pos = posed_positions(default_avatar, k, p, [world])[0]
            worst[name] = max(worst[name], float(_surface_distance(pos[left_out], pos, tris).max()) / TOLERANCE_M)
    assert checked > 5_000
    assert worst["rest"] <= REST_FACTOR, worst
    assert worst["pose"] <= POSE_FACTOR, worst


def _really_differ(a, b):
    a, b = a[..., :3].astype(np.int32), b[..., :3].astype(np.int32)
    lo = np.stack([minimum_filter(b[..., c], 3) for c in range(3)], -1)
    hi = np.stack([maximum_filter(b[..., c], 3) for c in range(3)], -1)
    return (np.maximum(lo - a, 0) + np.maximum(a - hi, 0)).max(-1) > CHANNEL_TOLERANCE


@pytest.mark.parametrize("name", ["default", "layered"])
def test_reduced_frames_look_like_full_ones(make_renderer, avatars_by_name, name):
    avatar = avatars_by_name[name]
    full, reduced = make_renderer(SIZE, background=BACKGROUND), make_renderer(SIZE, background=BACKGROUND,
                                                                               detail="reduced")
    full.set_avatar(avatar)
    reduced.set_avatar(avatar)
    poses = [None] + pose_worlds(avatar, poses=2, angle=0.3, seed=7)[1:]
    for world in poses:
        full.draw(world, {"blink": 1.0})
        a = full.read_rgba().copy()
        reduced.draw(world, {"blink": 1.0})
        b = reduced.read_rgba().copy()
        assert reduced.stats.triangles < full.stats.triangles
        avatar_px = int((np.abs(a[..., :3].astype(int) - (0, 255, 0)).sum(-1) > 0).sum())
        differ = int((_really_differ(a, b) | _really_differ(b, a)).sum())
        assert avatar_px > 20_000
        assert differ <= MAX_DIFFERING_FRACTION * avatar_px, (name, differ, avatar_px)


@pytest.mark.parametrize("name", ["godette", "default"])
def test_flat_values_draw_the_same_bytes_as_the_uniform_blocks(make_renderer, avatars_by_name, name):
    """render.fragment_values: the fragment shader's block values as flat varyings (software
    rasterisers) or read from the blocks (GPUs): the same image, byte for byte."""
    from tests.render.conftest import head_yaw_world

    avatar = avatars_by_name[name]
    world = head_yaw_world(avatar, 0.4)
    imgs = []
    for flat in (True, False):
        r = make_renderer(SIZE, background=BACKGROUND, outlines="on", flat_values=flat)
        assert r.programs.flat_values is flat
        r.set_avatar(avatar)
        r.draw(world, {"happy": 1.0, "blink": 0.5})
        imgs.append(r.read_rgba().copy())
    assert np.array_equal(imgs[0], imgs[1])
