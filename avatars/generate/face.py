"""The head and face of the generated avatars, with the expression morph targets.

The head is a deformed ellipsoid around :data:`rig.HEAD_CENTER` (half-axes 8.0 cm wide,
11.2 cm up and 10 cm down, 9.4 cm to the front, 10 cm to the back: 21.2 cm chin to crown) with a
narrowing jaw and a small nose bump. Its front is a height field z = f(x, y), so the face
features are drawn in 2-D face coordinates (x, y in metres, the avatar frame: +X is the
avatar's LEFT, it faces +Z) and laid on the skin with :func:`on_face`, lifted a little
along the surface normal. Morph targets move the features in the same 2-D coordinates,
so open mouths and closed eyes stay on the skin.

Morph targets (names as in ``mesh.extras.targetNames``): blink (both eyes), blinkLeft
(the avatar's left eye, +X side), blinkRight (-X side), aa, ih, ou, ee, oh (mouth shapes),
then the VRM 1.0 preset emotions (:data:`EMOTIONS`): happy (eyes closed in upward arcs,
raised brows, open smile), angry (brows down and in at the nose, upper lids lowered at the
inner corner, lower lids up, a frown), sad (brows up at the nose and down outside, upper
lids drooping outside, a frown), relaxed (upper lids a third down and lower lids up: smiling
eyes; brows a little up; a closed smile), surprised (brows high, eyes wide, an open round mouth). Closing an eye collapses
the textured eye patch onto a curve and moves the upper lash line down onto it; the
emotions move the same lids part of the way, the brows and the mouth (their numbers:
:mod:`avatars.generate.face_shapes`), every one within the feature patches (the skin stays).

Eyes: the iris is painted in the eye texture, so the eye bones (``leftEye``/``rightEye``,
:func:`add_eye_bones`, pivots :data:`EYE_DEPTH` behind the iris centre) turn the *inside*
of each eye patch: its vertices are skinned to the eye bone with a weight that is 1 over
the iris and falls smoothly to 0 at the patch outline (:func:`eye_weight`), which stays on
the head with the lashes. A gaze of θ slides the iris by about EYE_DEPTH·sin θ inside a
fixed outline (:data:`LOOK_AT`: at most ~2.9 mm sideways, ~1.7 mm down, ~1.4 mm up).
"""

from __future__ import annotations

import numpy as np

from .face_shapes import BROWS, EMOTIONS, LIDS, MOUTH
from .geometry import Part, ellipsoid, grid_triangles, on_height_field
from .rig import HEAD_CENTER, Rig, rigid

HEAD_RADII = (0.080, 0.112, 0.094)  # x, y (above the centre), z-front (metres)
HEAD_LOW_Y = 0.100  # y half-axis below the centre (chin)
HEAD_BACK_Z = 0.100
NOSE = (0.0, 1.474)  # nose tip in face coordinates
#: the face's morph targets: the emotions (:data:`face_shapes.EMOTIONS`) were appended after
#: happy, so the older targets keep their indices
TARGETS = ("blink", "blinkLeft", "blinkRight", "aa", "ih", "ou", "ee", "oh", *EMOTIONS)

EYE_X, EYE_Y = 0.0355, 1.499  # left eye centre (+X); the right eye mirrors x
EYE_HALF_W, EYE_TOP, EYE_BOT, EYE_TILT = 0.0172, 0.0195, 0.0180, 0.0020
#: eye bone pivots: this far (metres) behind the skin at the iris centre, along the skin's
#: normal — about the face's radius of curvature there, not an eyeball's: a turn then slides
#: the painted patch along the skin, its height above it within the rest's 1.26..1.80 mm (a
#: pivot straight behind the eye, or an eyeball-deep one, sinks one side under the skin).
EYE_DEPTH = 0.075
#: the iris centre above EYE_Y (metres; the texture's iris centre, v = 0.55 from the top)
IRIS_DY = -0.0011
#: VRMC_vrm lookAt of the generated avatars (bone type; degrees in, degrees of eye turn out)
LOOK_AT = {
    "offsetFromHeadBone": [0.0, 0.069, 0.08],
    "type": "bone",
    "rangeMapHorizontalInner": {"inputMaxValue": 35.0, "outputScale": 2.0},
    "rangeMapHorizontalOuter": {"inputMaxValue": 35.0, "outputScale": 2.2},
    "rangeMapVerticalDown": {"inputMaxValue": 25.0, "outputScale": 1.3},
    "rangeMapVerticalUp": {"inputMaxValue": 25.0, "outputScale": 1.1},
}
MOUTH_Y = 1.4535


