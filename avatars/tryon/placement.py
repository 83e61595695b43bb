"""Where a hair goes on the target head: the crown and scale of the head it was made for.

Two methods, chosen per style (:func:`place`):

- *Opening* (:func:`estimate_source_head`, the first fitter's method): the source head is
  the largest ellipsoid of human head proportions (:data:`HEAD_PROPORTIONS`, or the size a
  MakeHuman ``.mhclo`` states: method "head reference") whose upper half the hair covers
  without passing through it; crown on crown, per-axis scale from head size with the
  anisotropy limited to :data:`MAX_ANISOTROPY`.
- *Registration* (:mod:`avatars.tryon.register`): the hair's inner surface registered to the
  target head envelope, for hair the opening method cannot place (no head-shaped opening: a
  closed cap, an afro's thick shell; or an opening the ellipsoid search misses) or places
  badly.

The opening placement is kept when it succeeds and scores well (:func:`opening_is_good`:
the inner surface within :data:`OPENING_GAP` head heights of the head in the median, at least
:data:`OPENING_COVERAGE` of the scalp covered, no deep interior), so the styles it placed
well stay where they were; otherwise the registration is run from the opening's placement
(when there is one) and from crown-on-top starts at several scales, and the best score wins.

Every placement is returned as (method, per-axis scale k, source crown, source head size,
registration or None) in the form ``q = target crown + k ∘ (p − source crown)``, so the
length mapping below the chin (:func:`avatars.tryon.fit.length_map`) applies to either.

Frames: source points in metres (file units scaled), target world rest (metres).
"""

from __future__ import annotations

import logging

import numpy as np

from avatars.hair.units import UNITS, UnitChoice

from .errors import FitError
from .head import HeadModel
from .register import JUNK_DEPTH, crown_starts, placement_score, register, scalp_cells, surface_samples

log = logging.getLogger(__name__)

#: Human head proportions (width, height, depth) / height, MakeHuman's base head.
HEAD_PROPORTIONS = np.array([0.634, 1.0, 0.837])
#: Largest ratio between the per-axis scales of the opening method's alignment.
MAX_ANISOTROPY = 1.25
#: Share of the covering hair allowed inside the estimated source head.
INSIDE_SHARE = 0.01
#: The opening placement is kept when its inner surface's median gap is at most this many
#: head heights, ...
OPENING_GAP = 0.08
#: ... it covers at least this share of the scalp directions, ...
OPENING_COVERAGE = 0.6
#: ... and at most this share of its area lies deep inside the head.
OPENING_INTERIOR = 0.02
#: A placement that covers less of the scalp than this is no placement (the hair has no
#: side that lies on a scalp).
MIN_COVERAGE = 0.1
#: Samples per head height for the registration (surface sampling spacing = H / this).
SAMPLES_PER_HEAD = 60.0
#: Largest angle (degrees) between neighbouring triangles' normals across which the closing
#: faces inside the head are grown (:func:`interior_triangles`).
CREASE_DEG = 40.0
#: A human head height (metres), to name a guessed unit from the source head's size.
HUMAN_HEAD = 0.23


