"""Building the packed chain set from avatars/ data (build time, numpy; see :mod:`solver.chains`).

:func:`pack_avatar` walks the avatar's springs once (rest pose) and packs, for all chains at
once (struct of arrays, :mod:`solver.layout`): tails x, velocities v, previous tails, rest
offsets a_i (in the joint frame and in the anchor frame, i.e. R_i^0 a_i), rest lengths,
per-joint k, c, g, hit radii, links to simulated parents, each chain's anchor (the frame its
rest arc is carried by), the colliders (plus a fitted torso capsule where the avatar leaves
the torso uncovered) and the contact allowances of links that overlap a collider in the
authored rest pose. The buffers come from :func:`solver.layout.pack` and are filled through
the sections' named views. What derives from a parameter is one function each
(:func:`damping_factor`, :func:`preload_of`, :func:`rest_overlap_depths`,
:func:`allowances_of`), shared with :meth:`ChainSet.set_params`, and :class:`Tuning` keeps
what a later retune needs (the mapped values, rest directions, anchor frames, options).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from avatars import Avatar, Collider

from .kernels import step as K
from . import layout as L
from avatars.colliders import collider_world, fit_torso_capsule, point_segment_distance
from .params import DEFAULT_MAPPING, check_stable, SUBSTEP_SECONDS, Overrides, VrmMapping, override_for

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


def damping_factor(c: float, h: float) -> float:
    """exp(−c h): the per-substep velocity factor of damping rate ``c`` (1/s) over ``h`` seconds
    (the build and :meth:`ChainSet.set_params` use this one expression, so both give the same bits)."""
    return np.exp(-c * h)


def preload_of(g: np.ndarray, rest_dir: np.ndarray, anchor_rest_inv3: np.ndarray) -> np.ndarray:
    """Rest-shape gravity preload (3,), anchor's rest frame: the part of gravity ``g`` (3,)
    across the link's rest direction ``rest_dir`` (3,) unit, avatar frame, carried into the
    anchor's rest frame by ``anchor_rest_inv3`` (3, 3), the inverse of the anchor's rest
    world 3x3 (solver/NOTES.md, *Gravity preload*)."""
    g_t = g - (g @ rest_dir) * rest_dir
    return anchor_rest_inv3 @ g_t


def rest_overlap_depths(F: np.ndarray, I: np.ndarray, rest_world: np.ndarray) -> np.ndarray:  # noqa: E741
    """(P,) overlap depth (metres, > 0 overlapping) of every (segment, collider) reference in
    the rest pose ``rest_world`` (N, 4, 4), as the contact test measures it (no allowance),
    with the hit radii in ``F``. Resets the state of the buffers it is given to that pose:
    pass copies to keep a running chain set's state (:meth:`ChainSet.set_params` does)."""
    world = _writable(rest_world)
    K.reset_kernel(world, F, I)
    depths = np.zeros(int(I[L.H_P]))
    K.overlap_kernel(world, F, I, depths)
    return depths


def allowances_of(depths: np.ndarray) -> np.ndarray:
    """Contact allowances (P,) metres from rest overlap depths (P,): the depth plus
    :data:`REST_OVERLAP_MARGIN` where a pair overlaps, else 0."""
    return np.where(depths > 0.0, depths + REST_OVERLAP_MARGIN, 0.0)


