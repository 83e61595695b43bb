"""swaycam beside three-vrm: the same avatar, rest pose, camera, light, background and size,
drawn by our renderer (headless EGL) and by three-vrm 3.5.5 in headless Chromium
(:mod:`render.eval.threevrm`), measured with :mod:`render.eval.image_metrics`.

Both sides render with a transparent clear; the silhouettes come from alpha and the colour
measures from both images composited over the same background. Anti-aliasing: 4x MSAA on
our side, the canvas's ``antialias`` (4x MSAA in SwiftShader) on three.js's.

``swaycam compare-render AVATAR`` (runtime/cli/compare_render.py) writes the side-by-side
picture (swaycam | three-vrm | difference x4) and prints the measures.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from avatars import Avatar, load_avatar

from .image_metrics import ImageComparison, compare_images, composite_u8, difference_image
from .threevrm import ReferenceJob, render_threevrm

log = logging.getLogger(__name__)

DEFAULT_SIZE = (480, 480)
DEFAULT_BACKGROUND = (52, 60, 72)  #: sRGB 0..255, a dark slate (VRM viewers use dark neutral backdrops)
DIFFERENCE_GAIN = 4.0


@dataclass(frozen=True)
class CompareOptions:
    """How both renderers draw the avatar.

    Attributes:
        size: (width, height) pixels.
        framing: "bust" or "full" (:class:`render.CameraOptions`).
        background: opaque sRGB (r, g, b) 0..255 behind both images.
        lighting: the light (a :class:`render.Lighting`; None: the renderer's default).
        samples: our MSAA samples; the three.js canvas is antialiased when this is > 0.
        times: MToon UV animation times (s) to draw.
        force_mipmaps: our texture policy (:class:`render.Renderer`).
    """

    size: tuple[int, int] = DEFAULT_SIZE
    framing: str = "bust"
    background: tuple[int, int, int] = DEFAULT_BACKGROUND
    lighting: object | None = None
    samples: int = 4
    times: tuple[float, ...] = (0.0,)
    force_mipmaps: bool | None = None


@dataclass
class CompareResult:
    """One avatar drawn both ways at each time.

    Attributes:
        name: the avatar's label.
        times: (T,) seconds.
        ours, theirs: per time (H, W, 4) uint8 sRGB: ours straight alpha, theirs premultiplied.
        metrics: per time, theirs measured against ours.
        info: reference details (three.js revision, WebGL renderer, seconds).
    """

    name: str
    times: tuple[float, ...]
    ours: list[np.ndarray]
    theirs: list[np.ndarray]
    metrics: list[ImageComparison]
    background: tuple[int, int, int]
    info: dict = field(default_factory=dict)

    def side_by_side(self, k: int = 0) -> np.ndarray:
        """(H, 3W, 3) uint8: swaycam | three-vrm | |difference| x :data:`DIFFERENCE_GAIN`."""
        a = composite_u8(self.ours[k], self.background)
        b = composite_u8(self.theirs[k], self.background, premultiplied=True)
        d = difference_image(self.ours[k], self.theirs[k], self.background, gain=DIFFERENCE_GAIN,
                             b_premultiplied=True)
        return np.concatenate([a, b, d], axis=1)

    def rows(self) -> list[dict]:
        return [{"avatar": self.name, "t": t, **m.row()} for t, m in zip(self.times, self.metrics)]


def _camera_spec(cam) -> dict:
    return {"position": np.asarray(cam.position, float).tolist(), "target": np.asarray(cam.target, float).tolist(),
            "up": np.asarray(cam.up, float).tolist(), "fov_deg": float(np.degrees(cam.fov_y)),
            "near": float(cam.near), "far": float(cam.far)}


def render_ours(avatar: Avatar, options: CompareOptions, context=None) -> tuple[list[np.ndarray], object]:
    """Our frames of ``avatar`` at ``options.times`` (transparent background), and the camera."""
    from ..context import create_context
    from ..renderer import Renderer

    own = context is None
    ctx = create_context("egl") if own else context
    try:
        ctx.make_current()
        kw = {}
        if options.lighting is not None:
            kw["lighting"] = options.lighting
        if options.force_mipmaps is not None:
            kw["force_mipmaps"] = options.force_mipmaps
        from ..camera import CameraOptions

        with Renderer(ctx, options.size, samples=options.samples, background="transparent",
                      camera_options=CameraOptions(framing=options.framing), **kw) as r:
            r.set_avatar(avatar)
            frames = []
            for t in options.times:
                r.draw(time_s=t)
                frames.append(r.read_rgba().copy())
            return frames, r.camera, r.lighting
    finally:
        if own:
            ctx.release()


def compare_avatars(avatars: list[tuple[str, str | Path]], options: CompareOptions = CompareOptions(), *,
                    context=None) -> list[CompareResult]:
    """Draw each (label, file) both ways (one Chromium run for all) and measure.

    Raises:
        render.eval.threevrm.ReferenceUnavailable: no Chromium / npm.
        RuntimeError: the reference page failed.
    """
    ours, jobs = [], []
    for label, path in avatars:
        av = load_avatar(path)
        frames, cam, lighting = render_ours(av, options, context)
        ours.append(frames)
        light = {"direction": lighting.direction, "color": lighting.color, "ambient": lighting.ambient}
        jobs.append(ReferenceJob(avatar=Path(path), size=options.size, camera=_camera_spec(cam), light=light,
                                 times=tuple(options.times), antialias=options.samples > 0))
    theirs, info = render_threevrm(jobs)
    out = []
    for (label, _), mine, ref in zip(avatars, ours, theirs):
        metrics = [compare_images(a, b, options.background, b_premultiplied=True) for a, b in zip(mine, ref)]
        out.append(CompareResult(name=label, times=tuple(options.times), ours=mine, theirs=ref, metrics=metrics,
                                 background=options.background, info=info))
    return out
