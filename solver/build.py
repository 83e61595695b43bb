"""Building the packed chain set from avatars/ data (build time, numpy; see :mod:`solver.chains`).

:func:`pack_avatar` walks the avatar's springs once (rest pose) and packs, for all chains at
once (struct of arrays, :mod:`solver.layout`): tails x, velocities v, previous tails, rest
offsets a_i (in the joint frame and in the anchor frame, i.e. R_i^0 a_i), rest lengths,
per-joint k, c, g, hit radii, links to simulated parents, each chain's anchor (the frame its
rest arc is carried by), the colliders (plus a fitted torso capsule where the avatar leaves
the torso uncovered) and the contact allowances of links that overlap a collider in the
authored rest pose.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from avatars import Avatar, Collider

from .kernels import step as K
from . import layout as L
from .colliders import collider_world, fit_torso_capsule, point_segment_distance
from .params import DEFAULT_MAPPING, SUBSTEP_SECONDS, Overrides, VrmMapping, override_for

log = logging.getLogger(__name__)

#: Automatic reset when a chain's anchor moves farther than this in one substep (model metres:
#: 0.5 m in 1/120 s is 60 m/s, a teleport, not a head movement).
TELEPORT_DISTANCE = 0.5
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


@dataclass(frozen=True)
class BuildReport:
    """What :meth:`ChainSet.from_avatar` built and decided.

    Attributes:
        chains: chain names in processing order.
        segments: number of simulated joints.
        colliders: number of colliders (including a fitted torso capsule).
        collider_refs: number of (segment, collider) references checked each substep.
        torso: the torso-capsule decision, human readable.
        torso_chains: names of the chains that collide with the fitted torso capsule.
        rest_overlaps: (chain, joint node, collider index, depth m) links overlapping a
            collider in the authored rest pose. With ``rest_overlap="allow"`` that depth is
            allowed for the pair (the rest pose stays an equilibrium; contact still stops the
            link from going deeper); with "push" (and in "vrm" mode) the hair is pushed out.
        notes: other remarks (skipped chains, authored joints...).
    """

    chains: tuple[str, ...]
    segments: int
    colliders: int
    collider_refs: int
    torso: str
    torso_chains: tuple[str, ...] = ()
    rest_overlaps: tuple[tuple[str, int, int, float], ...] = ()
    notes: tuple[str, ...] = field(default=())


def _affine34(m: np.ndarray) -> np.ndarray:
    return np.asarray(m, np.float64)[:3, :4].reshape(12)


@dataclass(frozen=True, eq=False)
class Packed:
    """What :func:`pack_avatar` builds: the packed buffers and the per-segment/chain indexes.

    Attributes:
        F, I: the float64 / int64 buffers of :mod:`solver.layout`.
        mode: "rest-shape", "legacy" or "vrm".
        node_count: N, nodes of the skeleton.
        segment_nodes, segment_chain: (S,) joint node and chain of every segment.
        chain_names, chain_anchor: (K,) names and anchor nodes (−1: world).
        rest_lengths: (S,) rest link lengths, metres.
        report: the :class:`BuildReport`.
        rest_tails: (S, 3) rest-pose tails, metres.
        anchor_rest_inv: (K, 4, 4) inverse rest world matrix of each chain's anchor.
        fast_eligible: (S,) bool, the joint sits at its simulated parent's tail in the
            rest-shape solver, so its root is that tail whenever it is not authored.
    """

    F: np.ndarray
    I: np.ndarray  # noqa: E741
    mode: str
    node_count: int
    segment_nodes: np.ndarray
    segment_chain: np.ndarray
    chain_names: tuple[str, ...]
    chain_anchor: np.ndarray
    rest_lengths: np.ndarray
    report: BuildReport
    rest_tails: np.ndarray
    anchor_rest_inv: np.ndarray
    fast_eligible: np.ndarray


def pack_avatar(
    avatar: Avatar,
    *,
    solver: str = "rest-shape",
    torso_capsule: str = "auto",
    overrides: Overrides = None,
    mapping: VrmMapping = DEFAULT_MAPPING,
    substep: float = SUBSTEP_SECONDS,
    gravity_preload: bool = True,
    contact_passes: int = CONTACT_PASSES,
    relax_passes: int = RELAX_PASSES,
    bend_limit_deg: float = BEND_LIMIT_DEG,
    teleport_distance: float = TELEPORT_DISTANCE,
    rest_overlap: str = "allow",
    collisions: bool = True,
    authored_nodes=(),
) -> Packed:
    """Pack the avatar's springs, colliders, parameters and rest state into flat arrays.

    Args:
        avatar: a loaded avatar (faces +Z, +Y up, metres).
        solver: "rest-shape" (DESIGN §4.1, default), "legacy" (§4.2, parent-relative
            restoring direction, for comparison) or "vrm" (the three-vrm/UniVRM Verlet,
            one step per substep).
        torso_capsule: "auto" (fit one when the avatar's colliders leave the torso
            uncovered), "on" (always when it can be fitted) or "off".
        overrides: per-spring replacements of the mapped (k, c, g, hit radius), see
            :func:`solver.params.override_for`.
        mapping: VRM parameters -> (k, c, g) (DESIGN §4.3); the calibrated default.
        substep: h in seconds. The runtime keeps 1/120; other values serve the
            frame-rate-dependent VRM reference (e.g. "vrm" stepped once per 60 fps frame).
        gravity_preload: rest-shape only: balance the across-link part of gravity in the
            rest pose by a constant force carried by the anchor frame, so the authored
            rest arc is the equilibrium of a still head (gravity acts on head tilts).
        contact_passes: contact projection passes per substep.
        relax_passes: rest-shape only: relaxation passes of a chain that touched a collider
            in the substep (0: off; :func:`solver.kernels.step.step_kernel`).
        bend_limit_deg: rest-shape, relaxed chains: the largest bend of a link off its
            parent's rest continuation (degrees, 0 < limit < 180).
        teleport_distance: automatic reset when an anchor jumps farther than this
            (model metres, times the avatar scale) within one substep.
        rest_overlap: "allow" (a link overlapping a collider in the authored rest pose
            may keep that overlap, so a still head leaves the hair at rest) or "push"
            (pushed out like three-vrm does). "vrm" mode always pushes.
        collisions: False drops every collider reference (dynamics-only runs).
        authored_nodes: joint nodes driven by an animation (see :meth:`set_authored`).

    Raises:
        ValueError: unknown solver/torso option, or chains the solver cannot order.
    """
    if solver not in L.MODES:
        raise ValueError(f"unknown solver {solver!r}; expected one of {sorted(L.MODES)}")
    if not 0.0 < bend_limit_deg < 180.0:
        raise ValueError(f"bend_limit_deg must lie in (0, 180), not {bend_limit_deg!r}")
    if relax_passes < 0:
        raise ValueError(f"relax_passes must be >= 0, not {relax_passes!r}")
    if rest_overlap not in ("allow", "push"):
        raise ValueError(f"rest_overlap must be 'allow' or 'push', not {rest_overlap!r}")
    if torso_capsule not in ("auto", "on", "off"):
        raise ValueError(f"torso_capsule must be 'auto', 'on' or 'off', not {torso_capsule!r}")
    sk = avatar.skeleton
    rest = sk.rest_world
    notes: list[str] = []

    # ---- segments per spring
    sim_nodes: dict[int, str] = {}
    springs = []
    for spring in avatar.springs:
        nodes = [j.node for j in spring.joints]
        dup = [n for n in nodes if n in sim_nodes]
        if dup:
            notes.append(f"spring {spring.name!r}: node {dup[0]} already simulated by "
                         f"{sim_nodes[dup[0]]!r}; skipped")
            continue
        segs = []
        for i, joint in enumerate(spring.joints):
            if i + 1 < len(spring.joints):
                child = spring.joints[i + 1].node
                tloc = (np.linalg.inv(rest[joint.node]) @ rest[child])[:3, 3]
            elif spring.tail_offset is not None:
                tloc = np.asarray(spring.tail_offset, np.float64)
            else:
                continue
            segs.append((joint, tloc))
        if not segs:
            continue
        for joint, _ in segs:
            sim_nodes[joint.node] = spring.name
        springs.append((spring, segs))

    def depth(n: int) -> int:
        d = 0
        while sk.parents[n] >= 0:
            n = int(sk.parents[n])
            d += 1
        return d

    # chains whose first joint hangs from another chain's joint come after it
    springs.sort(key=lambda item: depth(item[1][0][0].node))

    # ---- colliders (+ torso capsule)
    colliders: list[Collider] = list(avatar.colliders)
    torso_idx = -1
    torso_text = "off"
    if torso_capsule != "off":
        fit = fit_torso_capsule(avatar)
        torso_text = fit.reason
        if fit.collider is not None and (torso_capsule == "on" or not fit.covered):
            torso_idx = len(colliders)
            colliders.append(fit.collider)
            torso_text += "; torso capsule added"
        elif fit.collider is not None:
            torso_text += "; torso capsule off"
        log.info("torso: %s", torso_text)
    col_world = [collider_world(c, rest) for c in colliders]

    # ---- per-segment data
    seg_rows, segi_rows, pose_rows, pairs = [], [], [], []
    chain_rows, chaini_rows, chain_names, chain_anchor = [], [], [], []
    seg_nodes, seg_chain, rest_lengths, seg_tail_node = [], [], [], []
    node_to_seg: dict[int, int] = {}
    fast_ok: list[bool] = []
    torso_chains, rest_overlaps = [], []
    mode = L.MODES[solver]
    authored = set(int(n) for n in authored_nodes)
    for spring, segs in springs:
        kc = len(chain_names)
        first = segs[0][0].node
        anchor = int(sk.parents[first])
        while anchor >= 0 and anchor in sim_nodes:
            anchor = int(sk.parents[anchor])
        a_world = rest[anchor] if anchor >= 0 else np.eye(4)
        a_inv3 = np.linalg.inv(a_world[:3, :3])
        ov = override_for(overrides, spring.name)
        refs = sorted({ci for g in spring.collider_groups for ci in avatar.collider_groups[g].colliders})
        if not collisions:
            refs = []
        seg0 = len(seg_rows)
        reach = 0.0
        max_hit = 0.0
        chain_links = []
        for jj, (joint, tloc) in enumerate(segs):
            n = joint.node
            tail_node = spring.joints[jj + 1].node if jj + 1 < len(spring.joints) else -1
            m = rest[n]
            head = m[:3, 3]
            tail = m[:3, :3] @ tloc + head
            link = tail - head
            length = float(np.linalg.norm(link))
            if length < 1e-9:
                raise ValueError(f"spring {spring.name!r}: joint node {n} has a zero-length link")
            d0 = link / length
            # nearest simulated ancestor
            sp_node = int(sk.parents[n])
            while sp_node >= 0 and sp_node not in node_to_seg:
                if sp_node in sim_nodes:
                    raise ValueError(f"spring {spring.name!r}: joint node {n} hangs from simulated node "
                                     f"{sp_node} that is processed later (interleaved chains)")
                sp_node = int(sk.parents[sp_node])
            sp = node_to_seg.get(sp_node, -1)
            k, c, gvec = mapping.kcg(joint, length)
            hit = joint.hit_radius * abs(np.linalg.det(m[:3, :3])) ** (1.0 / 3.0)
            if ov is not None:
                k = k if ov.k is None else float(ov.k)
                c = c if ov.c is None else float(ov.c)
                gvec = gvec if ov.g is None else np.asarray(ov.g, np.float64)
                hit = hit if ov.hit_radius is None else float(ov.hit_radius)
            row = np.zeros(L.SF)
            row[L.S_X:L.S_X + 3] = tail
            row[L.S_XP:L.S_XP + 3] = tail
            row[L.S_TLOC:L.S_TLOC + 3] = tloc
            row[L.S_B:L.S_B + 3] = a_inv3 @ link
            if mode == L.MODE_REST_SHAPE and gravity_preload:
                g_t = gvec - (gvec @ d0) * d0
                row[L.S_GPRE:L.S_GPRE + 3] = a_inv3 @ g_t
            row[L.S_G:L.S_G + 3] = gvec
            row[L.S_K] = k
            row[L.S_C] = c
            row[L.S_DAMP] = np.exp(-c * substep)
            row[L.S_HIT] = hit
            row[L.S_VST] = joint.stiffness
            row[L.S_VDRAG] = joint.drag_force
            row[L.S_VEXT:L.S_VEXT + 3] = joint.gravity_power * np.asarray(joint.gravity_dir, np.float64)
            row[L.S_W:L.S_W + 12] = _affine34(m)
            if sp >= 0:
                rel = np.linalg.inv(rest[seg_nodes[sp]]) @ m
                row[L.S_REL:L.S_REL + 12] = _affine34(rel)
            else:
                row[L.S_REL:L.S_REL + 12] = _affine34(np.eye(4))
            irow = np.zeros(L.SI, np.int64)
            irow[L.SI_NODE] = n
            irow[L.SI_SPAR] = sp
            irow[L.SI_CHAIN] = kc
            irow[L.SI_AUTH] = 1 if n in authored else 0
            # the joint sits at its simulated parent's tail (the spring's next joint)
            tail_child = sp >= 0 and seg_tail_node[sp] == n
            fast_ok.append(mode == L.MODE_REST_SHAPE and tail_child)
            row[L.S_L0] = length
            prow = np.zeros(L.PF)
            prow[L.P_RQ:L.P_RQ + 4] = sk.rest_rotation[n]
            prow[L.P_Q:L.P_Q + 4] = sk.rest_rotation[n]
            prow[L.P_W:L.P_W + 12] = _affine34(m)
            refs_here = list(refs)
            chain_links.append((head, tail, hit, len(seg_rows)))
            node_to_seg[n] = len(seg_rows)
            seg_rows.append(row)
            segi_rows.append(irow)
            pose_rows.append(prow)
            pairs.append(refs_here)
            seg_nodes.append(n)
            seg_tail_node.append(tail_node)
            seg_chain.append(kc)
            rest_lengths.append(length)
            reach += length
            max_hit = max(max_hit, hit)
        # torso capsule: chains that can reach it and do not lie in it at rest
        if torso_idx >= 0 and collisions:
            ta, tb, tr = col_world[torso_idx]
            root = chain_links[0][0]
            can_reach = point_segment_distance(root, ta, tb) <= reach + tr + max_hit
            overlaps = any(_link_overlap(h0, t0, hr, ta, tb, tr) for h0, t0, hr, _ in chain_links)
            if can_reach and not overlaps:
                torso_chains.append(spring.name)
                for *_, si in chain_links:
                    pairs[si].append(torso_idx)
            elif can_reach:
                notes.append(f"chain {spring.name!r} lies in the fitted torso capsule at rest; "
                             "torso capsule not used for it")
        crow = np.zeros(L.KF)
        crow[L.K_APREV:L.K_APREV + 3] = a_world[:3, 3]
        crow[L.K_CPREV:L.K_CPREV + 12] = _affine34(rest[spring.center] if spring.center >= 0 else np.eye(4))
        crow[L.K_DET0] = abs(np.linalg.det(a_world[:3, :3])) or 1.0
        crow[L.K_S] = 1.0
        crow[L.K_REACH] = reach + max_hit
        cirow = np.array([anchor, spring.center, seg0, len(seg_rows)], np.int64)
        chain_rows.append(crow)
        chaini_rows.append(cirow)
        chain_names.append(spring.name)
        chain_anchor.append(anchor)

    S = len(seg_rows)
    C = len(colliders)
    # CSR collider references
    p_flat: list[int] = []
    segi = np.array(segi_rows, np.int64).reshape(S, L.SI)
    path_flags(segi, np.array(fast_ok, bool), mode == L.MODE_REST_SHAPE)
    for i, refs in enumerate(pairs):
        refs.sort()
        segi[i, L.SI_P0] = len(p_flat)
        p_flat.extend(refs)
        segi[i, L.SI_P1] = len(p_flat)
        if len(colliders) <= 63 and len(set(refs)) == len(refs):
            # sorted, unique: the broad phase finds pair indices by rank in this mask
            segi[i, L.SI_REFMASK] = sum(1 << int(c) for c in refs)
    # nodes moved by the solver: simulated joints and all their descendants
    aff = []
    for n in range(sk.node_count):
        m = n
        while m >= 0 and m not in node_to_seg:
            m = int(sk.parents[m])
        if m >= 0:
            aff.append((n, node_to_seg[m]))
    # colliders
    col_rows, coli_rows = [], []
    for col in colliders:
        r = np.zeros(L.CF)
        r[L.C_OFF:L.C_OFF + 3] = col.offset
        r[L.C_TAIL:L.C_TAIL + 3] = col.offset if col.tail is None else col.tail
        r[L.C_RAD] = col.radius
        if col.normal is not None:
            r[L.C_NRM:L.C_NRM + 3] = col.normal
        col_rows.append(r)
        coli_rows.append((col.node, L.SHAPES[col.shape]))
    g = np.zeros(L.GF)
    g[L.G_H] = substep
    g[L.G_TELEPORT] = teleport_distance
    g[L.G_CONTACT_TOL] = CONTACT_TOLERANCE
    g[L.G_U_MIN] = CONTACT_U_MIN
    g[L.G_BEND_MAX] = np.radians(bend_limit_deg)
    g[L.G_BEND_COS] = np.cos(np.radians(bend_limit_deg))
    g[L.G_BEND_WP] = BEND_PARENT_SHARE

    F, I = _pack(
        mode=mode, maxit=contact_passes, relax=relax_passes if mode == L.MODE_REST_SHAPE else 0,
        seg=np.array(seg_rows).reshape(S, L.SF), col=np.array(col_rows).reshape(C, L.CF),
        ch=np.array(chain_rows).reshape(len(chain_rows), L.KF), g=g,
        pose=np.array(pose_rows).reshape(S, L.PF), segi=segi,
        coli=np.array(coli_rows, np.int64).reshape(C, L.CI),
        chi=np.array(chaini_rows, np.int64).reshape(len(chaini_rows), L.KI),
        pairs=np.array(p_flat, np.int64), aff=np.array(aff, np.int64).reshape(len(aff), L.AI),
    )
    if authored:
        notes.append(f"authored joints (left to the animation): {sorted(authored & set(seg_nodes))}")
    cs_tmp_rest = _writable(rest)
    K.reset_kernel(cs_tmp_rest, F, I)
    depths = np.zeros(len(p_flat))
    K.overlap_kernel(cs_tmp_rest, F, I, depths)
    for i, refs in enumerate(pairs):
        p0 = int(segi[i, L.SI_P0])
        for j, ci in enumerate(refs):
            if depths[p0 + j] > 0.0:
                rest_overlaps.append((chain_names[seg_chain[i]], seg_nodes[i], ci, float(depths[p0 + j])))
                log.info("rest overlap: chain %r joint %d collider %d depth %.4f m", *rest_overlaps[-1])
    if rest_overlap == "allow" and mode != L.MODE_VRM:
        ofa = int(I[L.H_OF_PAIRF])
        F[ofa:ofa + len(p_flat)] = np.where(depths > 0.0, depths + REST_OVERLAP_MARGIN, 0.0)
    report = BuildReport(
        chains=tuple(chain_names), segments=S, colliders=C, collider_refs=len(p_flat), torso=torso_text,
        torso_chains=tuple(torso_chains), rest_overlaps=tuple(rest_overlaps), notes=tuple(notes),
    )
    return Packed(
        F=F, I=I, mode=solver, node_count=sk.node_count, segment_nodes=np.array(seg_nodes, np.int64),
        segment_chain=np.array(seg_chain, np.int64), chain_names=tuple(chain_names),
        chain_anchor=np.array(chain_anchor, np.int64), rest_lengths=np.array(rest_lengths), report=report,
        rest_tails=np.array([row[L.S_X:L.S_X + 3] for row in seg_rows]).reshape(S, 3),
        anchor_rest_inv=np.array([np.linalg.inv(rest[a]) if a >= 0 else np.eye(4) for a in chain_anchor]),
        fast_eligible=np.array(fast_ok, bool),
    )


def path_flags(segi: np.ndarray, fast_eligible: np.ndarray, rest_shape: bool) -> None:
    """Set ``SI_FAST`` and ``SI_NEEDW`` of the segment rows ``segi`` (S, SI) from their
    ``SI_AUTH`` flags, in place.

    A joint takes the fast path (its root is its simulated parent's tail) when it is
    eligible (``fast_eligible`` (S,) bool: it sits at that tail, rest-shape solver) and not
    authored; a joint's solved frame is kept (``SI_NEEDW``) when a child off the fast path
    reads it, and always outside the rest-shape solver. Used at build and by
    :meth:`ChainSet.set_authored`."""
    fast = fast_eligible & (segi[:, L.SI_AUTH] == 0)
    segi[:, L.SI_FAST] = fast
    needw = np.full(len(fast), not rest_shape)
    sp = segi[:, L.SI_SPAR]
    needw[sp[(sp >= 0) & ~fast]] = True
    segi[:, L.SI_NEEDW] = needw


def _writable(world: np.ndarray) -> np.ndarray:
    """``world`` as a writeable C-contiguous float64 array (copied only when it is not one),
    so the kernels see one array type and compile once."""
    if world.dtype == np.float64 and world.flags.c_contiguous and world.flags.writeable:
        return world
    return np.array(world, np.float64, order="C")


def _link_overlap(head, tail, hit, a, b, r) -> bool:
    """True when link head-tail (with hair radius ``hit``) overlaps capsule a-b of radius r
    by more than :data:`REST_OVERLAP_TOLERANCE` (sampled along the link)."""
    u = np.linspace(0.0, 1.0, 33)[:, None]
    pts = head + u * (tail - head)
    return bool((point_segment_distance(pts, a, b) < r + hit - REST_OVERLAP_TOLERANCE).any())


def _pack(*, mode, maxit, relax, seg, col, ch, g, pose, segi, coli, chi, pairs, aff):
    """Concatenate the sections into F (float64) and I (int64) with the header of layout.py."""
    f_parts = [seg.ravel(), col.ravel(), ch.ravel(), g.ravel(), pose.ravel(), np.zeros(pairs.size),
               np.zeros(4 * col.shape[0])]
    offs = np.cumsum([0] + [p.size for p in f_parts])
    F = np.concatenate(f_parts) if offs[-1] else np.zeros(0)
    F = np.ascontiguousarray(F, np.float64)
    i_parts = [segi.ravel(), coli.ravel(), chi.ravel(), pairs.ravel(), aff.ravel(),
               np.zeros(col.shape[0] + 1, np.int64)]
    ioffs = np.cumsum([L.HDR] + [p.size for p in i_parts])
    I = np.zeros(int(ioffs[-1]), np.int64)  # noqa: E741
    for p, o in zip(i_parts, ioffs[:-1]):
        I[int(o):int(o) + p.size] = p
    I[L.H_S] = seg.shape[0]
    I[L.H_C] = col.shape[0]
    I[L.H_K] = ch.shape[0]
    I[L.H_P] = pairs.size
    I[L.H_M] = aff.shape[0]
    I[L.H_MODE] = mode
    I[L.H_MAXIT] = maxit
    I[L.H_RELAX] = relax
    (I[L.H_OF_SEG], I[L.H_OF_COL], I[L.H_OF_CH], I[L.H_OF_G], I[L.H_OF_POSE], I[L.H_OF_PAIRF],
     I[L.H_OF_CB]) = offs[:7]
    (I[L.H_OI_SEG], I[L.H_OI_COL], I[L.H_OI_CH], I[L.H_OI_PAIR], I[L.H_OI_AFF],
     I[L.H_OI_CAND]) = ioffs[:6]
    return F, I
