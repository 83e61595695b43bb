"""Fit a hair mesh onto the target head: crown, scale, alignment, push-out (docs/design.md §9).

1. Units (:func:`avatars.hair.detect_units`): the file's coordinates become metres.
2. Placement (:func:`avatars.tryon.placement.place`): the crown and size of the head the
   style was made for, by the *opening* method (the largest ellipsoid of human head
   proportions whose upper half the hair covers without passing through it; a MakeHuman
   ``.mhclo`` gives its size) when that places it well, else by *registration* of the hair's
   inner surface to the target head envelope (:mod:`avatars.tryon.register`: closed and
   voluminous styles, hair made for another head shape or scale). A guessed unit is then
   re-decided from the size of that head. Alignment: per-axis scale, crown on crown. Below
   the chin the lengths follow the body rather than the head: the vertical scale blends
   (over :data:`LENGTH_BLEND_HEADS`) into the one that maps a human chin-to-hips distance
   (:data:`HIPS_HEADS` − 1 head heights) onto the target's (its humanoid hips), never
   longer than the head scale. Long hair then ends on a big-headed avatar where it ends on
   a human (at the waist) instead of on the floor; on human proportions nothing changes.
3. Triangles lying entirely deep inside the target head (a closed cap's lid) are dropped
   (``FitReport.dropped``; the pipeline removes them from the mesh).
4. Push-out: every vertex inside the target's head envelope (:class:`geometry.RadialEnvelope`,
   grown by a clearance) or inside a collider the hair will use (the avatar's spheres and
   capsules and the fitted torso capsule, except those holding the scalp) is moved out; the
   displacement is then spread over the welded surface graph by constrained smoothing, so
   a strand whose top is pushed outward moves as a whole and its lengths keep their shape
   instead of collapsing onto the body.

A hair taken from the target avatar itself ("avatar-rest" frame, same file) is kept in
place, as its author placed it (steps 1-4 are skipped). Every report carries the method and
the inner-surface distance to the head (:class:`avatars.tryon.register.InnerFit`). What
cannot be fitted is reported with what to do: units that make no hairstyle, hair far larger
than the head, hair nowhere near a head, hair with no side over the scalp.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix, diags

from avatars import Avatar
from avatars.hair import HairMesh, detect_units

from ..colliders import collider_world
from .geometry import winding_numbers
from .head import HeadModel
from .placement import interior_triangles, place, unit_from_head
from .register import InnerFit, inner_fit, surface_samples

log = logging.getLogger(__name__)

#: Humanoid hips joint below the crown, in head heights, on human proportions (MakeHuman's
#: base and swaycam's default avatar are both at about 3.3).
HIPS_HEADS = 3.3
#: Head heights below the chin over which the vertical scale turns into the length scale.
LENGTH_BLEND_HEADS = 0.5
#: Clearance kept between the hair and the head envelope / colliders, in head heights.
CLEARANCE_HEADS = 0.012
#: Smoothing passes of the push-out displacement.
SMOOTH_PASSES = 40
#: A source whose fitted hair spans more than this many head heights is "far larger".
FAR_LARGER_HEADS = 8.0
#: A kept hair with ``HairMesh.lift`` is lifted out of the head mesh where it sinks in by at
#: most this many head heights, to this clearance (metres).
LIFT_DEEPEST = 0.01
LIFT_CLEARANCE = 0.002
#: A kept-in-place hair farther than this (head heights) from the head is "nowhere near".
NOWHERE_NEAR_HEADS = 0.5


@dataclass(frozen=True, eq=False)
class FitReport:
    """What the fit did (metres unless stated).

    Attributes:
        ok: False when the hair could not be fitted (``problems`` says why).
        units: the unit decision (one line).
        unit_guessed: True when the file stated no units.
        placement: "fitted" or "kept" (a hair already on this avatar).
        scale: (3,) per-axis scale from file units to metres on the target.
        source_head: (3,) the estimated source head size (width, height, depth), metres.
        source_crown, target_crown: (3,) crowns (source in metres, target in world).
        pushed: vertices moved by the push-out; max_push the largest move.
        colliders_used: collider descriptions the push-out respected.
        problems: what could not be fitted (empty when ok).
        notes: other remarks (warnings of the source, guessed units...).
    """

    ok: bool
    units: str = ""
    unit_guessed: bool = False
    placement: str = "fitted"
    scale: np.ndarray = field(default_factory=lambda: np.ones(3))
    source_head: np.ndarray = field(default_factory=lambda: np.zeros(3))
    source_crown: np.ndarray = field(default_factory=lambda: np.zeros(3))
    target_crown: np.ndarray = field(default_factory=lambda: np.zeros(3))
    pushed: int = 0
    max_push: float = 0.0
    colliders_used: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    method: str = ""
    inner: InnerFit = InnerFit()
    dropped: np.ndarray | None = None

    def summary(self) -> dict:
        """The ``fit`` object of ``swaycam hair fit --json``: method, inner-surface distance."""
        i = self.inner
        return {"method": self.method, "inner_median_mm": round(i.median_mm, 2), "inner_p95_mm": round(i.p95_mm, 2),
                "scalp_covered": round(i.coverage, 3), "dropped_triangles": int(0 if self.dropped is None else
                                                                                  self.dropped.sum())}


def welded_graph(hair: HairMesh, triangles: np.ndarray | None = None):
    """(node of each vertex (V,), node count, edges (E, 2) between welded nodes) of the
    hair's ``triangles`` (default all)."""
    _, node = np.unique(hair.weld, return_inverse=True)
    node = node.reshape(-1)
    n = int(node.max()) + 1
    t = node[hair.triangles if triangles is None else triangles]
    e = np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]])
    e = np.sort(e[e[:, 0] != e[:, 1]], axis=1)
    return node, n, np.unique(e, axis=0)


