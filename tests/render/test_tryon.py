"""Rendered try-on frames: each shared MakeHuman style on the default avatar, front and
three-quarter view (golden images in golden/tryon/, regenerated only with
SWAYCAM_REGEN_GOLDEN=1 after looking at them), plus checks that hold whatever the exact
pixels: the hair is there and hair-coloured above the face, the back of the head is
covered (no scalp poking through), and the hair does not float behind the head."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import render
from avatars.hair import load_hair
from render.camera import Camera
from tests.conftest import asset

from .conftest import REGEN_GOLDEN
from .imaging import changed_pixels

pytestmark = pytest.mark.gl

STYLES = ("ponytail01", "long01", "bob01", "short02")
GOLDEN = Path(__file__).with_name("golden") / "tryon"
SIZE = (256, 320)
BACKGROUND = (32, 40, 48)
VIEWS = {"front": 0.0, "three_quarter": 40.0}
CHANNEL_TOLERANCE = 8
MAX_DIFFERENT_FRACTION = 0.01
#: RGB distance (0..255) of a pixel counted as the hair's colour
HAIR_DISTANCE = 40


def _cameras(head) -> dict[str, Camera]:
    """Cameras around the head: the crown to two head heights below it in view."""
    H = head.size[1]
    target = head.center + np.array([0.0, -0.55 * H, 0.0])
    dist = 1.6 * H / math.tan(math.radians(15.0))
    cams = {}
    for name, yaw in list(VIEWS.items()) + [("back", 180.0)]:
        a = math.radians(yaw)
        cams[name] = Camera(position=target + dist * np.array([math.sin(a), 0.08, math.cos(a)]), target=target,
                            fov_y=math.radians(30.0))
    return cams


@pytest.fixture(scope="module")
def tryon_frames(gl_context):
    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from avatars.tryon import build_head, try_on

    av = load_avatar(default_avatar_path())
    gl_context.make_current()
    r = render.Renderer(gl_context, SIZE, background="#%02x%02x%02x" % BACKGROUND, samples=0)
    out = {}
    for style in STYLES:
        res = try_on(av, load_hair(asset("hair", style, f"{style}.obj")))
        head = build_head(res.avatar, hide=(res.hair_instance,))
        r.set_avatar(res.avatar)
        for name, cam in _cameras(head).items():
            r.draw(None, camera=cam)
            out[style, name] = r.read_rgba()
        mat = res.avatar.materials[-1]
        out[style, "color"] = np.round(255 * np.clip(mat.base_color_factor[:3], 0, 1) ** (1 / 2.2))
        out[style, "head"] = head
    r.release()
    return out


def _fingerprint() -> str:
    from avatars.generate import generator_fingerprint
    from avatars.tryon.pipeline import PIPELINE_VERSION

    return f"{generator_fingerprint()[:16]}-tryon{PIPELINE_VERSION}"


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("view", list(VIEWS))
def test_tryon_golden(tryon_frames, style, view, tmp_path):
    img = tryon_frames[style, view]
    path = GOLDEN / f"{style}_{view}.png"
    manifest_path = GOLDEN / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    if REGEN_GOLDEN:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        render.snapshot(path, img)
        manifest[path.name] = {"made_with": _fingerprint()}
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        return
    if not path.exists():
        pytest.fail(f"golden image {path.name} is missing: run with SWAYCAM_REGEN_GOLDEN=1 to create it")
    if manifest.get(path.name, {}).get("made_with") != _fingerprint():
        pytest.skip(f"{path.name} was made by another generator/pipeline version; regenerate after looking")
    golden = np.asarray(Image.open(path).convert("RGBA"))
    diff = changed_pixels(img, golden, CHANNEL_TOLERANCE)
    if diff.mean() > MAX_DIFFERENT_FRACTION:
        render.snapshot(tmp_path / path.name, img)
        pytest.fail(f"{style} {view}: {diff.mean():.2%} of pixels differ from {path.name}; actual image in {tmp_path}")


def _hair_mask(img, color):
    rgb = img[..., :3].astype(float)
    return np.linalg.norm(rgb - np.asarray(color, float), axis=2) < HAIR_DISTANCE


@pytest.mark.parametrize("style", STYLES)
def test_hair_covers_the_head_and_sits_on_it(tryon_frames, style):
    front, back = tryon_frames[style, "front"], tryon_frames[style, "back"]
    color = tryon_frames[style, "color"]
    fm, bm = _hair_mask(front, color), _hair_mask(back, color)
    h, w = fm.shape
    assert fm.sum() > 0.03 * h * w, "hair hardly visible from the front"
    rows = np.nonzero(fm.any(axis=1))[0]
    # the topmost drawn thing in the front view is hair (crown covered, no scalp above it)
    drawn = np.nonzero((np.abs(front[..., :3].astype(int) - BACKGROUND).sum(axis=2) > 30).any(axis=1))[0]
    assert rows.min() <= drawn.min() + 2
    # from behind, the upper head is hair: no skin pokes through the back of the head
    top = drawn.min()
    band = bm[top:top + int(0.12 * h), int(0.35 * w):int(0.65 * w)]
    assert band.mean() > 0.6, f"back of the head only {band.mean():.0%} hair"
    # hair is centred on the head, not hanging beside or behind it
    cols = np.nonzero(fm[top:top + int(0.2 * h)].any(axis=0))[0]
    assert abs(0.5 * (cols.min() + cols.max()) - 0.5 * w) < 0.08 * w