def rest_overlap_list(depths, I, chain_names, segment_chain, segment_nodes) -> tuple:  # noqa: E741
    """(chain, joint node, collider index, depth m) for every reference with ``depths`` > 0
    (the :attr:`BuildReport.rest_overlaps` entries), in segment and reference order."""
    segi = L.views(L.SEG_INT, np.zeros(0), I)
    pairs = L.views(L.PAIRS, np.zeros(0), I).collider
    out = []
    for i in range(len(segment_nodes)):
        for p in range(int(segi.pair_begin[i]), int(segi.pair_end[i])):
            if depths[p] > 0.0:
                out.append((chain_names[segment_chain[i]], int(segment_nodes[i]), int(pairs[p]), float(depths[p])))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Tuning:
    """What a parameter change needs besides the packed buffers, kept from the build so that
    :meth:`ChainSet.set_params` derives exactly what :func:`pack_avatar` derives.

    Attributes:
        mapped_k, mapped_c: (S,) k 1/s² and c 1/s mapped from the VRM file (before overrides).
        mapped_gravity: (S, 3) g m/s², avatar frame, mapped from the file.
        mapped_hit: (S,) hit radius, model metres, from the file (times the joint's rest scale).
        rest_dirs: (S, 3) unit rest direction of every link, avatar frame.
        anchor_rest_inv3: (K, 3, 3) inverse rest world 3x3 of every chain's anchor.
        gravity_preload: the rest-shape gravity preload is on.
        allow_rest_overlap: rest-pose overlaps become contact allowances.
        rest_world: (N, 4, 4) the skeleton's rest world matrices.
        torso_chains: the chains given the fitted torso capsule at build (kept when hit
            radii change later).
    """

    mapped_k: np.ndarray
    mapped_c: np.ndarray
    mapped_gravity: np.ndarray
    mapped_hit: np.ndarray
    rest_dirs: np.ndarray
    anchor_rest_inv3: np.ndarray
    gravity_preload: bool
    allow_rest_overlap: bool
    rest_world: np.ndarray
    torso_chains: tuple[str, ...]


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
        tuning: what :meth:`ChainSet.set_params` needs to rederive parameters.
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
    tuning: Tuning


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

    # ---- per-segment data, one list per field (written into the packed sections at the end)
    seg_tails, seg_tloc, seg_b, seg_gpre, seg_g, seg_k, seg_c, seg_damp, seg_hit = [], [], [], [], [], [], [], [], []
    seg_vst, seg_vdrag, seg_vext, seg_frame, seg_rel, seg_rest_q, seg_dirs = [], [], [], [], [], [], []
    base_k, base_c, base_g, base_hit = [], [], [], []
    segi_rows, pairs = [], []
    chaini_rows, chain_names, chain_anchor, chain_inv3 = [], [], [], []
    chain_apos, chain_cprev, chain_det0, chain_reach = [], [], [], []
    seg_nodes, seg_chain, rest_lengths, seg_tail_node = [], [], [], []
    node_to_seg: dict[int, int] = {}
    fast_ok: list[bool] = []
    torso_chains: list[str] = []
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
        seg0 = len(seg_nodes)
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
            base_k.append(k)
            base_c.append(c)
            base_g.append(np.asarray(gvec, np.float64))
            base_hit.append(hit)
            if ov is not None:
                k = k if ov.k is None else float(ov.k)
                c = c if ov.c is None else float(ov.c)
                if (ov.k is not None or ov.c is not None) and mode != L.MODE_VRM:
                    check_stable(f"spring {spring.name!r} joint node {n}", k, c, substep)
                gvec = gvec if ov.g is None else np.asarray(ov.g, np.float64)
                hit = hit if ov.hit_radius is None else float(ov.hit_radius)
            seg_tails.append(tail)
            seg_tloc.append(tloc)
            seg_b.append(a_inv3 @ link)
            seg_dirs.append(d0)
            seg_gpre.append(preload_of(gvec, d0, a_inv3) if mode == L.MODE_REST_SHAPE and gravity_preload
                            else np.zeros(3))
            seg_g.append(gvec)
            seg_k.append(k)
            seg_c.append(c)
            seg_damp.append(damping_factor(c, substep))
            seg_hit.append(hit)
            seg_vst.append(joint.stiffness)
            seg_vdrag.append(joint.drag_force)
            seg_vext.append(joint.gravity_power * np.asarray(joint.gravity_dir, np.float64))
            seg_frame.append(_affine34(m))
            if sp >= 0:
                rel = np.linalg.inv(rest[seg_nodes[sp]]) @ m
                seg_rel.append(_affine34(rel))
            else:
                seg_rel.append(_affine34(np.eye(4)))
            irow = np.zeros(L.SI, np.int64)
            irow[L.SI_NODE] = n
            irow[L.SI_SPAR] = sp
            irow[L.SI_CHAIN] = kc
            irow[L.SI_AUTH] = 1 if n in authored else 0
            # the joint sits at its simulated parent's tail (the spring's next joint)
            tail_child = sp >= 0 and seg_tail_node[sp] == n
            fast_ok.append(mode == L.MODE_REST_SHAPE and tail_child)
            seg_rest_q.append(sk.rest_rotation[n])
            refs_here = list(refs)
            chain_links.append((head, tail, hit, len(seg_nodes)))
            node_to_seg[n] = len(seg_nodes)
            segi_rows.append(irow)
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
        chain_apos.append(a_world[:3, 3])
        chain_cprev.append(_affine34(rest[spring.center] if spring.center >= 0 else np.eye(4)))
        chain_det0.append(abs(np.linalg.det(a_world[:3, :3])) or 1.0)
        chain_reach.append(reach + max_hit)
        chain_inv3.append(a_inv3)
        cirow = np.zeros(L.KI, np.int64)
        cirow[L.KI_ANCHOR] = anchor
        cirow[L.KI_CENTER] = spring.center
        cirow[L.KI_SEG0] = seg0
        cirow[L.KI_SEG1] = len(seg_nodes)
        chaini_rows.append(cirow)
        chain_names.append(spring.name)
        chain_anchor.append(anchor)

    S = len(seg_nodes)
    C = len(colliders)
    Kc = len(chain_names)
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
    # ---- the packed buffers (solver.layout), filled through their named views
    coli = np.zeros((C, L.CI), np.int64)
    coli[:, L.CI_NODE] = [col.node for col in colliders]
    coli[:, L.CI_SHAPE] = [L.SHAPES[col.shape] for col in colliders]
    affi = np.zeros((len(aff), L.AI), np.int64)
    affi[:, L.A_NODE] = [a[0] for a in aff]
    affi[:, L.A_SEG] = [a[1] for a in aff]
    F, I = L.pack(  # noqa: E741
        {"S": S, "C": C, "K": Kc, "P": len(p_flat), "M": len(aff)},
        {"segment_ints": segi, "collider_ints": coli, "chain_ints": np.array(chaini_rows, np.int64).reshape(Kc, L.KI),
         "pairs": np.array(p_flat, np.int64), "affected": affi},
        {"H_MODE": mode, "H_MAXIT": contact_passes, "H_RELAX": relax_passes if mode == L.MODE_REST_SHAPE else 0},
    )
    v = L.all_views(F, I)
    st, par, rst, scr, pose = v["state"], v["params"], v["rest"], v["scratch"], v["pose"]
    if S:
        st.tails[:] = seg_tails
        st.prev_tails[:] = seg_tails
        par.k[:] = seg_k
        par.damp[:] = seg_damp
        par.gravity[:] = seg_g
        par.gravity_preload[:] = seg_gpre
        par.hit_radius[:] = seg_hit
        par.c[:] = seg_c
        par.vrm_stiffness[:] = seg_vst
        par.vrm_drag[:] = seg_vdrag
        par.vrm_gravity[:] = seg_vext
        rst.rest_offset[:] = seg_b
        rst.length[:] = rest_lengths
        rst.tail_local[:] = seg_tloc
        rst.rel_frame[:] = np.reshape(seg_rel, (S, 3, 4))
        scr.frame[:] = np.reshape(seg_frame, (S, 3, 4))
        pose.rest_rotations[:] = seg_rest_q
        pose.local_rotations[:] = seg_rest_q
        pose.frames[:] = np.reshape(seg_frame, (S, 3, 4))
    cv = v["colliders"]
    for c, col in enumerate(colliders):
        cv.offset[c] = col.offset
        cv.tail[c] = col.offset if col.tail is None else col.tail
        cv.radius[c] = col.radius
        if col.normal is not None:
            cv.normal[c] = col.normal
    kv = v["chains"]
    if Kc:
        kv.anchor_prev[:] = chain_apos
        kv.centre_prev[:] = np.reshape(chain_cprev, (Kc, 3, 4))
        kv.anchor_det0[:] = chain_det0
        kv.scale[:] = 1.0
        kv.reach[:] = chain_reach
    g = v["globals"]
    g.h[()] = substep
    g.teleport[()] = teleport_distance
    g.contact_tolerance[()] = CONTACT_TOLERANCE
    g.u_min[()] = CONTACT_U_MIN
    g.bend_max[()] = np.radians(bend_limit_deg)
    g.bend_cos[()] = np.cos(np.radians(bend_limit_deg))
    g.bend_parent_share[()] = BEND_PARENT_SHARE
    if authored:
        notes.append(f"authored joints (left to the animation): {sorted(authored & set(seg_nodes))}")
    depths = rest_overlap_depths(F, I, rest)
    rest_overlaps = rest_overlap_list(depths, I, chain_names, seg_chain, seg_nodes)
    for item in rest_overlaps:
        log.info("rest overlap: chain %r joint %d collider %d depth %.4f m", *item)
    if rest_overlap == "allow" and mode != L.MODE_VRM:
        v["allowances"].allowance[:] = allowances_of(depths)
    report = BuildReport(
        chains=tuple(chain_names), segments=S, colliders=C, collider_refs=len(p_flat), torso=torso_text,
        torso_chains=tuple(torso_chains), rest_overlaps=tuple(rest_overlaps), notes=tuple(notes),
    )
    return Packed(
        F=F, I=I, mode=solver, node_count=sk.node_count, segment_nodes=np.array(seg_nodes, np.int64),
        segment_chain=np.array(seg_chain, np.int64), chain_names=tuple(chain_names),
        chain_anchor=np.array(chain_anchor, np.int64), rest_lengths=np.array(rest_lengths), report=report,
        rest_tails=np.array(seg_tails).reshape(S, 3),
        anchor_rest_inv=np.array([np.linalg.inv(rest[a]) if a >= 0 else np.eye(4) for a in chain_anchor]),
        fast_eligible=np.array(fast_ok, bool),
        tuning=Tuning(
            mapped_k=np.array(base_k, np.float64), mapped_c=np.array(base_c, np.float64),
            mapped_gravity=np.array(base_g, np.float64).reshape(S, 3), mapped_hit=np.array(base_hit, np.float64),
            rest_dirs=np.array(seg_dirs, np.float64).reshape(S, 3),
            anchor_rest_inv3=np.array(chain_inv3, np.float64).reshape(Kc, 3, 3),
            gravity_preload=bool(mode == L.MODE_REST_SHAPE and gravity_preload),
            allow_rest_overlap=bool(rest_overlap == "allow" and mode != L.MODE_VRM),
            rest_world=np.array(rest, np.float64), torso_chains=tuple(torso_chains),
        ),
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
