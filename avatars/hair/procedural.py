"""Procedural hairstyles: a test corpus made by our own code (CC0 by construction).

:func:`write_corpus` writes every style of :data:`STYLES` as ``DIR/<name>/<name>.obj`` with a
MakeHuman-style ``.mhmat`` beside it (the diffuse colour; no texture), so the same loader
reads them as the shared MakeHuman styles (:func:`avatars.hair.load_obj`); ``swaycam hair
corpus --out DIR`` runs it. Each style is made around its own *source head* (an ellipsoid
of a given height and proportions, at an offset, in a given file unit), deliberately unlike
the avatars it will be fitted to, so the fit's generality is exercised: head heights from
0.19 to 0.26 m, widths 0.60–0.70 and depths 0.80–0.90 of the height, centres off the origin,
units m / dm (with MakeHuman's ``# basemesh hm08`` header) / cm / mm. No ``.mhclo`` is
written: the fit gets no head size from the file.

The styles (:data:`STYLES`), each a few thousand vertices:

- ``proc_long``: a cap and a curtain falling down the back to the waist, one connected sheet
  (the case where chains of one sheet must not tear it).
- ``proc_layered``: three separate shells at growing offsets and lengths, each laid over
  the head and falling on both sides.
- ``proc_braid``: a cap and a braid of 12 separate overlapping lobes from the nape, ending in
  a tuft (fragments joined into one strand, like the articles' French braid).
- ``proc_bun``: a cap and a torus bun at the back of the crown (a closed piece of its own).
- ``proc_afro``: a voluminous thick shell: a bumpy outer surface far from the head, an inner
  surface on the scalp, closed at the rim (one closed surface; its opening is a dent).
- ``proc_twintails``: a cap and two tapered tubes from above the ears (UV seams: welded).
- ``proc_crop``: a short crop, a ridged cap with a short fringe: no strand long enough for
  a chain of its own.
- ``proc_cap``: a closed cap with no hole: a dome over the scalp closed by a lid through the
  head (there is no head-shaped opening at all).

Frames: +Y up, facing +Z (MakeHuman and glTF), file units as stated per style.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

#: Hairline elevation (degrees above the source head centre's horizontal plane) by azimuth
#: (degrees from the front, either side), of the procedural source heads.
HAIRLINE = ((0.0, 30.0, 60.0, 90.0, 120.0, 150.0, 180.0), (30.0, 27.0, 15.0, -5.0, -25.0, -38.0, -45.0))


@dataclass(frozen=True)
class SourceHead:
    """The head a procedural style is made around.

    Attributes:
        height: crown to chin, metres.
        proportions: (width, height, depth) / height.
        center: (3,) metres, in the style's own frame.
        unit: metres per file unit of the written OBJ.
        makehuman: write MakeHuman's ``# basemesh hm08`` header (decimetres stated).
    """

    height: float
    proportions: tuple[float, float, float]
    center: tuple[float, float, float]
    unit: float
    makehuman: bool = False

    @property
    def axes(self) -> np.ndarray:
        """(3,) ellipsoid semi-axes, metres."""
        return 0.5 * self.height * np.asarray(self.proportions, float)

    def radius(self, d: np.ndarray) -> np.ndarray:
        """(P,) distance from the centre to the head surface along unit directions ``d`` (P, 3)."""
        return 1.0 / np.sqrt(np.sum((d / self.axes) ** 2, axis=-1))

    def point(self, az: np.ndarray, el: np.ndarray, offset: float = 0.0) -> np.ndarray:
        """(..., 3) points ``offset`` metres outside the head surface at azimuth/elevation
        (radians; azimuth 0 = +Z front, +π/2 = +X)."""
        d = direction(az, el)
        r = self.radius(d) + offset
        return np.asarray(self.center) + d * r[..., None]


def direction(az, el) -> np.ndarray:
    """(..., 3) unit vectors at azimuth (from +Z towards +X) and elevation, radians."""
    az, el = np.broadcast_arrays(np.asarray(az, float), np.asarray(el, float))
    return np.stack([np.cos(el) * np.sin(az), np.sin(el), np.cos(el) * np.cos(az)], axis=-1)


def hairline(az: np.ndarray) -> np.ndarray:
    """Hairline elevation (radians) at azimuths (radians) of a procedural source head."""
    a = np.abs((np.degrees(np.asarray(az, float)) + 180.0) % 360.0 - 180.0)
    return np.radians(np.interp(a, *HAIRLINE))


class MeshBuilder:
    """Accumulates vertices (metres), texture coordinates and triangles of several pieces.
    A *seam* (``wrap``) shares the position index but not the texture coordinate, as a UV
    seam in an OBJ does."""

    def __init__(self):
        self.v: list[np.ndarray] = []
        self.vt: list[np.ndarray] = []
        self.f: list[np.ndarray] = []     # (T, 3, 2) pairs (v index, vt index)
        self.nv = 0
        self.nt = 0

    def grid(self, pts: np.ndarray, valid: np.ndarray | None = None, *, wrap: bool = False, wrap_v: bool = False,
             pole: np.ndarray | None = None, pole_end: np.ndarray | None = None, flip: bool = False) -> None:
        """Add a quad grid ``pts`` (nu, nv, 3): u across, v along. ``valid`` (nu, nv) drops
        vertices (only quads with four valid corners are made); ``wrap`` joins column
        nu − 1 to column 0 through a UV seam (``wrap_v`` the last row to row 0); ``pole``
        (3,) closes row 0 with a fan to one vertex, ``pole_end`` the last row; ``flip``
        reverses the winding."""
        nu, nv = pts.shape[:2]
        valid = np.ones((nu, nv), bool) if valid is None else valid
        vid = np.full((nu, nv), -1, np.int64)
        vid[valid] = self.nv + np.arange(int(valid.sum()))
        self.v.append(pts[valid])
        self.nv += int(valid.sum())
        cols = nu + 1 if wrap else nu
        rows = nv + 1 if wrap_v else nv
        uu, vv = np.meshgrid(np.arange(cols) / max(cols - 1, 1), np.arange(rows) / max(rows - 1, 1), indexing="ij")
        tid = self.nt + np.arange(cols * rows).reshape(cols, rows)
        self.vt.append(np.stack([uu, vv], axis=-1).reshape(-1, 2))
        self.nt += cols * rows
        tris = []
        for i in range(cols - 1):
            i1 = (i + 1) % nu
            for j in range(rows - 1):
                j1 = (j + 1) % nv
                a, b, c, d = vid[i, j], vid[i1, j], vid[i1, j1], vid[i, j1]
                if min(a, b, c, d) < 0:
                    continue
                ta, tb, tc, td = tid[i, j], tid[i + 1, j], tid[i + 1, j + 1], tid[i, j + 1]
                tris.append([(a, ta), (b, tb), (c, tc)])
                tris.append([(a, ta), (c, tc), (d, td)])
        for where, row, flip_fan in ((pole, 0, False), (pole_end, nv - 1, True)):
            if where is None:
                continue
            p, tp = self.nv, self.nt
            self.v.append(np.asarray(where, float)[None])
            self.vt.append(np.array([[0.5, float(row > 0)]]))
            self.nv += 1
            self.nt += 1
            for i in range(cols - 1):
                i1 = (i + 1) % nu
                if vid[i, row] >= 0 and vid[i1, row] >= 0:
                    fan = [(p, tp), (vid[i1, row], tid[i + 1, row]), (vid[i, row], tid[i, row])]
                    tris.append(fan[::-1] if flip_fan else fan)
        if tris:
            t = np.asarray(tris, np.int64)
            if flip:
                t = t[:, ::-1]
            self.f.append(t)

    def obj_text(self, unit: float, header: str, makehuman: bool) -> str:
        """The OBJ file text, positions divided by ``unit`` (metres per file unit)."""
        v = np.concatenate(self.v) / unit
        vt = np.concatenate(self.vt)
        f = np.concatenate(self.f) + 1
        lines = [f"# {line}" for line in header.splitlines()]
        if makehuman:
            lines.append("# basemesh hm08")
        lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in v]
        lines += [f"vt {a:.5f} {1.0 - b:.5f}" for a, b in vt]
        lines += ["f " + " ".join(f"{a}/{b}" for a, b in tri) for tri in f]
        return "\n".join(lines) + "\n"


def _column_curve(head: SourceHead, az: float, offset: float, rows_cap: int, drop: float, row_step: float,
                  stop_el: float | None = None, back_tilt: float = 0.08) -> np.ndarray:
    """(n, 3) one column of a cap-and-curtain sheet at azimuth ``az``: over the head at
    ``offset`` from the crown down to elevation ``stop_el`` (default: the hairline), then, when
    ``drop`` > 0, from the widest point (elevation 0, reached over the head) straight down
    ``drop`` metres (leaning back by ``back_tilt`` per metre), in steps of about ``row_step``."""
    lo = hairline(az) if stop_el is None else stop_el
    if drop > 0:
        lo = min(lo, 0.0)
    el = np.linspace(np.pi / 2, lo, rows_cap + 1)[1:]
    cap = head.point(np.full_like(el, az), el, offset)
    if drop <= 0:
        return cap
    n = max(int(np.ceil(drop / row_step)), 1)
    t = np.arange(1, n + 1) / n * drop
    start = cap[-1]
    out = np.repeat(start[None], n, axis=0)
    out[:, 1] -= t
    horiz = np.array([np.sin(az), 0.0, np.cos(az)])
    out += horiz[None] * (0.02 * np.sqrt(t))[:, None]          # falls slightly away from the neck
    out[:, 2] -= back_tilt * t
    return np.concatenate([cap, out])


def _sheet(b: MeshBuilder, head: SourceHead, offset: float, drop: Callable[[np.ndarray], np.ndarray],
           n_az: int = 48, rows_cap: int = 12, row_step: float = 0.018,
           stop_el: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
    """A cap-and-curtain sheet: columns all around the head (a pole at the crown), each
    hanging ``drop(az)`` metres below the widest point (0: it ends at the hairline, or at
    ``stop_el(az)``)."""
    az = np.linspace(-np.pi, np.pi, n_az, endpoint=False)
    drops = drop(az)
    stops = None if stop_el is None else stop_el(az)
    cols = [_column_curve(head, float(a), offset, rows_cap, float(d), row_step,
                          None if stops is None else float(stops[i])) for i, (a, d) in enumerate(zip(az, drops))]
    n = max(len(c) for c in cols)
    pts = np.zeros((len(az), n, 3))
    valid = np.zeros((len(az), n), bool)
    for i, c in enumerate(cols):
        pts[i, :len(c)] = c
        valid[i, :len(c)] = True
    b.grid(pts, valid, wrap=True, pole=head.point(0.0, np.pi / 2, offset))


def _sphere(b: MeshBuilder, center: np.ndarray, axes: np.ndarray, frame: np.ndarray, n_u: int = 10, n_v: int = 7) -> None:
    """A closed ellipsoid (semi-axes ``axes`` (3,) along the columns of ``frame`` (3, 3))."""
    u = np.linspace(0.0, 2 * np.pi, n_u, endpoint=False)
    v = np.linspace(0.0, np.pi, n_v + 1)[1:-1]
    uu, vv = np.meshgrid(u, v, indexing="ij")
    local = np.stack([np.sin(vv) * np.cos(uu) * axes[0], np.sin(vv) * np.sin(uu) * axes[1], np.cos(vv) * axes[2]], -1)
    pts = center + local @ frame.T
    b.grid(pts, wrap=True, pole=center + frame[:, 2] * axes[2], pole_end=center - frame[:, 2] * axes[2])


def _tube(b: MeshBuilder, path: np.ndarray, radius: np.ndarray, n_u: int = 10) -> None:
    """A tapered tube along ``path`` (n, 3) with ``radius`` (n,), open at the root and closed
    at the tip, with a UV seam along it."""
    t = np.gradient(path, axis=0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    ref = np.array([0.0, 0.0, 1.0])
    n1 = np.cross(t, ref)
    bad = np.linalg.norm(n1, axis=1) < 1e-6
    n1[bad] = np.cross(t[bad], [1.0, 0.0, 0.0])
    n1 /= np.linalg.norm(n1, axis=1, keepdims=True)
    n2 = np.cross(t, n1)
    u = np.linspace(0.0, 2 * np.pi, n_u, endpoint=False)
    ring = np.cos(u)[:, None, None] * n1[None] + np.sin(u)[:, None, None] * n2[None]
    pts = path[None] + ring * radius[None, :, None]
    b.grid(pts[:, ::-1], wrap=True, pole=path[-1] + t[-1] * 0.3 * radius[-1])


def _frame(axis: np.ndarray) -> np.ndarray:
    """(3, 3) an orthonormal frame whose third column is ``axis``."""
    z = axis / np.linalg.norm(axis)
    x = np.cross([0.0, 1.0, 0.0], z)
    if np.linalg.norm(x) < 1e-6:
        x = np.array([1.0, 0.0, 0.0])
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(z, x), z], axis=1)


# --------------------------------------------------------------------------- the styles


def _cap(b: MeshBuilder, head: SourceHead, offset: float, n_az: int = 40, rows: int = 10) -> None:
    _sheet(b, head, offset, lambda az: np.zeros_like(az), n_az=n_az, rows_cap=rows)


def _long(head: SourceHead) -> MeshBuilder:
    b = MeshBuilder()
    H = head.height

    def drop(az):   # behind the ears down to the waist, the sides to the jaw, the front a fringe
        a = np.abs(az)
        return np.where(a > np.radians(105), 1.75 * H, np.where(a > np.radians(70), 0.5 * H, 0.0))

    _sheet(b, head, 0.012 * H / 0.22, drop, n_az=56, rows_cap=14, row_step=0.02 * H / 0.22)
    return b


def _layered(head: SourceHead) -> MeshBuilder:
    b = MeshBuilder()
    H = head.height
    s = H / 0.22
    for k, (off, back, side) in enumerate(((0.010, 1.0, 0.55), (0.020, 0.75, 0.45), (0.030, 0.45, 0.35))):
        def drop(az, back=back, side=side):
            a = np.abs(az)
            return np.where(a > np.radians(100), back * H, np.where(a > np.radians(65), side * H, 0.0))

        _sheet(b, head, off * s, drop, n_az=44, rows_cap=11, row_step=0.022 * s)
    return b


def _braid(head: SourceHead) -> MeshBuilder:
    b = MeshBuilder()
    H = head.height
    s = H / 0.22
    _cap(b, head, 0.01 * s)
    start = head.point(np.pi, np.radians(-30.0), 0.012 * s)
    path = [start]
    step = 0.032 * s
    for k in range(12):
        path.append(path[-1] + np.array([0.0, -step, -0.18 * step]))
    path = np.array(path)
    for k in range(12):
        c = 0.5 * (path[k] + path[k + 1]) + np.array([0.006 * s * (1 if k % 2 else -1), 0.0, 0.0])
        axis = path[k] - path[k + 1]
        axis = axis + np.array([0.35 * step * (1 if k % 2 else -1), 0.0, 0.0])
        r = (0.019 - 0.006 * k / 11) * s
        _sphere(b, c, np.array([r, 0.8 * r, 0.72 * step]), _frame(axis))
    tip = np.array([path[-1] + np.array([0.0, -0.012 * s * k, -0.002 * s * k]) for k in range(6)])
    _tube(b, tip, np.linspace(0.012, 0.002, 6) * s, n_u=8)
    return b


def _bun(head: SourceHead) -> MeshBuilder:
    b = MeshBuilder()
    H = head.height
    s = H / 0.22
    _cap(b, head, 0.012 * s, n_az=44, rows=11)
    d = direction(np.pi, np.radians(38.0))
    c = head.point(np.pi, np.radians(38.0), 0.03 * s)
    frame = _frame(d)
    R, r = 0.034 * s, 0.02 * s
    u = np.linspace(0.0, 2 * np.pi, 20, endpoint=False)
    v = np.linspace(0.0, 2 * np.pi, 10, endpoint=False)
    uu, vv = np.meshgrid(u, v, indexing="ij")
    local = np.stack([(R + r * np.cos(vv)) * np.cos(uu), (R + r * np.cos(vv)) * np.sin(uu), r * np.sin(vv)], -1)
    pts = c + local @ frame.T
    b.grid(pts, wrap=True, wrap_v=True)
    return b


def _afro(head: SourceHead) -> MeshBuilder:
    b = MeshBuilder()
    H = head.height
    s = H / 0.22
    n_az, rows = 48, 14
    az = np.linspace(-np.pi, np.pi, n_az, endpoint=False)
    rim = hairline(az) - np.radians(8.0)
    t = np.linspace(0.0, 1.0, rows + 1)[1:]
    el = np.pi / 2 + (rim[:, None] - np.pi / 2) * t[None]
    aa = np.broadcast_to(az[:, None], el.shape)
    inner = head.point(aa, el, 0.008 * s)
    center = np.asarray(head.center) + np.array([0.0, 0.12 * H, -0.03 * H])
    d = direction(aa, el)
    bump = 1.0 + 0.06 * np.sin(5 * aa) * np.sin(4 * el) + 0.04 * np.cos(7 * aa + 3 * el)
    outer_r = 0.72 * H * bump
    outer = center + d * outer_r[..., None]
    # the outer shell comes down to the rim: below the middle of the head it closes in onto the inner rim
    close = np.clip((t - 0.6) / 0.4, 0.0, 1.0)[None, :, None] ** 1.5
    outer = outer * (1 - close) + inner * close + d * (0.02 * s) * close
    b.grid(inner, wrap=True, pole=head.point(0.0, np.pi / 2, 0.008 * s), flip=True)
    b.grid(outer, wrap=True, pole=center + np.array([0.0, 0.72 * H, 0.0]))
    rim_strip = np.stack([inner[:, -1], outer[:, -1]], axis=1)
    b.grid(rim_strip, wrap=True)
    return b


def _twintails(head: SourceHead) -> MeshBuilder:
    b = MeshBuilder()
    H = head.height
    s = H / 0.22
    _cap(b, head, 0.011 * s, n_az=44, rows=11)
    for side in (-1.0, 1.0):
        az = side * np.radians(110.0)
        root = head.point(az, np.radians(22.0), 0.0)
        out = direction(az, 0.0)
        k = np.linspace(0.0, 1.0, 22)
        path = root[None] + out[None] * (0.07 * s * np.sin(np.pi * k * 0.6))[:, None]
        path[:, 1] -= 0.36 * s * k ** 1.3
        path[:, 2] -= 0.03 * s * k
        _tube(b, path, (0.026 - 0.02 * k) * s, n_u=12)
    return b


def _crop(head: SourceHead) -> MeshBuilder:
    b = MeshBuilder()
    H = head.height
    s = H / 0.22
    n_az, rows = 64, 14
    az = np.linspace(-np.pi, np.pi, n_az, endpoint=False)
    lo = hairline(az)
    t = np.linspace(0.0, 1.0, rows + 1)[1:]
    el = np.pi / 2 + (lo[:, None] - np.pi / 2) * t[None]
    aa = np.broadcast_to(az[:, None], el.shape)
    ridge = 0.008 * s * (0.5 + 0.5 * np.cos(16 * aa)) * (1.0 - t[None] ** 3)
    pts = head.point(aa, el, 0.006 * s) + direction(aa, el) * ridge[..., None]
    b.grid(pts, wrap=True, pole=head.point(0.0, np.pi / 2, 0.014 * s))
    # a short fringe over the forehead: a flap hanging 4 cm from the front hairline
    fa = np.linspace(-np.radians(40), np.radians(40), 12)
    top = head.point(fa, hairline(fa) + np.radians(8.0), 0.01 * s)
    drop = np.linspace(0.0, 0.04 * s, 5)
    fwd = direction(fa, 0.0)
    flap = top[:, None] + fwd[:, None] * (0.01 * s * np.sqrt(drop / drop[-1]))[None, :, None]
    flap[..., 1] -= drop[None]
    b.grid(flap)
    return b


def _closed_cap(head: SourceHead) -> MeshBuilder:
    b = MeshBuilder()
    H = head.height
    s = H / 0.22
    n_az, rows = 48, 12
    az = np.linspace(-np.pi, np.pi, n_az, endpoint=False)
    lo = hairline(az) - np.radians(4.0)
    t = np.linspace(0.0, 1.0, rows + 1)[1:]
    el = np.pi / 2 + (lo[:, None] - np.pi / 2) * t[None]
    aa = np.broadcast_to(az[:, None], el.shape)
    dome = head.point(aa, el, 0.018 * s)
    b.grid(dome, wrap=True, pole=head.point(0.0, np.pi / 2, 0.018 * s))
    # the lid: rings from the rim in to its middle, through the head (no opening at all)
    rim = dome[:, -1]
    mid = rim.mean(axis=0)
    k = np.linspace(1.0, 0.0, 6)[:-1]
    lid = mid + (rim[:, None] - mid) * k[None, :, None]
    b.grid(lid, wrap=True, pole_end=mid, flip=True)
    return b


@dataclass(frozen=True)
class Style:
    """A procedural style: its maker, source head and sRGB diffuse colour."""

    name: str
    make: Callable[[SourceHead], MeshBuilder]
    head: SourceHead
    color: tuple[float, float, float]
    about: str


#: The corpus (module doc). Source heads differ in size, proportions, offset and units.
STYLES = (
    Style("proc_long", _long, SourceHead(0.245, (0.66, 1.0, 0.85), (0.0, 1.60, 0.03), 0.01), (0.20, 0.12, 0.06),
          "cap and curtain to the waist, one sheet; cm; 0.245 m head"),
    Style("proc_layered", _layered, SourceHead(0.20, (0.62, 1.0, 0.80), (0.0, 0.0, 0.0), 1.0), (0.55, 0.36, 0.18),
          "three shells of growing length; m; 0.20 m head at the origin"),
    Style("proc_braid", _braid, SourceHead(0.23, (0.64, 1.0, 0.84), (0.0, 1.65, 0.01), 0.1, True), (0.12, 0.08, 0.05),
          "cap and a braid of 12 lobes; MakeHuman dm; 0.23 m head"),
    Style("proc_bun", _bun, SourceHead(0.26, (0.70, 1.0, 0.90), (0.02, 1.70, -0.02), 0.001), (0.35, 0.20, 0.10),
          "cap and a torus bun; mm; 0.26 m head"),
    Style("proc_afro", _afro, SourceHead(0.22, (0.64, 1.0, 0.84), (0.05, 1.50, -0.02), 0.01), (0.08, 0.06, 0.05),
          "voluminous closed shell; cm; 0.22 m head off-centre"),
    Style("proc_twintails", _twintails, SourceHead(0.19, (0.68, 1.0, 0.86), (0.0, 1.10, 0.0), 1.0), (0.85, 0.75, 0.45),
          "cap and two tapered tails; m; a child's 0.19 m head"),
    Style("proc_crop", _crop, SourceHead(0.24, (0.68, 1.0, 0.88), (0.0, 1.68, 0.0), 1.0), (0.25, 0.18, 0.12),
          "ridged short crop with a fringe; m; 0.24 m head"),
    Style("proc_cap", _closed_cap, SourceHead(0.21, (0.60, 1.0, 0.82), (-0.01, 1.55, 0.02), 0.01), (0.45, 0.10, 0.08),
          "closed cap, no hole; cm; 0.21 m head"),
)

HEADER = ("swaycam procedural hairstyle {name}: {about}.\n"
          "Generated by avatars/hair/procedural.py; CC0 1.0 (public domain dedication).")


def style_names() -> list[str]:
    return [s.name for s in STYLES]


def write_style(style: Style, folder: str | Path) -> Path:
    """Write ``folder/<name>/<name>.obj`` and ``.mhmat``; returns the OBJ path."""
    out = Path(folder) / style.name
    out.mkdir(parents=True, exist_ok=True)
    b = style.make(style.head)
    obj = out / f"{style.name}.obj"
    obj.write_text(b.obj_text(style.head.unit, HEADER.format(name=style.name, about=style.about), style.head.makehuman))
    r, g, bl = style.color
    (out / f"{style.name}.mhmat").write_text(
        f"# swaycam procedural hair material (CC0 1.0)\nname {style.name}\n"
        f"diffuseColor {r:.4f} {g:.4f} {bl:.4f}\nopacity 1.0\nbackfaceCull False\n")
    return obj


def write_corpus(folder: str | Path, names: list[str] | None = None) -> list[Path]:
    """Write the styles ``names`` (default all of :data:`STYLES`) under ``folder``; returns
    the OBJ paths.

    Raises:
        ValueError: an unknown style name (the message lists them).
    """
    known = {s.name: s for s in STYLES}
    names = list(known) if not names else list(names)
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"no procedural style {', '.join(bad)} (styles: {', '.join(known)})")
    return [write_style(known[n], folder) for n in names]