def _jaw(dy):
    """Width factor of the head below its centre: a tapering, slightly pointed jaw."""
    return 1.0 - 0.36 * np.maximum(0.0, -dy) ** 2.0


def _nose(x, y):
    dy = y - NOSE[1]
    sy = np.where(dy < 0, 0.006, 0.014)
    return 0.0055 * np.exp(-(x / 0.0065) ** 2 - (dy / sy) ** 2)


def head_shape(d: np.ndarray) -> np.ndarray:
    """Unit directions (V, 3) -> head surface points (V, 3) (metres, bind space)."""
    a, b, c = HEAD_RADII
    x = a * _jaw(d[:, 1]) * d[:, 0]
    y = np.where(d[:, 1] > 0, b, HEAD_LOW_Y) * d[:, 1]
    z = np.where(d[:, 2] > 0, c, HEAD_BACK_Z) * d[:, 2]
    p = np.stack([x, y, z], -1) + HEAD_CENTER
    p[:, 2] += np.where(d[:, 2] > 0, _nose(p[:, 0], p[:, 1]), 0.0)
    return p


def face_z(x, y):
    """Height field of the head front: z (metres) of the skin at face coordinates (x, y)."""
    a, b, c = HEAD_RADII
    y = np.asarray(y, float)
    dy = (y - HEAD_CENTER[1]) / np.where(y > HEAD_CENTER[1], b, HEAD_LOW_Y)
    dx = np.asarray(x, float) / (a * _jaw(dy))
    dz = np.sqrt(np.maximum(1e-6, 1.0 - dx * dx - dy * dy))
    return HEAD_CENTER[2] + c * dz + _nose(x, y)


def on_face(x, y, lift: float) -> np.ndarray:
    """Face coordinates (x, y) (any equal shapes) -> points (..., 3) on the skin + ``lift`` along its normal."""
    return on_height_field(face_z, x, y, lift)


def _patch(xy_rest: np.ndarray, xy_targets: dict, nu: int, nv: int, lift: float, material: str, head: int,
           uv=None) -> Part:
    """A surface patch from 2-D grids (nv, nu, 2) of face coordinates (rows bottom to top)."""
    pos = on_face(xy_rest[..., 0], xy_rest[..., 1], lift).reshape(-1, 3)
    # rows go up (+y), columns go along +x: cross(+y, +x) = -z, so flip to face the viewer
    tris = grid_triangles(nv, nu)[:, ::-1]
    if nu > 1 and xy_rest[0, 1, 0] < xy_rest[0, 0, 0]:
        tris = tris[:, ::-1]
    targets = {k: on_face(v[..., 0], v[..., 1], lift).reshape(-1, 3) - pos for k, v in xy_targets.items()}
    j, w = rigid(len(pos), head)
    return Part(material, pos, tris, uv=uv, joints=j, weights=w, targets=targets)


def _eye_curves(u):
    """Top, bottom, closed (blink) and happy curves (y) of an eye at parameter u (inner -1 .. outer +1)."""
    cu = np.clip(u, -1.0, 1.0)
    base = EYE_Y + EYE_TILT * cu
    top = base + EYE_TOP * (1 - cu ** 2) ** 0.35
    bot = base - EYE_BOT * (1 - cu ** 2) ** 0.65
    closed = base - 0.42 * EYE_BOT * (1 - cu ** 2)
    happy = base - 0.25 * EYE_BOT + 0.55 * EYE_TOP * (1 - cu ** 2) ** 0.8
    return top, bot, closed, happy


def _lid_curves(u, shape: str):
    """Top and bottom curves (y) of an eye at parameter u (inner -1 .. outer +1) under
    emotion ``shape`` (:data:`LIDS`)."""
    top, bot, closed, _ = _eye_curves(u)
    inner, outer, lower, widen = LIDS[shape]
    cu = np.clip(u, -1.0, 1.0)
    base = EYE_Y + EYE_TILT * cu
    s = 0.5 * (cu + 1.0)  # 0 inner .. 1 outer
    c = inner + (outer - inner) * s
    top2 = top - c * (top - closed) + widen * (top - base)
    bot2 = bot + lower * (closed - bot) - 0.5 * widen * (base - bot)
    return top2, bot2


