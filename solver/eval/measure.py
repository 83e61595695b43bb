"""The standard hair-quality run (docs/design.md §4.5) of one avatar and one solver.

4 s of head motion then 8 s still (the motion is passed in: the standard head-turn of
``avatars.clips.head_turn``, or any rotation function), physics at 120 Hz, the mesh sampled at
30 Hz. The head subtree turns about the head origin (:class:`solver.eval.posing.SubtreePoser`),
so the attachment frames move exactly as docs/design.md §4.5 defines the test.

Measured (metres inside, reported in mm / %):

- stretch of skinned hair-mesh edges (:mod:`solver.eval.hair_mesh`, CPU skinning that matches
  the shader): p99 of per-edge maxima and the worst edge, in percent;
- tip settle: largest tip movement between 30 Hz samples in the last 2 s;
- root drift: distance of every chain root from where its attachment carries it;
- penetration of links (with their hitRadius) and of skinned hair vertices (points) into
  the collider proxies their chain collides with: pairs inside by more than
  :data:`INSIDE_TOLERANCE`, and the maximum depth; "beyond rest" subtracts the overlap the
  authored rest pose already has (an avatar whose rest hair touches a collider);
- tip deviation from the rest arc at the end (the "tentacle" measure), and the largest
  during the run (the swing: how far the hair moved off its rest arc at all);
- solver µs per substep and the per-frame CPU update at 60 fps (2 substeps + forward
  kinematics of the posed skeleton + skinning matrices), median and p95.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from avatars import Avatar

from .. import layout as L
from ..chains import ChainSet
from ..params import RATE_HZ
from .hair_mesh import find_hair
from avatars.skinning import joint_matrices, skin_instance
from .posing import SubtreePoser
from .sheet_phase import PhaseMeter, tip_pairs
from ..sheets import build_links
from ..topology import chain_topology
from .quality import StretchMeter, WorldCollider, max_step_movement, segment_depths, stretch_percent

SAMPLE_HZ = 30
MOTION_S = 4.0
STILL_S = 8.0
SETTLE_WINDOW_S = 2.0
#: depth below which a link/point counts as touching, not inside (metres)
INSIDE_TOLERANCE = 1e-6
_KINDS = {v: k for k, v in L.SHAPES.items()}


@dataclass
class RunMetrics:
    """One row of the hair-quality table (units in the names)."""

    avatar: str
    solver: str
    chains: int
    joints: int
    hair_vertices: int
    hair_edges: int
    stretch_p99_pct: float
    stretch_worst_pct: float
    settle_mm: float
    root_drift_mm: float
    link_inside_pairs: int
    link_max_depth_mm: float
    link_max_depth_beyond_rest_mm: float
    vertex_inside: int
    vertex_max_depth_mm: float
    vertex_max_depth_beyond_rest_mm: float
    tip_rest_arc_mm: float
    tip_swing_mm: float
    substep_us_median: float
    substep_us_p95: float
    frame_update_us_median: float
    frame_update_us_p95: float
    fps_identical: str = "-"   # filled by callers that run the frame-rate check
    sheet_links: int = 0               # sideways links solved (solver/sheets.py)
    cap_bindings: int = 0              # sheet-link cap bindings during the run (link and pass)
    phase_median_deg: float | None = None   # neighbouring chains' phase difference during the motion
    phase_max_deg: float | None = None      # (solver/eval/sheet_phase.py), median and largest over pairs;
    shear_median_mm: float | None = None    # their relative swing, median over pairs (None: no pairs)
    tips: np.ndarray = field(repr=False, default=None)          # (F, K, 3) sampled tips, metres
    tip_times: np.ndarray = field(repr=False, default=None)     # (F,) seconds
    edge_max_ratio: np.ndarray = field(repr=False, default=None)  # (E,) m_e

    def row(self) -> dict:
        d = asdict(self)
        for k in ("tips", "tip_times", "edge_max_ratio"):
            d.pop(k)
        return d


def _colliders(cs: ChainSet) -> list[WorldCollider]:
    cw = cs.collider_world
    shapes = cs.collider_shapes
    normals = cs.collider_normals
    return [WorldCollider(_KINDS[int(shapes[c])], cw[c, 0:3].copy(), cw[c, 3:6].copy(), float(cw[c, 6]),
                          normals[c].copy()) for c in range(len(shapes))]


def _link_depths(cs: ChainSet, posed: np.ndarray, refs: list[np.ndarray]) -> np.ndarray:
    """(S, C) depth of every link against every collider it collides with (-inf elsewhere).
    ``posed``: world matrices with the solved hair applied (link heads are joint positions)."""
    cols = _colliders(cs)
    heads = posed[cs.segment_nodes, :3, 3]
    tails = cs.tails
    out = np.full((cs.segment_count, len(cols)), -np.inf)
    radii = _pair_radii(cs)
    for c, col in enumerate(cols):
        segs = np.array([s for s in range(cs.segment_count) if c in refs[s]], np.int64)
        if segs.size:
            out[segs, c] = segment_depths(heads[segs], tails[segs], radii[segs, c], col)
    return out


def _pair_radii(cs: ChainSet) -> np.ndarray:
    """(S, C) each link's radius against each collider as contact uses it: its hit radius less
    the pair's cover allowance (solver/drawn.py; 0 unless ``cover_mesh``)."""
    out = np.repeat(cs.hit_radii[:, None], max(cs.collider_count, 1), axis=1)
    cover = cs.sections["cover"].cover
    if cover.any():
        seg = cs.sections["segment_ints"]
        col = cs.sections["pairs"].collider
        for s in range(cs.segment_count):
            for p in range(int(seg.pair_begin[s]), int(seg.pair_end[s])):
                out[s, int(col[p])] -= cover[p]
    return out


