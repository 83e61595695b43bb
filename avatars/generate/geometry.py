"""Primitive mesh builders for the generated avatars: ellipsoids, swept tubes, surface patches.

Everything here is plain numpy geometry in the avatar's bind space (metres, glTF
right-handed, +Y up, the avatar faces +Z). A :class:`Part` is one piece of a mesh with its
own material name, skin weights (node indices, resolved to skin joint indices by the
writer) and optional morph target deltas. Triangles are counter-clockwise seen from
outside (glTF front faces), normals are area-weighted vertex normals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Part:
    """A mesh piece.

    Attributes:
        material: material name (see :mod:`avatars.generate.palette`).
        positions: (V, 3) float64 metres, bind space.
        triangles: (T, 3) int64 vertex indices, counter-clockwise from outside.
        normals: (V, 3) unit vectors (computed from the triangles when None).
        uv: (V, 2) TEXCOORD_0 (glTF: v down) or None.
        joints: (V, 4) int64 node indices of the skinning bones.
        weights: (V, 4) float64, rows sum to 1.
        targets: morph target name -> (V, 3) position deltas (absent = zero).
    """

    material: str
    positions: np.ndarray
    triangles: np.ndarray
    normals: np.ndarray | None = None
    uv: np.ndarray | None = None
    joints: np.ndarray | None = None
    weights: np.ndarray | None = None
    targets: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def vertex_count(self) -> int:
        return int(self.positions.shape[0])

    def with_normals(self) -> Part:
        if self.normals is None:
            self.normals = vertex_normals(self.positions, self.triangles)
        return self


def vertex_normals(positions: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Area-weighted vertex normals (V, 3) of a triangle mesh; isolated vertices get +Z."""
    p = np.asarray(positions, np.float64)
    t = np.asarray(triangles, np.int64)
    fn = np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]])
    n = np.zeros_like(p)
    for k in range(3):
        np.add.at(n, t[:, k], fn)
    length = np.linalg.norm(n, axis=1, keepdims=True)
    fallback = np.array([0.0, 0.0, 1.0])
    return np.where(length > 1e-20, n / np.where(length > 1e-20, length, 1.0), fallback)


def grid_triangles(rows: int, cols: int, wrap: bool = False, offset: int = 0) -> np.ndarray:
    """Triangles (2*(rows-1)*C, 3) of a vertex grid with index ``offset + r*cols + c``.

    Rows advance along the first surface direction (a), columns along the second (b);
    the triangles face the side of cross(a, b). With ``wrap`` column ``cols-1`` joins column 0.
    """
    c_count = cols if wrap else cols - 1
    r = np.arange(rows - 1)[:, None]
    c = np.arange(c_count)[None, :]
    c1 = (c + 1) % cols
    a = offset + r * cols + c
    b = offset + (r + 1) * cols + c
    d = offset + (r + 1) * cols + c1
    e = offset + r * cols + c1
    tris = np.stack([np.stack([a, b, d], -1), np.stack([a, d, e], -1)], axis=2)
    return tris.reshape(-1, 3).astype(np.int64)


def fan_triangles(center: int, ring: np.ndarray, reverse: bool = False) -> np.ndarray:
    """Triangles closing a vertex ring (closed loop) with a centre vertex."""
    ring = np.asarray(ring, np.int64)
    nxt = np.roll(ring, -1)
    c = np.full_like(ring, center)
    tris = np.stack([ring, c, nxt], -1) if not reverse else np.stack([c, ring, nxt], -1)
    return tris


def ellipsoid(center, radii, n_around: int = 32, n_rings: int = 16, shape=None) -> tuple[np.ndarray, np.ndarray]:
    """A closed ellipsoid: (positions (V, 3), triangles (T, 3)).

    Directions d = (cos e sin a, sin e, cos e cos a) (azimuth a = 0 faces +Z) for n_rings-1
    inner elevation rings plus the two poles; position = center + radii * d, or
    ``shape(d) -> (V, 3)`` when given (for deformed heads).
    """
    e = np.linspace(-np.pi / 2, np.pi / 2, n_rings + 1)[1:-1]
    a = np.linspace(0.0, 2 * np.pi, n_around, endpoint=False)
    ee, aa = np.meshgrid(e, a, indexing="ij")
    d = np.stack([np.cos(ee) * np.sin(aa), np.sin(ee), np.cos(ee) * np.cos(aa)], -1).reshape(-1, 3)
    d = np.concatenate([np.array([[0.0, -1.0, 0.0]]), d, np.array([[0.0, 1.0, 0.0]])])
    pos = shape(d) if shape is not None else np.asarray(center, float) + np.asarray(radii, float) * d
    rows = len(e)
    body = grid_triangles(rows, n_around, wrap=True, offset=1)
    # grid rows go up (elevation), columns go around (+azimuth): cross(up, around) points inward
    body = body[:, ::-1]
    bottom = fan_triangles(0, np.arange(1, 1 + n_around))
    top_ring = 1 + (rows - 1) * n_around + np.arange(n_around)
    top = fan_triangles(len(d) - 1, top_ring, reverse=True)
    return pos, np.concatenate([bottom, body, top])


