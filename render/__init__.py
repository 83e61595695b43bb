"""swaycam render: OpenGL 3.3 core renderer (pygame window or headless EGL) and frame outputs.

Importing this package decides PyOpenGL's platform first (see :mod:`render.platform`):
set ``SWAYCAM_GL=egl|window`` before the first import to override the automatic choice.

Typical use::

    from render import create_context, Renderer, expression_weights
    with create_context("auto", size=(1280, 720)) as ctx, Renderer(ctx, (1280, 720)) as r:
        r.set_avatar(avatar)
        r.draw(world, expression_weights(avatar, {"blink": 1.0}))
        rgba = r.read_rgba()
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
