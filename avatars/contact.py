"""Per-vertex contact after skinning: a mesh instance's vertices pushed out of a head proxy
and of sphere/capsule colliders, as a pure function of the drawn pose.

Spring contact (docs/design.md §4.4) acts on the chain links; a fitted hair's vertices between
chains, or farther from their chain than its hit radius, are not tested and can pass into
the shoulders or the head while the hair swings (docs/history/tryon-notes.md). A mesh instance
with a :class:`SkinContact` gets, after linear-blend skinning, for every vertex ``p``
(world, metres):

1. the head proxy: a star-shaped radial envelope around a centre carried by the head bone
   (``grid``: radius per (elevation, azimuth) cell centre, the layout and bilinear lookup of
   :class:`avatars.tryon.geometry.RadialEnvelope`). In the envelope frame ``q = to_env · p``
   at depth ``d = R(q) − |q|``, ``q`` moves out along its ray from the centre by
   ``push(d, R)``;
2. then each collider in order, :data:`ROUNDS` times: a sphere or capsule of world axis a-b
   and radius r; ``p`` at distance ``ρ`` from the axis (depth ``d = r − ρ``) moves along the
   axis normal by ``push(d, r)``.

``push(d, r) = max(0, min(d, 2·f·r − d))`` with ``f`` = :data:`FULL_DEPTH`: a vertex up to
``f·r`` deep goes exactly onto the surface; deeper ones are pushed less and less, not at
all beyond ``2·f·r``. A radial push to the surface widens what lay at depth d by
r / (r − d) along the surface (+33 % at f = 0.25): deeper, the two sides of a hair sheet
that cuts through a capsule would be torn apart onto opposite sides (long01 on the default
avatar: an edge stretched by 852 % with a full push). The mapping is continuous in ``p``,
so the hair never pops.

The frame inputs (envelope matrices, collider axes) come from the drawn world matrices
only (:func:`contact_frame`), so the correction never reads time, velocity or the previous
frame: replays stay bit-identical and the look does not depend on frame rate. The vertex
shader (render/glsl/mesh.vert, ``u_contact``) and :func:`apply_contact` (the CPU skinning
of :mod:`avatars.skinning`) compute the same thing (float32 on the GPU).

It is swaycam's own: VRM has no per-vertex contact. The VRM 1.0 writer stores it in the
mesh node's ``extras`` (:data:`EXTRAS_KEY`, :func:`contact_to_json`) and swaycam's loader
reads it back (:func:`contact_from_json`), so a reloaded export draws and measures like the
live try-on; three-vrm and other VRM viewers ignore extras and draw the hair without it
(the springs are the same).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Passes over the colliders (a vertex pushed out of one capsule into a neighbouring one).
ROUNDS = 2
#: Most colliders one contact mesh may list (uniform arrays of the vertex shader).
MAX_COLLIDERS = 16
#: Depth, as a share of the radius, up to which a vertex is pushed exactly onto the surface.
FULL_DEPTH = 0.2


def push_depth(d: np.ndarray, r) -> np.ndarray:
    """How far (metres) a vertex ``d`` deep inside a shape of radius ``r`` moves out (module doc)."""
    return np.maximum(0.0, np.minimum(d, (r - d) * (FULL_DEPTH / (1.0 - FULL_DEPTH))))


@dataclass(frozen=True, eq=False)
class SkinContact:
    """Contact data of one mesh instance (module doc).

    Attributes:
        head: node carrying the envelope (the humanoid head), or -1 for no head proxy.
        env_local: (4, 4) envelope frame -> ``head`` node local frame (rigid, metres): the
            envelope centre and its axes (azimuth about +Y from +Z, elevation from the XZ
            plane).
        grid: (E, A) float32 envelope radii, metres, at cell centres (elevation from −90°
            to +90°, azimuth from −180°); E ≥ 2.
        colliders: indices into ``Avatar.colliders`` (sphere and capsule shapes), at most
            :data:`MAX_COLLIDERS`.
    """

    head: int
    env_local: np.ndarray
    grid: np.ndarray
    colliders: tuple[int, ...] = ()


#: Key of the contact in a mesh node's glTF ``extras``.
EXTRAS_KEY = "swaycamContact"


def contact_to_json(c: SkinContact) -> dict:
    """The JSON object stored in the mesh node's extras (``envLocal`` column-major, as glTF
    matrices; ``radii`` row by row, elevation rows)."""
    g = np.asarray(c.grid, np.float32)
    return {"head": int(c.head), "envLocal": [float(x) for x in np.asarray(c.env_local, np.float64).T.ravel()],
            "rows": int(g.shape[0]), "cols": int(g.shape[1]), "radii": [float(x) for x in g.ravel()],
            "colliders": [int(k) for k in c.colliders]}


def contact_from_json(obj, node_count: int, collider_count: int) -> SkinContact:
    """Parse :func:`contact_to_json` output. Raises ValueError naming what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError("is not an object")
    head, rows, cols = obj.get("head"), obj.get("rows"), obj.get("cols")
    if not isinstance(head, int) or not -1 <= head < node_count:
        raise ValueError(f"head {head!r} is not a node")
    if not isinstance(rows, int) or not isinstance(cols, int) or rows < 2 or cols < 1:
        raise ValueError(f"grid {rows!r} x {cols!r}: expected at least 2 x 1")
    env = np.asarray(obj.get("envLocal", ()), np.float64)
    radii = np.asarray(obj.get("radii", ()), np.float64)
    if env.shape != (16,) or radii.shape != (rows * cols,) or not (np.all(np.isfinite(env))
                                                                  and np.all(np.isfinite(radii))):
        raise ValueError("envLocal needs 16 numbers and radii rows x cols, all finite")
    cols_ = obj.get("colliders", [])
    if (not isinstance(cols_, list) or len(cols_) > MAX_COLLIDERS
            or not all(isinstance(k, int) and 0 <= k < collider_count for k in cols_)):
        raise ValueError(f"colliders {cols_!r}: at most {MAX_COLLIDERS} indices of existing colliders")
    return SkinContact(head=head, env_local=env.reshape(4, 4).T.copy(),
                       grid=radii.reshape(rows, cols).astype(np.float32), colliders=tuple(cols_))


