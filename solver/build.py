"""Building the packed chain set from avatars/ data (build time, numpy; see :mod:`solver.chains`).

:func:`pack_avatar` takes the avatar's chains in processing order (:mod:`solver.topology`)
and the build options (:class:`solver.build_options.BuildOptions`) and packs, for all chains
at once (struct of arrays, :mod:`solver.layout`): tails x, velocities v, previous tails, rest
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
from .build_options import (
    BEND_PARENT_SHARE, CONTACT_TOLERANCE, CONTACT_U_MIN, REST_OVERLAP_MARGIN, REST_OVERLAP_TOLERANCE, BuildOptions,
)
from avatars.colliders import collider_world, fit_torso_capsule, point_segment_distance
from .drawn import chain_cover, cover_allowances, covered, drawn_radii
from .errors import SolverError
from .limits import pack_external
from .params import check_stable, override_for
from .sheets import NO_LINKS, SheetLinks, build_links
from .topology import Chain, chain_topology

log = logging.getLogger(__name__)


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
        sheet_links: (chain a, chain b, links) per pair of chains joined by a linked sheet
            (:mod:`solver.sheets`).
        angle_limits: the angle limits in effect ({"segment", "spring", "node", "kind",
            "angle", "yaw" (radians), "source"}: config, file or fit; :mod:`solver.limits`).
    """

    chains: tuple[str, ...]
    segments: int
    colliders: int
    collider_refs: int
    torso: str
    torso_chains: tuple[str, ...] = ()
    rest_overlaps: tuple[tuple[str, int, int, float], ...] = ()
    notes: tuple[str, ...] = field(default=())
    sheet_links: tuple[tuple[str, str, int], ...] = ()
    angle_limits: tuple[dict, ...] = ()


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
    world 3x3 (docs/history/solver-notes.md, *Gravity preload*)."""
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


def par_hit(F: np.ndarray, I: np.ndarray) -> np.ndarray:  # noqa: E741
    """The segments' hit radii in the buffers (a view, S)."""
    return L.views(L.SEG_PARAMS, F, I).hit_radius


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
        hit_fixed: (S,) bool, the joint's hit radius was set by a build override (so not
            covered, :mod:`solver.drawn`); None: no row was.
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
    hit_fixed: np.ndarray | None = None


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


