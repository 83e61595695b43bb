"""Place a hair by registering its inner surface to the target head (no opening needed).

The opening method (:func:`avatars.tryon.placement.estimate_source_head`) looks for the head a
style was made around as an empty ellipsoid inside the hair. Closed and voluminous styles
(an afro's thick shell, a cap closed by a lid, a bun over a thin cap) and hair made for a
head of other proportions have no such opening, or one the ellipsoid search misses. Here the
placement is found on the target head itself:

- *Inner surface* (:func:`inner_surface`): seen from the head centre, in every direction of
  a grid over the scalp (above the hairline profile of :mod:`avatars.tryon.head`), the
  innermost hair sample that is not deep inside the head (deeper than :data:`JUNK_DEPTH` of
  the radius is interior geometry, e.g. a closed cap's lid); the ray casts of the module doc
  of the brief are these per-direction minima over dense surface samples.
- *Registration* (:func:`register`): an ICP-like fit of the transform ``q = k ∘ p + t``
  (per-axis scale ``k`` with bounded anisotropy, translation ``t``, no rotation: styles are
  upright and face +Z) that puts the inner-surface samples on the target head envelope
  grown by the clearance: each iteration pairs each direction's innermost sample with the
  envelope point along its ray and solves the scale and translation by least squares per
  axis (the worst :data:`TRIM` of pairs left out), from several starts (the opening
  method's placement when it has one, and crown-on-top placements at several scales).
- *Score* (:func:`placement_score`) to choose among starts and methods: median gap of the
  inner surface to the head in head heights, plus the share of the scalp directions the
  hair does not cover, plus :data:`INTERIOR_WEIGHT` × the share of the hair's area lying
  deep inside the head (an afro shrunk until its outer surface hugs the head has its inner
  shell inside it; a closed cap's lid is inside the head whatever the scale, so it costs
  every candidate the same).

The *inner-surface distance* reported for every method (:class:`InnerFit`) is measured after
the fit: per covered scalp direction, the distance along its ray from the innermost hair
sample to the head envelope (which holds the head mesh), median and 95th percentile (mm).

Frames: world rest pose of the target (metres, +Y up, facing +Z); source points in metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .geometry import sample_triangles
from .head import HeadModel, hairline_elevation

#: Samples deeper inside the head than this share of the envelope radius are interior
#: geometry (a lid, inner junk) and not the inner surface.
JUNK_DEPTH = 0.25
#: Share of the worst pairs left out of each least-squares step.
TRIM = 0.2
#: Direction grid over the head (azimuth, elevation cells), as the radial envelope's.
GRID = (72, 36)
#: Weight of the deep interior area share in the score.
INTERIOR_WEIGHT = 0.3
#: Weight of the uncovered scalp share in the score.
COVERAGE_WEIGHT = 0.5
#: Largest ratio between per-axis scales of a registration (hair made for a narrow human
#: head fits a round stylised one).
MAX_ANISOTROPY = 1.6
#: ICP iterations per start.
ITERATIONS = 40
#: Scalp directions: elevation at least this many degrees below the hairline profile count.
HAIRLINE_MARGIN = 10.0
#: Most samples the ICP iterations use (an even subset of the surface samples).
ICP_SAMPLES = 6000
#: Samples, direction grid and steps of the first pass over every start, and starts
#: refined after it.
COARSE_SAMPLES, COARSE_GRID, COARSE_ITERATIONS, REFINED = 3000, (36, 18), 8, 3
#: Largest change of the scale in one ICP step (factor).
STEP_SCALE = 1.3
#: Most surface samples taken of a hair (the spacing grows past it).
MAX_SAMPLES = 200_000
#: Most samples of a placed hair the report (and the score of a candidate placement) uses.
REPORT_SAMPLES = 12000


@dataclass(frozen=True)
class InnerFit:
    """How well a placed hair's inner surface lies on the head.

    Attributes:
        median_mm, p95_mm: distance from the inner surface to the head mesh over the covered
            scalp directions (mm).
        coverage: share of the scalp directions that have hair over them.
        interior: share of the hair's sampled area deeper than :data:`JUNK_DEPTH` inside the
            head (before any was dropped).
        directions: covered scalp directions measured.
    """

    median_mm: float = 0.0
    p95_mm: float = 0.0
    coverage: float = 0.0
    interior: float = 0.0
    directions: int = 0

    def text(self) -> str:
        return (f"inner surface {self.median_mm:.1f} mm median, {self.p95_mm:.1f} mm p95 from the head over "
                f"{100 * self.coverage:.0f} % of the scalp")


def _cells(d: np.ndarray, grid: tuple[int, int] = GRID) -> np.ndarray:
    na, ne = grid
    az = np.arctan2(d[:, 0], d[:, 2])
    el = np.arctan2(d[:, 1], np.hypot(d[:, 0], d[:, 2]))
    ia = np.floor((az + np.pi) / (2 * np.pi) * na).astype(int) % na
    ie = np.clip(np.floor((el + np.pi / 2) / np.pi * ne).astype(int), 0, ne - 1)
    return ie * na + ia


def scalp_cells(head: HeadModel, grid: tuple[int, int] = GRID) -> np.ndarray:
    """(C,) bool over the direction ``grid``: the cells above the hairline profile (less
    :data:`HAIRLINE_MARGIN`), where a hair's inner surface should lie on the head."""
    na, ne = grid
    az = (np.arange(na) + 0.5) / na * 2 * np.pi - np.pi
    el = (np.arange(ne) + 0.5) / ne * np.pi - np.pi / 2
    ok = np.degrees(el)[:, None] >= hairline_elevation(np.degrees(az))[None, :] - HAIRLINE_MARGIN
    return ok.reshape(-1)


