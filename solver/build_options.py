"""What a chain-set build can be told: :class:`BuildOptions` (frozen, checked when made) and the
defaults and fixed tolerances of :func:`solver.build.pack_avatar`.

Lengths are model metres (the avatar's units, metres for a VRM), times seconds, angles degrees
unless a name says otherwise.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from . import layout as L
from .errors import SolverOptionError
from .params import DEFAULT_MAPPING, SUBSTEP_SECONDS, Overrides, VrmMapping
from .sheets import SHEET_CHOICES, SHEET_PASSES, Links

if TYPE_CHECKING:  # pragma: no cover
    from .limits import Limits, WindDrag

#: Automatic reset when a chain's anchor moves farther than this in one substep (model metres:
#: 0.5 m in 1/120 s is 60 m/s, a teleport, not a head movement).
TELEPORT_DISTANCE = 0.5
#: Rest-shape and legacy: anchor speed (model m/s) above which the excess of the anchor's motion
#: carries its chains rigidly, so the hair does not trail a fast body movement by the whole of it
#: (Magica Cloth 2's movement speed limit of its inertia; docs/design.md §4.1). The head turn (no
#: head travel) stays below it; the library's fast one-shots reach 5-9 m/s at the head (a walk
#: 0.43 m/s at most). Measured on the library (notes: fastclip): 1.0 m/s left a roll at 21 % p99 stretch,
#: 0.25 m/s (with 200 °/s) at 9 %.
SPEED_LIMIT = 0.25
#: Likewise for the anchor's angular speed, degrees per second (Magica Cloth 2's rotation speed
#: limit); above the standard head turn's peak (198.9 °/s: it keeps its bits), below a roll's
#: (760 °/s p95).
ROTATION_SPEED_LIMIT_DEG = 200.0
#: Contact projection passes per substep (stops early when a pass moves nothing; a link
#: squeezed between two colliders can need ~10).
CONTACT_PASSES = 16
#: Rest-shape: chain relaxation passes after a substep in which a chain touched a collider
#: (bend limit shared with the parent, then lengths and contact again; 0 turns it off).
RELAX_PASSES = 1
#: Rest-shape, chains in contact: largest bend of a link off its parent's rest continuation.
BEND_LIMIT_DEG = 12.0
#: Share of an excess bend taken by the parent link (the child takes the rest).
BEND_PARENT_SHARE = 0.5
#: Overlap below this counts as resolved in the diagnostics counter (metres).
CONTACT_TOLERANCE = 1e-6
#: Smallest lever parameter u when a segment contact is turned into a tail push.
CONTACT_U_MIN = 0.05
#: Links sampled against the fitted torso capsule must clear it by this much at rest (metres).
REST_OVERLAP_TOLERANCE = 1e-6
#: Added to a rest-pose overlap when it becomes a contact allowance, so that floating-point
#: round-off never turns the authored rest pose into a contact (metres).
REST_OVERLAP_MARGIN = 1e-6

#: A speed limit: one number for every spring, or {fnmatch pattern over spring names: number}
#: (the first matching pattern wins; a spring no pattern matches keeps the default).
SpeedLimit = Union[float, Mapping[str, float]]

TORSO_CAPSULE_CHOICES = ("auto", "on", "off")
REST_OVERLAP_CHOICES = ("allow", "push")


@dataclass(frozen=True)
class BuildOptions:
    """How :func:`solver.build.pack_avatar` (and :meth:`solver.chains.ChainSet.from_avatar`)
    builds a chain set. Checked when made.

    Attributes:
        solver: "rest-shape" (the default: the restoring force pulls toward the authored
            rest arc carried by the chain's anchor), "legacy" (parent-relative restoring
            direction, for comparison) or "vrm" (the three-vrm/UniVRM Verlet, one step per
            substep).
        torso_capsule: "auto" (fit one when the avatar's colliders leave the torso
            uncovered), "on" (always when it can be fitted) or "off".
        overrides: per-spring replacements of the mapped (k, c, g, hit radius), see
            :func:`solver.params.override_for`; None: the file's parameters.
        mapping: VRM parameters -> (k 1/s², c 1/s, g m/s²); the calibrated default.
        substep: h, seconds. The runtime keeps 1/120; other values serve the
            frame-rate-dependent VRM reference (e.g. "vrm" stepped once per 60 fps frame).
        gravity_preload: rest-shape only: balance the across-link part of gravity in the
            rest pose by a constant force carried by the anchor frame, so the authored rest
            arc is the equilibrium of a still head (gravity acts on head tilts).
        contact_passes: contact projection passes per substep (count).
        relax_passes: rest-shape only: relaxation passes of a chain that touched a collider
            in the substep (count, >= 0; 0: off; :func:`solver.kernels.step.step_kernel`).
        bend_limit_deg: rest-shape, relaxed chains: the largest bend of a link off its
            parent's rest continuation, degrees, 0 < limit < 180.
        teleport_distance: automatic reset when an anchor jumps farther than this within
            one substep, model metres (times the avatar scale).
        speed_limit: rest-shape and legacy: anchor speed above which the excess of its motion
            carries the chain rigidly (tails, their history and velocity turned and moved with
            the anchor by the excess), model metres per second (times the avatar scale), > 0;
            ``math.inf``: off. One number, or {spring-name pattern: number} (first match;
            unmatched springs: :data:`SPEED_LIMIT`; ``[hair] speed_limit``, per spring
            ``[hair.springs."Pattern"] speed_limit``); :func:`speed_limit_of`.
        rotation_speed_limit_deg: likewise for the anchor's angular speed, degrees per second,
            > 0; ``math.inf``: off; one number or {pattern: number} (unmatched:
            :data:`ROTATION_SPEED_LIMIT_DEG`; ``[hair] rotation_speed_limit``).
        rest_overlap: "allow" (a link overlapping a collider in the authored rest pose may
            keep that overlap, so a still head leaves the hair at rest) or "push" (pushed
            out as three-vrm does). "vrm" mode always pushes.
        collisions: False drops every collider reference (dynamics-only runs).
        cover_mesh: raise the links' hit radii to cover the drawn radius of their hair
            vertices (how far they lie off the links at rest, at most twice the file's
            radius; never growing toward the tip), limited per collider to the chain's rest
            clearance (:mod:`solver.drawn`), so contact keeps the hair as drawn out of the
            colliders, not only its links. On by default (``False``: the file's radii); the
            rest-shape mode only ("vrm" and "legacy" keep the file's radii).
        authored_nodes: joint nodes driven by an animation (see
            :meth:`solver.chains.ChainSet.set_authored`), stored as a sorted tuple of ints.
        sheets: linked sheets (:mod:`solver.sheets`, rest-shape only): "auto" (the try-on's
            sheets and the groups ``links`` configures) or "off" (none: the chains move
            independently).
        links: per-spring sheet settings {fnmatch pattern: :class:`solver.sheets.LinkSetting`}
            (``[hair.springs."Pattern"] link = ...``), or None.
        sheet_passes: sheet passes per substep (count, >= 1).
        limits: angle limits from the config, {spring-name pattern: JointLimit or None (no
            limit)}; they win over the file's and the fit's (:mod:`solver.limits`).
        fit_limits: the try-on auto-rig's root-bend cones (``SpringJoint.max_bend``) become
            angle limits (off by default: fitted hair then moves as before).
        wind_drag: wind response, 1/s: one number for every spring or {pattern: number}
            (:mod:`solver.limits`; the wind itself: :mod:`solver.wind`).

    Raises:
        SolverOptionError (a ValueError): an unknown solver, torso-capsule or rest-overlap
            choice, a bend limit outside (0, 180), a speed limit that is not > 0, negative relaxation passes, an unknown
            sheets choice or sheet passes < 1.
    """

    solver: str = "rest-shape"
    torso_capsule: str = "auto"
    overrides: Overrides = None
    mapping: VrmMapping = DEFAULT_MAPPING
    substep: float = SUBSTEP_SECONDS
    gravity_preload: bool = True
    contact_passes: int = CONTACT_PASSES
    relax_passes: int = RELAX_PASSES
    bend_limit_deg: float = BEND_LIMIT_DEG
    teleport_distance: float = TELEPORT_DISTANCE
    speed_limit: SpeedLimit = SPEED_LIMIT
    rotation_speed_limit_deg: SpeedLimit = ROTATION_SPEED_LIMIT_DEG
    rest_overlap: str = "allow"
    collisions: bool = True
    cover_mesh: bool = True
    authored_nodes: tuple[int, ...] = ()
    sheets: str = "auto"
    links: Links = None
    sheet_passes: int = SHEET_PASSES
    limits: Limits = None
    fit_limits: bool = False
    wind_drag: WindDrag = None

    def __post_init__(self) -> None:
        if self.solver not in L.MODES:
            raise SolverOptionError(f"unknown solver {self.solver!r}; expected one of {sorted(L.MODES)}")
        if not 0.0 < self.bend_limit_deg < 180.0:
            raise SolverOptionError(f"bend_limit_deg must lie in (0, 180), not {self.bend_limit_deg!r}")
        for name in ("speed_limit", "rotation_speed_limit_deg"):
            v = getattr(self, name)
            for pattern, x in (v.items() if isinstance(v, Mapping) else ((None, v),)):
                if isinstance(x, bool) or not isinstance(x, (int, float)) or not x > 0.0:
                    at = "" if pattern is None else f" of pattern {pattern!r}"
                    raise SolverOptionError(f"{name}{at} must be a number > 0 (math.inf: off), not {x!r}")
        if self.relax_passes < 0:
            raise SolverOptionError(f"relax_passes must be >= 0, not {self.relax_passes!r}")
        if self.rest_overlap not in REST_OVERLAP_CHOICES:
            raise SolverOptionError(f"rest_overlap must be 'allow' or 'push', not {self.rest_overlap!r}")
        if self.torso_capsule not in TORSO_CAPSULE_CHOICES:
            raise SolverOptionError(f"torso_capsule must be 'auto', 'on' or 'off', not {self.torso_capsule!r}")
        if self.sheets not in SHEET_CHOICES:
            raise SolverOptionError(f"sheets must be 'auto' or 'off', not {self.sheets!r}")
        if isinstance(self.sheet_passes, bool) or not isinstance(self.sheet_passes, int) or self.sheet_passes < 1:
            raise SolverOptionError(f"sheet_passes must be an integer >= 1, not {self.sheet_passes!r}")
        object.__setattr__(self, "authored_nodes", tuple(sorted({int(n) for n in self.authored_nodes})))

    @property
    def mode(self) -> int:
        """The packed mode constant of :attr:`solver` (:data:`solver.layout.MODES`)."""
        return L.MODES[self.solver]

    def speed_limits_of(self, spring_name: str) -> tuple[float, float]:
        """(speed limit model m/s, rotation speed limit degrees/s) of the spring named
        ``spring_name`` (:func:`speed_limit_of` of both fields)."""
        return (speed_limit_of(self.speed_limit, spring_name, SPEED_LIMIT),
                speed_limit_of(self.rotation_speed_limit_deg, spring_name, ROTATION_SPEED_LIMIT_DEG))


def speed_limit_of(limit: SpeedLimit, spring_name: str, default: float) -> float:
    """The value of ``limit`` (a number, or {fnmatch pattern: number}: the first pattern
    matching ``spring_name`` wins, none matching: ``default``) for one spring, as a float
    (``math.inf``: off)."""
    if isinstance(limit, Mapping):
        for pattern, v in limit.items():
            if fnmatch.fnmatchcase(spring_name, pattern):
                return float(v)
        return float(default)
    return float(limit)