def pack_avatar(avatar: Avatar, options: BuildOptions = BuildOptions()) -> Packed:
    """Pack the avatar's springs, colliders, parameters and rest state into flat arrays (module
    doc), as ``options`` say (:class:`solver.build_options.BuildOptions`); the chains and their
    order come from :func:`solver.topology.chain_topology`.

    Args:
        avatar: a loaded avatar (faces +Z, +Y up, metres).
        options: the build options.

    Raises:
        ChainBuildError (a ValueError): springs the solver cannot build (a zero-length link,
            interleaved chains).
        HairParamsError (a ValueError): an override of k or c that is not stable at the
            substep (:func:`solver.params.check_stable`).
    """
    sk = avatar.skeleton
    rest = sk.rest_world
    topo = chain_topology(avatar)
    notes = list(topo.notes)
    colliders, torso_idx, torso_text = _collider_set(avatar, options.torso_capsule)
    col_world = [collider_world(c, rest) for c in colliders]
    rows = _Rows()
    torso_chains: list[str] = []
    drawn = {}
    if options.cover_mesh and options.collisions and mode_is_rest_shape(options):
        # hit radii covering the drawn hair (solver/drawn.py); the "legacy" and "vrm" modes keep
        # the file's radii (the "vrm" mode is three-vrm's, the "legacy" one the baseline)
        links = [link for chain in topo.chains for link in chain.links]
        drawn = drawn_radii(avatar, {lk.joint.node: lk.head for lk in links}, {lk.joint.node: lk.tail for lk in links})
    for kc, chain in enumerate(topo.chains):
        spring = chain.spring
        anchor = chain.anchor
        a_world = rest[anchor] if anchor >= 0 else np.eye(4)
        a_inv3 = np.linalg.inv(a_world[:3, :3])
        rows.model_scale = max(rows.model_scale, joint_scale(a_world)) if kc else joint_scale(a_world)
        refs = sorted({ci for g in spring.collider_groups for ci in avatar.collider_groups[g].colliders})
        if not options.collisions:
            refs = []
        reach, max_hit = _add_segments(rows, avatar, chain, kc, a_inv3, refs, options, drawn)
        # torso capsule: chains that can reach it and do not lie in it at rest
        if torso_idx >= 0 and options.collisions:
            ta, tb, tr = col_world[torso_idx]
            can_reach = point_segment_distance(chain.links[0].head, ta, tb) <= reach + tr + max_hit
            overlaps = any(_link_overlap(link.head, link.tail, rows.hit[chain.first + j], ta, tb, tr)
                           for j, link in enumerate(chain.links))
            if can_reach and not overlaps:
                torso_chains.append(spring.name)
                for j in range(len(chain.links)):
                    rows.pairs[chain.first + j].append(torso_idx)
            elif can_reach:
                notes.append(f"chain {spring.name!r} lies in the fitted torso capsule at rest; "
                             "torso capsule not used for it")
        rows.chain_apos.append(a_world[:3, 3])
        rows.chain_cprev.append(_affine34(rest[spring.center] if spring.center >= 0 else np.eye(4)))
        rows.chain_det0.append(abs(np.linalg.det(a_world[:3, :3])) or 1.0)
        rows.chain_amprev.append(_affine34(a_world))
        rows.chain_reach.append(reach + max_hit)
        vlim, wlim = options.speed_limits_of(spring.name)
        rows.chain_vlim.append(vlim)
        rows.chain_wlim.append(wlim)
        rows.chain_inv3.append(a_inv3)
        cirow = np.zeros(L.KI, np.int64)
        cirow[L.KI_ANCHOR] = anchor
        cirow[L.KI_CENTER] = spring.center
        cirow[L.KI_SEG0] = chain.first
        cirow[L.KI_SEG1] = len(rows.nodes)
        rows.chain_ints.append(cirow)
        rows.chain_names.append(spring.name)
        rows.chain_anchor.append(anchor)

    links = (build_links(avatar, topo.chains, np.array(rows.tails, np.float64).reshape(-1, 3), options.links,
                         options.sheets) if mode_is_rest_shape(options) else NO_LINKS)
    if links.count:
        notes.append(f"linked sheets: {links.count} links between {len(links.pairs)} pairs of chains")
    F, I, n_refs = _pack_buffers(rows, colliders, topo.affected, options, links)  # noqa: E741
    if I[L.H_OF_PAIRC] != I[L.H_OF_PAIRF] + I[L.H_P]:      # the kernels read both as one (2, P) block
        raise SolverError("layout: the cover allowances must follow the allowances")
    angle_limits = pack_external(F, I, topo.chains, options.limits, options.wind_drag, options.fit_limits)
    S, Kc = len(rows.nodes), len(rows.chain_names)
    mode = options.mode
    authored = set(options.authored_nodes)
    if authored:
        notes.append(f"authored joints (left to the animation): {sorted(authored & set(rows.nodes))}")
    file_hit = np.array(rows.file_hit, np.float64)
    cover = None
    if S and np.any(par_hit(F, I) != file_hit):
        # covering (solver/drawn.py): the rest overlaps are the file radii's; the pairs a raised
        # link would overlap at rest keep the file radius (a cover allowance)
        cover = cover_allowances(F, I, file_hit, [col_world[c] if colliders[c].shape in ("sphere", "capsule") else None
                                                  for c in range(len(colliders))], rest, rows.model_scale)
        raised = par_hit(F, I).copy()
        par_hit(F, I)[:] = file_hit
    depths = rest_overlap_depths(F, I, rest)
    if cover is not None:
        par_hit(F, I)[:] = raised
        L.views(L.COVER, F, I).cover[:] = cover
    rest_overlaps = rest_overlap_list(depths, I, rows.chain_names, rows.chain, rows.nodes)
    for item in rest_overlaps:
        log.info("rest overlap: chain %r joint %d collider %d depth %.4f m", *item)
    if options.rest_overlap == "allow" and mode != L.MODE_VRM:
        L.views(L.ALLOWANCE, F, I).allowance[:] = allowances_of(depths) + (0.0 if cover is None else cover)
    elif cover is not None:
        L.views(L.ALLOWANCE, F, I).allowance[:] = cover
    report = BuildReport(
        chains=tuple(rows.chain_names), segments=S, colliders=len(colliders), collider_refs=n_refs,
        torso=torso_text, torso_chains=tuple(torso_chains), rest_overlaps=tuple(rest_overlaps), notes=tuple(notes),
        sheet_links=tuple((rows.chain_names[a], rows.chain_names[b], n) for a, b, n in links.pairs),
        angle_limits=tuple(angle_limits),
    )
    return Packed(
        F=F, I=I, mode=options.solver, node_count=sk.node_count, segment_nodes=np.array(rows.nodes, np.int64),
        segment_chain=np.array(rows.chain, np.int64), chain_names=tuple(rows.chain_names),
        chain_anchor=np.array(rows.chain_anchor, np.int64), rest_lengths=np.array(rows.lengths), report=report,
        rest_tails=np.array(rows.tails).reshape(S, 3),
        anchor_rest_inv=np.array([np.linalg.inv(rest[a]) if a >= 0 else np.eye(4) for a in rows.chain_anchor]),
        fast_eligible=np.array(rows.fast, bool),
        tuning=Tuning(
            mapped_k=np.array(rows.base_k, np.float64), mapped_c=np.array(rows.base_c, np.float64),
            mapped_gravity=np.array(rows.base_g, np.float64).reshape(S, 3),
            mapped_hit=np.array(rows.base_hit, np.float64),
            rest_dirs=np.array(rows.dirs, np.float64).reshape(S, 3),
            anchor_rest_inv3=np.array(rows.chain_inv3, np.float64).reshape(Kc, 3, 3),
            gravity_preload=bool(mode == L.MODE_REST_SHAPE and options.gravity_preload),
            allow_rest_overlap=bool(options.rest_overlap == "allow" and mode != L.MODE_VRM),
            rest_world=np.array(rest, np.float64), torso_chains=tuple(torso_chains),
            hit_fixed=np.array(rows.hit_fixed, bool),
        ),
    )


