"""swaycam render: OpenGL 3.3 core renderer (pygame window or headless EGL) and frame outputs.

Importing this package decides PyOpenGL's platform first (see :mod:`render.platform`):
set ``SWAYCAM_GL=egl|window`` before the first import to override the automatic choice.

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
            window.send(None, t_ns)                  # blit + swap, no readback
            got = r.read_rgba_async(tag=t_ns)       # PBO: the previous frame, or None
            if got is not None:
                vcam.send(*got)

Tests and snapshots use the synchronous ``r.read_rgba()``.
"""

from . import platform as _platform  # noqa: F401  (must run before any OpenGL import)
from .camera import Background, Camera, CameraOptions, body_bounds, frame_camera, head_bounds
from .context import ContextError, Event, GLContext, create_context
from .expressions import ExpressionFrame, expression_frame, expression_weights
from .hud import HudInfo
from .overlays import ColliderShape, Overlays, avatar_overlays
from .renderer import FrameStats, Lighting, Renderer
from .sinks import (
    PngSequenceSink, Sink, VideoFileSink, VirtualCameraSink, VirtualCameraUnavailable, WindowSink, snapshot,
)

__all__ = [
    "Background", "Camera", "CameraOptions", "ColliderShape", "ContextError", "Event", "ExpressionFrame",
    "FrameStats", "GLContext", "HudInfo", "Lighting", "Overlays", "PngSequenceSink", "Renderer", "Sink",
    "VideoFileSink", "VirtualCameraSink", "VirtualCameraUnavailable", "WindowSink", "avatar_overlays",
    "body_bounds", "create_context", "expression_frame", "expression_weights", "frame_camera", "head_bounds",
    "snapshot",
]
