"""swaycam render: OpenGL 3.3 core renderer (pygame window or headless EGL) and frame outputs.

PyOpenGL's platform (EGL for headless, the window system's loader for a window) is decided
when the first GL-using name is imported (see :mod:`render.platform`); set
``SWAYCAM_GL=egl|window`` before that to override the automatic choice.

Typical use (shapes: ``world`` (N, 4, 4) float64 node world matrices, metres, +Y up, the
avatar facing +Z; frames (H, W, 4) uint8 sRGB straight alpha, row 0 = top; times in ns)::

    from render import (create_context, Renderer, WindowSink, VirtualCameraSink, HudInfo,
                        expression_weights, avatar_overlays)
    with create_context("auto", size=(1280, 720), vsync=True) as ctx, \
            Renderer(ctx, (1280, 720), background="chroma") as r, \
            WindowSink(ctx, r) as window, VirtualCameraSink(fps=30) as vcam:
        r.set_avatar(avatar)
        while running:
            for event in ctx.poll_events():        # close / resize / key / focus
                ...
            r.draw(world, expression_weights(avatar, {"blink": 1.0, "aa": 0.3}),
                   overlays=avatar_overlays(avatar, world), hud=HudInfo(fps=59.8, substeps=2))
            window.send(None, t_ns)                  # blit + swap, no readback (window.needs_pixels is False)
            got = r.read_rgba_async(tag=t_ns)       # the previous frame, or None (sinks copy what
            if got is not None:                     # they keep: the array is reused)
                vcam.send(*got)
        while (got := r.flush_readback()) is not None:   # the last frame
            vcam.send(*got)

Tests and snapshots use the synchronous ``r.read_rgba()``. Panes: ``r.draw(..., viewport=(x, y, w, h))``.
"""

from importlib import import_module
from typing import TYPE_CHECKING

from .platform import decide_if_headless as _decide_if_headless

_decide_if_headless()

# Public name -> submodule. Imported lazily (PEP 562) so that ``import render`` (or
# ``render.platform``) loads no OpenGL and the GL platform is decided as late as possible.
_EXPORTS = {
    "Background": "camera", "Camera": "camera", "CameraOptions": "camera", "body_bounds": "camera",
    "frame_camera": "camera", "head_bounds": "camera", "hair_bounds": "camera", "FRAMINGS": "camera",
    "Orbit": "orbit", "GuideLines": "inspection", "INSPECT_MODES": "inspection",
    "ContextError": "context", "Event": "context", "GLContext": "context", "create_context": "context",
    "ExpressionFrame": "expressions", "expression_frame": "expressions", "expression_weights": "expressions",
    "HudInfo": "hud",
    "ColliderShape": "overlays", "Overlays": "overlays", "avatar_overlays": "overlays",
    "FrameStats": "renderer", "Lighting": "lighting", "Renderer": "renderer",
    "PngSequenceSink": "sinks", "Sink": "sinks", "VideoFileSink": "sinks", "VirtualCameraSink": "sinks",
    "VirtualCameraUnavailable": "sinks", "WindowSink": "sinks", "snapshot": "sinks",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'render' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .camera import Background, Camera, CameraOptions, body_bounds, frame_camera, head_bounds  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .context import ContextError, Event, GLContext, create_context  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .expressions import ExpressionFrame, expression_frame, expression_weights  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .hud import HudInfo  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .overlays import ColliderShape, Overlays, avatar_overlays  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .lighting import Lighting  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .renderer import FrameStats, Renderer  # noqa: F401 - re-exported lazily (_EXPORTS)
    from .sinks import (  # noqa: F401
        PngSequenceSink, Sink, VideoFileSink, VirtualCameraSink, VirtualCameraUnavailable, WindowSink, snapshot,
    )