class _Rows:
    """What the build gathers before packing: one list per segment field (in segment order)
    and per chain field (in chain order)."""

    def __init__(self) -> None:
        # segments: state, parameters, rest, scratch, pose and index rows
        self.tails, self.tloc, self.b, self.gpre, self.g, self.k, self.c, self.damp, self.hit = ([] for _ in range(9))
        self.vst, self.vdrag, self.vext, self.frame, self.rel, self.rest_q, self.dirs = ([] for _ in range(7))
        self.base_k, self.base_c, self.base_g, self.base_hit = ([] for _ in range(4))
        self.file_hit, self.cover_want = [], []     # hit radius before covering, the covering wanted (or None)
        self.hit_fixed = []                         # the joint's hit radius was set by an override
        self.seg_ints, self.pairs, self.nodes, self.chain, self.lengths, self.fast = ([] for _ in range(6))
        # chains
        self.chain_ints, self.chain_names, self.chain_anchor, self.chain_inv3 = ([] for _ in range(4))
        self.chain_apos, self.chain_cprev, self.chain_det0, self.chain_reach = ([] for _ in range(4))
        self.chain_amprev = []
        self.chain_vlim, self.chain_wlim = [], []   # speed limits: model m/s at scale 1, degrees/s
        self.model_scale = 1.0      # the largest anchor scale (joint_scale): the teleport distance's unit


def _collider_set(avatar: Avatar, torso_capsule: str) -> tuple[list[Collider], int, str]:
    """The avatar's colliders plus a fitted torso capsule as ``torso_capsule`` says ("auto":
    when the colliders leave the torso uncovered, "on", "off"): (colliders, index of the
    capsule or −1, the decision, human readable)."""
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
    return colliders, torso_idx, torso_text


def joint_scale(m: np.ndarray) -> float:
    """The uniform scale of a joint's rest world matrix ``m`` (4, 4): |det R|^(1/3), exactly
    1.0 within 1e-9 of it (the round-off of a chain of rotations, so a file at scale 1 builds
    bit-identically to before the scale was applied).

    The VRM spring parameters are in the joint's own units (VRMC_springBone 1.0: hitRadius
    and the VRM 0.x 7 cm tail scale with the node; UniVRM applies the node's lossy scale to the
    stiffness and gravity too, ``SupportsScalingAtRuntime``): the build maps stiffness and
    dragForce with the link length divided by this scale and multiplies gravity (and the "vrm"
    mode's stiffness and gravity pushes) by it, so a model scaled by s swings s times as far
    with the same angles (three-vrm 3.5.5 does not: its pushes are world metres)."""
    s = abs(float(np.linalg.det(m[:3, :3]))) ** (1.0 / 3.0)
    return 1.0 if abs(s - 1.0) < 1e-9 else s


