"""Spring colliders of the generated avatars, rest clearance, and the VRMC_springBone JSON.

Colliders (VRMC_springBone 1.0 sphere / capsule, offsets in the bone's local frame; the
bones have identity rest rotations so local = world - bone position), grouped as
``head`` (one sphere), ``neck`` (a capsule), ``shoulders`` (two capsules along the
shoulder tops) and ``torso`` (a vertical capsule through the chest). Hair at rest is kept
outside every collider of its spring's groups by the joint's hitRadius (see
:func:`clearance`); :func:`drape` moves designed joint positions out where needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rig import HEAD_CENTER, Rig


@dataclass(frozen=True)
class ColliderSpec:
    """A collider in world rest coordinates (metres): sphere when ``tail`` is None."""

    group: str
    bone: str
    head: tuple[float, float, float]
    radius: float
    tail: tuple[float, float, float] | None = None


def body_colliders(rig: Rig) -> list[ColliderSpec]:
    """The six colliders: head sphere, neck capsule, two shoulder capsules, torso capsule."""
    hc = tuple(HEAD_CENTER + np.array([0.0, 0.004, -0.004]))
    out = [
        ColliderSpec("head", "head", hc, 0.080),
        ColliderSpec("neck", "neck", (0.0, 1.345, -0.012), 0.036, (0.0, 1.425, -0.010)),
    ]
    for s, side in ((1.0, "left"), (-1.0, "right")):
        out.append(ColliderSpec("shoulders", f"{side}Shoulder", (0.045 * s, 1.312, -0.012), 0.046,
                                (0.150 * s, 1.305, -0.012)))
    out.append(ColliderSpec("torso", "upperChest", (0.0, 1.275, -0.004), 0.092, (0.0, 1.03, 0.004)))
    return out


def capsule(spec: ColliderSpec) -> tuple[np.ndarray, np.ndarray, float]:
    """(a (3,), b (3,), radius): the collider's axis segment in world rest space."""
    a = np.asarray(spec.head, float)
    return a, (a if spec.tail is None else np.asarray(spec.tail, float)), spec.radius


def segment_distance(p0, p1, q0, q1) -> tuple[float, np.ndarray, np.ndarray]:
    """Closest distance between segments p0-p1 and q0-q1, with the closest points on each.

    Source: Ericson, Real-Time Collision Detection (2005), 5.1.9 ClosestPtSegmentSegment.
    """
    p0, p1, q0, q1 = (np.asarray(v, float) for v in (p0, p1, q0, q1))
    d1, d2, r = p1 - p0, q1 - q0, p0 - q0
    a, e, f = d1 @ d1, d2 @ d2, d2 @ r
    eps = 1e-15
    if a <= eps and e <= eps:
        s = t = 0.0
    elif a <= eps:
        s, t = 0.0, np.clip(f / e, 0.0, 1.0)
    else:
        c = d1 @ r
        if e <= eps:
            t, s = 0.0, np.clip(-c / a, 0.0, 1.0)
        else:
            b = d1 @ d2
            den = a * e - b * b
            s = np.clip((b * f - c * e) / den, 0.0, 1.0) if den > eps else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t, s = 0.0, np.clip(-c / a, 0.0, 1.0)
            elif t > 1.0:
                t, s = 1.0, np.clip((b - c) / a, 0.0, 1.0)
    cp, cq = p0 + d1 * s, q0 + d2 * t
    return float(np.linalg.norm(cp - cq)), cp, cq


def clearance(points: np.ndarray, hit_radius: float, colliders: list[ColliderSpec]) -> float:
    """min over segments and colliders of (distance - collider radius - hit_radius), metres.

    ``points`` (N, 3) are a chain's joint positions; segment i runs from joint i to i+1.
    Non-negative means the chain is clear of every collider at rest.
    """
    worst = np.inf
    for c in colliders:
        a, b, r = capsule(c)
        for i in range(len(points) - 1):
            d, _, _ = segment_distance(points[i], points[i + 1], a, b)
            worst = min(worst, d - r - hit_radius)
    return float(worst)


def drape(points: np.ndarray, hit_radius: float, colliders: list[ColliderSpec], margin: float = 0.003,
          iterations: int = 50) -> np.ndarray:
    """Move joints 1..N-1 of a designed chain (N, 3) out of the colliders (the root stays).

    Each pass takes every segment closer than radius + hit_radius + margin to a collider
    axis and moves its far joint straight away from the axis by the missing distance.
    """
    p = np.array(points, float)
    need = hit_radius + margin
    for _ in range(iterations):
        moved = False
        for i in range(len(p) - 1):
            for c in colliders:
                a, b, r = capsule(c)
                d, cp, cq = segment_distance(p[i], p[i + 1], a, b)
                if d < r + need - 1e-9:
                    n = (cp - cq) / d if d > 1e-9 else np.array([0.0, 0.0, -1.0])
                    p[i + 1] += n * (r + need - d + 2e-4)
                    moved = True
        if not moved:
            break
    return p


def spring_extension(rig: Rig, colliders: list[ColliderSpec], springs: list[tuple[str, list[dict], tuple]]) -> dict:
    """The VRMC_springBone 1.0 object.

    Args:
        colliders: collider specs, in file order.
        springs: (name, joint dicts, collider group names) per spring.
    """
    group_names: list[str] = []
    for c in colliders:
        if c.group not in group_names:
            group_names.append(c.group)
    out_colliders = []
    for c in colliders:
        node = rig.bone(c.bone)
        base = rig.world[node]
        off = [round(float(v), 6) for v in np.asarray(c.head) - base]
        if c.tail is None:
            shape = {"sphere": {"offset": off, "radius": c.radius}}
        else:
            tail = [round(float(v), 6) for v in np.asarray(c.tail) - base]
            shape = {"capsule": {"offset": off, "radius": c.radius, "tail": tail}}
        out_colliders.append({"node": node, "shape": shape})
    groups = [{"name": g, "colliders": [i for i, c in enumerate(colliders) if c.group == g]} for g in group_names]
    out_springs = [
        {"name": name, "joints": joints, "colliderGroups": [group_names.index(g) for g in gs]}
        for name, joints, gs in springs
    ]
    return {"specVersion": "1.0", "colliders": out_colliders, "colliderGroups": groups, "springs": out_springs}
