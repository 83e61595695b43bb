"""The "layered" stress avatar "swaycam layered": the default body and face with long layered hair.

Hair: the scalp cap plus 26 spring strands in layers around the head — an inner layer of
10 long strands (6 joints) at azimuths 180 +- 10..90 degrees, an outer layer of 8 strands
(6 joints) rooted higher at 180 +- 20..80 degrees, 6 bangs (4 joints) and 2 side locks
(4 joints): 26 springs, 140 joints, more than 12,000 vertices skinned mainly to spring
joints (the scale of the layered model in the seed articles). The long strands hang
behind the shoulders and down the back; :func:`colliders.drape` keeps them clear of the
colliders at rest.
"""

from __future__ import annotations

import numpy as np

from .character import Hair, build_character
from .colliders import ColliderSpec
from .default import bang, side_lock
from .hair import Strand, build_cap, scalp

NAME = "swaycam layered"
INNER = (10.0, 30.0, 50.0, 70.0, 90.0)  # degrees off the back (azimuth 180), both sides
OUTER = (20.0, 40.0, 60.0, 80.0)
BANGS = ((-40.0, 18.0), (-24.0, 13.0), (-8.0, 17.0), (8.0, 15.0), (24.0, 12.0), (40.0, 18.0))
LONG_GROUPS = ("head", "neck", "shoulders", "torso")


def long_strand(name: str, azim: float, root_elev: float, offset: float, tip_y: float,
                width: tuple[float, float]) -> Strand:
    """A long strand: over the scalp from ``root_elev`` to below the ear line, then hanging to ``tip_y``."""
    p0 = scalp(root_elev, azim, offset)
    p1 = scalp(0.5 * (root_elev - 20.0), azim, offset + 0.005)
    p2 = scalp(-20.0, azim, offset + 0.008)
    out = np.array([np.sin(np.radians(azim)), 0.0, np.cos(np.radians(azim))])
    f = np.array([1.0, 2.0, 3.0])[:, None] / 3.0
    hang = p2 + np.array([0.0, tip_y - p2[1], 0.0]) * f + out * (0.014 * f ** 1.5)
    return Strand(name, np.concatenate([np.stack([p0, p1, p2]), hang]), width=width, thickness=0.004,
                  stiffness=(1.0, 0.5), drag=0.4, gravity=(0.1, 0.3), hit_radius=0.015, groups=LONG_GROUPS,
                  n_around=16, rings=8, width_peak=0.45)


def _tip_y(off_back: float) -> float:
    """Strands are longest at the back (1.17 m) and reach the shoulders at the sides (1.40 m)."""
    return 1.17 + 0.23 * (off_back / 90.0) ** 1.5


def design(rig, colliders: list[ColliderSpec]) -> Hair:
    """Layered hair: cap, inner and outer long layers, bangs, side locks."""
    hair = Hair(parts=[build_cap(rig)])
    for k, (az, tip) in enumerate(BANGS):
        spec = bang(f"Bang{k + 1}", az, tip, root_elev=66.0, width=(0.009, 0.013))
        spec.n_around, spec.rings = 16, 8
        hair.add(rig, spec, colliders)
    for sign, side in ((1.0, "L"), (-1.0, "R")):
        spec = side_lock(f"SideLock_{side}", sign)
        spec.n_around, spec.rings = 16, 8
        hair.add(rig, spec, colliders)
    layers = (("Inner", INNER, 42.0, 0.010, 0.0, (0.012, 0.020)), ("Outer", OUTER, 66.0, 0.017, 0.03, (0.014, 0.022)))
    for layer, offs, elev, offset, shorter, width in layers:
        k = 0
        for off in offs:
            for sign in (-1.0, 1.0):
                k += 1
                az = 180.0 + sign * off
                spec = long_strand(f"{layer}{k}", az, elev, offset, _tip_y(off) + shorter, width)
                hair.add(rig, spec, colliders)
    return hair


def build_layered_avatar() -> bytes:
    """The layered stress avatar as VRM 1.0 GLB bytes (deterministic)."""
    return build_character(NAME, design)[0]
