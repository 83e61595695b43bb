"""Auto-rig: spring chains along chosen strands (docs/design.md §9, seed articles).

- *Strands and choice* (:mod:`avatars.tryon.choice`): an attached guide with the fragments
  joined to it; for a sheet the guides give several chains, its flow lines instead
  (:mod:`avatars.tryon.flow`, ``RigOptions.flow``; the choice is then made again); a strand leaves the head where it last
  lies within the attachment band of the head envelope, what comes after moves. At most
  ``max_chains`` are chosen: every loose piece first, then where they add the most, at least
  ``separation`` apart within a piece; short styles get short chains or a swaying one.
- *Joints*: a root joint parented to the head at the scalp attachment of the strand's exit
  point (triangle + barycentric weights, so the chain root follows the skinned scalp
  exactly), then ``n`` − 1 joints at equal arc length along the loose part to its end;
  ``n`` = clip(round(loose length / ``joint_spacing``) + 1, ``min_joints``, ``max_joints``).
  Identity local rotations; each joint is the child of the one before.
- *Springs*: VRMC_springBone values of the repository's tuned rig (the generated default
  avatar's ponytail) with a stiffer root (:data:`STIFFNESS`), along the chain, gravity down; hitRadius sized to the hair the chain carries once the weights are
  known (:func:`size_hit_radii`), ``hit_heads`` head heights until then.
- *Colliders*: the avatar's colliders plus the fitted torso capsule (when the avatar's own
  colliders leave the torso uncovered), without those that hold more than 5 % of the
  scalp (:data:`SCALP_INSIDE_SHARE`). Which ones a
  chain checks along its segments is decided by ownership and reach, never by names: the
  colliders carried by the head subtree always; body colliders (owned by other bones) only
  when the chain can reach them (distance from its root ≤ its length + hit radius + the
  collider radius) and its tip hangs below their top; chains sharing a piece of the mesh
  then share the union of their sets (hair blended between them must not pass through what
  only one checks). Chains with the same collider set share a collider group.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from avatars import Avatar, Collider, ColliderGroup, Spring, SpringJoint

from ..colliders import collider_world, fit_torso_capsule
from .assemble import NewNode
from .choice import Strand, arc, at, choose, short_chains, strand_curve, strands
from .guides import Guide
from .head import HeadModel
from .join import JoinResult
from .scalp import Scalp, ScalpAttachment

#: A piece that the guides give at least this many chains is a sheet whose chains follow its
#: flow lines (``RigOptions.flow``).
FLOW_SHEET_CHAINS = 3
#: Points kept on a chain's strand curve (weights project hair onto it).
MAX_CURVE_POINTS = 32
#: VRMC_springBone values (root → tip). dragForce, gravityPower and the tip stiffness are the
#: repository's tuned rig (the generated default avatar's ponytail: stiffness 1.2 → 0.6, drag
#: 0.4, gravity 0.1 → 0.3); the root is stiffer (3.0) because a fitted style's chains start
#: where the hair leaves the scalp and carry wide pieces whose vertices blend between chains:
#: while tuning (with an earlier weighting) root stiffness 1.2 / 2.0 / 3.0 / 4.0 gave bob01
#: p99 edge stretch 25 / 16 / 10 / 6.7 % on the standard head turn for tip swings of
#: 37 / 25 / 17 / 11 mm; 3.0 keeps visible motion (docs/history/tryon-notes.md).
STIFFNESS = (3.0, 0.6)
DRAG = 0.4
GRAVITY = (0.1, 0.3)


@dataclass(frozen=True)
class RigOptions:
    """Auto-rig settings (lengths in head heights of the target).

    Attributes:
        max_chains: most chains (the articles' adapter: 24).
        min_joints, max_joints: joints per chain (the tip joint included).
        joint_spacing: target loose length per segment.
        min_loose: shortest loose part that gets a chain in the main choice.
        short_loose: shortest loose part that gets a chain in a piece left without one
            (short hair: bangs, buns, a crop's fringe).
        flow: chains of a piece that leaves the head as one piece follow its flow lines
            (:mod:`avatars.tryon.flow`) instead of its guides.
        attach: farthest root of a flow strand from the scalp.
        separation: smallest distance between the loose parts of two chains (closer
            strands follow the chain already chosen through their weights: chains moving
            differently inside one bundle would tear it).
        band: attachment band: distance from the head envelope within which hair is rigid.
        hit_heads: hitRadius of the chain joints.
        stiffness, drag, gravity: VRM values, (root, tip) or one value.
    """

    max_chains: int = 24
    min_joints: int = 4
    max_joints: int = 8
    joint_spacing: float = 0.2
    min_loose: float = 0.3
    short_loose: float = 0.08
    separation: float = 0.15
    flow: bool = False
    attach: float = 0.2
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
        path: graph nodes of the strand's surface path (root first).
        curve: (P, 3) the strand's smooth curve from the root joint on (rest, metres).
        curve_u: (P,) joint parameter along ``curve`` (0 at the root joint, i + f on
            segment i, n − 1 at the tip).
        short: a chain of the short-hair choice (loose part shorter than ``min_loose``): a
            detached piece it carries alone moves as a rigid body (:mod:`avatars.tryon.weights`).
    """

    strand: int
    attachment: ScalpAttachment
    joints: np.ndarray
    nodes: np.ndarray
    piece_ids: tuple[int, ...]
    colliders: tuple[int, ...] = ()
    path: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    curve: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    curve_u: np.ndarray = field(default_factory=lambda: np.zeros(0))
    short: bool = False


@dataclass(frozen=True, eq=False)
class RigResult:
    """Chains and what to add to the avatar (see :func:`avatars.tryon.assemble.assemble`)."""

    chains: list[Chain]
    nodes: list[NewNode]
    springs: list[Spring]
    colliders: list[Collider]
    groups: list[ColliderGroup]
    notes: list[str] = field(default_factory=list)


def size_hit_radii(rig: RigResult, graph, weights_nodes: np.ndarray, skin_nodes: list[int], head_height: float,
                   lo: float = 0.03, hi: float = 0.1) -> RigResult:
    """Set each chain's hitRadius to the hair it carries: the 90th percentile distance, from
    the chain's strand curve, of the graph nodes whose weight is mostly on that chain
    (clamped to [``lo``, ``hi``] head heights). A link kept that far from a collider keeps
    the vertices skinned around it outside too (a ponytail is a thick bundle, a bang thin).

    Args:
        weights_nodes: (N, J) dense weights per graph node over ``skin_nodes``.
    """
    col = {n: j for j, n in enumerate(skin_nodes)}
    springs = []
    for c, spring in zip(rig.chains, rig.springs):
        share = weights_nodes[:, [col[int(n)] for n in c.nodes]].sum(axis=1)
        own = np.nonzero(share >= 0.5)[0]
        r = lo * head_height
        if own.size:
            from .weights import closest_on_polyline

            d, _ = closest_on_polyline(graph.points[own], c.curve)
            r = float(np.clip(np.percentile(d, 90), lo * head_height, hi * head_height))
        springs.append(Spring(name=spring.name, joints=tuple(SpringJoint(
            node=j.node, hit_radius=r, stiffness=j.stiffness, drag_force=j.drag_force, gravity_power=j.gravity_power,
            gravity_dir=j.gravity_dir) for j in spring.joints), collider_groups=spring.collider_groups))
    return RigResult(chains=rig.chains, nodes=rig.nodes, springs=springs, colliders=rig.colliders, groups=rig.groups,
                     notes=rig.notes)


def _ramp(v, n: int) -> np.ndarray:
    if isinstance(v, (tuple, list)):
        return np.linspace(float(v[0]), float(v[1]), n)
    return np.full(n, float(v))


def _share_colliders(chains: list[Chain]) -> list[Chain]:
    """Give every chain the union of the collider sets of the chains it shares a mesh piece
    with (transitively)."""
    from dataclasses import replace as _replace

    group = list(range(len(chains)))

    def find(i):
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i in range(len(chains)):
        for j in range(i):
            if set(chains[i].piece_ids) & set(chains[j].piece_ids):
                group[find(i)] = find(j)
    union: dict[int, set] = {}
    for i, c in enumerate(chains):
        union.setdefault(find(i), set()).update(c.colliders)
    return [_replace(c, colliders=tuple(sorted(union[find(i)]))) for i, c in enumerate(chains)]


#: A collider that holds more than this share of the scalp's vertices is not used by the hair
#: (a root there could never be clear of it, e.g. Godette's 1 m sphere above the head).
SCALP_INSIDE_SHARE = 0.05


def usable_colliders(avatar: Avatar, head: HeadModel) -> tuple[list[int], list[Collider], str]:
    """(indices of the avatar's colliders the hair may use, colliders to add, torso note):
    sphere/capsule colliders holding at most :data:`SCALP_INSIDE_SHARE` of the scalp's
    vertices, plus the fitted torso capsule when the avatar's colliders leave the torso
    uncovered."""
    rest = avatar.skeleton.rest_world
    scalp = head.vertices[np.unique(head.faces[head.scalp])] if len(head.scalp) else head.vertices
    keep = []
    for i, c in enumerate(avatar.colliders):
        if c.shape not in ("sphere", "capsule"):
            continue
        a, b, r = collider_world(c, rest)
        if (_seg_dist(scalp, a, b) < r).mean() <= SCALP_INSIDE_SHARE:
            keep.append(i)
    add = []
    torso = fit_torso_capsule(avatar)
    note = torso.reason
    if torso.collider is not None and not torso.covered:
        a, b, r = collider_world(torso.collider, rest)
        if (_seg_dist(scalp, a, b) < r).mean() <= SCALP_INSIDE_SHARE:
            add.append(torso.collider)
            note += "; added for the hair"
    return keep, add, note


def _seg_dist(p, a, b):
    e = b - a
    ee = float(e @ e)
    t = np.zeros(len(p)) if ee < 1e-30 else np.clip((p - a) @ e / ee, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[:, None] * e), axis=1)


def guide_strands(guides: list[Guide], attached: np.ndarray, join: JoinResult, head: HeadModel,
                  band: float) -> list[Strand]:
    """The :class:`Strand` of every attached guide (with the fragments joined to it): it
    leaves the head where it last lies within ``band`` metres of the head envelope."""
    out = []
    for i, line in strands(guides, attached, join).items():
        curve = strand_curve(guides, line, join)
        s = arc(curve)
        near = head.envelope.depth(curve) >= -band      # depth > 0 inside, −distance outside
        exit_i = 0
        while exit_i + 1 < len(curve) and near[exit_i + 1]:
            exit_i += 1
        path = np.concatenate([guides[k].path[::-1] if join.flipped[k] else guides[k].path for k in line])
        out.append(Strand(guide=int(i), line=tuple(line), curve=curve, s=s, exit_i=exit_i,
                          loose=float(s[-1] - s[exit_i]), path=path, pieces=frozenset(guides[k].piece for k in line)))
    return out


def with_flow_strands(strands_: list[Strand], graph, flow, scalp: Scalp, attachments: list, o: "RigOptions",
                      H: float, spacing: float, smoothing: tuple[float, int, int], pieces: set[int]) -> list[Strand]:
    """``strands_`` with those of the ``pieces`` (sheets that leave the head as one piece, no
    joined fragments) replaced by the pieces' flow strands (:mod:`avatars.tryon.flow`): from
    each far tip back along the flow to the band, rooted on the scalp within ``o.attach``
    head heights of where it leaves the band. ``smoothing``: (resampling step, most points,
    passes)."""
    from .flow import flow_curve, flow_tips

    single: dict[int, Strand] = {}
    for c in strands_:
        if len(c.line) == 1 and next(iter(c.pieces)) in pieces:
            q = next(iter(c.pieces))
            if q not in single or attachments[c.guide].distance < attachments[single[q].guide].distance:
                single[q] = c
    out = [c for c in strands_ if len(c.line) > 1 or next(iter(c.pieces)) not in single]
    for q, base in single.items():
        made = []
        for tip in flow_tips(graph, flow, q, spacing, o.short_loose * H):
            line = flow.line(tip)
            if len(line) < 2:
                continue
            curve, length = flow_curve(graph, line, *smoothing)
            att = scalp.attach(curve[:1], o.attach * H)[0]
            if att is None:
                continue
            made.append(Strand(guide=base.guide, line=(base.guide,), curve=curve, s=arc(curve), exit_i=0,
                               loose=float(length), path=line, pieces=frozenset({q}), flow=True))
        out += made if made else [base]
    return out


def build_rig(avatar: Avatar, head: HeadModel, scalp: Scalp, guides: list[Guide], attachments: list,
              join: JoinResult, options: RigOptions = RigOptions(), *, name_prefix: str = "J_TryOn",
              graph=None, flow=None, spacing: float = 0.03, smoothing: tuple[float, int, int] = (0.005, 96, 8),
              ) -> RigResult:
    """Choose chains and build their joints, springs and colliders (module doc).

    Args:
        attachments: per guide its :class:`ScalpAttachment` or None.
        graph, flow: the welded hair graph and its :class:`avatars.tryon.flow.Flow`; with them
            (and ``options.flow``) a sheet's chains follow its flow lines.
        spacing, smoothing: the guides' endpoint spacing and (step, most points, smoothing
            passes), metres, for the flow strands.
    """
    o = options
    H = float(head.size[1])
    if not o.flow:
        flow = None
    attached = np.array([a is not None for a in attachments])
    strands_ = guide_strands(guides, attached, join, head, o.band * H)
    cands = [c for c in strands_ if c.loose >= o.min_loose * H]
    notes = []
    chosen = choose(cands, o.max_chains, o.separation * H, [] if flow is not None and graph is not None else notes)
    if flow is not None and graph is not None:
        # a sheet carried by several chains: its chains follow its flow lines instead
        count: dict[int, int] = {}
        for c in chosen:
            if len(c.line) == 1:
                q = next(iter(c.pieces))
                count[q] = count.get(q, 0) + 1
        sheets = {q for q, n in count.items() if n >= FLOW_SHEET_CHAINS}
        if sheets:
            strands_ = with_flow_strands(strands_, graph, flow, scalp, attachments, o, H, spacing, smoothing, sheets)
        cands = [c for c in strands_ if c.loose >= o.min_loose * H]
        chosen = choose(cands, o.max_chains, o.separation * H, notes)
    short = [c for c in strands_ if c.loose < o.min_loose * H]
    piece_size = {int(q): int(n) for q, n in zip(*np.unique(np.concatenate(
        [np.full(len(g.path), g.piece) for g in guides]) if guides else np.zeros(0, int), return_counts=True))}
    n_main = len(chosen)
    chosen += short_chains(short, chosen, o, H, notes, piece_size)
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
    for ci, st in enumerate(chosen):
        i, curve, s, exit_i, loose = st.guide, st.curve, st.s, st.exit_i, st.loose
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
        pts = np.concatenate([att.point[None], at(curve, s, t)])
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
        pieces = tuple(sorted(st.pieces))
        path = st.path
        sub = np.concatenate([att.point[None], curve[exit_i:]])
        root_gap = float(np.linalg.norm(curve[exit_i] - att.point))
        if len(sub) > MAX_CURVE_POINTS:     # enough to follow the strand; cheaper to project on
            keep = np.unique(np.round(np.linspace(0, len(sub) - 1, MAX_CURVE_POINTS)).astype(int))
            sub = sub[keep]
        sub_s = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(sub, axis=0), axis=1))]
        joint_s = np.r_[0.0, t - s[exit_i] + root_gap]
        curve_u = np.interp(sub_s, joint_s, np.arange(n, dtype=float))
        chains.append(Chain(strand=i, attachment=att, joints=pts, nodes=idx, piece_ids=pieces, colliders=key,
                            short=ci >= n_main and loose < o.min_loose * H,
                            path=path, curve=sub, curve_u=curve_u))
    # chains sharing a piece of the mesh share their colliders: hair blended between two
    # chains must not pass through what only one of them checks
    chains = _share_colliders(chains)
    for ci, c in enumerate(chains):
        key = c.colliders
        if key not in group_of:
            group_of[key] = len(groups)
            groups.append(ColliderGroup(name=f"tryon{len(groups)}", colliders=key))
        n = len(c.nodes)
        stiff, grav = _ramp(o.stiffness, n), _ramp(o.gravity, n)
        joints = tuple(SpringJoint(node=int(c.nodes[k]), hit_radius=o.hit_heads * H, stiffness=float(stiff[k]),
                                   drag_force=float(o.drag), gravity_power=float(grav[k]),
                                   gravity_dir=np.array([0.0, -1.0, 0.0])) for k in range(n))
        springs.append(Spring(name=f"TryOn{ci:02d}", joints=joints,
                              collider_groups=(len(avatar.collider_groups) + group_of[key],)))
    return RigResult(chains=chains, nodes=nodes, springs=springs, colliders=add, groups=groups, notes=notes)