def eye_pivot(sign: float) -> np.ndarray:
    """World rest position (3,) of an eye bone (sign +1: the left eye, +X): EYE_DEPTH under
    the skin at the iris centre, along its normal."""
    x, y = EYE_X * sign, EYE_Y + IRIS_DY
    return on_face(np.array(x), np.array(y), -EYE_DEPTH).reshape(3)


def add_eye_bones(rig: Rig) -> tuple[int, int]:
    """Add the humanoid ``leftEye``/``rightEye`` bones under the head (module doc); returns
    their node indices (left, right)."""
    out = []
    for sign, bone in ((1.0, "leftEye"), (-1.0, "rightEye")):
        rig.humanoid[bone] = rig.add(f"J_Eye_{'L' if sign > 0 else 'R'}", rig.bone("head"), eye_pivot(sign))
        out.append(rig.humanoid[bone])
    return out[0], out[1]


def _smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def eye_weight(u, v):
    """Skin weight on the eye bone of the eye patch vertex at grid parameters u (−1 inner ..
    +1 outer) and v (0 bottom .. 1 top): 1 over the iris, 0 on the outline, smooth between."""
    return _smoothstep((1.0 - np.abs(u)) / 0.35) * _smoothstep(np.minimum(v, 1.0 - v) / 0.3)


def _eye(sign: float, head: int, eye_node: int = -1) -> tuple[Part, Part]:
    """The textured eye patch and its upper lash line for one side (sign +1 = left, +X);
    the patch's inside follows ``eye_node`` (module doc; −1: rigid on the head)."""
    nu, nv = 17, 9
    u = np.linspace(-1.0, 1.0, nu)
    v = np.linspace(0.0, 1.0, nv)[:, None]
    x = EYE_X * sign + sign * EYE_HALF_W * u
    top, bot, closed, happy = _eye_curves(u)
    xx = np.broadcast_to(x, (nv, nu))
    rest = np.stack([xx, bot + (top - bot) * v], -1)
    shut = np.stack([xx, np.broadcast_to(closed, (nv, nu))], -1)
    smile = np.stack([xx, np.broadcast_to(happy, (nv, nu))], -1)
    side = "blinkLeft" if sign > 0 else "blinkRight"
    y_lo, y_hi = rest[..., 1].min(), rest[..., 1].max()
    uv = np.stack([(rest[..., 0] - (EYE_X * sign - EYE_HALF_W)) / (2 * EYE_HALF_W),
                   (y_hi - rest[..., 1]) / (y_hi - y_lo)], -1).reshape(-1, 2)
    if sign < 0:  # mirror the texture so both irises have their highlight toward the outer corner
        uv[:, 0] = 1.0 - uv[:, 0]
    targets = {"blink": shut, side: shut, "happy": smile}
    for shape in LIDS:
        t2, b2 = _lid_curves(u, shape)
        targets[shape] = np.stack([xx, b2 + (t2 - b2) * v], -1)
    eye = _patch(rest, targets, nu, nv, 0.0012, "eye", head, uv=uv)
    if eye_node >= 0:
        w = eye_weight(np.broadcast_to(u, (nv, nu)), np.broadcast_to(v, (nv, nu))).reshape(-1)
        main = w >= 0.5            # the dominant influence first
        eye.joints[:, 0] = np.where(main, eye_node, head)
        eye.joints[:, 1] = np.where(w == 0.0, head, np.where(main, head, eye_node))
        eye.joints[:, 2:] = eye.joints[:, :1]
        eye.weights[:, 0] = np.where(main, w, 1.0 - w)
        eye.weights[:, 1] = 1.0 - eye.weights[:, 0]

    # lash: a band along the top curve, thicker toward the outer corner, with a small wing
    lu = np.linspace(-1.0, 1.16, 23)
    lx = EYE_X * sign + sign * EYE_HALF_W * lu
    ltop, _, lclosed, lhappy = _eye_curves(lu)
    wing = np.maximum(0.0, lu - 1.0)
    ltop = ltop + 0.018 * wing
    thick = (0.0013 + 0.0024 * np.clip((lu + 0.3) / 1.3, 0, 1)) * np.clip((1.16 - lu) / 0.16, 0, 1) + 0.0004
    rows = np.array([-0.0007, 0.0, 1.0])[:, None]

    def band(center, scale):
        y = center[None, :] + np.where(rows < 0, rows, rows * thick[None, :] * scale)
        return np.stack([np.broadcast_to(lx, y.shape), y], -1)

    lash_rest = band(ltop, 1.0)
    lash_shut = band(lclosed + 0.018 * wing * 0.3 + 0.0004, 0.75)
    lash_happy = band(lhappy + 0.0004 - 0.01 * wing, 0.8)
    lash_targets = {"blink": lash_shut, side: lash_shut, "happy": lash_happy}
    for shape in LIDS:
        lash_targets[shape] = band(_lid_curves(lu, shape)[0] + 0.018 * wing, 1.0)
    lash = _patch(lash_rest, lash_targets, len(lu), 3, 0.0020, "lash", head)
    return eye, lash


