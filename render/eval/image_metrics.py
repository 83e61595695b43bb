"""Image comparison measures for rendered avatars: silhouette IoU, mean colour difference
and SSIM over the silhouette.

Images are (H, W, 4) uint8 sRGB. The silhouette of an image is where its alpha is at least
half (:data:`SILHOUETTE_ALPHA`); colour measures are taken over the union of the two
silhouettes (so a pixel drawn by one renderer only counts with its full difference) after
both images are composited over the same background.

- Mean colour difference: the mean over the silhouette of the Euclidean distance between the
  two sRGB colours, 0..255 per channel (so 3 means, e.g., every channel off by ~1.7 levels).
  The mean absolute channel difference is reported beside it.
- SSIM (Wang, Bovik, Sheikh, Simoncelli, "Image quality assessment: from error visibility to
  structural similarity", IEEE TIP 13(4), 2004): Gaussian window σ = 1.5 px (truncated at
  3.5 σ, 11 px across as in the paper), K1 = 0.01, K2 = 0.03, L = 255, computed per RGB
  channel on the composited images; the map is averaged over the three channels and then
  over the silhouette.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter

SILHOUETTE_ALPHA = 128
SSIM_SIGMA = 1.5
SSIM_K1, SSIM_K2, SSIM_L = 0.01, 0.03, 255.0

_DECODE = np.where(np.arange(256) / 255.0 <= 0.04045, np.arange(256) / 255.0 / 12.92,
                   ((np.arange(256) / 255.0 + 0.055) / 1.055) ** 2.4)


def _encode(lin: np.ndarray) -> np.ndarray:
    lin = np.clip(lin, 0.0, 1.0)
    return np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055) * 255.0


@dataclass(frozen=True)
class ImageComparison:
    """Measures of image ``b`` against image ``a``.

    Attributes:
        iou: silhouette intersection over union, 0..1.
        color_diff: mean Euclidean sRGB distance over the silhouette union, 0..441.
        channel_diff: mean absolute sRGB channel difference over the silhouette union, 0..255.
        ssim: mean SSIM over the silhouette union, -1..1.
        pixels: silhouette union size.
    """

    iou: float
    color_diff: float
    channel_diff: float
    ssim: float
    pixels: int

    def row(self) -> dict:
        return {"ssim": round(self.ssim, 4), "color_diff": round(self.color_diff, 2),
                "channel_diff": round(self.channel_diff, 2), "iou": round(self.iou, 4), "pixels": self.pixels}


def silhouette(rgba: np.ndarray) -> np.ndarray:
    """(H, W) bool: alpha >= :data:`SILHOUETTE_ALPHA`."""
    return rgba[..., 3] >= SILHOUETTE_ALPHA


def composite(rgba: np.ndarray, background: tuple[int, int, int], *, premultiplied: bool = False) -> np.ndarray:
    """(H, W, 3) float64 sRGB 0..255 of ``rgba`` over an opaque sRGB ``background``, blended
    in linear light. ``premultiplied``: the colour is already multiplied by alpha (in the
    encoded values, as a WebGL canvas holds it)."""
    a = rgba[..., 3:4].astype(np.float64) / 255.0
    c = _DECODE[rgba[..., :3]]
    bg = _DECODE[np.asarray(background, np.int64)]
    if premultiplied:
        # the canvas stores encode(straight) * alpha; recover straight colour where alpha > 0
        straight = np.where(a > 0, rgba[..., :3] / np.maximum(a, 1e-6), 0.0)
        c = _DECODE[np.clip(np.rint(straight), 0, 255).astype(np.int64)]
    return _encode(c * a + bg * (1.0 - a))


def ssim_map(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(H, W) SSIM of two (H, W, C) float images (0..255), averaged over channels."""
    c1, c2 = (SSIM_K1 * SSIM_L) ** 2, (SSIM_K2 * SSIM_L) ** 2
    out = np.zeros(x.shape[:2])
    for ch in range(x.shape[2]):
        a, b = x[..., ch].astype(np.float64), y[..., ch].astype(np.float64)
        f = lambda im: gaussian_filter(im, SSIM_SIGMA, truncate=3.5, mode="reflect")  # noqa: E731
        mu_a, mu_b = f(a), f(b)
        saa = f(a * a) - mu_a ** 2
        sbb = f(b * b) - mu_b ** 2
        sab = f(a * b) - mu_a * mu_b
        out += ((2 * mu_a * mu_b + c1) * (2 * sab + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (saa + sbb + c2))
    return out / x.shape[2]


def compare_images(a: np.ndarray, b: np.ndarray, background: tuple[int, int, int], *,
                   a_premultiplied: bool = False, b_premultiplied: bool = False) -> ImageComparison:
    """Compare two (H, W, 4) uint8 sRGB renders of the same scene (see the module docstring).

    Raises:
        ValueError: the images differ in size.
    """
    if a.shape != b.shape:
        raise ValueError(f"image sizes differ: {a.shape} vs {b.shape}")
    sa, sb = silhouette(a), silhouette(b)
    union = sa | sb
    n = int(union.sum())
    iou = float((sa & sb).sum() / n) if n else 1.0
    ca = composite(a, background, premultiplied=a_premultiplied)
    cb = composite(b, background, premultiplied=b_premultiplied)
    d = ca - cb
    if not n:
        return ImageComparison(iou=1.0, color_diff=0.0, channel_diff=0.0, ssim=1.0, pixels=0)
    color = float(np.sqrt((d[union] ** 2).sum(axis=-1)).mean())
    channel = float(np.abs(d[union]).mean())
    s = float(ssim_map(ca, cb)[union].mean())
    return ImageComparison(iou=iou, color_diff=color, channel_diff=channel, ssim=s, pixels=n)


def composite_u8(rgba: np.ndarray, background: tuple[int, int, int], *, premultiplied: bool = False) -> np.ndarray:
    """:func:`composite` rounded to (H, W, 3) uint8, for pictures."""
    return np.clip(np.rint(composite(rgba, background, premultiplied=premultiplied)), 0, 255).astype(np.uint8)


def difference_image(a: np.ndarray, b: np.ndarray, background: tuple[int, int, int], *, gain: float = 4.0,
                     a_premultiplied: bool = False, b_premultiplied: bool = False) -> np.ndarray:
    """(H, W, 3) uint8 picture of |a − b| (composited, sRGB) times ``gain``."""
    d = np.abs(composite(a, background, premultiplied=a_premultiplied)
               - composite(b, background, premultiplied=b_premultiplied))
    return np.clip(np.rint(d * gain), 0, 255).astype(np.uint8)