def inner_surface(q: np.ndarray, head: HeadModel, scalp: np.ndarray, grid: tuple[int, int] = GRID
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sample index (M,), cell (M,), deep (S,) bool): per covered scalp cell the innermost
    sample of ``q`` (S, 3) target-frame points not deeper than :data:`JUNK_DEPTH`; ``deep``
    marks the samples deeper than that."""
    v = q - head.center
    r = np.linalg.norm(v, axis=1)
    env = head.envelope.radius(v)
    rho = r / np.maximum(env, 1e-12)
    deep = rho < 1.0 - JUNK_DEPTH
    cell = _cells(v, grid)
    ok = ~deep & scalp[cell]
    idx = np.nonzero(ok)[0]
    if idx.size == 0:
        return idx, idx, deep
    order = np.lexsort((rho[idx], cell[idx]))
    idx = idx[order]
    first = np.r_[True, cell[idx][1:] != cell[idx][:-1]]
    return idx[first], cell[idx[first]], deep


def _solve(p: np.ndarray, y: np.ndarray, max_aniso: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-axis scale and translation minimising Σ |k ∘ p + t − y|², the scales within
    ``max_aniso`` of their geometric mean (an isotropic solve first)."""
    pm, ym = p.mean(axis=0), y.mean(axis=0)
    pc, yc = p - pm, y - ym
    g = float(np.sum(pc * yc) / max(np.sum(pc * pc), 1e-30))
    var = np.sum(pc * pc, axis=0)
    k = np.where(var > 1e-12, np.sum(pc * yc, axis=0) / np.maximum(var, 1e-30), g)
    k = np.where(k > 0, k, g)
    gm = float(np.exp(np.mean(np.log(np.maximum(k, 1e-9)))))
    k = np.clip(k, gm / np.sqrt(max_aniso), gm * np.sqrt(max_aniso))
    return k, ym - k * pm


