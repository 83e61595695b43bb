"""The quality governor's render steps (issue 32): coarser reduced meshes swapped in by their
index buffers only, and a smaller render size with the same camera."""

from __future__ import annotations

import numpy as np
import pytest

from render.detail import PIXEL_ERROR, pixel_size_m

SIZE = (320, 180)
COARSE = 2.0
#: a frame with the coarse meshes differs from the fine one's in at most this fraction of its
#: pixels by more than CHANNEL (silhouette and shading line moves of a pixel or two)
MAX_CHANGED = 0.03
CHANNEL = 48


def test_pixel_error_swaps_the_triangles_and_back(make_renderer, default_avatar):
    r = make_renderer(SIZE, detail="reduced", background="chroma")
    r.set_avatar(default_avatar)
    fine = [p.count for p in r.gpu.primitives]
    textures = dict(r.gpu.images)
    r.draw()
    before = r.read_rgba().copy()
    coarse = r.detail_for(default_avatar, r.camera, pixel_error=COARSE)     # off the render thread
    assert r.set_pixel_error(COARSE, coarse)
    assert r.detail_tolerance_m == pytest.approx(COARSE * pixel_size_m(r.camera, SIZE[1]), rel=1e-6)
    now = [p.count for p in r.gpu.primitives]
    assert sum(now) < sum(fine) and all(c % 3 == 0 for c in now)
    assert r.gpu.images == textures                       # nothing else uploaded
    assert [p.count for p in r.gpu.primitives] == [coarse.indices.get(p.key, np.zeros(p.count)).size
                                                   for p in r.gpu.primitives]
    r.draw()
    after = r.read_rgba()
    changed = np.mean(np.any(np.abs(after.astype(int) - before.astype(int)) > CHANNEL, axis=2))
    assert 0 < changed <= MAX_CHANGED
    assert r.set_pixel_error(PIXEL_ERROR)
    assert [p.count for p in r.gpu.primitives] == fine
    r.draw()
    assert np.array_equal(r.read_rgba(), before)          # back to the very same frame


def test_pixel_error_with_full_detail_changes_nothing(make_renderer, default_avatar):
    r = make_renderer(SIZE, detail="full")
    r.set_avatar(default_avatar)
    counts = [p.count for p in r.gpu.primitives]
    assert not r.set_pixel_error(COARSE)
    assert [p.count for p in r.gpu.primitives] == counts and r.pixel_error == PIXEL_ERROR


def test_render_size_keeps_the_camera(make_renderer, default_avatar):
    r = make_renderer(SIZE, detail="reduced")
    r.set_avatar(default_avatar)
    cam = r.camera
    r.set_render_size((240, 135))
    assert r.size == (240, 135) and r.camera is cam
    r.draw()
    assert r.read_rgba().shape == (135, 240, 4)
    with pytest.raises(ValueError, match="render size 240x240: another aspect ratio than 240x135"):
        r.set_render_size((240, 240))
    r.set_render_size(SIZE)
    r.draw()
    assert r.read_rgba().shape == (180, 320, 4)