def _length_scale(avatar: Avatar, head: HeadModel) -> float:
    """Target metres per source head height for lengths below the chin: the target's
    chin-to-hips distance over a human's (:data:`HIPS_HEADS` − 1 heads); inf (no limit)
    without a humanoid hips bone."""
    hips = avatar.humanoid.get("hips", -1)
    if hips < 0:
        return np.inf
    chin = head.crown[1] - head.size[1]
    below = chin - float(avatar.skeleton.rest_world[hips][1, 3])
    return below / (HIPS_HEADS - 1.0) if below > 0 else np.inf


def length_map(u: np.ndarray, head_scale: float, length_scale: float) -> np.ndarray:
    """Depth below the crown on the target (metres) of source depths ``u`` (source head
    heights): ``head_scale`` metres per head height down to the chin (u = 1), then the
    slope blends linearly over :data:`LENGTH_BLEND_HEADS` into min(head, length) scale."""
    u = np.asarray(u, np.float64)
    a, b = head_scale, min(head_scale, length_scale)
    w = LENGTH_BLEND_HEADS
    x = np.clip(u - 1.0, 0.0, w)
    blend = a * x + (b - a) * x * x / (2.0 * w)
    rest = np.maximum(u - 1.0 - w, 0.0) * b
    return np.where(u <= 1.0, u * a, a + blend + rest)


def _body_colliders(avatar: Avatar, head: HeadModel) -> list[tuple[np.ndarray, np.ndarray, float, str]]:
    """World (a, b, r, label) of the colliders the hair will use (:func:`rig.usable_colliders`:
    the avatar's sphere/capsule colliders that do not hold the scalp, plus the fitted torso
    capsule where the torso is uncovered)."""
    from .autorig import usable_colliders

    rest = avatar.skeleton.rest_world
    keep, add, _ = usable_colliders(avatar, head)
    cols = [(avatar.colliders[i], f"colliders[{i}] ({avatar.colliders[i].shape} on "
             f"{avatar.skeleton.names[avatar.colliders[i].node]})") for i in keep]
    cols += [(c, "fitted torso capsule") for c in add]
    return [(*collider_world(c, rest), label) for c, label in cols]


def _segment_distance(p, a, b):
    e = b - a
    ee = float(e @ e)
    t = np.zeros(len(p)) if ee < 1e-30 else np.clip((p - a) @ e / ee, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[:, None] * e), axis=1)


