"""The generated idle motion: breathing, a slow weight shift and a sway (our own content;
the shared clips are test inputs, not product content).

A :class:`avatars.clips.Clip` with ``rest=None``: its rotations are world deltas on the
avatar's own rest pose (no rest alignment) and its hips track is an offset from the
avatar's rest hips, in metres. One loop is :data:`LOOP_S` seconds (the least common
multiple of the three periods), keyed at :data:`KEY_RATE_HZ`:

- breathing (period 4 s): the chest and upper chest pitch back by up to 0.6° and 0.4°
  (an inhale lifts the chest), the shoulders rise by 0.8°;
- weight shift (period 8 s): the hips move 12 mm sideways and roll 0.8° toward the standing
  leg; both legs tilt as one piece (no knee bend) so the ankles stay where they are
  (tilt = −asin(offset / leg length), ``leg_m``; the hips drop by leg·(1 − cos tilt)), the
  spine rolls back 1.2° so the shoulders stay level;
- sway (period 12 s): the spine and chest yaw by up to 1.5° and 1°;
- the neck and head keep their world orientation (world delta I): the body sways under a
  steady head, as people keep their gaze while they shift, so the tracked head turns the
  head alone (the additive layering puts it on top of this).

Everything is a pure function of time (sines), so sampling it at the substep times keeps
replays bit-identical like any clip.
"""

from __future__ import annotations

import math

import numpy as np

from ..math3d import quat_from_axis_angle, quat_mul, quat_normalize
from .model import Clip

LOOP_S = 24.0
KEY_RATE_HZ = 30
BREATH_S, SHIFT_S, SWAY_S = 4.0, 8.0, 12.0
X, Y, Z = np.eye(3)


def _rot(axis: np.ndarray, deg: np.ndarray) -> np.ndarray:
    return quat_from_axis_angle(np.broadcast_to(axis, (len(deg), 3)), np.radians(deg))


def idle_clip(*, leg_m: float = 0.85, amplitude: float = 1.0) -> Clip:
    """The idle loop (module doc) for legs of ``leg_m`` metres (hip joint to ankle),
    amplitudes scaled by ``amplitude``."""
    n = int(LOOP_S * KEY_RATE_HZ)
    t = np.arange(n + 1) / KEY_RATE_HZ
    a = float(amplitude)
    breath = 0.5 - 0.5 * np.cos(2 * math.pi * t / BREATH_S)          # 0 -> 1 -> 0, smooth
    shift = np.sin(2 * math.pi * t / SHIFT_S)
    sway = np.sin(2 * math.pi * t / SWAY_S)
    dx = a * 0.012 * shift                                             # hips sideways, metres
    hips = _rot(Z, a * 0.8 * shift)
    spine = quat_mul(hips, quat_mul(_rot(Z, -a * 1.2 * shift), _rot(Y, a * 1.5 * sway)))
    chest = quat_mul(spine, quat_mul(_rot(X, -a * 0.6 * breath), _rot(Y, a * 1.0 * sway)))
    upper = quat_mul(chest, _rot(X, -a * 0.4 * breath))
    tilt = -np.degrees(np.arcsin(dx / leg_m))                         # the legs lean: ankles stay put
    leg = _rot(Z, tilt)
    rot = {"hips": hips, "spine": spine, "chest": chest, "upperChest": upper,
           "leftUpperLeg": leg, "leftLowerLeg": leg, "rightUpperLeg": leg, "rightLowerLeg": leg,
           "leftFoot": np.tile([0.0, 0.0, 0.0, 1.0], (n + 1, 1)), "rightFoot": np.tile([0.0, 0.0, 0.0, 1.0], (n + 1, 1)),
           "neck": np.tile([0.0, 0.0, 0.0, 1.0], (n + 1, 1)), "head": np.tile([0.0, 0.0, 0.0, 1.0], (n + 1, 1)),
           "leftShoulder": quat_mul(upper, _rot(Z, a * 0.8 * breath)),
           "rightShoulder": quat_mul(upper, _rot(Z, -a * 0.8 * breath))}
    hips_pos = np.zeros((n + 1, 3))
    hips_pos[:, 0] = dx
    hips_pos[:, 1] = -leg_m * (1.0 - np.cos(np.radians(tilt)))         # the hips drop as the legs tilt
    return Clip(name="idle", source="", times=t, rotations={k: quat_normalize(v) for k, v in rot.items()},
                hips_position=hips_pos, rest=None, loop=True, frame_rate=float(KEY_RATE_HZ),
                notes=("generated idle: breathing, weight shift, sway",))
