"""Hair of the generated avatars: a scalp cap and skinned strands hanging from spring chains.

A strand is a :class:`Strand` spec: its spring joint positions (world, metres, the last
is the tip), a cross-section profile and its VRM spring parameters. :func:`build_strand`
adds the joint nodes to the rig (joint 0 under the head, each next joint under the one
before, identity rotations) and sweeps a tube along a Catmull-Rom spline through the
joints: several vertices around, several rings per segment, a pointed tip. Each ring is
skinned by :func:`rig.chain_weights`: the root ring to the head, then smooth blends
between neighbouring joints (segment i follows joint i).

Scalp points use the head ellipsoid grown by an offset: ``scalp(elev, azim, offset)`` with
elevation from the head centre's horizontal plane (+90 deg = crown) and azimuth around +Y
(0 = front, +90 deg = the avatar's left, +X).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .face import HEAD_BACK_Z, HEAD_RADII
from .geometry import Part, catmull_rom, grid_triangles, fan_triangles, smoothstep, sweep
from .rig import HEAD_CENTER, Rig, chain_weights, rigid


def scalp(elev_deg, azim_deg, offset) -> np.ndarray:
    """Point(s) (..., 3) on the head ellipsoid (jaw ignored) with each half-axis grown by ``offset`` metres."""
    e, a = np.radians(elev_deg), np.radians(azim_deg)
    e, a, off = np.broadcast_arrays(e, a, np.asarray(offset, float))
    d = np.stack([np.cos(e) * np.sin(a), np.sin(e), np.cos(e) * np.cos(a)], -1)
    rz = np.where(d[..., 2] > 0, HEAD_RADII[2], HEAD_BACK_Z)
    radii = np.stack([HEAD_RADII[0] + off, HEAD_RADII[1] + off, rz + off], -1)
    return HEAD_CENTER + radii * d


def outward(p) -> np.ndarray:
    """Unit direction from the head centre to point(s) p (..., 3)."""
    v = np.asarray(p, float) - HEAD_CENTER
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@dataclass
class Strand:
    """One spring-driven hair strand.

    Attributes:
        name: spring name (joint nodes are named ``J_Sec_<name>_<k>``).
        joints: (N, 3) world joint positions, metres; joints[0] is the root on the scalp,
            joints[-1] the tip (VRM 1.0: the last joint has no segment of its own).
        width: (half width at the root, the widest half width) metres, across the strand.
        thickness: half thickness (metres) along the strand's outward normal.
        stiffness, drag, gravity: VRMC_springBone stiffness, dragForce, gravityPower, either
            one value or (root value, tip value) interpolated along the chain.
        hit_radius: VRMC_springBone hitRadius, metres.
        groups: collider group names the spring checks.
        n_around: vertices per ring; rings: rings per segment.
        up: (3,) the strand's normal at the root (default: outward from the head centre).
        bulge: crescent-shaped cross-section amount (see :func:`geometry.sweep`).
    """

    name: str
    joints: np.ndarray
    width: tuple[float, float] = (0.010, 0.014)
    thickness: float = 0.0035
    stiffness: float | tuple[float, float] = 1.0
    drag: float | tuple[float, float] = 0.4
    gravity: float | tuple[float, float] = 0.05
    hit_radius: float = 0.01
    groups: tuple[str, ...] = ("head",)
    n_around: int = 8
    rings: int = 5
    up: np.ndarray | None = None
    bulge: float = 0.6
    width_peak: float = 0.3
    material: str = "hair"


def _ramp(value, n: int) -> np.ndarray:
    if isinstance(value, tuple):
        return np.linspace(value[0], value[1], n)
    return np.full(n, float(value))


def build_strand(rig: Rig, spec: Strand) -> tuple[Part, list[int], list[dict]]:
    """Add the strand's joint nodes and build its mesh.

    Returns:
        (part, chain node indices, VRMC_springBone joint dicts without colliders).
    """
    head = rig.bone("head")
    pts = np.asarray(spec.joints, float)
    chain, parent = [], head
    for k, p in enumerate(pts):
        parent = rig.add(f"J_Sec_{spec.name}_{k}", parent, p)
        chain.append(parent)
    curve, u = catmull_rom(pts, spec.rings)
    t = u / u[-1]
    w0, w1 = spec.width
    rise = smoothstep(t / spec.width_peak)
    fall = (1.0 - smoothstep((t - spec.width_peak) / (1.0 - spec.width_peak))) ** 0.8
    half_w = (w0 + (w1 - w0) * rise) * np.where(t < spec.width_peak, 1.0, fall) + 1e-4
    half_t = spec.thickness * (0.45 + 0.55 * half_w / max(w0, w1))
    up = outward(pts[0]) if spec.up is None else np.asarray(spec.up, float)
    pos, tris = sweep(curve, half_w, half_t, up, n_around=spec.n_around, bulge=spec.bulge)
    n_rings = len(curve) - 1
    uv = np.concatenate([np.repeat(u[:n_rings], spec.n_around), [0.0, u[-1]]])
    j, w = chain_weights(uv, head, chain)
    part = Part(spec.material, pos, tris, joints=j, weights=w)
    n = len(chain)
    stiff, drag, grav = _ramp(spec.stiffness, n), _ramp(spec.drag, n), _ramp(spec.gravity, n)
    joints = [
        {"node": int(node), "hitRadius": float(spec.hit_radius), "stiffness": float(stiff[k]),
         "dragForce": float(drag[k]), "gravityPower": float(grav[k]), "gravityDir": [0.0, -1.0, 0.0]}
        for k, node in enumerate(chain)
    ]
    return part, chain, joints


def hairline_elevation(azim_deg) -> np.ndarray:
    """Elevation (degrees) where the scalp cap ends, by azimuth: forehead high, nape low."""
    a = np.abs((np.asarray(azim_deg, float) + 180.0) % 360.0 - 180.0)
    return np.interp(a, [0, 25, 45, 70, 95, 130, 180], [32, 30, 22, 2, -30, -52, -58])


def build_cap(rig: Rig, n_azim: int = 72, n_rows: int = 22, crown: float = 0.017) -> Part:
    """The hair volume on the scalp: from the crown down to :func:`hairline_elevation`.

    Thickness ``crown`` metres at the top, thinning to 1.5 mm at the hairline; skinned to
    the head. Open at the hairline (a single outward-facing sheet over the skin).
    """
    az = np.linspace(0.0, 360.0, n_azim, endpoint=False)
    t = np.linspace(0.0, 1.0, n_rows + 1)[1:, None]
    edge = hairline_elevation(az)[None, :]
    elev = 90.0 - t * (90.0 - edge)
    off = 0.0015 + (crown - 0.0015) * (1.0 - t ** 2)
    # a little volume at the back and the sides of the head
    back = np.clip(-np.cos(np.radians(az)), 0, None)[None, :] * 0.004 * np.sin(np.pi * t)
    back = back + np.abs(np.sin(np.radians(az)))[None, :] * 0.006 * np.sin(np.pi * t)
    pts = scalp(elev, az[None, :], off + back).reshape(-1, 3)
    top = scalp(90.0, 0.0, crown)[None, :]
    pos = np.concatenate([top, pts])
    tris = grid_triangles(n_rows, n_azim, wrap=True, offset=1)
    tris = np.concatenate([fan_triangles(0, 1 + np.arange(n_azim), reverse=True), tris])
    j, w = rigid(len(pos), rig.bone("head"))
    return Part("hair", pos, tris, joints=j, weights=w)


def hair_tie(rig: Rig, center, axis, radius: float = 0.028, tube: float = 0.009) -> Part:
    """A scrunchie: a puffy torus around ``axis`` (3,) at ``center`` (3,), skinned to the head."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    ref = np.array([1.0, 0.0, 0.0])
    e1 = np.cross(axis, ref)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)
    n_a, n_b = 28, 10
    a = np.linspace(0, 2 * np.pi, n_a, endpoint=False)[:, None, None]
    b = np.linspace(0, 2 * np.pi, n_b, endpoint=False)[None, :, None]
    puff = 1.0 + 0.18 * np.cos(6 * a)
    radial = np.cos(a) * e1 + np.sin(a) * e2
    pos = center + radial * (radius + tube * puff * np.cos(b)) + axis * (tube * puff * np.sin(b))
    pos = pos.reshape(-1, 3)
    tris = grid_triangles(n_a, n_b, wrap=True)
    last = np.arange(n_b)
    lo = (n_a - 1) * n_b
    k = np.stack([lo + last, last, (last + 1) % n_b, lo + (last + 1) % n_b], -1)
    tris = np.concatenate([tris, k[:, [0, 1, 2]], k[:, [0, 2, 3]]])
    j, w = rigid(len(pos), rig.bone("head"))
    return Part("tie", pos, tris, joints=j, weights=w)
