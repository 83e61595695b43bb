"""The embedded default avatar "swaycam default": teal hair with bangs, side locks, a ponytail, an ahoge.

Springs (VRMC_springBone, joints listed root to tip, the tip joint has no segment):
5 bangs of 4 joints, 2 side locks of 4 joints, a ponytail of 6 joints, an ahoge of 4
joints: 9 springs, 38 joints. Collider groups: head (sphere), neck (capsule), shoulders
(2 capsules), torso (capsule). Bangs and ahoge check the head; side locks the head, neck
and shoulders; the ponytail all four groups.
"""

from __future__ import annotations

import numpy as np

from .character import Hair, build_character
from .colliders import ColliderSpec
from .hair import Strand, build_cap, hair_tie, scalp

NAME = "swaycam default"
BANGS = ((-34.0, 17.0), (-17.0, 13.0), (0.0, 20.0), (17.0, 13.0), (34.0, 17.0))  # (root azimuth, tip elevation) deg


def bang(name: str, azim: float, tip_elev: float, root_elev: float = 64.0, width=(0.011, 0.015)) -> Strand:
    """A bang strand: from high on the scalp over the forehead, curving toward the face centre."""
    t = np.array([0.0, 0.42, 0.74, 1.0])
    elev = root_elev + (tip_elev - root_elev) * t
    azim_k = azim * (1.0 - 0.18 * t)
    off = np.array([0.010, 0.014, 0.016, 0.019])
    return Strand(name, scalp(elev, azim_k, off), width=width, thickness=0.0035, stiffness=(1.2, 0.9),
                  drag=0.45, gravity=(0.02, 0.08), hit_radius=0.010, groups=("head",), n_around=8, rings=5)


def side_lock(name: str, sign: float, tip_y: float = 1.372, width=(0.012, 0.017)) -> Strand:
    """A side lock: from the temple down past the cheek to the collarbone (sign +1 = avatar's left)."""
    p0 = scalp(36.0, 60.0 * sign, 0.012)
    p1 = scalp(2.0, 66.0 * sign, 0.016)
    p2 = np.array([p1[0] - 0.008 * sign, 0.5 * (p1[1] + tip_y) + 0.004, p1[2] + 0.010])
    p3 = np.array([p1[0] - 0.012 * sign, tip_y, p1[2] + 0.018])
    return Strand(name, np.stack([p0, p1, p2, p3]), width=width, thickness=0.004, stiffness=(1.0, 0.7),
                  drag=0.4, gravity=(0.05, 0.2), hit_radius=0.012, groups=("head", "neck", "shoulders"),
                  n_around=8, rings=6, width_peak=0.4)


PONYTAIL = np.array([
    [0.0, 1.592, -0.090],
    [0.0, 1.572, -0.138],
    [0.0, 1.512, -0.162],
    [0.0, 1.442, -0.168],
    [0.0, 1.372, -0.162],
    [0.0, 1.296, -0.150],
])


def design(rig, colliders: list[ColliderSpec]) -> Hair:
    """The default hair: scalp cap, 5 bangs, 2 side locks, ponytail with a scrunchie, ahoge."""
    hair = Hair(parts=[build_cap(rig)])
    for k, (az, tip) in enumerate(BANGS):
        hair.add(rig, bang(f"Bang{k + 1}", az, tip), colliders)
    for sign, side in ((1.0, "L"), (-1.0, "R")):
        hair.add(rig, side_lock(f"SideLock_{side}", sign), colliders)
    pony = Strand("Ponytail", PONYTAIL, width=(0.020, 0.032), thickness=0.026, stiffness=(1.2, 0.6), drag=0.4,
                  gravity=(0.1, 0.3), hit_radius=0.02, groups=("head", "neck", "shoulders", "torso"),
                  n_around=14, rings=6, bulge=0.0, width_peak=0.35, up=np.array([0.0, 1.0, 0.0]))
    hair.add(rig, pony, colliders)
    axis = PONYTAIL[1] - PONYTAIL[0]
    hair.parts.append(hair_tie(rig, PONYTAIL[0] + 0.3 * axis, axis, radius=0.021, tube=0.008))
    top = scalp(84.0, 0.0, 0.010)
    ahoge = np.stack([top, top + [0.003, 0.024, 0.010], top + [0.008, 0.038, 0.032], top + [0.012, 0.032, 0.05]])
    hair.add(rig, Strand("Ahoge", ahoge, width=(0.004, 0.0065), thickness=0.0018, stiffness=1.6, drag=0.5,
                         gravity=0.0, hit_radius=0.005, groups=("head",), n_around=6, rings=5,
                         up=np.array([0.0, 0.0, 1.0]), width_peak=0.45), colliders)
    return hair


def build_default_avatar() -> bytes:
    """The default avatar as VRM 1.0 GLB bytes (deterministic)."""
    return build_character(NAME, design)[0]