def _add_segments(rows: _Rows, avatar: Avatar, chain: Chain, kc: int, a_inv3: np.ndarray, refs: list[int],
                  options: BuildOptions, drawn: dict[int, float]) -> tuple[float, float]:
    """Append the segments of ``chain`` (chain index ``kc``, anchor rest 3x3 inverse
    ``a_inv3``, collider references ``refs``) to ``rows``: mapped and overridden parameters,
    rest geometry, index rows. ``drawn``: {joint node: drawn radius} (:mod:`solver.drawn`):
    the chain's links not given a hit radius by an override take the chain's covering radius
    (:func:`solver.drawn.chain_cover`; ``rows.file_hit`` keeps the file's). Returns (the chain's length, its largest hit radius), metres.
    Raises HairParamsError for an override that is not stable at the substep."""
    sk = avatar.skeleton
    rest = sk.rest_world
    spring = chain.spring
    mode = options.mode
    substep = options.substep
    ov = override_for(options.overrides, spring.name)
    reach = 0.0
    max_hit = 0.0
    for link in chain.links:
        joint = link.joint
        n = joint.node
        m = rest[n]
        vec = link.tail - link.head
        d0 = vec / link.length
        scale = joint_scale(m)
        k, c, gvec = options.mapping.kcg(joint, link.length / scale)
        gvec = gvec * scale
        hit = joint.hit_radius * abs(np.linalg.det(m[:3, :3])) ** (1.0 / 3.0)
        rows.base_k.append(k)
        rows.base_c.append(c)
        rows.base_g.append(np.asarray(gvec, np.float64))
        rows.base_hit.append(hit)
        if ov is not None:
            k = k if ov.k is None else float(ov.k)
            c = c if ov.c is None else float(ov.c)
            if (ov.k is not None or ov.c is not None) and mode != L.MODE_VRM:
                check_stable(f"spring {spring.name!r} joint node {n}", k, c, substep)
            gvec = gvec if ov.g is None else np.asarray(ov.g, np.float64)
            hit = hit if ov.hit_radius is None else float(ov.hit_radius)
        fixed = ov is not None and ov.hit_radius is not None
        rows.file_hit.append(hit)
        rows.hit_fixed.append(fixed)
        rows.cover_want.append(None if fixed or n not in drawn else covered(hit, drawn[n], scale))
        rows.tails.append(link.tail)
        rows.tloc.append(link.tail_local)
        rows.b.append(a_inv3 @ vec)
        rows.dirs.append(d0)
        rows.gpre.append(preload_of(gvec, d0, a_inv3) if mode == L.MODE_REST_SHAPE and options.gravity_preload
                         else np.zeros(3))
        rows.g.append(gvec)
        rows.k.append(k)
        rows.c.append(c)
        rows.damp.append(damping_factor(c, substep))
        rows.hit.append(hit)
        rows.vst.append(joint.stiffness * scale)
        rows.vdrag.append(joint.drag_force)
        rows.vext.append(joint.gravity_power * scale * np.asarray(joint.gravity_dir, np.float64))
        rows.frame.append(_affine34(m))
        sp = link.parent
        rows.rel.append(_affine34(np.linalg.inv(rest[rows.nodes[sp]]) @ m if sp >= 0 else np.eye(4)))
        irow = np.zeros(L.SI, np.int64)
        irow[L.SI_NODE] = n
        irow[L.SI_SPAR] = sp
        irow[L.SI_CHAIN] = kc
        irow[L.SI_AUTH] = 1 if n in options.authored_nodes else 0
        rows.fast.append(mode == L.MODE_REST_SHAPE and link.at_parent_tail)
        rows.rest_q.append(sk.rest_rotation[n])
        rows.seg_ints.append(irow)
        rows.pairs.append(list(refs))
        rows.nodes.append(n)
        rows.chain.append(kc)
        rows.lengths.append(link.length)
        reach += link.length
        max_hit = max(max_hit, hit)
    first = len(rows.hit) - len(chain.links)
    for j, hit in enumerate(chain_cover(rows.file_hit[first:], rows.cover_want[first:])):
        rows.hit[first + j] = hit
        max_hit = max(max_hit, hit)
    return reach, max_hit


