"""The body of the generated avatars: torso (shirt), neck, arms, hands, legs, shoes.

Smooth swept tubes around the bones of :func:`rig.build_humanoid` (metres, +Y up, facing
+Z), skinned with piecewise-linear blends between neighbouring bones. The arms hang in a
relaxed A-pose; the legs are simple tubes (a bust shot rarely sees them).
"""

from __future__ import annotations

import numpy as np

from .geometry import Part, catmull_rom, ellipsoid, grid_triangles, on_height_field, sweep, vertical_loft
from .rig import Rig, blend_1d, rigid

# torso profile: height y, half width, half depth, centre z (metres)
_TORSO = np.array([
    [0.835, 0.132, 0.088, -0.010],
    [0.900, 0.148, 0.098, -0.010],
    [0.960, 0.142, 0.094, -0.004],
    [1.030, 0.115, 0.082, 0.000],
    [1.100, 0.114, 0.084, 0.004],
    [1.170, 0.122, 0.094, 0.012],
    [1.230, 0.128, 0.100, 0.015],
    [1.280, 0.132, 0.096, 0.008],
    [1.318, 0.128, 0.086, -0.002],
    [1.345, 0.108, 0.070, -0.008],
    [1.364, 0.075, 0.052, -0.010],
    [1.376, 0.036, 0.034, -0.010],
])


def _tube_part(material, path, half_w, half_t, up0, n_around, u, knots, nodes, **kw) -> Part:
    """Sweep a tube and skin its rings by ``blend_1d(u_ring, knots, nodes)``."""
    pos, tris = sweep(path, half_w, half_t, up0, n_around=n_around, **kw)
    rings = (len(path) - 1 if kw.get("end", "apex") == "apex" else len(path))
    uv = np.repeat(u[:rings], n_around)
    extra = len(pos) - rings * n_around
    tail = [u[0]] if kw.get("start_cap", True) else []
    if kw.get("end", "apex") in ("apex", "cap"):
        tail.append(u[-1])
    uv = np.concatenate([uv, np.asarray(tail[:extra], float)])
    j, w = blend_1d(uv, knots, nodes)
    return Part(material, pos, tris, joints=j, weights=w)


def _torso(rig: Rig) -> Part:
    prof, _ = catmull_rom(_TORSO, 4)
    pos, tris = vertical_loft(prof[:, 0], prof[:, 1], prof[:, 2], prof[:, 3], n_around=40)
    # the collar stays on the chest: the neck turns inside it (a shirt that followed the neck
    # would slide under the V-neckline's trim, which is fixed to the upper chest)
    names = ["hips", "spine", "chest", "upperChest"]
    j, w = blend_1d(pos[:, 1], [rig.pos(n)[1] for n in names], [rig.bone(n) for n in names])
    return Part("shirt", pos, tris, joints=j, weights=w)


def _neck(rig: Rig) -> Part:
    y = np.linspace(1.32, 1.48, 9)
    path = np.stack([np.zeros_like(y), y, np.full_like(y, -0.012)], -1)
    # below the collar (1.37 m) the neck stays with the chest, so its hidden base never
    # pokes through the shirt when the head turns; above it the twist is spread up to the head
    knots = [NECK_BASE_Y, 0.5 * (NECK_BASE_Y + rig.pos("head")[1]), rig.pos("head")[1]]
    return _tube_part("skin", path, 0.029, 0.032, (0.0, 0.0, 1.0), 20, y, knots,
                      [rig.bone("upperChest"), rig.bone("neck"), rig.bone("head")], end="cap")


#: Height (m) of the shirt collar: the neck skin below it moves with the upper chest.
NECK_BASE_Y = 1.37


_PROFILE, _ = catmull_rom(_TORSO, 8)