def placement_score(q: np.ndarray, area: np.ndarray, head: HeadModel, scalp: np.ndarray,
                    grid: tuple[int, int] = GRID) -> tuple[float, dict]:
    """Score (lower is better) of target-frame samples ``q`` (S, 3) with areas ``area`` (S,)
    (module doc), and its parts; ``scalp`` the :func:`scalp_cells` of ``grid``."""
    if len(q) > REPORT_SAMPLES:
        keep = np.sort(np.random.default_rng(0).choice(len(q), REPORT_SAMPLES, replace=False))
        q, area = q[keep], area[keep]
    idx, cell, deep = inner_surface(q, head, scalp, grid)
    H = float(head.size[1])
    covered = np.unique(cell).size / max(int(scalp.sum()), 1)
    if idx.size:
        v = q[idx] - head.center
        gap = np.abs(np.linalg.norm(v, axis=1) - head.envelope.radius(v)) / H
        med = float(np.median(gap))
    else:
        med = 1.0
    interior = float(area[deep].sum() / max(area.sum(), 1e-30))
    score = med + COVERAGE_WEIGHT * (1.0 - covered) + INTERIOR_WEIGHT * interior
    return score, {"gap": med, "coverage": covered, "interior": interior}


@dataclass(frozen=True)
class Registration:
    """A registration: ``q = scale ∘ p + offset`` (source metres -> target world), its score."""

    scale: np.ndarray
    offset: np.ndarray
    score: float
    parts: dict
    start: str


