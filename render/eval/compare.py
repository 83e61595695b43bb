"""swaycam beside three-vrm: the same avatar, rest pose, camera, light, background and size,
drawn by our renderer (headless EGL) and by three-vrm 3.5.5 in headless Chromium
(:mod:`render.eval.threevrm`), measured with :mod:`render.eval.image_metrics`.

Both sides render with a transparent clear; the silhouettes come from alpha and the colour
measures from both images composited over the same background. Anti-aliasing: 4x MSAA on
our side, the canvas's ``antialias`` (4x MSAA in SwiftShader) on three.js's.

``swaycam compare-render AVATAR`` (runtime/cli/compare_render.py) writes the side-by-side
picture (swaycam | three-vrm | difference x4) and prints the measures.

The avatar is at rest; both sides use the same camera (our bust or full framing, passed to
three.js as position, target, up, vertical field of view, near and far), the same light
(:class:`render.Lighting`, passed as a three.js DirectionalLight and AmbientLight of
intensity π times its colours), the same size and the same MToon time.
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
class CompareCase:
    """One avatar to compare: a label, its file, the framing and the MToon times (s)."""

    label: str
    path: Path
    framing: str = "bust"
    times: tuple[float, ...] = (0.0,)


@dataclass(frozen=True)
class CompareOptions:
    """How both renderers draw.

    Attributes:
        size: (width, height) pixels.
        background: opaque sRGB (r, g, b) 0..255 behind both images.
        lighting: the light (a :class:`render.Lighting`; None: the renderer's default).
        antialias: True: 4x MSAA here and an antialiased canvas (4x MSAA in SwiftShader)
            there; False: neither (rasterisation and shading compared pixel for pixel).
        force_mipmaps: our texture policy (:class:`render.Renderer`; None: its default,
            LINEAR minification mipmapped, where three.js follows the file).
    """

    size: tuple[int, int] = DEFAULT_SIZE
    background: tuple[int, int, int] = DEFAULT_BACKGROUND
    lighting: object | None = None
    antialias: bool = False
    force_mipmaps: bool | None = None


@dataclass
class CompareResult:
    """One avatar drawn both ways at each time.

    Attributes:
        case: what was drawn.
        ours, theirs: per time (H, W, 4) uint8 sRGB: ours straight alpha, theirs premultiplied.
        metrics: per time, theirs measured against ours.
        info: reference details (three.js revision, WebGL renderer, seconds).
    """

    case: CompareCase
    ours: list[np.ndarray]
    theirs: list[np.ndarray]
    metrics: list[ImageComparison]
    background: tuple[int, int, int]
    info: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.case.label

    @property
    def times(self) -> tuple[float, ...]:
        return self.case.times

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


def render_ours(avatar: Avatar, case: CompareCase, options: CompareOptions, context=None):
    """Our frames of ``avatar`` at ``case.times`` (transparent background), with the camera
    and the lighting used: (frames, camera, lighting)."""
    from ..camera import CameraOptions
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
        with Renderer(ctx, options.size, antialias="msaa" if options.antialias else "off",
                      background="transparent", camera_options=CameraOptions(framing=case.framing), **kw) as r:
            r.set_avatar(avatar)
            frames = []
            for t in case.times:
                r.draw(time_s=t)
                frames.append(r.read_rgba().copy())
            return frames, r.camera, r.lighting
    finally:
        if own:
            ctx.release()


def compare_cases(cases: list[CompareCase], options: CompareOptions = CompareOptions(), *,
                  context=None) -> list[CompareResult]:
    """Draw each case both ways (one Chromium run for all) and measure.

    Raises:
        avatars.eval.node.ReferenceUnavailable: no Chromium / npm.
        RuntimeError: the reference page failed.
    """
    ours, jobs = [], []
    for case in cases:
        frames, cam, lighting = render_ours(load_avatar(case.path), case, options, context)
        ours.append(frames)
        light = {"direction": lighting.direction, "color": lighting.color, "ambient": lighting.ambient}
        jobs.append(ReferenceJob(avatar=Path(case.path), size=options.size, camera=_camera_spec(cam), light=light,
                                 times=tuple(case.times), antialias=options.antialias))
    theirs, info = render_threevrm(jobs)
    out = []
    for case, mine, ref in zip(cases, ours, theirs):
        metrics = [compare_images(a, b, options.background, b_premultiplied=True) for a, b in zip(mine, ref)]
        out.append(CompareResult(case=case, ours=mine, theirs=ref, metrics=metrics, background=options.background,
                                 info=info))
    return out


def builtin_case(spec: str) -> CompareCase:
    """A case for an avatar spec: "godette" (the shared assets' Godette), "default",
    "layered" (the generated avatars), "uv-animation" (the generated MToon UV-animation
    sample, framed whole, at 0, 0.25 and 1 s), or a file path (bust, t = 0)."""
    if spec in ("default", "layered"):
        from avatars import generate

        return CompareCase(spec, generate.default_avatar_path() if spec == "default" else generate.layered_avatar_path())
    if spec == "godette":
        from avatars.assets import asset_path

        return CompareCase(spec, asset_path("vrm", "Godette_vrm_v4.vrm"))
    if spec == "uv-animation":
        from .uv_animation_sample import uv_animation_sample_path

        return CompareCase(spec, uv_animation_sample_path(), framing="full", times=UV_ANIMATION_TIMES)
    return CompareCase(Path(spec).stem, Path(spec))


#: The UV-animation sample's times (the issue's t = 0.25 s and 1 s, and rest).
UV_ANIMATION_TIMES = (0.0, 0.25, 1.0)
