"""The solved arms on the rig: eased in and out, bounded angular speed, as a BodyPose.

:class:`HandDrive` keeps, per body bone it drives, the rotation shown and, per side, a
weight. At each sample time t (state moves forward only: the substeps and the draw of a
frame share it; replays are deterministic):

- a tracked side's weight rises toward 1 and an untracked one's (the hand left the frame,
  the arm is hidden) falls toward 0 at ``1 / ease_s`` per second; the bones are blended over
  the avatar's own pose (its clip or idle) by smoothstep(weight) — the per-bone weight of
  :func:`runtime.rig.kernels.body_drive` — so a lost hand eases to rest, never jumps;
- each shown rotation turns toward its solved target by at most ``max_speed_deg`` per second
  (a tracking glitch cannot snap the arm); while a side's weight is 0 its rotations jump to
  the targets (nothing is shown), so an arm coming into view eases in from the avatar's pose.

The shown rotation's angular speed is then at most ``max_speed_deg/s`` plus
1.5 · 180° / ``ease_s`` from the weight (smoothstep's steepest slope 1.5 over at most a
half turn).
"""

from __future__ import annotations

import math

import numpy as np

from avatars import Avatar
from avatars.math3d import quat_slerp_scalar
from tracking.body import BONE_INDEX, F_ON, BodyPose
from tracking.hands import SIDES

from .solve import ArmSolver


class HandDrive:
    """(module doc) ``body(sample)`` -> the BodyPose to drive the rig with at ``sample.t_ns``."""

    def __init__(self, avatar: Avatar, *, ease_s: float = 0.4, max_speed_deg: float = 720.0) -> None:
        self.solver = ArmSolver(avatar)
        self.ease_s = float(ease_s)
        self.max_speed = math.radians(max_speed_deg)
        self.weight = {s: 0.0 for s in SIDES}
        self.pose = BodyPose()
        self._shown: dict[str, np.ndarray] = {}
        self._target: dict[str, np.ndarray] = {}
        self._tracked = {s: False for s in SIDES}
        self._last_arms = np.full(1, np.nan)
        self._t: int | None = None

    def _solve(self, arms: np.ndarray) -> None:
        if np.array_equal(arms, self._last_arms):
            return
        self._last_arms = arms.copy()
        for s in SIDES:
            got = self.solver.solve(arms, s)
            self._tracked[s] = got is not None
            if got is not None:
                self._target.update(got)

    def body(self, sample) -> BodyPose:
        """The body pose at ``sample.t_ns`` from ``sample.arms`` (module doc); an internal
        buffer, valid until the next call."""
        self._solve(sample.arms)
        t = int(sample.t_ns)
        dt = 0.0 if self._t is None or t <= self._t else (t - self._t) * 1e-9
        if self._t is None or t > self._t:
            self._t = t
            step = self.max_speed * dt
            for s in SIDES:
                w = self.weight[s]
                w = min(1.0, w + dt / self.ease_s) if self._tracked[s] else max(0.0, w - dt / self.ease_s)
                for name in self.solver.side_bones(s) if s in self.solver.sides else ():
                    tgt = self._target.get(name)
                    if tgt is None:
                        continue
                    cur = self._shown.get(name)
                    if cur is None or self.weight[s] == 0.0:
                        self._shown[name] = tgt.copy()
                        continue
                    if not self._tracked[s]:
                        continue
                    d = min(1.0, abs(float(cur @ tgt)))
                    ang = 2.0 * math.acos(d)
                    self._shown[name] = tgt.copy() if ang <= step else quat_slerp_scalar(cur, tgt, step / ang)
                self.weight[s] = w
        p = self.pose
        p.clear()
        on = False
        for s in SIDES:
            w = self.weight[s]
            if w <= 0.0 or s not in self.solver.sides:
                continue
            ws = w * w * (3.0 - 2.0 * w)
            for name in self.solver.side_bones(s):
                q = self._shown.get(name)
                if q is None:
                    continue
                b = BONE_INDEX[name]
                p.bones[b] = q
                p.mask[b] = ws
                on = True
        p.flags[F_ON] = 1.0 if on else 0.0
        return p
