"""Measures of a fitted, rigged hair (:mod:`avatars.tryon`) on the standard head turn.

:func:`run_hair` steps the chain set through the standard head turn (docs/design.md §4.5: 4 s of
motion, 8 s still, physics at 120 Hz, the mesh sampled at 30 Hz; the head subtree turns
about the head, :class:`solver.eval.posing.SubtreePoser`) and measures, on the given mesh
parts, with CPU skinning identical to the shader (:mod:`avatars.skinning`):

- edge stretch (the seed articles' measure, :class:`solver.eval.quality.StretchMeter`):
  edges between vertices whose dominant joint is a spring joint (as
  :func:`solver.eval.measure.standard_run` counts them); p99 of per-edge maxima and the
  worst edge, percent; and the same over every edge of the parts (``all_edges_*``: the
  band edges from the head-held root to the moving hair included);
- settle: largest chain-tip movement between 30 Hz samples in the last 2 s, mm; tip swing:
  the largest distance of a chain tip from its rest arc carried by the head (how much the
  hair moves at all), mm;
- scalp drift: at every substep, the distance between each chain's root joint (its world
  position from forward kinematics, as the solver reads it) and the barycentric point of
  its scalp triangle skinned like the shader does, metres;
- penetration of the hair's skinned vertices, at rest and at every 30 Hz sample, into the
  head mesh (generalized winding number > 0.5, depth = distance to the closest head
  triangle; tested, in the head's frame, for the vertices inside the head's radial envelope
  — which holds the whole head surface — that lie within 5 mm of it) and into every
  collider proxy the try-on chains check (depth beyond the surface); counts above 1 mm and
  the largest depths, mm. The vertices are measured as drawn: with the per-vertex contact
  correction of a mesh that has one (:mod:`avatars.contact`, :func:`avatars.skinning.skin_instance`).

The try-on core itself is :mod:`avatars.tryon`; its benchmark (fit + rig seconds) is
:mod:`avatars.eval.fit_bench`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from avatars import Avatar
from avatars.clips.head_turn import head_turn_rotation
from avatars.skinning import joint_matrices, skin_instance, skin_positions
from avatars.tryon.geometry import winding_numbers
from avatars.tryon.head import HeadModel

from .. import layout as L
from ..chains import ChainSet
from .hair_mesh import triangle_edges
from .posing import SubtreePoser
from .quality import StretchMeter, WorldCollider, max_step_movement, point_depths, stretch_percent

RATE_HZ = 120
SAMPLE_HZ = 30
MOTION_S = 4.0
STILL_S = 8.0
SETTLE_WINDOW_S = 2.0
#: Penetration counted above this depth (metres): the brief's 1 mm.
DEPTH_LIMIT = 1e-3
#: Vertices closer than this to the head mesh get the (costly) inside test.
NEAR_HEAD = 5e-3
_KINDS = {v: k for k, v in L.SHAPES.items()}


@dataclass(frozen=True, eq=False)
class MeshPart:
    """Vertices ``vertices`` (K,) of primitive ``primitive`` of mesh instance ``instance``."""

    instance: int
    primitive: int
    vertices: np.ndarray


@dataclass(frozen=True, eq=False)
class RootAttachment:
    """A chain root joint ``node`` and the skinned triangle it must follow: the mesh
    instance, primitive, three vertex indices and barycentric weights (3,)."""

    node: int
    instance: int
    primitive: int
    triangle: np.ndarray
    bary: np.ndarray


@dataclass
class HairRun:
    """One measured run (units in the names)."""

    solver: str
    chains: int
    joints: int
    vertices: int
    edges: int
    stretch_p99_pct: float
    stretch_worst_pct: float
    all_edges_p99_pct: float
    all_edges_worst_pct: float
    settle_mm: float
    tip_swing_mm: float
    scalp_drift_m: float
    head_inside_rest: int
    head_depth_rest_mm: float
    head_inside: int
    head_depth_mm: float
    collider_inside_rest: int
    collider_depth_rest_mm: float
    collider_inside: int
    collider_depth_mm: float
    tips: np.ndarray | None = None

    def row(self) -> dict:
        d = asdict(self)
        d.pop("tips")
        return d


def _colliders(cs: ChainSet, refs: list[int]) -> list[WorldCollider]:
    cw = cs.collider_world
    shapes = cs.collider_shapes
    return [WorldCollider(_KINDS[int(shapes[c])], cw[c, 0:3].copy(), cw[c, 3:6].copy(), float(cw[c, 6]),
                          cs.collider_normals[c].copy()) for c in refs]


def run_hair(avatar: Avatar, parts: list[MeshPart], *, solver: str = "rest-shape",
             motion: Callable[[float], np.ndarray] = head_turn_rotation, roots: list[RootAttachment] = (),
             head: HeadModel | None = None, springs: tuple[str, ...] | None = None,
             motion_s: float = MOTION_S, still_s: float = STILL_S, chain_options: dict | None = None,
             sample_hz: int = SAMPLE_HZ) -> HairRun:
    """Run the standard head turn and measure ``parts`` (module doc).

    Args:
        parts: the hair vertices to measure.
        roots: chain roots to check against their skinned scalp triangles.
        head: the head model for the head-mesh penetration (skipped when None).
        springs: names of the springs whose colliders count and whose tips settle (all
            when None).
        chain_options: more options of :meth:`ChainSet.from_avatar` (e.g. collisions=False).
        sample_hz: mesh samples per second (a divisor of 120: 30 as docs/design.md §4.5, 120 for
            every substep, as a 120 fps render draws them).
    """
    if RATE_HZ % int(sample_hz):
        raise ValueError(f"sample_hz {sample_hz}: must divide {RATE_HZ}")
    cs = ChainSet.from_avatar(avatar, solver=solver, **(chain_options or {}))
    sk = avatar.skeleton
    hnode = avatar.head_node()
    poser = SubtreePoser(sk, hnode)
    world = poser.rest.copy()
    draw = world.copy()
    spring_nodes = {int(j.node) for s in avatar.springs for j in s.joints}
    chain_ids = [k for k, n in enumerate(cs.chain_names) if springs is None or n in springs]
    segs = np.nonzero(np.isin(cs.segment_chain, chain_ids))[0]
    col_refs = sorted({int(c) for s in segs for c in cs.collider_refs(int(s))})
    tips = cs.tips()[chain_ids]
    # mesh parts: stretch edges among spring-dominated vertices
    meters, sel, all_edges = [], [], []
    for p in parts:
        inst = avatar.mesh_instances[p.instance]
        prim = avatar.meshes[inst.mesh].primitives[p.primitive]
        joints = avatar.skins[inst.skin].joints
        v = np.asarray(p.vertices, np.int64)
        dom = joints[prim.joints[v, np.argmax(prim.weights[v], axis=1)].astype(np.int64)]
        hair = np.array([int(n) in spring_nodes for n in dom])
        pos = np.full(prim.vertex_count, -1, np.int64)
        pos[v] = np.arange(len(v))
        e = pos[triangle_edges(prim.indices, prim.mode)]
        e = e[(e >= 0).all(axis=1)]
        all_edges.append(e)
        e = e[hair[e].all(axis=1)]
        sel.append((p.instance, p.primitive, v))
        meters.append(e)

    def skin_all(w):
        return [skin_instance(avatar, k, pr, w, vertices=v) for k, pr, v in sel]

    rest_pts = skin_all(world)
    stretch, stretch_all = [], []
    for e, ea, pts in zip(meters, all_edges, rest_pts):
        for edges, out in ((e, stretch), (ea, stretch_all)):
            rl = np.linalg.norm(pts[edges[:, 0]] - pts[edges[:, 1]], axis=1)
            ok = rl > 1e-9
            out.append(StretchMeter(edges[ok], rl[ok]))
    head_index = head.index() if head is not None else None
    head_rest_inv = np.linalg.inv(sk.rest_world[hnode])

    memo = {}   # head-frame positions and depths of the last evaluation (rigid hair never moves there)

    def head_depths(pts_world, w):
        if head_index is None:
            return np.zeros(len(pts_world))
        m = sk.rest_world[hnode] @ np.linalg.inv(w[hnode])   # world -> head rest frame
        q = pts_world @ m[:3, :3].T + m[:3, 3]
        if "q" in memo:
            todo = np.nonzero(np.linalg.norm(q - memo["q"], axis=1) > 1e-9)[0]
        else:
            todo = np.arange(len(q))
            memo["q"], memo["d"] = q.copy(), np.zeros(len(q))
        if todo.size:
            out = np.zeros(todo.size)
            # the envelope holds the head surface: a point outside it is outside the head
            cand = np.nonzero(head.envelope.depth(q[todo]) > 0.0)[0]
            if cand.size:
                _, d, _ = head_index.query(q[todo[cand]], max_distance=NEAR_HEAD)
                near = np.nonzero(d < NEAR_HEAD)[0]
                if near.size:
                    wn = winding_numbers(head.vertices, head.faces, q[todo[cand[near]]])
                    out[cand[near]] = np.where(wn > 0.5, d[near], 0.0)
            memo["q"][todo] = q[todo]
            memo["d"][todo] = out
        return memo["d"].copy()

    def collider_depths(pts_world):
        if not col_refs:
            return np.zeros(len(pts_world))
        return np.max([point_depths(pts_world, c) for c in _colliders(cs, col_refs)], axis=0)

    del head_rest_inv
    allp = np.concatenate(rest_pts) if rest_pts else np.zeros((0, 3))
    cs.reset(world)
    hd = head_depths(allp, world)
    cd = collider_depths(allp) if col_refs else np.zeros(len(allp))
    res = dict(head_inside_rest=int((hd > DEPTH_LIMIT).sum()), head_depth_rest_mm=1e3 * float(hd.max(initial=0)),
               collider_inside_rest=int((cd > DEPTH_LIMIT).sum()), collider_depth_rest_mm=1e3 * float(max(cd.max(initial=0), 0)))
    head_in = np.zeros(len(allp), bool)
    col_in = np.zeros(len(allp), bool)
    head_max = col_max = 0.0
    drift = 0.0
    n_total = int(round((motion_s + still_s) * RATE_HZ))
    every = RATE_HZ // int(sample_hz)
    tip_samples, times = [], []
    swing = 0.0
    root_inst = {}
    for r in roots:
        inst = avatar.mesh_instances[r.instance]
        root_inst.setdefault((r.instance, r.primitive), (inst, avatar.meshes[inst.mesh].primitives[r.primitive]))
    for n in range(1, n_total + 1):
        t = n / RATE_HZ
        poser.world(motion(t), out=world)
        cs.step(world)
        draw[:] = world
        cs.apply(draw, 1.0)
        for r in roots:
            inst, prim = root_inst[(r.instance, r.primitive)]
            z = skin_positions(prim, joint_matrices(avatar, inst.skin, draw), vertices=r.triangle)
            drift = max(drift, float(np.linalg.norm(r.bary @ z - draw[r.node, :3, 3])))
        if n % every:
            continue
        pts = skin_all(draw)
        for m, ma, p in zip(stretch, stretch_all, pts):
            m.update(p)
            ma.update(p)
        allp = np.concatenate(pts) if pts else np.zeros((0, 3))
        hd = head_depths(allp, draw)
        cd = collider_depths(allp)
        head_in |= hd > DEPTH_LIMIT
        col_in |= cd > DEPTH_LIMIT
        head_max = max(head_max, float(hd.max(initial=0)))
        col_max = max(col_max, float(cd.max(initial=0)))
        tip_samples.append(cs.tails[tips].copy())
        times.append(t)
        if len(tips):
            swing = max(swing, float(np.linalg.norm(tip_samples[-1] - cs.rest_arc_tails(world)[tips], axis=1).max()))
    times = np.array(times)
    last = times > motion_s + still_s - SETTLE_WINDOW_S - 1e-9
    tip_samples = np.array(tip_samples).reshape(len(times), len(tips), 3)
    m_e = np.concatenate([m.max_ratio for m in stretch]) if stretch else np.zeros(0)
    p99, worst = stretch_percent(m_e)
    a99, aworst = stretch_percent(np.concatenate([m.max_ratio for m in stretch_all]) if stretch_all else np.zeros(0))
    return HairRun(
        solver=solver, chains=len(chain_ids), joints=int(len(segs)), vertices=int(sum(len(v) for *_, v in sel)),
        edges=int(len(m_e)), stretch_p99_pct=p99, stretch_worst_pct=worst, all_edges_p99_pct=a99,
        all_edges_worst_pct=aworst,
        settle_mm=1e3 * max_step_movement(tip_samples[last]) if len(tips) else 0.0, tip_swing_mm=1e3 * swing,
        scalp_drift_m=drift,
        head_inside=int(head_in.sum()), head_depth_mm=1e3 * head_max, collider_inside=int(col_in.sum()),
        collider_depth_mm=1e3 * max(col_max, 0.0), tips=tip_samples, **res,
    )


def tryon_parts(result) -> tuple[list[MeshPart], list[RootAttachment]]:
    """The hair mesh parts (one per primitive) and the chain roots of a :class:`TryOnResult`."""
    av = result.avatar
    inst = av.mesh_instances[result.hair_instance]
    prims = av.meshes[inst.mesh].primitives
    if len(prims) == 1:
        parts = [MeshPart(result.hair_instance, 0, np.arange(prims[0].vertex_count))]
    else:   # a rebuilt textured hair: a primitive per material over one vertex set
        parts = [MeshPart(result.hair_instance, p, np.unique(pr.indices)) for p, pr in enumerate(prims)]
    roots = []
    for c in result.chains:
        src = c.attachment.source
        roots.append(RootAttachment(node=int(c.nodes[0]), instance=int(src[0]), primitive=int(src[1]),
                                    triangle=np.asarray(src[2:5], np.int64), bary=c.attachment.bary))
    return parts, roots


def measure_tryon(result, *, solver: str = "rest-shape", head: HeadModel | None = None, **kw) -> HairRun:
    """:func:`run_hair` of a try-on result's hair mesh, chain roots and springs."""
    parts, roots = tryon_parts(result)
    names = tuple(s.name for s in result.avatar.springs if s.name.startswith("TryOn"))
    return run_hair(result.avatar, parts, solver=solver, roots=roots, head=head, springs=names, **kw)

