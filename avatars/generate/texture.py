"""The generated eye texture: a 128x128 anime iris (sclera, gradient iris, pupil, highlights).

UV layout (glTF: u right, v down) of one eye patch: u = 0 at the inner corner, u = 1 at
the outer corner (the right eye's patch is mirrored), v = 0 at the top of the eye. The
image is drawn analytically with anti-aliased edges and encoded as PNG with Pillow, so the
bytes are the same on every run.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

SIZE = 128
IRIS_TOP = np.array([52, 28, 104], float)  # sRGB 0..255: deep violet
IRIS_BOTTOM = np.array([176, 120, 236], float)  # light lilac
PUPIL = np.array([28, 14, 48], float)
SCLERA = np.array([255, 255, 255], float)
SCLERA_SHADOW = np.array([196, 200, 226], float)


def _ellipse(u, v, cu, cv, ru, rv, feather=1.5 / SIZE):
    """Anti-aliased coverage (H, W) of an ellipse centred (cu, cv) with radii (ru, rv) in uv units."""
    r = np.sqrt(((u - cu) / ru) ** 2 + ((v - cv) / rv) ** 2)
    return np.clip((1.0 - r) * min(ru, rv) / feather + 0.5, 0.0, 1.0)


def _mix(a, b, t):
    return a * (1.0 - t[..., None]) + b * t[..., None]


def eye_rgb(size: int = SIZE) -> np.ndarray:
    """The eye image (size, size, 3) uint8, sRGB."""
    c = (np.arange(size) + 0.5) / size
    v, u = np.meshgrid(c, c, indexing="ij")
    img = _mix(np.broadcast_to(SCLERA, (size, size, 3)), np.broadcast_to(SCLERA_SHADOW, (size, size, 3)),
               np.clip((0.32 - v) / 0.32, 0.0, 1.0) ** 1.5)
    cu, cv = 0.50, 0.55
    iris = _ellipse(u, v, cu, cv, 0.34, 0.44)
    grad = np.clip((v - (cv - 0.44)) / 0.88, 0.0, 1.0) ** 1.3
    iris_col = _mix(np.broadcast_to(IRIS_TOP, (size, size, 3)), np.broadcast_to(IRIS_BOTTOM, (size, size, 3)), grad)
    rim = 1.0 - _ellipse(u, v, cu, cv, 0.30, 0.40, feather=4.0 / size)
    iris_col = _mix(iris_col, np.broadcast_to(PUPIL, (size, size, 3)), 0.55 * rim)
    img = _mix(img, iris_col, iris)
    img = _mix(img, np.broadcast_to(PUPIL, (size, size, 3)), _ellipse(u, v, cu, cv - 0.02, 0.13, 0.19))
    # sparkle: a big highlight up and out, a small one down and in
    white = np.broadcast_to(SCLERA, (size, size, 3))
    img = _mix(img, white, _ellipse(u, v, 0.66, 0.34, 0.10, 0.11))
    img = _mix(img, white, 0.9 * _ellipse(u, v, 0.37, 0.74, 0.05, 0.045))
    # upper lid shadow over the iris
    img = _mix(img, img * 0.6, np.clip((0.18 - v) / 0.18, 0.0, 1.0) * iris)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def png_bytes(rgb: np.ndarray) -> bytes:
    """PNG encoding of an (H, W, 3) uint8 image (deterministic: fixed zlib level, no metadata)."""
    buf = io.BytesIO()
    Image.fromarray(rgb, "RGB").save(buf, format="PNG", compress_level=9)
    return buf.getvalue()