def standard_run(avatar: Avatar, motion: Callable[[float], np.ndarray], *, solver: str = "rest-shape",
                 name: str | None = None, motion_s: float = MOTION_S, still_s: float = STILL_S,
                 overrides=None, pose: Callable[[int, np.ndarray], None] | None = None,
                 build: dict | None = None, links=None, sheets: str = "auto") -> RunMetrics:
    """Run and measure (module doc). ``motion(t_seconds)`` is the head's world rotation
    relative to rest, (4,) xyzw; ``overrides`` replace mapped spring parameters
    (:class:`solver.params.SpringOverride`, or {fnmatch pattern: SpringOverride}).
    ``pose(n, world)``, when given, writes the whole body's world matrices (N, 4, 4), hair
    joints at rest local rotations, at substep n (t = n / 120 s; n = 0 is the start)
    instead of turning the head by ``motion`` (a body clip: the runtime's rig). ``build``:
    further :class:`solver.build_options.BuildOptions` fields (angle ``limits``, ``fit_limits``...).
    ``links``, ``sheets``: the linked sheets (:class:`solver.build_options.BuildOptions`);
    the phase columns measure the pairs a build with ``sheets="auto"`` links, also when the
    run's own sheets are off (:mod:`solver.eval.sheet_phase`).
    Raises ValueError for an avatar without springs or head."""
    if not avatar.springs:
        raise ValueError(f"{avatar.path}: no springs to measure")
    head = avatar.head_node()
    if head < 0:
        raise ValueError(f"{avatar.path}: no humanoid head bone")
    cs = ChainSet.from_avatar(avatar, solver=solver, overrides=overrides, links=links, sheets=sheets, **(build or {}))
    phase = PhaseMeter(_phase_pairs(avatar, cs, links) if solver == "rest-shape" else np.zeros((0, 2), np.int64))
    sk = avatar.skeleton
    poser = SubtreePoser(sk, head)
    world = poser.rest.copy()
    draw = world.copy()          # posed with the solved hair, for measuring
    frame_pose = world.copy()    # the timed per-frame update writes here
    refs = [set(cs.collider_refs(s).tolist()) for s in range(cs.segment_count)]
    # hair mesh, rest lengths, rest overlaps
    parts = find_hair(avatar)
    meters = [StretchMeter(p.edges, p.rest_lengths) for p in parts]
    seg_of_node = {int(n): s for s, n in enumerate(cs.segment_nodes)}
    cs.reset(world)
    draw[:] = world
    cs.apply(draw, 1.0)
    rest_link = np.maximum(_link_depths(cs, draw, refs), 0.0)
    tips_idx = cs.tips()
    parents = sk.parents
    anchor_local = [np.linalg.inv(sk.rest_world[int(parents[int(n)])]) @ sk.rest_world[int(n)]
                    if parents[int(n)] >= 0 else sk.rest_world[int(n)] for n in cs.segment_nodes]
    root_segs = [s for s in range(cs.segment_count) if int(parents[int(cs.segment_nodes[s])]) not in seg_of_node]

    def vertex_points(w):
        out = []
        for p in parts:   # as drawn: with the per-vertex contact of a mesh that has one
            out.append(skin_instance(avatar, p.instance, p.primitive, w, vertices=p.vertices))
        return out

    def vertex_depths(points, cols):
        res = []
        for p, pts in zip(parts, points):
            d = np.full(len(pts), -np.inf)
            segs = [seg_of_node.get(int(j), -1) for j in p.dominant_joint]
            for c, col in enumerate(cols):
                mask = np.array([s >= 0 and c in refs[s] for s in segs])
                if mask.any():
                    d[mask] = np.maximum(d[mask], segment_depths(pts[mask], pts[mask], np.zeros(mask.sum()), col))
            res.append(d)
        return res

    draw[:] = world
    cs.apply(draw, 1.0)
    rest_vertex = [np.maximum(d, 0.0) for d in vertex_depths(vertex_points(draw), _colliders(cs))]
    if pose is not None:
        pose(0, world)
        cs.reset(world)

    n_total = int(round((motion_s + still_s) * RATE_HZ))
    every = RATE_HZ // SAMPLE_HZ
    h = 1.0 / RATE_HZ
    tips, times = [], []
    link_pairs = 0
    link_max = link_beyond = 0.0
    vert_inside = [np.zeros(len(p.vertices), bool) for p in parts]
    vert_max = vert_beyond = 0.0
    drift = 0.0
    swing = 0.0
    step_us, frame_us = [], []
    for n in range(1, n_total + 1):
        t = n * h
        t0 = time.perf_counter_ns()
        if pose is None:
            poser.world(motion(t), out=world)
        else:
            pose(n, world)
        t1 = time.perf_counter_ns()
        cs.step(world)
        t2 = time.perf_counter_ns()
        step_us.append((t2 - t1) / 1e3)
        draw[:] = world
        cs.apply(draw, 1.0)
        link = _link_depths(cs, draw, refs)
        inside = link > INSIDE_TOLERANCE
        link_pairs += int(inside.sum())
        if np.isfinite(link).any():
            link_max = max(link_max, float(link[np.isfinite(link)].max()))
            beyond = link - rest_link
            link_beyond = max(link_beyond, float(beyond[np.isfinite(beyond)].max()))
        if n % 2 == 0:  # a 60 fps frame: 2 substeps + pose + skinning matrices
            t3 = time.perf_counter_ns()
            frame_pose[:] = world
            cs.apply(frame_pose, 1.0)
            for inst in {avatar.mesh_instances[p.instance].skin for p in parts}:
                joint_matrices(avatar, inst, frame_pose)
            t4 = time.perf_counter_ns()
            frame_us.append((t4 - t3) / 1e3 + step_us[-1] + step_us[-2] + 2 * (t1 - t0) / 1e3)
        if n % every == 0:
            for s in root_segs:
                node = int(cs.segment_nodes[s])
                p = int(parents[node])
                expect = (draw[p] @ anchor_local[s])[:3, 3] if p >= 0 else anchor_local[s][:3, 3]
                drift = max(drift, float(np.linalg.norm(draw[node, :3, 3] - expect)))
            tips.append(cs.tails[tips_idx].copy())
            times.append(t)
            arc_now = cs.rest_arc_tails(world)
            swing = max(swing, float(np.linalg.norm(tips[-1] - arc_now[tips_idx], axis=1).max()))
            if t <= motion_s + 1e-9:
                phase.update(cs.tails, arc_now)
            pts = vertex_points(draw)
            for m, p in zip(meters, pts):
                m.update(p)
            cols = _colliders(cs)
            for k, (d, r) in enumerate(zip(vertex_depths(pts, cols), rest_vertex)):
                fin = np.isfinite(d)
                if fin.any():
                    vert_inside[k] |= d > INSIDE_TOLERANCE
                    vert_max = max(vert_max, float(d[fin].max()))
                    vert_beyond = max(vert_beyond, float((d - r)[fin].max()))
    tips = np.array(tips)
    times = np.array(times)
    last = times > motion_s + still_s - SETTLE_WINDOW_S - 1e-9
    m_e = np.concatenate([m.max_ratio for m in meters]) if meters else np.zeros(0)
    p99, worst = stretch_percent(m_e)
    arc = cs.rest_arc_tails(world)[tips_idx]
    ph = phase.result()
    return RunMetrics(
        avatar=name or avatar.meta.name or avatar.path, solver=solver, chains=cs.chain_count,
        joints=cs.segment_count, hair_vertices=int(sum(len(p.vertices) for p in parts)),
        hair_edges=int(sum(len(p.edges) for p in parts)), stretch_p99_pct=p99, stretch_worst_pct=worst,
        settle_mm=1e3 * max_step_movement(tips[last]), root_drift_mm=1e3 * drift,
        link_inside_pairs=link_pairs, link_max_depth_mm=1e3 * max(link_max, 0.0),
        link_max_depth_beyond_rest_mm=1e3 * max(link_beyond, 0.0),
        vertex_inside=int(sum(v.sum() for v in vert_inside)), vertex_max_depth_mm=1e3 * max(vert_max, 0.0),
        vertex_max_depth_beyond_rest_mm=1e3 * max(vert_beyond, 0.0),
        tip_rest_arc_mm=1e3 * float(np.linalg.norm(cs.tails[tips_idx] - arc, axis=1).max()),
        tip_swing_mm=1e3 * swing,
        substep_us_median=float(np.median(step_us)), substep_us_p95=float(np.percentile(step_us, 95)),
        frame_update_us_median=float(np.median(frame_us)), frame_update_us_p95=float(np.percentile(frame_us, 95)),
        tips=tips, tip_times=times, edge_max_ratio=m_e, sheet_links=cs.link_count, cap_bindings=cs.cap_bindings,
        phase_median_deg=ph.median_deg, phase_max_deg=ph.max_deg, shear_median_mm=ph.shear_median_mm,
    )


def _phase_pairs(avatar: Avatar, cs: ChainSet, links) -> np.ndarray:
    """(P, 2) the segment pairs the phase measure follows: one per pair of chains a build with
    linked sheets on would join (:func:`solver.eval.sheet_phase.tip_pairs`)."""
    topo = chain_topology(avatar)
    rest_tails = np.array([link.tail for link in topo.links], np.float64).reshape(-1, 3)
    sl = build_links(avatar, topo.chains, rest_tails, links, "auto")
    return tip_pairs(sl.a, sl.b, cs.segment_chain)
