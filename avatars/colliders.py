"""Collider geometry: colliders in world space, point-segment distance and the fitted torso
capsule (numpy, build time). The solver's build (solver/build.py) and the try-on's auto-rig
(:mod:`avatars.tryon.autorig`) use it; the generated avatars' collider specs are
:mod:`avatars.generate.colliders`.

The avatar's colliders (:class:`avatars.Collider`) are used as they are, in their node's
local frame; the kernels move them with their bones every substep. When the avatar's own
colliders leave the torso uncovered, a capsule is fitted from the humanoid bones
(docs/design.md §4.4): its axis runs from the spine (or hips) up to just below the neck, its radius
is a fixed fraction of the shoulder span (the distance between the upper arms, or between
the shoulders), and it is attached to the upper chest (or chest, or spine) bone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Avatar, Collider

#: Torso capsule radius as a fraction of the upper-arm span (a chest is about 60% as deep
#: as the shoulders are wide, so its half-depth is ~0.3 of the span).
TORSO_RADIUS_PER_SPAN = 0.30
#: Fraction of sample points on the fitted axis that the avatar's colliders must contain
#: for the torso to count as covered.
TORSO_COVERED_FRACTION = 0.5
TORSO_SAMPLES = 9


@dataclass(frozen=True, eq=False)
class TorsoFit:
    """Result of :func:`fit_torso_capsule`.

    Attributes:
        collider: the fitted capsule in its node's local frame (None when the humanoid
            bones needed are missing).
        coverage: fraction (0..1) of the fitted axis already inside the avatar's colliders.
        covered: True when the avatar's colliders cover the torso (coverage ≥ 0.5).
        reason: a human-readable account for reports and logs.
    """

    collider: Collider | None
    coverage: float
    covered: bool
    reason: str


def _pos(world: np.ndarray, node: int) -> np.ndarray:
    return world[node, :3, 3]


def collider_world(col: Collider, world: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(head (3,), tail (3,), radius) of ``col`` in world space under ``world`` (N, 4, 4)."""
    m = world[col.node] if col.node >= 0 else np.eye(4)
    a = m[:3, :3] @ col.offset + m[:3, 3]
    tail = col.offset if col.tail is None else col.tail
    b = m[:3, :3] @ tail + m[:3, 3]
    s = abs(np.linalg.det(m[:3, :3])) ** (1.0 / 3.0)
    return a, b, col.radius * s


def point_segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance (...,) of points p (..., 3) to segment a-b (3,)."""
    e = b - a
    ee = float(e @ e)
    t = np.zeros(p.shape[:-1]) if ee < 1e-30 else np.clip((p - a) @ e / ee, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[..., None] * e), axis=-1)


def fit_torso_capsule(avatar: Avatar, world: np.ndarray | None = None) -> TorsoFit:
    """Fit a torso capsule from the humanoid spine/chest/upper chest/shoulder bones.

    Args:
        avatar: the avatar (humanoid map and colliders are read).
        world: (N, 4, 4) pose to fit in; the rest pose when None.

    Returns:
        A :class:`TorsoFit`; ``collider`` is None when spine/hips, neck, and upper arms or
        shoulders are not all mapped.
    """
    hum = avatar.humanoid
    world = avatar.skeleton.rest_world if world is None else world
    bottom_bone = next((b for b in ("spine", "hips") if b in hum), None)
    attach = next((b for b in ("upperChest", "chest", "spine") if b in hum), None)
    if "leftUpperArm" in hum and "rightUpperArm" in hum:
        span_pair = ("leftUpperArm", "rightUpperArm")
    elif "leftShoulder" in hum and "rightShoulder" in hum:
        span_pair = ("leftShoulder", "rightShoulder")
    else:
        span_pair = None
    if bottom_bone is None or attach is None or "neck" not in hum or span_pair is None:
        return TorsoFit(None, 0.0, False, "humanoid spine/neck/shoulder bones missing: no torso capsule fitted")
    bottom = _pos(world, hum[bottom_bone])
    neck = _pos(world, hum["neck"])
    span = float(np.linalg.norm(_pos(world, hum[span_pair[0]]) - _pos(world, hum[span_pair[1]])))
    radius = TORSO_RADIUS_PER_SPAN * span
    axis = neck - bottom
    height = float(np.linalg.norm(axis))
    if height < 1e-6 or radius < 1e-6:
        return TorsoFit(None, 0.0, False, "degenerate torso bones: no torso capsule fitted")
    up = axis / height
    # top cap reaches the neck base: the axis ends one radius below it (never below the bottom)
    top = bottom + up * max(height - radius, 0.0)
    node = hum[attach]
    inv = np.linalg.inv(world[node])
    offset = inv[:3, :3] @ bottom + inv[:3, 3]
    tail = inv[:3, :3] @ top + inv[:3, 3]
    node_scale = abs(np.linalg.det(world[node][:3, :3])) ** (1.0 / 3.0)
    capsule = Collider(node=node, shape="capsule", offset=offset, tail=tail, radius=radius / node_scale)
    # coverage by the avatar's own (outside) colliders
    samples = bottom + np.linspace(0.0, 1.0, TORSO_SAMPLES)[:, None] * (top - bottom)
    inside = np.zeros(TORSO_SAMPLES, bool)
    for col in avatar.colliders:
        if col.shape not in ("sphere", "capsule"):
            continue
        a, b, r = collider_world(col, world)
        inside |= point_segment_distance(samples, a, b) <= r
    coverage = float(inside.mean())
    covered = coverage >= TORSO_COVERED_FRACTION
    reason = (f"torso {'covered' if covered else 'uncovered'} by the avatar's colliders "
              f"({100 * coverage:.0f}% of the spine-neck axis); fitted capsule r={radius:.3f} m "
              f"on {attach} ({span_pair[0]}-{span_pair[1]} span {span:.3f} m)")
    return TorsoFit(capsule, coverage, covered, reason)