def vertical_loft(y, half_w, half_d, zc, n_around: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """A closed body of horizontal elliptical rings: (positions (V, 3), triangles (T, 3)).

    Ring i lies in the plane y[i] (increasing), centred at (0, y[i], zc[i]) with half axes
    half_w[i] (x) and half_d[i] (z); vertex (i, k) = (w sin a_k, y, zc + d cos a_k) with
    a_k = 2 pi k / n_around (k = 0 faces +Z). Both ends are closed with centre vertices.
    """
    y, w, d, zc = (np.asarray(v, float) for v in (y, half_w, half_d, zc))
    a = 2 * np.pi * np.arange(n_around) / n_around
    pos = np.stack([w[:, None] * np.sin(a), np.broadcast_to(y[:, None], (len(y), n_around)),
                    zc[:, None] + d[:, None] * np.cos(a)], -1).reshape(-1, 3)
    rows = len(y)
    tris = grid_triangles(rows, n_around, wrap=True)[:, ::-1]
    bottom = fan_triangles(len(pos), np.arange(n_around))
    top = fan_triangles(len(pos) + 1, (rows - 1) * n_around + np.arange(n_around), reverse=True)
    pos = np.concatenate([pos, [[0.0, y[0], zc[0]], [0.0, y[-1], zc[-1]]]])
    return pos, np.concatenate([tris, bottom, top])


def parallel_frames(path: np.ndarray, up0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rotation-minimizing frames along a polyline (M, 3): tangents, normals, binormals (M, 3).

    The first normal is ``up0`` made orthogonal to the first tangent; later frames are
    parallel-transported (double reflection, Wang et al. 2008). binormal = tangent x normal.
    """
    p = np.asarray(path, np.float64)
    tan = np.gradient(p, axis=0)
    tan /= np.linalg.norm(tan, axis=1, keepdims=True)
    nrm = np.empty_like(p)
    n = np.asarray(up0, float) - np.dot(up0, tan[0]) * tan[0]
    nrm[0] = n / np.linalg.norm(n)
    for i in range(len(p) - 1):
        v1 = p[i + 1] - p[i]
        c1 = v1 @ v1
        if c1 < 1e-24:
            nrm[i + 1] = nrm[i]
            continue
        r_l = nrm[i] - (2.0 / c1) * (v1 @ nrm[i]) * v1
        t_l = tan[i] - (2.0 / c1) * (v1 @ tan[i]) * v1
        v2 = tan[i + 1] - t_l
        c2 = v2 @ v2
        r = r_l - (2.0 / c2) * (v2 @ r_l) * v2 if c2 > 1e-24 else r_l
        r -= (r @ tan[i + 1]) * tan[i + 1]
        nrm[i + 1] = r / np.linalg.norm(r)
    return tan, nrm, np.cross(tan, nrm)


def sweep(path, half_width, half_thickness, up0, n_around: int = 8, start_cap: bool = True,
          end: str = "apex", bulge: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A tube swept along a polyline: (positions (V, 3), triangles (T, 3)).

    Args:
        path: (M, 3) ring centres, metres.
        half_width: (M,) cross-section half-extent along the binormal (tangent x normal).
        half_thickness: (M,) half-extent along the normal (``up0`` transported along the path).
        up0: (3,) the first ring's normal direction (e.g. outward from the scalp).
        n_around: vertices per ring (ring vertex k at angle 2*pi*k/n_around from the binormal).
        start_cap: close the first ring with a centre vertex.
        end: "apex" closes the tube with one vertex at the last path point (the last ring is
            dropped), "cap" closes the last ring with a centre vertex, "open" leaves it open.
        bulge: pushes the cross-section outward along the normal by ``bulge*half_thickness``
            times |sin| of the side angle, making hair strands crescent-shaped (0 = ellipse).

    Vertex order: rings (first to last), then the start centre, then the end vertex; the
    vertex ``i * n_around + k`` belongs to ring ``i``.
    """
    p = np.asarray(path, np.float64)
    w = np.broadcast_to(np.asarray(half_width, float), (len(p),))
    t = np.broadcast_to(np.asarray(half_thickness, float), (len(p),))
    tan, nrm, bin_ = parallel_frames(p, np.asarray(up0, float))
    rings_n = len(p) - 1 if end == "apex" else len(p)
    th = 2 * np.pi * np.arange(n_around) / n_around
    cos, sin = np.cos(th), np.sin(th)
    lift = bulge * (1.0 - np.abs(cos))
    pos = (p[:rings_n, None, :]
           + bin_[:rings_n, None, :] * (w[:rings_n, None, None] * cos[None, :, None])
           + nrm[:rings_n, None, :] * (t[:rings_n, None, None] * (sin[None, :, None] + lift[None, :, None])))
    pos = pos.reshape(-1, 3)
    tris = [grid_triangles(rings_n, n_around, wrap=True)]
    extra = []
    base = rings_n * n_around
    if start_cap:
        extra.append(p[0])
        tris.append(fan_triangles(base, np.arange(n_around), reverse=True))
        base += 1
    last_ring = (rings_n - 1) * n_around + np.arange(n_around)
    if end in ("apex", "cap"):
        extra.append(p[-1])
        tris.append(fan_triangles(base, last_ring))
    if extra:
        pos = np.concatenate([pos, np.asarray(extra)])
    return pos, np.concatenate(tris)


def catmull_rom(points: np.ndarray, samples_per_segment: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform Catmull-Rom spline through ``points`` (N, 3).

    Returns (curve (S, 3), u (S,)) with S = (N-1)*samples_per_segment + 1 and ``u`` the
    spline parameter: u = i + f on the segment from point i to point i+1 (so u is an exact
    integer at every control point). End tangents use mirrored phantom points.
    """
    pts = np.asarray(points, np.float64)
    ext = np.concatenate([2 * pts[:1] - pts[1:2], pts, 2 * pts[-1:] - pts[-2:-1]])
    n_seg = len(pts) - 1
    u = np.linspace(0.0, n_seg, n_seg * samples_per_segment + 1)
    i = np.minimum(np.floor(u).astype(int), n_seg - 1)
    f = (u - i)[:, None]
    p0, p1, p2, p3 = ext[i], ext[i + 1], ext[i + 2], ext[i + 3]
    curve = 0.5 * ((2 * p1) + (-p0 + p2) * f + (2 * p0 - 5 * p1 + 4 * p2 - p3) * f ** 2
                   + (-p0 + 3 * p1 - 3 * p2 + p3) * f ** 3)
    return curve, u


def smoothstep(x):
    """Hermite 3x^2 - 2x^3 of x clipped to [0, 1]."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def on_height_field(zfun, x, y, lift: float) -> np.ndarray:
    """Points (..., 3) on the surface z = zfun(x, y) (a front-facing height field), lifted
    ``lift`` metres along its unit normal (central differences, h = 0.1 mm)."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    h = 1e-4
    z = zfun(x, y)
    gx = (zfun(x + h, y) - zfun(x - h, y)) / (2 * h)
    gy = (zfun(x, y + h) - zfun(x, y - h)) / (2 * h)
    n = np.stack([-gx, -gy, np.ones_like(z)], -1)
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    return np.stack([x, y, z], -1) + lift * n


def merge(parts: list[Part]) -> Part:
    """Concatenate parts of one material into one (targets union, missing = zeros)."""
    names = []
    for p in parts:
        for k in p.targets:
            if k not in names:
                names.append(k)
    offs = np.cumsum([0] + [p.vertex_count for p in parts])
    uv = None
    if all(p.uv is not None for p in parts):
        uv = np.concatenate([p.uv for p in parts])
    elif any(p.uv is not None for p in parts):
        uv = np.concatenate([p.uv if p.uv is not None else np.zeros((p.vertex_count, 2)) for p in parts])
    return Part(
        material=parts[0].material,
        positions=np.concatenate([p.positions for p in parts]),
        triangles=np.concatenate([p.triangles + o for p, o in zip(parts, offs)]),
        normals=np.concatenate([p.with_normals().normals for p in parts]),
        uv=uv,
        joints=np.concatenate([p.joints for p in parts]),
        weights=np.concatenate([p.weights for p in parts]),
        targets={k: np.concatenate([p.targets.get(k, np.zeros((p.vertex_count, 3))) for p in parts]) for k in names},
    )
