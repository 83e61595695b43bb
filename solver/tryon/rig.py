"""Auto-rig: spring chains along chosen guides (DESIGN §9, seed articles).

- *Strands*: an attached guide, continued by the fragments joined to it (the longest line of
  descent).
- *Loose part*: a strand leaves the head where it last lies within the attachment band of
  the head envelope; what comes after moves. Strands whose loose part is shorter than
  ``min_loose`` get no chain (they stay on the head, like short crops in the articles).
- *Choice*: at most ``max_chains`` strands, longest loose part first, then the one that
  adds the most (loose length × distance of its tip to the tips already chosen), so the
  chains spread over the style.
- *Joints*: a root joint parented to the head at the scalp attachment of the strand's exit
  point (triangle + barycentric weights, so the chain root follows the skinned scalp
  exactly), then ``n`` − 1 joints at equal arc length along the loose part to its end;
  ``n`` = clip(round(loose length / ``joint_spacing``) + 1, ``min_joints``, ``max_joints``).
  Identity local rotations; each joint is the child of the one before.
- *Springs*: VRMC_springBone values of the repository's tuned rig (the generated default
  avatar's ponytail): stiffness 1.2 → 0.6, dragForce 0.4, gravityPower 0.1 → 0.3 along the
  chain, gravity down, hitRadius ``hit_heads`` head heights.
- *Colliders*: the avatar's colliders plus the fitted torso capsule (when the avatar's own
  colliders leave the torso uncovered), without those that contain the scalp. Which ones a
  chain checks along its segments is decided by ownership and reach, never by names: the
  colliders carried by the head subtree always; body colliders (owned by other bones) only
  when the chain can reach them (distance from its root ≤ its length + hit radius + the
  collider radius) and its tip hangs below their top. Chains with the same collider set
  share a collider group.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from avatars import Avatar, Collider, ColliderGroup, Spring, SpringJoint

from ..colliders import collider_world, fit_torso_capsule
from .assemble import NewNode
from .guides import Guide
from .head import HeadModel
from .join import JoinResult
from .scalp import Scalp, ScalpAttachment

#: VRMC_springBone values (root → tip) of the tuned rig: the generated default avatar's ponytail.
STIFFNESS = (1.2, 0.6)
DRAG = 0.4
GRAVITY = (0.1, 0.3)


@dataclass(frozen=True)
class RigOptions:
    """Auto-rig settings (lengths in head heights of the target).

    Attributes:
        max_chains: most chains (the articles' adapter: 24).
        min_joints, max_joints: joints per chain (the tip joint included).
        joint_spacing: target loose length per segment.
        min_loose: shortest loose part that gets a chain.
        band: attachment band: distance from the head envelope within which hair is rigid.
        hit_heads: hitRadius of the chain joints.
        stiffness, drag, gravity: VRM values, (root, tip) or one value.
    """

    max_chains: int = 24
    min_joints: int = 4
    max_joints: int = 8
    joint_spacing: float = 0.2
    min_loose: float = 0.3
    band: float = 0.1
    hit_heads: float = 0.05
    stiffness: tuple[float, float] = STIFFNESS
    drag: float = DRAG
    gravity: tuple[float, float] = GRAVITY


@dataclass(frozen=True, eq=False)
class Chain:
    """One rigged chain.

    Attributes:
        strand: index of its attached guide.
        attachment: the root's scalp attachment.
        joints: (n, 3) joint positions at rest, world metres (root first).
        nodes: (n,) node indices of the joints in the final skeleton.
        piece_ids: graph pieces the strand runs through.
        colliders: collider indices (final avatar) it checks.
    """

    strand: int
    attachment: ScalpAttachment
    joints: np.ndarray
    nodes: np.ndarray
    piece_ids: tuple[int, ...]
    colliders: tuple[int, ...] = ()


@dataclass(frozen=True, eq=False)
class RigResult:
    """Chains and what to add to the avatar (see :func:`solver.tryon.assemble.assemble`)."""

    chains: list[Chain]
    nodes: list[NewNode]
    springs: list[Spring]
    colliders: list[Collider]
    groups: list[ColliderGroup]
    notes: list[str] = field(default_factory=list)


def strands(guides: list[Guide], attached: np.ndarray, join: JoinResult) -> dict[int, list[int]]:
    """For every attached guide, the guide indices of its strand: itself, then the longest
    line of joined fragments below it."""
    children: dict[int, list[int]] = {}
    for i, p in enumerate(join.parent):
        if p >= 0:
            children.setdefault(int(p), []).append(i)

    def longest(i: int) -> list[int]:
        best: list[int] = []
        for c in children.get(i, []):
            line = longest(c)
            if sum(guides[k].length for k in line) > sum(guides[k].length for k in best):
                best = line
        return [i] + best

    return {int(i): longest(int(i)) for i in np.nonzero(attached)[0]}


def strand_curve(guides: list[Guide], line: list[int], join: JoinResult) -> np.ndarray:
    """(P, 3) polyline of a strand (fragments oriented to continue their parent)."""
    parts = []
    for k in line:
        p = guides[k].points
        parts.append(p[::-1] if join.flipped[k] else p)
    return np.concatenate(parts)


def _arc(p: np.ndarray) -> np.ndarray:
    return np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]


def _at(p: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    return np.stack([np.interp(t, s, p[:, k]) for k in range(3)], axis=1)


def _ramp(v, n: int) -> np.ndarray:
    if isinstance(v, (tuple, list)):
        return np.linspace(float(v[0]), float(v[1]), n)
    return np.full(n, float(v))


def usable_colliders(avatar: Avatar, head: HeadModel) -> tuple[list[int], list[Collider], str]:
    """(indices of the avatar's colliders the hair may use, colliders to add, torso note):
    sphere/capsule colliders that contain no scalp vertex, plus the fitted torso capsule
    when the avatar's colliders leave the torso uncovered."""
    rest = avatar.skeleton.rest_world
    scalp = head.vertices[np.unique(head.faces[head.scalp])] if len(head.scalp) else head.vertices
    keep = []
    for i, c in enumerate(avatar.colliders):
        if c.shape not in ("sphere", "capsule"):
            continue
        a, b, r = collider_world(c, rest)
        if not (_seg_dist(scalp, a, b) < r).any():
            keep.append(i)
    add = []
    torso = fit_torso_capsule(avatar)
    note = torso.reason
    if torso.collider is not None and not torso.covered:
        a, b, r = collider_world(torso.collider, rest)
        if not (_seg_dist(scalp, a, b) < r).any():
            add.append(torso.collider)
            note += "; added for the hair"
    return keep, add, note


def _seg_dist(p, a, b):
    e = b - a
    ee = float(e @ e)
    t = np.zeros(len(p)) if ee < 1e-30 else np.clip((p - a) @ e / ee, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[:, None] * e), axis=1)


def build_rig(avatar: Avatar, head: HeadModel, scalp: Scalp, guides: list[Guide], attachments: list,
              join: JoinResult, options: RigOptions = RigOptions(), *, name_prefix: str = "J_TryOn") -> RigResult:
    """Choose chains and build their joints, springs and colliders (module doc).

    Args:
        attachments: per guide its :class:`ScalpAttachment` or None.
    """
    o = options
    H = float(head.size[1])
    attached = np.array([a is not None for a in attachments])
    lines = strands(guides, attached, join)
    cands = []
    for i, line in lines.items():
        curve = strand_curve(guides, line, join)
        s = _arc(curve)
        depth = head.envelope.depth(curve)      # > 0 inside, −distance outside
        near = depth >= -o.band * H
        exit_i = 0
        while exit_i + 1 < len(curve) and near[exit_i + 1]:
            exit_i += 1
        loose = s[-1] - s[exit_i]
        if loose < o.min_loose * H:
            continue
        cands.append((i, line, curve, s, exit_i, loose))
    notes = []
    chosen = []
    tips = []
    while cands and len(chosen) < o.max_chains:
        if not chosen:
            k = int(np.argmax([c[5] for c in cands]))
        else:
            t = np.array(tips)
            score = [c[5] * np.min(np.linalg.norm(t - c[2][-1], axis=1)) for c in cands]
            k = int(np.argmax(score))
        chosen.append(cands.pop(k))
        tips.append(chosen[-1][2][-1])
    if cands:
        notes.append(f"{len(cands)} more strands could carry a chain (limit {o.max_chains})")
    keep, add, torso_note = usable_colliders(avatar, head)
    notes.append(f"torso: {torso_note}")
    rest = avatar.skeleton.rest_world
    n_old_col = len(avatar.colliders)
    col_all = [(i, avatar.colliders[i]) for i in keep] + [(n_old_col + j, c) for j, c in enumerate(add)]
    head_sub = set(avatar.skeleton.descendants(head.node))
    n0 = avatar.skeleton.node_count
    nodes: list[NewNode] = []
    chains: list[Chain] = []
    springs: list[Spring] = []
    group_of: dict[tuple[int, ...], int] = {}
    groups: list[ColliderGroup] = []
    head_inv = np.linalg.inv(rest[head.node])
    for ci, (i, line, curve, s, exit_i, loose) in enumerate(chosen):
        att = None
        for k in range(exit_i, -1, -1):      # the exit point, else the nearest attachable point toward the root
            att = scalp.attach(curve[k:k + 1], np.inf)[0]
            if att is not None and att.distance <= max(attachments[i].distance, o.band * H):
                break
            att = None
        if att is None:
            att, exit_i = attachments[i], 0
        n = int(np.clip(round(loose / (o.joint_spacing * H)) + 1, o.min_joints, o.max_joints))
        t = s[exit_i] + (s[-1] - s[exit_i]) * np.arange(1, n) / (n - 1)
        pts = np.concatenate([att.point[None], _at(curve, s, t)])
        base = n0 + len(nodes)
        idx = np.arange(base, base + n)
        for k in range(n):
            parent = head.node if k == 0 else int(idx[k - 1])
            # identity local rotations: every joint has the head's world rotation and scale
            if k == 0:
                local = head_inv[:3, :3] @ pts[0] + head_inv[:3, 3]
            else:
                local = head_inv[:3, :3] @ (pts[k] - pts[k - 1])
            nodes.append(NewNode(f"{name_prefix}{ci:02d}_{k}", parent, local))
        # colliders: head-owned always, body-owned when reachable and hung over
        length = float(np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1)))
        hit = o.hit_heads * H
        refs = []
        for gi, col in col_all:
            a, b, r = collider_world(col, rest)
            if col.node in head_sub:
                refs.append(gi)
                continue
            reach = _seg_dist(pts[:1], a, b)[0] <= length + hit + r
            below = pts[:, 1].min() < max(a[1], b[1]) + r
            if reach and below:
                refs.append(gi)
        key = tuple(sorted(refs))
        if key not in group_of:
            group_of[key] = len(groups)
            groups.append(ColliderGroup(name=f"tryon{len(groups)}", colliders=key))
        stiff, grav = _ramp(o.stiffness, n), _ramp(o.gravity, n)
        joints = tuple(SpringJoint(node=int(idx[k]), hit_radius=hit, stiffness=float(stiff[k]), drag_force=float(o.drag),
                                   gravity_power=float(grav[k]), gravity_dir=np.array([0.0, -1.0, 0.0]))
                       for k in range(n))
        springs.append(Spring(name=f"TryOn{ci:02d}", joints=joints,
                              collider_groups=(len(avatar.collider_groups) + group_of[key],)))
        pieces = tuple(sorted({guides[k].piece for k in line}))
        chains.append(Chain(strand=i, attachment=att, joints=pts, nodes=idx, piece_ids=pieces, colliders=key))
    return RigResult(chains=chains, nodes=nodes, springs=springs, colliders=add, groups=groups, notes=notes)