def _brow(sign: float, head: int) -> Part:
    nu = 15
    u = np.linspace(-1.0, 1.0, nu)
    x = sign * (EYE_X + 0.002 + 0.0165 * u)
    y = 1.5425 + 0.0028 * (1 - u ** 2) - 0.0012 * u
    thick = 0.0011 + 0.0007 * (1 - u ** 2)
    rows = np.array([-1.0, 1.0])[:, None]
    rest = np.stack([np.broadcast_to(x, (2, nu)), y + rows * thick], -1)
    up = rest.copy()
    up[..., 1] += 0.0025 + 0.0015 * (1 - u ** 2)
    targets = {"happy": up}
    s = 0.5 * (u + 1.0)  # 0 inner .. 1 outer
    for shape, (inner, outer, arch, shift) in BROWS.items():
        b = rest.copy()
        b[..., 1] += inner + (outer - inner) * s + arch * (1 - u ** 2)
        b[..., 0] -= sign * shift * (1.0 - s)
        targets[shape] = b
    return _patch(rest, targets, nu, 2, 0.0012, "brow", head)


def _mouth_grid(shape: str, nu: int, nv: int) -> np.ndarray:
    hw, rise, drop, corner = MOUTH[shape]
    u = np.linspace(-1.0, 1.0, nu)
    v = np.linspace(0.0, 1.0, nv)[:, None]
    upper = MOUTH_Y + rise * (1 - u ** 2) ** 0.5 + corner * u ** 2
    lower = MOUTH_Y - drop * (1 - u ** 2) ** 0.75 + corner * u ** 2
    y = lower + (upper - lower) * v
    return np.stack([np.broadcast_to(hw * u, y.shape), y], -1)


def _mouth(head: int) -> Part:
    nu, nv = 21, 7
    rest = _mouth_grid("rest", nu, nv)
    targets = {k: _mouth_grid(k, nu, nv) for k in MOUTH if k != "rest"}
    return _patch(rest, targets, nu, nv, 0.0010, "mouth", head)


def _blush(sign: float, head: int) -> Part:
    nu, nv = 11, 5
    u = np.linspace(-1.0, 1.0, nu)
    v = np.linspace(-1.0, 1.0, nv)[:, None]
    hx, hy = 0.0115, 0.0042
    y = 1.4745 + hy * v * np.sqrt(1 - 0.9 * u ** 2)
    rest = np.stack([np.broadcast_to(sign * (0.052 + hx * u), y.shape), y], -1)
    return _patch(rest, {}, nu, nv, 0.0006, "blush", head)


def build_face(head: int, eyes: tuple[int, int] = (-1, -1)) -> list[Part]:
    """Head skin, eyes, lashes, brows, mouth and blush, rigidly skinned to node ``head``;
    the eye patches' insides to the eye bones ``eyes`` (left, right; −1: none)."""
    pos, tris = ellipsoid(HEAD_CENTER, HEAD_RADII, n_around=96, n_rings=64, shape=head_shape)
    j, w = rigid(len(pos), head)
    parts = [Part("skin", pos, tris, joints=j, weights=w)]
    for sign, node in zip((1.0, -1.0), eyes):
        eye, lash = _eye(sign, head, node)
        parts += [eye, lash, _brow(sign, head), _blush(sign, head)]
    parts.append(_mouth(head))
    return parts
