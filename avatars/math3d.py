"""The one math module: quaternions, rotation matrices, TRS matrices, Euler angles, cameras.

Every package may import it (docs/design.md §1); it imports nothing but numpy and math.

Conventions (docs/design.md §3)
-----------------------
- Quaternions are ``(x, y, z, w)`` float64 arrays of shape ``(4,)`` or ``(..., 4)``, as
  glTF stores them; rotations act on column vectors, ``quat_mul(a, b)`` applies ``b``
  first. Functions that need unit quaternions say so; they do not normalise.
- Matrices are 4×4 for column vectors (``p_world = M @ p_local``), float64, ``(4, 4)`` or
  ``(..., 4, 4)``; a ``mat3_`` name works on the 3×3 rotation block instead.
- Angles are radians, lengths metres.

Names and signatures follow pylinalg (https://github.com/pygfx/pylinalg): ``X_from_Y``
(``mat3_from_quat``, ``quat_from_mat``, ``mat_compose``, ``vec_transform_quat``, ...),
inputs positional-only, options keyword-only, and every function takes ``out=``: when
given, the result is written into it (shape as documented, float64) and ``out`` is
returned; otherwise a new array is returned. ``out`` may be one of the inputs. Unlike
pylinalg there is no ``dtype=`` (the CPU side is float64 throughout) and quaternions are
never renormalised silently. The single-quaternion paths of :func:`quat_mul`,
:func:`mat3_from_quat` and :func:`quat_slerp_scalar` compute with Python floats, so with
``out=`` they allocate no array (the 120 Hz paths).

Index
-----
scalar        qmul_xyzw, mat3_xyzw, slerp_xyzw (components in, tuples out, no ``out=``, not in
              ``__all__``; compiled as they are by :mod:`avatars.math_kernels`, the numba
              helpers of every kernel)
quaternions   quat_normalize, quat_mul, quat_conj, quat_angle, quat_slerp, quat_slerp_scalar,
              quat_from_axis_angle, quat_from_vecs, quat_from_euler / euler_from_quat,
              quat_from_rotvec / rotvec_from_quat, quat_from_mat, QUAT_IDENTITY
vectors       vec_transform_quat
matrices      mat3_from_quat, mat3_from_z_axis, mat_compose / mat_decompose (T·R·S),
              mat_look_at (view), mat_perspective (projection)

Yaw / pitch / roll
------------------
One Euler convention, used by tracking limits, tests, the CLI and the standard head-turn
test (docs/design.md §4.5):

    R = Ry(yaw) · Rx(pitch) · Rz(roll)

in a right-handed frame with +Y up and the face looking along +Z (toward the viewer), the
frame of both MediaPipe's camera space and the avatar (glTF). Hence:

- yaw > 0: rotation about +Y; the nose turns toward +X (the face's own left, the viewer's
  right).
- pitch > 0: rotation about +X; the nose goes down (−Y): looking down.
- roll > 0: rotation about +Z; the top of the head tilts toward −X (the face's own right,
  the viewer's left): counter-clockwise as the viewer sees it.

Where two arithmetics coexist
-----------------------------
The module replaces two earlier ones, ``transforms.py`` in avatars (vectorised numpy) and
``rotations.py`` in tracking (scalar, SVD projection). Callers whose results are compared
bit for bit (hair states, pose tracks) keep the exact operation order they had, so a few
behaviours exist twice, by name or by option:

- :func:`quat_slerp` (vectorised; sin θ < 1e-9 -> lerp; always renormalised; extrapolates
  outside [0, 1]) and :func:`quat_slerp_scalar` (one pair, Python floats, clamped,
  exactly ``a`` / ``±b`` at the ends, normalised lerp when cos θ > 0.9995).
- :func:`quat_from_mat`: trusts the input to be a rotation (``project=False``) or
  projects it onto the nearest rotation first (``project=True``, SVD; scale, drift and
  reflections accepted).
- :func:`vec_transform_quat`: the cross-product form for any shapes, or
  ``via_matrix=True``: one rotation applied to many vectors through its 3×3 matrix.

tests/avatars/test_math3d.py pins every function to the outputs of the two old modules
(golden file tests/avatars/golden/math3d_parity.npz).
"""

