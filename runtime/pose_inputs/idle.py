"""Kiosk idle pose: when nobody is in front of the camera, the avatar breathes and looks around.

Wraps a pose input. While the wrapped input reports no face, an idle motion (a slow yaw
and pitch sway, 4° and 2°, periods 7 s and 5 s) fades in over ``fade_s`` seconds after the
loss began and fades out as fast when a face is back, so it never jumps. The weight is a
pure function of time and of the loss/return times, so replays stay deterministic. Each
return of a face after a loss is counted (:attr:`InputStatus.new_faces`): the kiosk
recenters on it.
"""

from __future__ import annotations

import dataclasses
import math

from avatars.math3d import quat_from_euler, quat_mul
from tracking.pose_track import PoseSample

from ..clock import NS_PER_S, Clock
from .base import InputStatus, PoseInput


class IdlePose(PoseInput):
    """``inner`` with the idle sway blended in while no face is found (see :class:`PoseInput`;
    everything but ``sample`` and the ``new_faces`` count is ``inner``'s). Closing it closes
    ``inner``.

    Args:
        inner: the wrapped input.
        fade_s: fade in/out time, seconds.
        yaw_deg, pitch_deg: sway amplitudes, degrees.
    """

    def __init__(self, inner: PoseInput, *, fade_s: float = 1.5, yaw_deg: float = 4.0, pitch_deg: float = 2.0):
        self.inner = inner
        self.fade_ns = int(fade_s * NS_PER_S)
        self.yaw = math.radians(yaw_deg)
        self.pitch = math.radians(pitch_deg)
        self._lost_at: int | None = 0      # idle from the start until a face arrives
        self._found_at: int | None = None
        self._last_t = -(1 << 62)
        self._new_faces = 0                # faces that arrived after a loss (kiosk recenter)

    @property
    def arrivals(self):
        return self.inner.arrivals

    def start(self, clock: Clock) -> None:
        self.inner.start(clock)

    def pump(self, t_ns: int) -> None:
        self.inner.pump(t_ns)

    def status(self) -> InputStatus:
        return dataclasses.replace(self.inner.status(), new_faces=self._new_faces)

    def recenter(self) -> None:
        self.inner.recenter()

    def close(self) -> None:
        self.inner.close()

    def _weight(self, t: int) -> float:
        if self._lost_at is not None:
            u = (t - self._lost_at) / self.fade_ns
        elif self._found_at is not None:
            u = 1.0 - (t - self._found_at) / self.fade_ns
        else:
            return 0.0
        u = min(max(u, 0.0), 1.0)
        return u * u * (3 - 2 * u)

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        out = self.inner.sample(t_ns, out=out)
        if t_ns > self._last_t:  # state changes only move forward in time
            self._last_t = t_ns
            if out.found and self._lost_at is not None:
                w = self._weight(t_ns)
                self._lost_at = None
                self._found_at = t_ns - int((1.0 - w) * self.fade_ns)
                self._new_faces += 1
            elif not out.found and self._lost_at is None:
                w = self._weight(t_ns)
                self._found_at = None
                self._lost_at = t_ns - int(w * self.fade_ns)
        w = self._weight(t_ns)
        if w > 0.0:
            s = t_ns / NS_PER_S
            q = quat_from_euler(w * self.yaw * math.sin(2 * math.pi * s / 7.0),
                                w * self.pitch * math.sin(2 * math.pi * s / 5.0), 0.0)
            out.rotation[:] = quat_mul(q, out.rotation)
        return out