def out_of_head_mesh(points: np.ndarray, head: HeadModel, clearance: float, deepest: float) -> np.ndarray:
    """Displacements (N, 3) moving the ``points`` that lie inside the head mesh (generalized
    winding number > 0.5, :func:`geometry.winding_numbers`) by at most ``deepest`` metres to
    ``clearance`` metres outside its closest triangle; the other points do not move. For a
    kept hair cut out of a mesh it shared with the face (``HairMesh.lift``: Godette's shell
    and buns dip under her skin at their rims, which hid them there while they were one)."""
    disp = np.zeros_like(points)
    cand = np.nonzero(head.envelope.depth(points) > 0.0)[0]
    if cand.size == 0:
        return disp
    cp, d, _ = head.index().query(points[cand])
    inside = (winding_numbers(head.vertices, head.faces, points[cand]) > 0.5) & (d <= deepest)
    if not inside.any():
        return disp
    i = cand[inside]
    out = cp[inside] - points[i]
    n = np.linalg.norm(out, axis=1, keepdims=True)
    out = np.where(n > 1e-12, out / np.maximum(n, 1e-12), (points[i] - head.center) / np.maximum(
        np.linalg.norm(points[i] - head.center, axis=1, keepdims=True), 1e-12))
    disp[i] = cp[inside] - points[i] + out * clearance
    return disp


def push_out(points: np.ndarray, edges: np.ndarray, head: HeadModel, colliders, clearance: float,
             passes: int = SMOOTH_PASSES) -> np.ndarray:
    """Displacements (N, 3) moving graph nodes ``points`` (N, 3) out of the head envelope
    and the colliders by ``clearance``, smoothed over the graph ``edges`` (E, 2) (module doc)."""
    n = len(points)
    disp = np.zeros((n, 3))
    if n == 0:
        return disp
    w = coo_matrix((np.ones(2 * len(edges)), (np.r_[edges[:, 0], edges[:, 1]], np.r_[edges[:, 1], edges[:, 0]])),
                   shape=(n, n)).tocsr()
    deg = np.asarray(w.sum(axis=1)).reshape(-1)
    avg = diags(1.0 / np.maximum(deg, 1.0)) @ w
    iso = deg == 0

    def project(d, rounds=2):
        q = points + d
        moved = np.zeros(n, bool)
        for _ in range(rounds):
            v = q - head.center
            r = np.linalg.norm(v, axis=1)
            need = head.envelope.radius(v) + clearance - r
            m = need > 0
            q[m] += v[m] / np.maximum(r[m, None], 1e-12) * need[m, None]
            moved |= m
            for a, b, rad, _label in colliders:
                dist = _segment_distance(q, a, b)
                need = rad + clearance - dist
                m = need > 0
                if m.any():
                    e = b - a
                    ee = float(e @ e)
                    t = np.zeros(m.sum()) if ee < 1e-30 else np.clip((q[m] - a) @ e / ee, 0.0, 1.0)
                    off = q[m] - (a + t[:, None] * e)
                    nrm = np.linalg.norm(off, axis=1, keepdims=True)
                    dirn = np.where(nrm > 1e-12, off / np.maximum(nrm, 1e-12), [0.0, 0.0, -1.0])
                    q[m] += dirn * need[m, None]
                    moved |= m
        return q - points, moved

    disp, moved = project(disp)
    if not moved.any():
        return disp
    for _ in range(passes):
        sm = avg @ disp
        sm[iso] = disp[iso]
        disp, _ = project(sm)
    disp, _ = project(disp, rounds=4)
    return disp