from __future__ import annotations

import math

import numpy as np

QUAT_IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])
QUAT_IDENTITY.flags.writeable = False
"""The identity rotation ``(0, 0, 0, 1)``, read-only."""

_CONJ = np.array([-1.0, -1.0, -1.0, 1.0])


def _put(out: np.ndarray | None, value) -> np.ndarray:
    """Return ``value``, or write it into ``out`` and return ``out``."""
    if out is None:
        return value
    out[...] = value
    return out


# ----------------------------------------------------------------------------- scalar formulas
# Plain arithmetic on (x, y, z, w) components, shared by the array functions below and, compiled,
# by every numba kernel (avatars/math_kernels.py compiles these three functions as they are, so the
# Python and the compiled paths give the same bits). They take floats, or numpy arrays of one shape.


def qmul_xyzw(ax, ay, az, aw, bx, by, bz, bw) -> tuple:
    """Hamilton product a ⊗ b of two quaternions given by components; returns (x, y, z, w).
    Source: Hamilton's product, written out in xyzw order (the order of :func:`quat_mul`)."""
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def mat3_xyzw(x, y, z, w) -> tuple:
    """Rotation matrix of the unit quaternion (x, y, z, w) as 9 values, row-major
    (r00, r01, r02, r10, ..., r22); not normalised (the formula of :func:`mat3_from_quat`)."""
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    return (1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
            2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
            2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy))


def slerp_xyzw(ax, ay, az, aw, bx, by, bz, bw, u) -> tuple:
    """slerp(a, b, u) of two unit quaternions given as floats, for 0 < u < 1: shortest arc,
    normalised lerp when cos θ > 0.9995 (off the arc by at most ~1.0e-6 rad), the result
    normalised; returns (x, y, z, w). The interior of :func:`quat_slerp_scalar`.
    Source: Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985."""
    d = ax * bx + ay * by + az * bz + aw * bw
    sign = 1.0
    if d < 0.0:
        d, sign = -d, -1.0
    if d > 0.9995:  # nearly parallel: normalised lerp, off the arc by <= ~1.0e-6 rad
        ka, kb = 1.0 - u, u * sign
    else:
        th = math.acos(d)
        st = math.sin(th)
        ka, kb = math.sin((1.0 - u) * th) / st, sign * math.sin(u * th) / st
    x, y, z, w = ka * ax + kb * bx, ka * ay + kb * by, ka * az + kb * bz, ka * aw + kb * bw
    n = math.sqrt(x * x + y * y + z * z + w * w)
    return x / n, y / n, z / n, w / n


# ----------------------------------------------------------------------------- quaternions


def quat_normalize(q, /, *, out=None) -> np.ndarray:
    """Unit quaternions ``(..., 4)`` from ``q`` ``(..., 4)``; a zero quaternion becomes the identity."""
    q = np.asarray(q, dtype=np.float64)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    return _put(out, np.where(n > 0.0, q / np.where(n > 0.0, n, 1.0), QUAT_IDENTITY))


