"""Spring parameters: VRM values -> (k, c, g) of the rest-shape solver, and overrides.

The reference VRM spring (three-vrm, UniVRM; docs/design.md §4.3) runs one Verlet step per rendered
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
trajectory RMS (see :mod:`solver.eval.calibration` and tests/solver/test_calibration.py).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import HairParamsError, SolverOptionError

if TYPE_CHECKING:   # numpy and the avatar model are imported where used: runtime.clock reads the rate
    import numpy as np

    from avatars import SpringJoint

#: The substep rate (docs/design.md §2), stated once for the whole product: the chain set steps
#: h = :data:`SUBSTEP_SECONDS` and the runtime's fixed-step driver (:mod:`runtime.clock`)
#: runs RATE_HZ substeps per second.
RATE_HZ = 120
#: Nanoseconds per second: times are integer nanoseconds (docs/design.md §3); t_n = t0 + n · NS_PER_S // RATE_HZ.
NS_PER_S = 1_000_000_000
#: h in seconds, exactly the float 1/RATE_HZ.
SUBSTEP_SECONDS = 1.0 / RATE_HZ

#: dragForce is clamped below 1 so that c stays finite (a drag of 1 stops the tail dead).
MAX_DRAG = 0.9999
#: Per-frame stiffness push over link length (Δ·stiffness/L) is clamped below 1 in the
#: discrete match (see :func:`discrete_kcg`).
MAX_A = 0.99


@dataclass(frozen=True)
class VrmMapping:
    """VRM (stiffness, dragForce, gravityPower, gravityDir) -> (k 1/s², c 1/s, g m/s²).

    Attributes:
        method: "analytic" (the continuous-time match in the module doc) or "discrete"
            (the default): the linearised single-link dynamics of ``rate_hz / ref_fps``
            substeps of the rest-shape update reproduce one Verlet frame exactly (same
            eigenvalues, see :func:`discrete_kcg`).
        ref_fps: frame rate of the Verlet reference the mapping reproduces (60 fps).
        rate_hz: the solver's substep rate (120 Hz).
        k_gain, c_gain, g_gain: extra multipliers (1 = as derived).
    """

    method: str = "discrete"
    ref_fps: float = 60.0
    rate_hz: float = float(RATE_HZ)
    k_gain: float = 1.0
    c_gain: float = 1.0
    g_gain: float = 1.0

    def kcg(self, joint: SpringJoint, length: float) -> tuple[float, float, np.ndarray]:
        """(k, c, g (3,)) for ``joint`` whose link is ``length`` metres long at rest."""
        import numpy as np

        stiff = max(joint.stiffness, 0.0)
        drag = min(max(joint.drag_force, 0.0), MAX_DRAG)
        gdir = np.asarray(joint.gravity_dir, np.float64)
        if self.method == "analytic":
            f = self.ref_fps
            k = stiff * f / max(length, 1e-9)
            c = -f * math.log1p(-drag)
            g = joint.gravity_power * f * gdir
        elif self.method == "discrete":
            k, c, gscale = discrete_kcg(stiff, drag, length, ref_fps=self.ref_fps, rate_hz=self.rate_hz)
            g = joint.gravity_power * gscale * gdir
        else:
            raise SolverOptionError(f"unknown mapping method {self.method!r}")
        return float(self.k_gain * k), float(self.c_gain * c), self.g_gain * g


def discrete_kcg(stiffness: float, drag: float, length: float, *, ref_fps: float = 60.0,
                 rate_hz: float = float(RATE_HZ)) -> tuple[float, float, float]:
    """Exact discrete-time match of one link, small angles: returns (k, c, g per gravityPower).

    Linearised across the link (y = L θ, target 0), one Verlet frame of Δ = 1/ref_fps first
    predicts p = y + (1 − d)(y − y⁻) and then pushes by Δ·stiffness along the rest axis,
    whose across-link part is −a p with a = Δ·stiffness/L (the push is measured against the
    *predicted* link, which is why stiffness also damps the Verlet):

        y⁺ = (1 − a) p,   characteristic z² − (1 − a)(2 − d) z + (1 − a)(1 − d).

    Two substeps of h = Δ/2 of the rest-shape update v⁺ = D (v − h k y), y⁺ = y + h v⁺
    (D = exp(−c h)) have λ² − (1 + D − D h² k) λ + D. Requiring λ² to be the Verlet roots:

        D² = (1 − a)(1 − d),   (1 + D − D h² k)² − 2D = (1 − a)(2 − d)

    so c = −ln((1 − a)(1 − d))/Δ and k = (1 + D − T)/(D h²), T = √((1 − a)(2 − d) + 2D).
    Gravity keeps the Verlet's static balance with stiffness (g/(kL) = gravityPower/stiffness):
    it is scaled like k relative to the analytic mapping (the a → 0 limit without stiffness).
    a is clamped below 1 (a Verlet with a ≥ 1 overshoots every frame). Only
    ``rate_hz = 2·ref_fps`` is derived; other ratios fall back to the analytic mapping.
    """
    length = max(length, 1e-9)
    if abs(rate_hz - 2.0 * ref_fps) > 1e-9:
        return stiffness * ref_fps / length, -ref_fps * math.log1p(-drag), ref_fps

    def match(a: float) -> tuple[float, float]:
        h = 0.5 / ref_fps
        dd = math.sqrt((1.0 - a) * (1.0 - drag))
        t = math.sqrt(max((1.0 - a) * (2.0 - drag) + 2.0 * dd, 0.0))
        return (1.0 + dd - t) / (dd * h * h), -2.0 * ref_fps * math.log(dd)

    a = min(stiffness / (ref_fps * length), MAX_A)
    k, c = match(a)
    if a > 0.0:
        factor = k / (a * ref_fps * ref_fps)
    else:
        a_eps = 1e-9
        factor = match(a_eps)[0] / (a_eps * ref_fps * ref_fps)
    return k, c, ref_fps * factor


#: The continuous-time mapping, kept to show what the discrete calibration buys.
ANALYTIC_MAPPING = VrmMapping(method="analytic")

#: The default mapping (docs/design.md §4.3): the discrete match, with the gains fitted by
#: :func:`solver.eval.calibration.fit_vrm_mapping` on the standard head turn.
DEFAULT_MAPPING = VrmMapping(method="discrete")


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


def max_stable_stiffness(c: float, h: float) -> float:
    """The largest k (1/s²) the rest-shape step of h seconds integrates with damping c (1/s)
    without a period-2 mode: linearised across the link, two substeps of the update
    v⁺ = D (v − h k y), y⁺ = y + h v⁺ (D = exp(−c h)) have λ² − (1 + D − D h² k) λ + D = 0
    (see :func:`discrete_kcg`), whose roots stay complex or positive (no tail that flips
    sides every substep and gains energy through the length projection) while
    D h² k ≤ (1 + √D)², i.e. k ≤ ((1 + s) / (s h))², s = exp(−c h / 2)."""
    s = math.exp(-0.5 * c * h)
    return ((1.0 + s) / (s * h)) ** 2


def min_stable_damping(k: float, h: float) -> float:
    """The smallest c (1/s) with which stiffness k (1/s²) is stable at substep h (see
    :func:`max_stable_stiffness`): 0 when h √k ≤ 2, else (2 / h) ln(h √k − 1)."""
    r = h * math.sqrt(max(k, 0.0))
    return 0.0 if r <= 2.0 else (2.0 / h) * math.log(r - 1.0)


def check_stable(where: str, k: float, c: float, h: float) -> None:
    """Raise HairParamsError (a ValueError) when (k, c) is not stable at substep h
    (:func:`max_stable_stiffness`), naming ``where`` and the values that would be: a VRM
    file's mapped pair always is; an override of k or c alone can break it (a stiff spring
    whose damping was lowered)."""
    if k <= max_stable_stiffness(c, h) * (1.0 + 1e-12):
        return
    raise HairParamsError(f"{where}: k = {k:g} 1/s² with c = {c:g} 1/s is not stable at {1.0 / h:g} substeps per "
                          f"second (the tail would flip sides every substep); with this k use c >= "
                          f"{min_stable_damping(k, h):.4g}, or with this c k <= {max_stable_stiffness(c, h):.4g} "
                          f"(set k and c together)")


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