def fit_hair(hair: HairMesh, avatar: Avatar, head: HeadModel, *, placement: str = "auto",
             clearance_heads: float = CLEARANCE_HEADS) -> tuple[np.ndarray, FitReport]:
    """Place ``hair`` on the target head.

    Args:
        placement: "auto" (keep a hair taken from this very avatar, fit anything else),
            "fit" or "keep".

    Returns:
        (positions (V, 3) float64 world rest metres, :class:`FitReport`). When the report
        is not ``ok`` the positions are the best effort (or the unit-scaled input).
    """
    notes = list(hair.warnings)
    head_h = float(head.size[1])
    same_avatar = hair.frame == "avatar-rest" and hair.path == avatar.path
    keep = placement == "keep" or (placement == "auto" and same_avatar)
    problems: list[str] = []
    drop, interior = None, None
    if keep:
        method = "kept"
        p = hair.positions.astype(np.float64)
        scale = np.ones(3)
        units, guessed = "metres (kept in place on this avatar)", False
        src_head = head.size.copy()
        src_crown = head.crown.copy()
        placement_done = "kept"
    else:
        try:
            choice = detect_units(hair, head_h)
        except ValueError as exc:   # HairError is a ValueError
            return hair.positions.astype(np.float64), FitReport(ok=False, problems=(str(exc),), notes=tuple(notes))
        units, guessed = choice.reason, choice.guessed
        if guessed:
            notes.append(f"units guessed: {choice.reason}")
            log.warning("%s: %s", hair.name, choice.reason)
        p0 = hair.positions * choice.scale
        ref = None if hair.head_reference is None else hair.head_reference * (hair.unit or choice.scale)
        placed = place(p0, hair.triangles, head, ref, clearance_heads * head_h)
        if placed is None:
            return p0, FitReport(ok=False, units=units, unit_guessed=guessed, notes=tuple(notes), problems=(
                f"{hair.name}: no part of the hair lies over the scalp however it is placed: is it a hair mesh "
                "(a beard or an accessory has no scalp side)? Fit it with --keep (placement 'keep') if it is "
                "already in place on this avatar",))
        method, k, src_crown, size_s, _ = placed
        if guessed:
            units, better = unit_from_head(choice, size_s, hair.name)
            if better:
                notes.append(better)
        rel = (p0 - src_crown) * k
        rel[:, 1] = -length_map((src_crown[1] - p0[:, 1]) / size_s[1], k[1] * size_s[1],
                                _length_scale(avatar, head))
        p = head.crown + rel
        scale = k * choice.scale
        src_head = size_s
        placement_done = "fitted"
        span = float(np.ptp(p, axis=0).max()) / head_h
        if span > FAR_LARGER_HEADS:
            problems.append(f"the hair is far larger than the head: it spans {span:.1f} head heights after fitting")
        drop = interior_triangles(p, hair.triangles, head)
        if drop.any():
            notes.append(f"{int(drop.sum())} triangles deep inside the head dropped (closing faces of the hair)")
            interior = float(drop.sum()) / len(drop)
    # push out of the head envelope and the body colliders
    tris = hair.triangles if drop is None or not drop.any() else hair.triangles[~drop]
    node, n, edges = welded_graph(hair, tris)
    pts = np.zeros((n, 3))
    pts[node] = p
    colliders = _body_colliders(avatar, head)
    gap = float(np.min(np.linalg.norm(pts - head.center, axis=1) - head.envelope.radius(pts - head.center)))
    if gap > NOWHERE_NEAR_HEADS * head_h:
        problems.append(f"the hair is nowhere near the head: its closest point is {gap:.3f} m outside it")
    if keep:   # an authored placement is kept as it is (the rebuild keeps the artist's rest shape)
        disp = np.zeros_like(pts)
        if hair.lift:   # but a rim cut out of the face mesh is lifted out of the skin
            disp = out_of_head_mesh(pts, head, LIFT_CLEARANCE, LIFT_DEEPEST * head_h)
    else:
        disp = push_out(pts, edges, head, colliders, clearance_heads * head_h)
    moved = np.linalg.norm(disp, axis=1)
    p = p + disp[node]
    q, area = surface_samples(p, tris, 0.01 * head_h)
    inner = inner_fit(q, area, head, interior)
    log.info("%s placed by %s: %s", hair.name, method, inner.text())
    report = FitReport(
        ok=not problems, units=units, unit_guessed=guessed, placement=placement_done, scale=np.asarray(scale, float),
        source_head=np.asarray(src_head, float), source_crown=np.asarray(src_crown, float),
        target_crown=head.crown.copy(), pushed=int((moved > 1e-9).sum()), max_push=float(moved.max(initial=0.0)),
        colliders_used=tuple(c[3] for c in colliders), problems=tuple(problems), notes=tuple(notes),
        method=method, inner=inner, dropped=drop,
    )
    return p, report