def quat_mul(a, b, /, *, out=None) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` of ``(..., 4)`` quaternions (broadcast): apply ``b`` first, then ``a``.

    Returns ``(..., 4)``. Two ``(4,)`` inputs take a Python-float path (same bits).
    Source: Hamilton's product, written out in xyzw order.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape == (4,) and b.shape == (4,):
        if out is None:
            out = np.empty(4)
        out[0], out[1], out[2], out[3] = qmul_xyzw(*a.tolist(), *b.tolist())
        return out
    x, y, z, w = qmul_xyzw(*np.moveaxis(a, -1, 0), *np.moveaxis(b, -1, 0))
    if out is None:
        return np.stack([x, y, z, w], axis=-1)
    out[..., 0], out[..., 1], out[..., 2], out[..., 3] = x, y, z, w
    return out


def quat_conj(q, /, *, out=None) -> np.ndarray:
    """Conjugate ``(-x, -y, -z, w)`` of ``(..., 4)`` quaternions: the inverse of a unit quaternion.

    (pylinalg calls this ``quat_inv``; it is the inverse only for unit quaternions.)
    """
    return np.multiply(np.asarray(q, dtype=np.float64), _CONJ, out=out)


def quat_from_axis_angle(axis, angle, /, *, out=None) -> np.ndarray:
    """Rotation of ``angle`` radians about ``axis`` (right-hand rule), as ``(..., 4)``.

    Args:
        axis: ``(..., 3)``, any non-zero length (it is normalised); a zero axis gives the
            identity.
        angle: radians, scalar or ``(...)``, broadcast against ``axis[..., 0]``.

    One ``(3,)`` axis with a scalar angle computes with ``math.sin`` / ``math.cos``.
    """
    axis = np.asarray(axis, dtype=np.float64)
    if axis.shape == (3,) and np.ndim(angle) == 0:
        n = np.linalg.norm(axis)
        if out is None:
            out = np.empty(4)
        if n == 0.0:
            out[:] = QUAT_IDENTITY
            return out
        s = math.sin(0.5 * angle) / n
        out[0], out[1], out[2], out[3] = axis[0] * s, axis[1] * s, axis[2] * s, math.cos(0.5 * angle)
        return out
    half = 0.5 * np.asarray(angle, dtype=np.float64)[..., None]
    n = np.linalg.norm(axis, axis=-1, keepdims=True)
    xyz = axis * (np.sin(half) / np.where(n > 0.0, n, 1.0))
    q = np.empty(xyz.shape[:-1] + (4,))
    q[..., :3] = xyz
    q[..., 3:] = np.cos(half)
    return _put(out, np.where(n > 0.0, q, QUAT_IDENTITY))


def quat_from_vecs(a, b, /, *, out=None) -> np.ndarray:
    """Unit quaternion ``(..., 4)`` turning unit vector ``a`` onto unit vector ``b`` ``(..., 3)``
    by the smallest angle (the shortest arc).

    Built as normalise(a × b, 1 + a·b) (half-way quaternion); for antiparallel vectors
    (1 + a·b < 1e-12) a half turn about an axis perpendicular to ``a``. Unlike pylinalg's
    function of the same name, the inputs must be unit vectors.
    """
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    d = np.sum(a * b, axis=-1, keepdims=True)
    c = np.cross(a, b)
    q = np.concatenate([c, 1.0 + d], axis=-1)
    anti = (1.0 + d[..., 0]) < 1e-12
    if np.any(anti):
        alt = np.cross(a, np.array([1.0, 0.0, 0.0]))
        bad = np.linalg.norm(alt, axis=-1) < 1e-6
        alt = np.where(bad[..., None], np.cross(a, np.array([0.0, 1.0, 0.0])), alt)
        alt = alt / np.linalg.norm(alt, axis=-1, keepdims=True)
        q = np.where(anti[..., None], np.concatenate([alt, np.zeros_like(d)], axis=-1), q)
    return quat_normalize(q, out=out)


def quat_from_euler(yaw, pitch, roll, /, *, out=None) -> np.ndarray:
    """``Ry(yaw) · Rx(pitch) · Rz(roll)`` as a quaternion ``(4,)``; radians (floats); signs in
    the module doc. The product ``qy ⊗ qx ⊗ qz`` expanded in closed form."""
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    if out is None:
        out = np.empty(4)
    out[0] = cy * sp * cr + sy * cp * sr
    out[1] = sy * cp * cr - cy * sp * sr
    out[2] = cy * cp * sr - sy * sp * cr
    out[3] = cy * cp * cr + sy * sp * sr
    return out


def euler_from_quat(q, /, *, out=None) -> np.ndarray:
    """``(yaw, pitch, roll)`` radians ``(..., 3)`` of unit quaternions ``(..., 4)``, the inverse
    of :func:`quat_from_euler`: pitch in [−π/2, π/2], yaw and roll in (−π, π].

    Read from the rotation matrix entries: yaw = atan2(r02, r22), pitch = asin(−r12),
    roll = atan2(r10, r11) (at pitch = ±π/2 the split between yaw and roll is arbitrary).
    """
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = np.moveaxis(q, -1, 0)
    r02 = 2 * (x * z + y * w)
    r22 = 1 - 2 * (x * x + y * y)
    r12 = 2 * (y * z - x * w)
    r10 = 2 * (x * y + z * w)
    r11 = 1 - 2 * (x * x + z * z)
    yaw = np.arctan2(r02, r22)
    pitch = np.arcsin(np.clip(-r12, -1.0, 1.0))
    roll = np.arctan2(r10, r11)
    if out is None:
        return np.stack([yaw, pitch, roll], axis=-1)
    out[..., 0], out[..., 1], out[..., 2] = yaw, pitch, roll
    return out


def quat_angle(a, b, /, *, out=None) -> np.ndarray:
    """Geodesic angle in radians ``(...)`` between unit quaternions ``a`` and ``b`` ``(..., 4)``,
    in [0, π] (``q`` and ``−q`` are the same rotation).

    Computed as 2·atan2(|vec(a⁻¹b)|, |w(a⁻¹b)|), exact to rounding even for tiny angles
    (arccos of the dot product loses half the digits there).
    """
    d = quat_mul(quat_conj(a), b)
    return _put(out, 2.0 * np.arctan2(np.linalg.norm(d[..., :3], axis=-1), np.abs(d[..., 3])))


def rotvec_from_quat(q, /, *, out=None) -> np.ndarray:
    """Rotation vector (unit axis · angle in radians, angle in [0, π]) ``(3,)`` of one unit
    quaternion ``(4,)``, taking the shortest arc (``q`` and ``−q`` give the same vector).

    This is 2·log(q); below |vec(q)| = 1e-12 it returns 2·vec(q).
    """
    q = np.asarray(q, dtype=np.float64)
    if q[3] < 0:
        q = -q
    v = q[:3]
    s = math.sqrt(float(v @ v))
    if s < 1e-12:
        return np.multiply(2.0, v, out=out)
    return np.multiply(v, 2.0 * math.atan2(s, q[3]) / s, out=out)


def quat_from_rotvec(v, /, *, out=None) -> np.ndarray:
    """Unit quaternion ``(4,)`` of the rotation vector ``v`` ``(3,)`` (unit axis · angle, radians):
    exp(v / 2), the inverse of :func:`rotvec_from_quat`. Below |v| = 1e-12, the normalised
    first-order quaternion (v/2, 1)."""
    v = np.asarray(v, dtype=np.float64)
    a = math.sqrt(float(v @ v))
    if a < 1e-12:
        q = np.array([0.5 * v[0], 0.5 * v[1], 0.5 * v[2], 1.0])
        return np.divide(q, np.linalg.norm(q), out=out)
    s = math.sin(0.5 * a) / a
    if out is None:
        out = np.empty(4)
    out[0], out[1], out[2], out[3] = v[0] * s, v[1] * s, v[2] * s, math.cos(0.5 * a)
    return out


def quat_slerp(a, b, t, /, *, out=None) -> np.ndarray:
    """Shortest-arc spherical linear interpolation of unit quaternions ``(..., 4)``, vectorised.

    Args:
        a, b: ``(..., 4)`` unit quaternions (broadcast).
        t: ``(...)`` or scalar; 0 gives ``a``, 1 gives ``b`` up to rounding; values outside
            [0, 1] extrapolate along the arc.

    ``b`` is negated where ``a·b < 0`` (shortest arc); where sin θ < 1e-9 the weights are
    the linear ones; the result is renormalised. For one pair in the 120 Hz path with exact
    end points see :func:`quat_slerp_scalar` (different rounding).
    Source: Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985.
    """
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    t = np.asarray(t, np.float64)[..., None]
    d = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(d < 0, -b, b)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    s = np.sin(theta)
    small = s < 1e-9
    s_safe = np.where(small, 1.0, s)
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / s_safe)
    wb = np.where(small, t, np.sin(t * theta) / s_safe)
    return quat_normalize(wa * a + wb * b, out=out)


def quat_slerp_scalar(a, b, u, /, *, out=None) -> np.ndarray:
    """Spherical linear interpolation from ``a`` (u = 0) to ``b`` (u = 1) of ONE pair of unit
    quaternions ``(4,)``, shortest arc, with Python floats (no array allocated with ``out``).

    ``u`` is clamped: u <= 0 returns exactly ``a``, u >= 1 exactly ``b`` (or ``−b``, the same
    rotation, when the arc crosses hemispheres). When cos θ > 0.9995 the normalised lerp
    is used (off the arc by at most ~1.0e-6 rad of rotation). ``out`` ``(4,)`` may alias
    ``a`` or ``b``.
    Source: Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985.
    """
    if out is None:
        out = np.empty(4)
    ax, ay, az, aw = float(a[0]), float(a[1]), float(a[2]), float(a[3])
    bx, by, bz, bw = float(b[0]), float(b[1]), float(b[2]), float(b[3])
    if u <= 0.0:
        out[0], out[1], out[2], out[3] = ax, ay, az, aw
    elif u >= 1.0:
        sign = -1.0 if ax * bx + ay * by + az * bz + aw * bw < 0.0 else 1.0
        out[0], out[1], out[2], out[3] = sign * bx, sign * by, sign * bz, sign * bw
    else:
        out[0], out[1], out[2], out[3] = slerp_xyzw(ax, ay, az, aw, bx, by, bz, bw, u)
    return out


# ----------------------------------------------------------------------------- vectors


def vec_transform_quat(v, q, /, *, out=None, via_matrix: bool = False) -> np.ndarray:
    """Vectors ``v`` ``(..., 3)`` rotated by unit quaternions ``q``; returns ``(..., 3)``.

    Default: ``q`` ``(..., 4)`` broadcast against ``v``, with t = 2·(q_xyz × v),
    v' = v + w·t + q_xyz × t (the expanded sandwich product q·v·q⁻¹).
    ``via_matrix=True``: ``q`` must be one quaternion ``(4,)``; v' = v · Rᵀ with
    R = :func:`mat3_from_quat` (cheaper for many vectors; rounds differently).

    Raises:
        ValueError: ``via_matrix`` with ``q`` not of shape (4,).
    """
    v = np.asarray(v, np.float64)
    q = np.asarray(q, np.float64)
    if via_matrix:
        if q.shape != (4,):
            raise ValueError(f"vec_transform_quat(via_matrix=True): one quaternion (4,) expected, got {q.shape}")
        return np.matmul(v, mat3_from_quat(q).T, out=out)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return _put(out, v + w * t + np.cross(u, t))


# ----------------------------------------------------------------------------- matrices


def mat3_from_quat(q, /, *, out=None) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of unit quaternions ``(..., 4)`` (the quaternion is
    not normalised). One ``(4,)`` quaternion takes a Python-float path (same bits)."""
    q = np.asarray(q, np.float64)
    if out is None:
        out = np.empty(q.shape[:-1] + (3, 3))
    r = mat3_xyzw(*(q.tolist() if q.shape == (4,) else np.moveaxis(q, -1, 0)))
    for i in range(9):
        out[..., i // 3, i % 3] = r[i]
    return out


def _shepperd(a: list) -> list:
    """xyzw (not normalised) of the rotation matrix ``a`` (3×3 nested floats), branching on the
    largest of trace and diagonal. Source: Shepperd, J. Guidance & Control 1(3), 1978."""
    tr = a[0][0] + a[1][1] + a[2][2]
    if tr > 0:
        s = math.sqrt(tr + 1.0) * 2
        return [(a[2][1] - a[1][2]) / s, (a[0][2] - a[2][0]) / s, (a[1][0] - a[0][1]) / s, 0.25 * s]
    if a[0][0] > a[1][1] and a[0][0] > a[2][2]:
        s = math.sqrt(1.0 + a[0][0] - a[1][1] - a[2][2]) * 2
        return [0.25 * s, (a[0][1] + a[1][0]) / s, (a[0][2] + a[2][0]) / s, (a[2][1] - a[1][2]) / s]
    if a[1][1] > a[2][2]:
        s = math.sqrt(1.0 + a[1][1] - a[0][0] - a[2][2]) * 2
        return [(a[0][1] + a[1][0]) / s, 0.25 * s, (a[1][2] + a[2][1]) / s, (a[0][2] - a[2][0]) / s]
    s = math.sqrt(1.0 + a[2][2] - a[0][0] - a[1][1]) * 2
    return [(a[0][2] + a[2][0]) / s, (a[1][2] + a[2][1]) / s, 0.25 * s, (a[1][0] - a[0][1]) / s]


def _nearest_rotation(m: np.ndarray) -> np.ndarray:
    """The rotation (3, 3) nearest to ``m`` (3, 3) (SVD, U·Vᵀ); a reflection flips the weakest axis."""
    u, _, vt = np.linalg.svd(m)
    r = u @ vt
    if np.linalg.det(r) < 0:
        u[:, -1] *= -1.0
        r = u @ vt
    return r


def quat_from_mat(m, /, *, project: bool = False, out=None) -> np.ndarray:
    """Unit quaternions ``(..., 4)`` with w >= 0 of rotation matrices ``(..., 3, 3)`` or of the
    upper-left 3×3 block of ``(..., 4, 4)`` matrices.

    Args:
        m: the matrices.
        project: False (default): the block must be a rotation (no scale, no shear), as
            after :func:`mat_decompose` divides the scale out. True: it is first projected
            onto the nearest rotation by SVD (Higham, "Computing the polar decomposition",
            1986), so a uniform scale, numeric drift or a reflection (the weakest axis is
            flipped) is accepted — for measured matrices such as MediaPipe's.

    Source: Shepperd's method (J. Guidance & Control 1978), branch on the largest diagonal.

    Raises:
        ValueError: the last two axes are not (3, 3) or (4, 4).
    """
    m = np.asarray(m, np.float64)
    if m.shape[-2:] not in ((3, 3), (4, 4)):
        raise ValueError(f"quat_from_mat: (..., 3, 3) or (..., 4, 4) matrices expected, got {m.shape}")
    shape = m.shape[:-2]
    blocks = m[..., :3, :3].reshape(-1, 3, 3)
    if project:
        q = np.empty((blocks.shape[0], 4))
        for i in range(blocks.shape[0]):
            qi = np.array(_shepperd(_nearest_rotation(blocks[i]).tolist()))
            if qi[3] < 0:
                qi = -qi
            q[i] = qi / np.linalg.norm(qi)
    else:
        q = np.array([_shepperd(a) for a in blocks.tolist()]).reshape(-1, 4)
        q = quat_normalize(q)
        q[q[:, 3] < 0] *= -1
    return _put(out, q.reshape(shape + (4,)))


def mat_compose(translation, rotation, scale, /, *, out=None) -> np.ndarray:
    """T·R·S matrices ``(..., 4, 4)`` from translations ``(..., 3)`` (metres), unit quaternions
    ``(..., 4)`` and scales ``(..., 3)``; the leading shape is the translation's."""
    t = np.asarray(translation, np.float64)
    if out is None:
        out = np.zeros(t.shape[:-1] + (4, 4))
    else:
        out[...] = 0.0
    out[..., :3, :3] = mat3_from_quat(rotation) * np.asarray(scale, np.float64)[..., None, :]
    out[..., :3, 3] = t
    out[..., 3, 3] = 1.0
    return out


def mat_decompose(m, /, *, out=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Matrices ``(..., 4, 4)`` -> (translation ``(..., 3)``, unit quaternion ``(..., 4)`` with
    w >= 0, scale ``(..., 3)``), the inverse of :func:`mat_compose`.

    Scale is the length of each column of the 3×3 block; a negative determinant is folded
    into the x scale; a zero column keeps its zero scale. Shear is not supported (the
    rotation is then not a rotation; use :func:`quat_from_mat` with ``project=True``).
    ``out`` is a tuple of three arrays.
    """
    m = np.asarray(m, np.float64)
    t = m[..., :3, 3].copy()
    cols = m[..., :3, :3]
    s = np.linalg.norm(cols, axis=-2)
    det = np.linalg.det(cols)
    s[..., 0] = np.where(det < 0, -s[..., 0], s[..., 0])
    rot = cols / np.where(s == 0, 1.0, s)[..., None, :]
    if out is None:
        return t, quat_from_mat(rot), s
    out[0][...] = t
    quat_from_mat(rot, out=out[1])
    out[2][...] = s
    return out[0], out[1], out[2]


def mat3_from_z_axis(axis, /, *, out=None) -> np.ndarray:
    """A right-handed orthonormal frame ``(3, 3)`` whose columns (u, v, w) have w along
    ``axis`` ``(3,)``: a rotation taking +Z to the axis direction. u is perpendicular to w
    and to +X (or to +Y when the axis is within ~26° of ±X); a zero axis gives w = +Y."""
    axis = np.asarray(axis, np.float64)
    n = np.linalg.norm(axis)
    w = axis / n if n > 1e-9 else np.array([0.0, 1.0, 0.0])
    a = np.array([1.0, 0.0, 0.0]) if abs(w[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(w, a)
    u /= np.linalg.norm(u)
    if out is None:
        out = np.empty((3, 3))
    out[:, 0], out[:, 1], out[:, 2] = u, np.cross(w, u), w
    return out


def mat_look_at(eye, target, up, /, *, out=None) -> np.ndarray:
    """World -> view matrix ``(4, 4)`` of a camera at ``eye`` ``(3,)`` looking at ``target``
    ``(3,)`` (metres) with ``up`` ``(3,)`` as the up hint: right-handed, the camera looks down
    its −Z with +Y up (gluLookAt). When ``up`` is parallel to the view direction, +Z is used
    as the hint instead.

    Note: pylinalg's ``mat_look_at`` returns the camera's own rotation (local -> world), not
    this view matrix.
    """
    eye = np.asarray(eye, np.float64)
    f = np.asarray(target, np.float64) - eye
    f /= np.linalg.norm(f)
    s = np.cross(f, up)
    if np.linalg.norm(s) < 1e-9:
        s = np.cross(f, [0.0, 0.0, 1.0])
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    m = np.eye(4) if out is None else out
    m[3] = (0.0, 0.0, 0.0, 1.0)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def mat_perspective(fov_y, aspect, near, far, /, *, out=None) -> np.ndarray:
    """View -> clip matrix ``(4, 4)`` of a symmetric perspective frustum, OpenGL conventions
    (NDC z in [−1, 1], the camera looks down −Z): vertical field of view ``fov_y`` radians,
    ``aspect`` = width / height, clip distances ``near`` < ``far`` metres (gluPerspective)."""
    t = 1.0 / math.tan(fov_y / 2)
    n, f = near, far
    if out is None:
        m = np.zeros((4, 4))
    else:
        m = out
        m[...] = 0.0
    m[0, 0], m[1, 1] = t / aspect, t
    m[2, 2], m[2, 3] = (f + n) / (n - f), 2 * f * n / (n - f)
    m[3, 2] = -1.0
    return m


__all__ = [
    "QUAT_IDENTITY", "euler_from_quat", "mat3_from_quat", "mat3_from_z_axis", "mat_compose", "mat_decompose",
    "mat_look_at", "mat_perspective", "quat_angle", "quat_conj", "quat_from_axis_angle", "quat_from_euler",
    "quat_from_mat", "quat_from_rotvec", "quat_from_vecs", "quat_mul", "quat_normalize", "quat_slerp",
    "quat_slerp_scalar", "rotvec_from_quat", "vec_transform_quat",
]