def estimate_source_head(p: np.ndarray, size: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(centre (3,), size (3,)) of the head a hairstyle ``p`` (V, 3, metres) was made around:
    the largest ellipsoid of :data:`HEAD_PROPORTIONS` (or of ``size`` when known) whose upper
    half holds at most :data:`INSIDE_SHARE` of the hair above its centre, pushed up to the
    crown. Raises :class:`~avatars.tryon.errors.FitError` when no position fits (no
    head-shaped opening in the hair)."""
    lo, hi = p.min(axis=0), p.max(axis=0)
    top = p[p[:, 1] > hi[1] - 0.25 * (hi[1] - lo[1])]
    cx = 0.5 * (top[:, 0].min() + top[:, 0].max())
    width = hi[0] - lo[0]
    heights = [float(size[1])] if size is not None else list(np.linspace(1.6, 0.5, 23) * width / HEAD_PROPORTIONS[0])
    for h in heights:
        r = 0.5 * (size if size is not None else h * HEAD_PROPORTIONS)
        zs = np.linspace(lo[2] + 0.5 * r[2], hi[2] - 0.5 * r[2], 25) if hi[2] - lo[2] > r[2] else np.array([0.5 * (lo[2] + hi[2])])
        ys = hi[1] - r[1] * np.linspace(0.85, 1.6, 31)
        best = None
        for cy in ys:            # highest first: the head sits as high in the hair as it can
            ok_z = []
            upper = p[p[:, 1] > cy]
            if len(upper) < 20:
                continue
            q = (upper - [cx, cy, 0.0]) / r
            for cz in zs:
                inside = (q[:, 0] ** 2 + q[:, 1] ** 2 + (q[:, 2] - cz / r[2]) ** 2) < 1.0
                if inside.mean() <= INSIDE_SHARE:
                    ok_z.append(cz)
            if ok_z:
                best = (cy, 0.5 * (min(ok_z) + max(ok_z)))
                break
        if best is not None:
            return np.array([cx, best[0], best[1]]), 2.0 * r
    raise FitError("no head-shaped opening found in the hair")


def opening_is_good(parts: dict) -> bool:
    """True when an opening placement's score parts (:func:`register.placement_score`) say it
    lies well on the head (module doc)."""
    return parts["gap"] <= OPENING_GAP and parts["coverage"] >= OPENING_COVERAGE and parts["interior"] <= OPENING_INTERIOR


def place(p0: np.ndarray, triangles: np.ndarray, head: HeadModel, reference: np.ndarray | None, clearance: float):
    """(method, k (3,), source crown (3,), source head size (3,), :class:`Registration` or
    None) for source points ``p0`` (V, 3) metres, or None when no placement puts any of the
    hair over the scalp (module doc)."""
    opening, opening_score = None, np.inf
    try:
        c_s, size_s = estimate_source_head(p0, reference)
    except FitError:
        c_s = size_s = None
    samples, area = surface_samples(p0, triangles, float(np.ptp(p0, axis=0).max()) / SAMPLES_PER_HEAD)
    starts = []
    if size_s is not None:
        k = head.size / size_s
        g = float(np.exp(np.log(k).mean()))
        k = np.clip(k, g / np.sqrt(MAX_ANISOTROPY), g * np.sqrt(MAX_ANISOTROPY))
        crown = c_s + [0.0, 0.5 * size_s[1], 0.0]
        t = head.crown - k * crown
        opening_score, parts = placement_score(samples * k + t, area, head, scalp_cells(head))
        method = "head reference" if reference is not None else "opening"
        log.debug("opening placement: score %.4f %s", opening_score, parts)
        opening = (method, k, crown, size_s, None)
        if opening_is_good(parts):
            return opening
        starts.append(("opening", k, t))
    starts += crown_starts(samples, head)
    reg = register(samples, area, head, starts, clearance)
    log.debug("registration from %s: score %.4f %s", reg.start, reg.score, reg.parts)
    if reg.parts["coverage"] < MIN_COVERAGE:
        return opening
    if opening is not None and reg.score >= opening_score:
        return opening
    k, t = reg.scale, reg.offset
    crown = (head.crown - t) / k
    return "registration", k, crown, head.size / k, reg


def interior_triangles(p: np.ndarray, triangles: np.ndarray, head: HeadModel) -> np.ndarray:
    """(T,) bool: the closing faces of a hair inside the target head (e.g. a cap's lid): the
    triangles whose three corners lie deeper inside the head envelope than
    :data:`register.JUNK_DEPTH` of its radius, grown over the surface (corners welded by
    position) across edges where it stays smooth (normals within :data:`CREASE_DEG`): a flat
    lid is removed up to the crease where it meets the dome, the dome stays."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    v = p - head.center
    rho = np.linalg.norm(v, axis=1) / np.maximum(head.envelope.radius(v), 1e-12)
    deep = (rho[triangles] < 1.0 - JUNK_DEPTH).all(axis=1)
    if not deep.any():
        return deep
    size = float(np.ptp(p, axis=0).max())
    _, key = np.unique(np.round(p / max(1e-6 * size, 1e-30)).astype(np.int64), axis=0, return_inverse=True)
    t = key.reshape(-1)[triangles]
    nrm = np.cross(p[triangles[:, 1]] - p[triangles[:, 0]], p[triangles[:, 2]] - p[triangles[:, 0]])
    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-30)
    n_t = len(t)
    e = np.sort(np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]]), axis=1)
    owner = np.tile(np.arange(n_t), 3)
    order = np.lexsort((e[:, 1], e[:, 0]))
    e, owner = e[order], owner[order]
    same = np.nonzero((e[1:] == e[:-1]).all(axis=1))[0]
    a, b = owner[same], owner[same + 1]
    smooth = np.abs(np.sum(nrm[a] * nrm[b], axis=1)) > np.cos(np.radians(CREASE_DEG))
    g = coo_matrix((np.ones(int(smooth.sum())), (a[smooth], b[smooth])), shape=(n_t, n_t))
    _, lab = connected_components(g, directed=False)
    return np.isin(lab, np.unique(lab[deep]))


def unit_from_head(choice: UnitChoice, size_s: np.ndarray, name: str) -> tuple[str, str]:
    """(units line, note) for a guessed unit, re-decided by the size of the head the style was
    made for: the unit that makes that head closest to a human head (:data:`HUMAN_HEAD`)."""
    height = float(size_s[1]) / choice.scale          # source head height in file units
    best = min(UNITS.items(), key=lambda kv: abs(np.log(height * kv[1] / HUMAN_HEAD)))
    line = (f"{best[0]} guessed from the size of the head the style was made for "
            f"({height * best[1]:.3f} m); the file states no units")
    if best[0] == choice.name:
        return line, ""
    return line, f"{name}: units {best[0]}, not {choice.name}: the style was made for a {height * best[1]:.3f} m head"

