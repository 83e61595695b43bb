"""A camera the user moves: orbit (drag), zoom (wheel), pan, reset — around a framed camera.

:class:`Orbit` is a small immutable state applied on top of a framing's camera
(:func:`render.camera.frame_camera`): the eye turns about the camera's target on a sphere
(yaw about world +Y, pitch up or down, capped at :data:`MAX_PITCH` so the view never flips
over the pole), its distance is divided by the zoom, and the target and eye shift together
by the pan (camera right / up, metres). The gestures follow three.js' OrbitControls:

- a drag of (dx, dy) pixels (x right, y down) turns by :data:`RAD_PER_PIXEL` per pixel:
  dragging right turns the avatar to the right (the eye moves to its left: yaw -= dx·k),
  dragging down shows it from above (pitch += dy·k);
- one wheel notch toward the user (``notches`` > 0) zooms in by :data:`ZOOM_STEP`;
- a pan of (dx, dy) pixels moves the view by ``metres_per_pixel`` at the target.

Pure numpy, no GL: the window's mouse, the panel's drags and a pose-track recording all
produce the same state (:meth:`Orbit.to_dict`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .camera import Camera

#: Radians of orbit per pixel of drag (three.js OrbitControls: 2π / height at rotateSpeed 1 is
#: 0.0087 at 720 px; slower here for a preview a visitor drags on a touch screen).
RAD_PER_PIXEL = 0.005
#: Zoom factor per wheel notch.
ZOOM_STEP = 1.1
#: The pitch cap, radians (85°): the eye never reaches the pole (look-at's up would flip).
MAX_PITCH = math.radians(85.0)
#: Zoom limits.
ZOOM_MIN, ZOOM_MAX = 0.1, 20.0


@dataclass(frozen=True)
class Orbit:
    """How far the view is moved from its framing.

    Attributes:
        yaw: radians about world +Y through the target (positive: the eye moves toward +X
            of a camera on the +Z side, i.e. to the avatar's left hand).
        pitch: radians above the framing's elevation (positive: seen from above); the eye's
            elevation is kept within ±:data:`MAX_PITCH` (and so is this value: every framing
            of :func:`render.camera.frame_camera` looks level).
        zoom: > 1 closer (the distance to the target divided by it).
        pan: (right, up) metres, along the moved camera's axes.
    """

    yaw: float = 0.0
    pitch: float = 0.0
    zoom: float = 1.0
    pan: tuple[float, float] = (0.0, 0.0)

    @property
    def is_identity(self) -> bool:
        return self == Orbit()

    def dragged(self, dx: float, dy: float) -> "Orbit":
        """Orbited by a drag of (dx, dy) pixels (x right, y down; module doc)."""
        pitch = min(max(self.pitch + dy * RAD_PER_PIXEL, -MAX_PITCH), MAX_PITCH)   # framings are level
        return replace(self, yaw=self.yaw - dx * RAD_PER_PIXEL, pitch=pitch)

    def wheeled(self, notches: float) -> "Orbit":
        """Zoomed by ``notches`` wheel notches (> 0 in: ×:data:`ZOOM_STEP` each)."""
        return replace(self, zoom=min(max(self.zoom * ZOOM_STEP ** notches, ZOOM_MIN), ZOOM_MAX))

    def panned(self, dx: float, dy: float, metres_per_pixel: float) -> "Orbit":
        """Moved by a drag of (dx, dy) pixels (x right, y down): the avatar follows the pointer."""
        return replace(self, pan=(self.pan[0] - dx * metres_per_pixel, self.pan[1] + dy * metres_per_pixel))

    def apply(self, camera: Camera) -> Camera:
        """``camera`` moved by this orbit (the identity returns ``camera`` itself)."""
        if self.is_identity:
            return camera
        target = np.asarray(camera.target, np.float64)
        off = np.asarray(camera.position, np.float64) - target
        dist = float(np.linalg.norm(off))
        if dist < 1e-9:
            return camera
        yaw0 = math.atan2(off[0], off[2])
        pitch0 = math.asin(max(-1.0, min(1.0, off[1] / dist)))
        yaw = yaw0 + self.yaw
        pitch = min(max(pitch0 + self.pitch, -MAX_PITCH), MAX_PITCH)
        d = dist / self.zoom
        eye_dir = np.array([math.cos(pitch) * math.sin(yaw), math.sin(pitch), math.cos(pitch) * math.cos(yaw)])
        right = np.array([math.cos(yaw), 0.0, -math.sin(yaw)])
        up = np.cross(eye_dir, right)
        shift = self.pan[0] * right + self.pan[1] * up
        t = target + shift
        return Camera(position=t + d * eye_dir, target=t, up=camera.up, fov_y=camera.fov_y,
                      near=max(0.005, camera.near * min(1.0, 1.0 / self.zoom)), far=camera.far + max(0.0, d - dist))

    def to_dict(self) -> dict:
        """{"yaw", "pitch", "zoom", "pan"} (radians, factor, metres): JSON-ready."""
        return {"yaw": self.yaw, "pitch": self.pitch, "zoom": self.zoom, "pan": list(self.pan)}

    @classmethod
    def from_dict(cls, d: dict) -> "Orbit":
        """The orbit of :meth:`to_dict` (missing keys keep their defaults).

        Raises:
            ValueError: a value that is not a finite number (zoom > 0; pan two numbers), named.
        """
        def num(key, v):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"orbit.{key}: expected a finite number, got {v!r}")
            return float(v)

        yaw, pitch = num("yaw", d.get("yaw", 0.0)), num("pitch", d.get("pitch", 0.0))
        zoom = num("zoom", d.get("zoom", 1.0))
        if not ZOOM_MIN <= zoom <= ZOOM_MAX:
            raise ValueError(f"orbit.zoom: expected {ZOOM_MIN}..{ZOOM_MAX}, got {zoom}")
        pan = d.get("pan", [0.0, 0.0])
        if not isinstance(pan, (list, tuple)) or len(pan) != 2:
            raise ValueError(f"orbit.pan: expected [right, up] metres, got {pan!r}")
        return cls(yaw, pitch, zoom, (num("pan[0]", pan[0]), num("pan[1]", pan[1])))


def metres_per_pixel(camera: Camera, height_px: int) -> float:
    """The size of one pixel at the camera's target, metres (for :meth:`Orbit.panned`)."""
    dist = float(np.linalg.norm(np.asarray(camera.position) - np.asarray(camera.target)))
    return 2.0 * dist * math.tan(camera.fov_y / 2) / max(int(height_px), 1)


__all__ = ["MAX_PITCH", "Orbit", "RAD_PER_PIXEL", "ZOOM_STEP", "metres_per_pixel"]