def surface_samples(points: np.ndarray, triangles: np.ndarray, spacing: float, max_samples: int = MAX_SAMPLES
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(samples (S, 3), area per sample (S,)) covering the triangles about ``spacing`` apart
    (corners and a barycentric grid on the larger triangles; the spacing grows so that about
    ``max_samples`` cover the area: a mesh of long sliver triangles would give millions);
    every sample stands for the same share of the area."""
    tri = points[triangles]
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    total = float(area.sum())
    edge = np.linalg.norm(tri - np.roll(tri, 1, axis=1), axis=2).max(axis=1)
    while True:
        m = np.clip(np.ceil(edge / max(spacing, 1e-9)), 1, 64)
        if float(np.sum((m + 1) * (m + 2) / 2)) <= max_samples or spacing > 10 * float(edge.max(initial=0.0)):
            break
        spacing *= 1.5
    s = sample_triangles(points, triangles, spacing)
    return s, np.full(len(s), total / max(len(s), 1))


def _icp(sub: np.ndarray, head: HeadModel, scalp: np.ndarray, k: np.ndarray, t: np.ndarray, clearance: float,
         max_aniso: float, iterations: int, grid: tuple[int, int] = GRID) -> tuple[np.ndarray, np.ndarray]:
    """``iterations`` ICP steps (module doc) of samples ``sub`` from scale ``k``, offset ``t``;
    each step changes the scale by at most :data:`STEP_SCALE` (few pairs must not collapse it)."""
    for _ in range(iterations):
        q = sub * k + t
        idx, _, _ = inner_surface(q, head, scalp, grid)
        if idx.size < 8:
            break
        v = q[idx] - head.center
        r = np.linalg.norm(v, axis=1)
        target = head.center + v / np.maximum(r[:, None], 1e-12) * (head.envelope.radius(v) + clearance)[:, None]
        res = np.linalg.norm(q[idx] - target, axis=1)
        keep = res <= np.quantile(res, 1.0 - TRIM)
        k2, t2 = _solve(sub[idx[keep]], target[keep], max_aniso)
        k2c = np.clip(k2, k / STEP_SCALE, k * STEP_SCALE)
        if not np.array_equal(k2c, k2):     # keep the pairs' mean where it was solved for
            m = sub[idx[keep]].mean(axis=0)
            t2 = t2 + (k2 - k2c) * m
            k2 = k2c
        moved = float(np.abs(sub[idx] * (k2 - k) + (t2 - t)).max())
        k, t = k2, t2
        if moved < 1e-4 * float(head.size[1]):
            break
    return k, t


def _subset(samples: np.ndarray, n: int) -> np.ndarray:
    """At most ``n`` of ``samples``, a fixed pseudo-random choice (spread over the surface;
    the samples are ordered by triangle)."""
    if len(samples) <= n:
        return samples
    return samples[np.sort(np.random.default_rng(0).choice(len(samples), n, replace=False))]


def register(samples: np.ndarray, area: np.ndarray, head: HeadModel, starts: list[tuple[str, np.ndarray, np.ndarray]],
             clearance: float, max_aniso: float = MAX_ANISOTROPY) -> Registration:
    """The best ICP registration (module doc) of source ``samples`` (S, 3) metres, from each
    start (name, scale (3,), offset (3,)): every start gets :data:`COARSE_ITERATIONS` steps
    on :data:`COARSE_SAMPLES` samples, the :data:`REFINED` best of them are run to
    convergence on :data:`ICP_SAMPLES`, and the best score wins.

    Raises:
        ValueError: no start given.
    """
    if not starts:
        raise ValueError("register needs at least one start")
    scalp, cscalp = scalp_cells(head), scalp_cells(head, COARSE_GRID)
    coarse, fine = _subset(samples, COARSE_SAMPLES), _subset(samples, ICP_SAMPLES)
    carea = np.full(len(coarse), area.sum() / max(len(coarse), 1))
    ranked = []
    for name, k, t in starts:
        k, t = _icp(coarse, head, cscalp, np.asarray(k, float), np.asarray(t, float), clearance, max_aniso,
                    COARSE_ITERATIONS, COARSE_GRID)
        ranked.append((placement_score(coarse * k + t, carea, head, cscalp, COARSE_GRID)[0], name, k, t))
    ranked.sort(key=lambda r: r[0])
    best: Registration | None = None
    for _, name, k, t in ranked[:REFINED]:
        k, t = _icp(fine, head, scalp, k, t, clearance, max_aniso, ITERATIONS)
        score, parts = placement_score(samples * k + t, area, head, scalp)
        if best is None or score < best.score:
            best = Registration(k, t, score, parts, name)
    return best


def crown_starts(samples: np.ndarray, head: HeadModel, factors=(0.7, 1.0, 1.4, 2.0, 2.8),
                 lifts=(0.04, 0.3)) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Starts centred over the head with the hair's top ``lifts`` head heights above the
    target crown, at scales that make the hair's width at its top band ``factors`` × the
    head width plus a little (a voluminous style's top stands far above the crown)."""
    lo, hi = samples.min(axis=0), samples.max(axis=0)
    band = samples[samples[:, 1] > hi[1] - 0.35 * (hi[1] - lo[1])]
    width = float(np.ptp(band[:, 0])) if len(band) else float(np.ptp(samples[:, 0]))
    top = np.array([0.5 * (band[:, 0].min() + band[:, 0].max()), hi[1], 0.5 * (band[:, 2].min() + band[:, 2].max())])
    out = []
    for f in factors:
        g = f * 1.08 * float(head.size[0]) / max(width, 1e-9)
        k = np.full(3, g)
        for lift in lifts:
            crown = head.crown + [0.0, lift * float(head.size[1]), 0.0]
            out.append((f"crown x{f:g} +{lift:g}", k, crown - k * top))
    return out


def inner_fit(q: np.ndarray, area: np.ndarray, head: HeadModel, interior: float | None = None) -> InnerFit:
    """The :class:`InnerFit` of placed target-frame samples ``q`` (S, 3) (module doc): the
    distances are measured along the rays from the head centre to the head envelope
    (:class:`avatars.tryon.geometry.RadialEnvelope`, which holds the head mesh: a gap to it
    is at most the gap to the mesh), over at most :data:`REPORT_SAMPLES` samples."""
    scalp = scalp_cells(head)
    q = _subset(q, REPORT_SAMPLES)
    if interior is None:
        interior = float(np.mean(inner_surface(q, head, scalp)[2])) if len(q) else 0.0
    idx, cell, _ = inner_surface(q, head, scalp)
    if idx.size == 0:
        return InnerFit(coverage=0.0, interior=interior)
    v = q[idx] - head.center
    d = np.abs(np.linalg.norm(v, axis=1) - head.envelope.radius(v))
    return InnerFit(median_mm=1e3 * float(np.median(d)), p95_mm=1e3 * float(np.percentile(d, 95)),
                    coverage=np.unique(cell).size / max(int(scalp.sum()), 1), interior=interior,
                    directions=int(idx.size))