def torso_z(x, y):
    """Height field of the shirt front: z (metres) of the torso surface at (x, y)."""
    y = np.asarray(y, float)
    w = np.interp(y, _PROFILE[:, 0], _PROFILE[:, 1])
    d = np.interp(y, _PROFILE[:, 0], _PROFILE[:, 2])
    zc = np.interp(y, _PROFILE[:, 0], _PROFILE[:, 3])
    return zc + d * np.sqrt(np.maximum(1e-4, 1.0 - (np.asarray(x, float) / w) ** 2))


def _front_patch(material, xy, lift, node) -> Part:
    """A patch on the shirt front from a face-coordinate grid (rows bottom to top, columns +x)."""
    nv, nu = xy.shape[:2]
    pos = on_height_field(torso_z, xy[..., 0], xy[..., 1], lift).reshape(-1, 3)
    j, w = rigid(len(pos), node)
    return Part(material, pos, grid_triangles(nv, nu)[:, ::-1], joints=j, weights=w)


V_TOP, V_BOTTOM, V_HALF = 1.368, 1.296, 0.034  # V neckline: top height, point height, top half width


def _neckline(rig: Rig) -> list[Part]:
    """A V neckline (skin) with a white sailor-style trim and a ribbon bow at its point."""
    node = rig.bone("upperChest")
    nu, nv = 9, 8
    v = np.linspace(0.0, 1.0, nv)[:, None]
    u = np.linspace(-1.0, 1.0, nu)[None, :]
    y = V_BOTTOM + (V_TOP - V_BOTTOM) * v
    half = V_HALF * (y - V_BOTTOM) / (V_TOP - V_BOTTOM)
    grid = np.stack([u * half, np.broadcast_to(y, (nv, nu))], -1)
    skin = _front_patch("skin", grid, 0.0025, node)
    parts = [skin]
    for s in (1.0, -1.0):  # trim bands along each edge of the V, 1.4 cm wide
        t = np.linspace(0.0, 1.0, 12)[None, :]
        yy = V_BOTTOM - 0.006 + (V_TOP - V_BOTTOM + 0.002) * t
        inner = (V_HALF * (yy - V_BOTTOM) / (V_TOP - V_BOTTOM)).clip(0.0)
        rows = np.array([0.0, 0.5, 1.0])[:, None]
        xx = s * (inner + 0.0005 + 0.013 * rows * (1.0 - 0.5 * t))
        band = np.stack([np.broadcast_to(xx, (3, 12)), np.broadcast_to(yy, (3, 12))], -1).transpose(1, 0, 2)
        if s < 0:
            band = band[:, ::-1]
        parts.append(_front_patch("collar", band, 0.0032, node))
    # the bow: two loops, a knot, two tails (magenta, like the scrunchie)
    zf = float(torso_z(0.0, V_BOTTOM))
    for s in (1.0, -1.0):
        pos, tris = ellipsoid((0.019 * s, V_BOTTOM + 0.001, zf + 0.007), (0.017, 0.010, 0.006), 16, 8)
        j, w = rigid(len(pos), node)
        parts.append(Part("tie", pos, tris, joints=j, weights=w))
        tail = np.array([[0.003 * s, V_BOTTOM - 0.002, zf + 0.009], [0.010 * s, V_BOTTOM - 0.022, zf + 0.008],
                         [0.016 * s, V_BOTTOM - 0.040, zf + 0.006]])
        tpos, ttris = sweep(tail, np.array([0.006, 0.008, 0.009]), 0.002, (0.0, 0.0, 1.0), n_around=8, end="cap")
        j, w = rigid(len(tpos), node)
        parts.append(Part("tie", tpos, ttris, joints=j, weights=w))
    pos, tris = ellipsoid((0.0, V_BOTTOM + 0.001, zf + 0.010), (0.0075, 0.0085, 0.006), 12, 6)
    j, w = rigid(len(pos), node)
    parts.append(Part("tie", pos, tris, joints=j, weights=w))
    return parts