@dataclass
class ContactFrame:
    """The per-frame inputs of the correction (world, metres).

    Attributes:
        to_env, from_env: (4, 4) world -> envelope frame and back (None: no head proxy).
        grid: the envelope radii (E, A).
        capsules: (K, 7) per collider: axis start (3), axis end (3), radius.
    """

    to_env: np.ndarray | None
    from_env: np.ndarray | None
    grid: np.ndarray
    capsules: np.ndarray


def contact_frame(avatar, contact: SkinContact, world: np.ndarray) -> ContactFrame:
    """The :class:`ContactFrame` of ``contact`` under node world matrices ``world`` (N, 4, 4)."""
    to_env = from_env = None
    if contact.head >= 0:
        from_env = world[contact.head] @ contact.env_local
        to_env = np.linalg.inv(from_env)
    caps = np.zeros((len(contact.colliders), 7))
    for k, c in enumerate(contact.colliders):
        col = avatar.colliders[c]
        m = world[col.node] if col.node >= 0 else np.eye(4)
        tail = col.offset if col.tail is None else col.tail
        caps[k, 0:3] = m[:3, :3] @ col.offset + m[:3, 3]
        caps[k, 3:6] = m[:3, :3] @ tail + m[:3, 3]
        caps[k, 6] = col.radius * abs(np.linalg.det(m[:3, :3])) ** (1.0 / 3.0)
    return ContactFrame(to_env, from_env, np.asarray(contact.grid, np.float64), caps)


def envelope_radius(grid: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(P,) radii of the envelope ``grid`` (E, A) along directions ``q`` (P, 3), bilinear
    between cell centres (as :meth:`avatars.tryon.geometry.RadialEnvelope.radius`)."""
    ne, na = grid.shape
    az = np.arctan2(q[:, 0], q[:, 2])
    el = np.arctan2(q[:, 1], np.hypot(q[:, 0], q[:, 2]))
    fa = (az + np.pi) / (2 * np.pi) * na - 0.5
    fe = np.clip((el + np.pi / 2) / np.pi * ne - 0.5, 0.0, ne - 1.0)
    a0 = np.floor(fa).astype(np.int64)
    e0 = np.minimum(np.floor(fe).astype(np.int64), ne - 2)
    ta, te = fa - a0, fe - e0
    a0 %= na
    a1 = (a0 + 1) % na
    e1 = e0 + 1
    g = grid
    return (1 - te) * ((1 - ta) * g[e0, a0] + ta * g[e0, a1]) + te * ((1 - ta) * g[e1, a0] + ta * g[e1, a1])


def apply_contact(points: np.ndarray, frame: ContactFrame) -> np.ndarray:
    """Skinned world positions ``points`` (P, 3) with the contact correction (module doc),
    a new (P, 3) float64 array."""
    p = np.array(points, np.float64).reshape(-1, 3)
    if frame.to_env is not None and len(p):
        q = p @ frame.to_env[:3, :3].T + frame.to_env[:3, 3]
        r = np.linalg.norm(q, axis=1)
        big = envelope_radius(frame.grid, q)
        s = push_depth(big - r, big)
        m = (s > 0.0) & (r > 1e-9)
        if m.any():
            q = q[m] * ((r[m] + s[m]) / r[m])[:, None]
            p[m] = q @ frame.from_env[:3, :3].T + frame.from_env[:3, 3]
    for _ in range(ROUNDS):
        for a, b, rad in zip(frame.capsules[:, 0:3], frame.capsules[:, 3:6], frame.capsules[:, 6]):
            e = b - a
            ee = float(e @ e)
            t = np.zeros(len(p)) if ee < 1e-30 else np.clip((p - a) @ e / ee, 0.0, 1.0)
            off = p - (a + t[:, None] * e)
            d = np.linalg.norm(off, axis=1)
            s = push_depth(rad - d, rad)
            m = (s > 0.0) & (d > 1e-9)
            if m.any():
                p[m] += off[m] * (s[m] / d[m])[:, None]
    return p