def _pack_buffers(rows: _Rows, colliders: list[Collider], affected, options: BuildOptions,
                  links: SheetLinks = NO_LINKS):
    """The packed buffers (:func:`solver.layout.pack`) filled from ``rows``, the colliders,
    the affected (node, segment) pairs and the sheet links: (F, I, number of collider references)."""
    S, C, Kc = len(rows.nodes), len(colliders), len(rows.chain_names)
    mode = options.mode
    # CSR collider references
    p_flat: list[int] = []
    segi = np.array(rows.seg_ints, np.int64).reshape(S, L.SI)
    path_flags(segi, np.array(rows.fast, bool), mode == L.MODE_REST_SHAPE)
    for i, refs in enumerate(rows.pairs):
        refs.sort()
        segi[i, L.SI_P0] = len(p_flat)
        p_flat.extend(refs)
        segi[i, L.SI_P1] = len(p_flat)
        if C <= 63 and len(set(refs)) == len(refs):
            # sorted, unique: the broad phase finds pair indices by rank in this mask
            segi[i, L.SI_REFMASK] = sum(1 << int(c) for c in refs)
    coli = np.zeros((C, L.CI), np.int64)
    coli[:, L.CI_NODE] = [col.node for col in colliders]
    coli[:, L.CI_SHAPE] = [L.SHAPES[col.shape] for col in colliders]
    affi = np.zeros((len(affected), L.AI), np.int64)
    affi[:, L.A_NODE] = [a[0] for a in affected]
    affi[:, L.A_SEG] = [a[1] for a in affected]
    F, I = L.pack(  # noqa: E741
        {"S": S, "C": C, "K": Kc, "P": len(p_flat), "M": len(affected), "L": links.count},
        {"segment_ints": segi, "collider_ints": coli, "sheet_links": links.rows(options.substep),
         "sheet_link_ints": np.stack([links.a, links.b], axis=1) if links.count else np.zeros((0, 2), np.int64),
         "chain_ints": np.array(rows.chain_ints, np.int64).reshape(Kc, L.KI),
         "pairs": np.array(p_flat, np.int64), "affected": affi},
        {"H_MODE": mode, "H_MAXIT": options.contact_passes,
         "H_RELAX": options.relax_passes if mode == L.MODE_REST_SHAPE else 0, "H_SHEET_PASSES": options.sheet_passes},
    )
    v = L.all_views(F, I)
    st, par, rst, scr, pose = v["state"], v["params"], v["rest"], v["scratch"], v["pose"]
    if S:
        st.tails[:] = rows.tails
        st.prev_tails[:] = rows.tails
        par.k[:] = rows.k
        par.damp[:] = rows.damp
        par.gravity[:] = rows.g
        par.gravity_preload[:] = rows.gpre
        par.hit_radius[:] = rows.hit
        par.c[:] = rows.c
        par.vrm_stiffness[:] = rows.vst
        par.vrm_drag[:] = rows.vdrag
        par.vrm_gravity[:] = rows.vext
        rst.rest_offset[:] = rows.b
        rst.length[:] = rows.lengths
        rst.tail_local[:] = rows.tloc
        rst.rel_frame[:] = np.reshape(rows.rel, (S, 3, 4))
        scr.frame[:] = np.reshape(rows.frame, (S, 3, 4))
        pose.rest_rotations[:] = rows.rest_q
        pose.local_rotations[:] = rows.rest_q
        pose.frames[:] = np.reshape(rows.frame, (S, 3, 4))
    cv = v["colliders"]
    for c, col in enumerate(colliders):
        cv.offset[c] = col.offset
        cv.tail[c] = col.offset if col.tail is None else col.tail
        cv.radius[c] = col.radius
        if col.normal is not None:
            cv.normal[c] = col.normal
    kv = v["chains"]
    if Kc:
        kv.anchor_prev[:] = rows.chain_apos
        kv.centre_prev[:] = np.reshape(rows.chain_cprev, (Kc, 3, 4))
        kv.anchor_matrix_prev[:] = np.reshape(rows.chain_amprev, (Kc, 3, 4))
        kv.anchor_det0[:] = rows.chain_det0
        kv.scale[:] = 1.0
        kv.reach[:] = rows.chain_reach
        # model metres per second at scale 1, as the teleport distance (the kernel multiplies by s)
        kv.speed_limit[:] = np.array(rows.chain_vlim, np.float64) * rows.model_scale
        kv.rotation_speed_limit[:] = np.radians(np.array(rows.chain_wlim, np.float64))
    g = v["globals"]
    g.h[()] = options.substep
    # model metres at scale 1: a model scaled by s (its chains' anchors) jumps s times as far
    g.teleport[()] = options.teleport_distance * rows.model_scale
    g.contact_tolerance[()] = CONTACT_TOLERANCE
    g.u_min[()] = CONTACT_U_MIN
    g.bend_max[()] = np.radians(options.bend_limit_deg)
    g.bend_cos[()] = np.cos(np.radians(options.bend_limit_deg))
    g.bend_parent_share[()] = BEND_PARENT_SHARE
    return F, I, len(p_flat)


def mode_is_rest_shape(options: BuildOptions) -> bool:
    """Linked sheets are solved in the rest-shape relaxation only."""
    return options.mode == L.MODE_REST_SHAPE


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
