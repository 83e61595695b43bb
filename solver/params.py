"""Spring parameters: VRM values -> (k, c, g) of the rest-shape solver, and overrides.

The reference VRM spring (three-vrm, UniVRM; DESIGN §4.3) runs one Verlet step per rendered
frame of Δ seconds:

    x⁺ = x + (1 − dragForce)(x − x⁻) + Δ·stiffness·â + Δ·gravityPower·ĝ,  then |x⁺ − o| = L

so per frame the velocity (x⁺ − x)/Δ is multiplied by (1 − dragForce) and gains
stiffness·â + gravityPower·ĝ (m/s). After the length projection only the part of â
across the link acts, stiffness·sin θ per frame, i.e. an acceleration stiffness·sin θ / Δ.
The rest-shape spring's pull k (r − x) has the across-link part k·L·sin θ. Equating the
two at the reference frame rate f_ref = 1/Δ gives the analytic mapping

    k = stiffness · f_ref / L          (1/s², L the rest link length in metres)
    c = −f_ref · ln(1 − dragForce)     (1/s, exp(−c Δ) = 1 − dragForce per frame)
    g = gravityPower · f_ref · ĝ       (m/s²)

:data:`DEFAULT_MAPPING` multiplies these by gains fitted so that the rest-shape solver at
120 Hz follows the 60 fps Verlet reference on the standard head turn with the smallest
trajectory RMS (see :mod:`solver.calibration` and tests/solver/test_calibration.py).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from avatars import SpringJoint

#: dragForce is clamped below 1 so that c stays finite (a drag of 1 stops the tail dead).
MAX_DRAG = 0.9999


@dataclass(frozen=True)
class VrmMapping:
    """VRM (stiffness, dragForce, gravityPower, gravityDir) -> (k 1/s², c 1/s, g m/s²).

    Attributes:
        ref_fps: frame rate of the Verlet reference the mapping reproduces (60 fps).
        k_gain, c_gain, g_gain: calibrated multipliers of the analytic mapping (1 = analytic).
    """

    ref_fps: float = 60.0
    k_gain: float = 1.0
    c_gain: float = 1.0
    g_gain: float = 1.0

    def kcg(self, joint: SpringJoint, length: float) -> tuple[float, float, np.ndarray]:
        """(k, c, g (3,)) for ``joint`` whose link is ``length`` metres long at rest."""
        f = self.ref_fps
        k = self.k_gain * max(joint.stiffness, 0.0) * f / max(length, 1e-9)
        drag = min(max(joint.drag_force, 0.0), MAX_DRAG)
        c = self.c_gain * -f * math.log1p(-drag)
        g = self.g_gain * joint.gravity_power * f * np.asarray(joint.gravity_dir, np.float64)
        return float(k), float(c), g


#: Analytic mapping (no fitted gains), kept to show what the calibration buys.
ANALYTIC_MAPPING = VrmMapping()

#: The default mapping: gains fitted by :func:`solver.calibration.fit_vrm_mapping` on the
#: standard head turn (smoke_spring.vrm and Godette, 120 Hz rest-shape vs 60 fps Verlet).
DEFAULT_MAPPING = VrmMapping(k_gain=1.0, c_gain=1.0, g_gain=1.0)


@dataclass(frozen=True)
class SpringOverride:
    """Replace some of a spring's mapped parameters (None keeps the mapped value).

    Attributes:
        k: stiffness toward the rest arc, 1/s².
        c: exponential damping rate, 1/s.
        g: gravity (3,) m/s² in the avatar frame (+Y up), model metres (scaled with the avatar).
        hit_radius: collision radius of every joint of the spring, metres (model scale).
    """

    k: float | None = None
    c: float | None = None
    g: tuple[float, float, float] | None = None
    hit_radius: float | None = None


Overrides = Mapping[str, SpringOverride] | SpringOverride | None


def override_for(overrides: Overrides, spring_name: str) -> SpringOverride | None:
    """The override applying to ``spring_name``: a single :class:`SpringOverride` applies to
    every spring; in a mapping the first key (an fnmatch pattern, e.g. ``"*"`` or
    ``"boneGroup0/*"``) that matches wins."""
    if overrides is None:
        return None
    if isinstance(overrides, SpringOverride):
        return overrides
    for pattern, ov in overrides.items():
        if fnmatch.fnmatchcase(spring_name, pattern):
            return ov
    return None