def _arm(rig: Rig, side: str) -> list[Part]:
    s = 1.0 if side == "left" else -1.0
    ua, la, hand = rig.pos(f"{side}UpperArm"), rig.pos(f"{side}LowerArm"), rig.pos(f"{side}Hand")
    curve, u = catmull_rom(np.stack([ua, la, hand]), 8)
    radius = np.interp(u, [0.0, 0.3, 1.0, 1.8, 2.0], [0.037, 0.035, 0.030, 0.025, 0.024])
    nodes = [rig.bone(f"{side}UpperArm"), rig.bone(f"{side}UpperArm"), rig.bone(f"{side}LowerArm"),
             rig.bone(f"{side}LowerArm")]
    arm = _tube_part("shirt", curve, radius, radius * 0.95, (0.0, 0.0, 1.0), 20, u, [0.0, 0.85, 1.15, 2.0],
                     nodes, end="cap")
    pos, tris = ellipsoid(ua + np.array([-0.012 * s, -0.004, 0.0]), (0.040, 0.036, 0.040), 20, 10)
    j, w = rigid(len(pos), rig.bone(f"{side}UpperArm"))
    shoulder = Part("shirt", pos, tris, joints=j, weights=w)
    # cuff: a short wider ring at the wrist
    d = (hand - la) / np.linalg.norm(hand - la)
    cuff_path = np.stack([hand - d * 0.03, hand - d * 0.005])
    cpos, ctris = sweep(cuff_path, 0.028, 0.027, (0.0, 0.0, 1.0), n_around=20, end="cap")
    j, w = rigid(len(cpos), rig.bone(f"{side}LowerArm"))
    cuff = Part("collar", cpos, ctris, joints=j, weights=w)
    # mitten hand: a flattened tube with a rounded tip
    hp = hand[None, :] + d[None, :] * np.linspace(-0.01, 0.085, 7)[:, None]
    hw = np.array([0.020, 0.024, 0.028, 0.029, 0.026, 0.018, 0.0])
    ht = np.array([0.016, 0.016, 0.015, 0.014, 0.012, 0.009, 0.0])
    hpos, htris = sweep(hp, hw, ht, (0.0, 0.0, 1.0), n_around=16)
    j, w = rigid(len(hpos), rig.bone(f"{side}Hand"))
    return [arm, shoulder, cuff, Part("skin", hpos, htris, joints=j, weights=w)]


def _leg(rig: Rig, side: str) -> list[Part]:
    ul, ll, foot = rig.pos(f"{side}UpperLeg"), rig.pos(f"{side}LowerLeg"), rig.pos(f"{side}Foot")
    curve, u = catmull_rom(np.stack([ul + np.array([0, 0.03, 0]), ll, foot]), 8)
    radius = np.interp(u, [0.0, 0.5, 1.0, 2.0], [0.070, 0.062, 0.048, 0.038])
    nodes = [rig.bone(f"{side}UpperLeg"), rig.bone(f"{side}UpperLeg"), rig.bone(f"{side}LowerLeg"),
             rig.bone(f"{side}LowerLeg")]
    leg = _tube_part("pants", curve, radius, radius, (0.0, 0.0, 1.0), 20, u, [0.0, 0.85, 1.15, 2.0], nodes,
                     end="cap")
    pos, tris = ellipsoid(foot + np.array([0.0, -0.04, 0.045]), (0.048, 0.045, 0.115), 20, 10)
    j, w = rigid(len(pos), rig.bone(f"{side}Foot"))
    return [leg, Part("shoes", pos, tris, joints=j, weights=w)]


def build_body(rig: Rig) -> list[Part]:
    """All body parts (no head): shirt torso and sleeves, V neckline with trim and bow, cuffs,
    neck, hands, legs, shoes."""
    parts = [_torso(rig), _neck(rig)] + _neckline(rig)
    for side in ("left", "right"):
        parts += _arm(rig, side) + _leg(rig, side)
    return parts
