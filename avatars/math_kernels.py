"""The compiled math of every numba kernel: 3x4 affine algebra, quaternions, slerps, the
TRS compose and the cursor search over sorted times. Every package may import it (it is in
the bottom package); it imports numba, math and :mod:`avatars.math3d`.

Nothing here allocates. Most helpers are plain ``@njit(cache=True, _nrt=False)`` functions
(``_call``): numba compiles each once per signature and LLVM inlines the call into the
calling kernel. Numba's IR-level inlining (``inline="always"``, ``_inline``) re-translates
and re-types the helper at every call site, and it was most of the kernels' compile time
(cold warm-up, tests/kernel_warmup.py: solver 49 -> 30 s CPU, rig 37 -> 15 s, 2026-12-04);
it is kept only for :func:`mul34` and :func:`inv34`, which LLVM leaves as calls in the
solver's large step kernel. Either way the operations are the same IEEE operations, so the
results are bit-identical. A kernel calling these helpers carries their machine code in
its own cache entry, so it must stamp its numba cache folder with this file and
``avatars/math3d.py`` (:func:`avatars.kernel_cache.refresh` adds both), or an edit here
would leave its cached machine code stale; this module stamps its own folder likewise.

Conventions: 3x4 affine matrices travel as 12-tuples (row-major r00 r01 r02 t0 r10 ... t2,
column vectors: ``p' = R p + t``), vectors as 3-tuples or three scalars, quaternions as
(x, y, z, w) (glTF's order) 4-tuples or four scalars; numba keeps them in registers.

Two arithmetics, kept apart because results are compared bit for bit:

- Hamilton order, the arithmetic of :mod:`avatars.math3d`: :func:`qmul`,
  :func:`quat_mat`, :func:`slerp_shoemake` are math3d's scalar formulas
  (:func:`avatars.math3d.qmul_xyzw`, ``mat3_xyzw``, ``slerp_xyzw``) compiled as they are;
  :func:`quat_rotate`, :func:`slerp_from_identity`, :func:`arc_quat`, :func:`compose34`
  follow math3d's ``vec_transform_quat``, ``quat_slerp``, ``quat_from_vecs``,
  ``mat_compose``. Used by the solver (``solver/kernels/``), the rig's drive and posing
  (``runtime/rig/kernels.py``) and the track samplers (``tracking/``).
- three.js order (three.js r180 ``Quaternion`` / ``Vector3`` / ``Matrix4``, operation for
  operation, for the node constraints and clip sampling compared with three-vrm): names
  end in ``_three`` (:func:`qmul_three`, :func:`quat_rotate_three`,
  :func:`quat_from_unit_vecs_three`, :func:`quat_normalize_three`, :func:`slerp_three`,
  :func:`slerp_flat_three`, :func:`rotation34_three`).
"""

from __future__ import annotations

import math

from numba import njit

from . import kernel_cache  # registers the shared kernel cache before the decorators below
from . import math3d

EPS = 1e-12
"""Lengths below this count as zero (metres, or unitless for unit-vector tests)."""
IDENT = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)
"""The identity 3x4."""

_inline = njit(inline="always", cache=True)
"""numba IR-level inlining: only where LLVM would leave a call in a hot loop (see above)."""
_call = njit(cache=True, _nrt=False)
"""A compiled helper of its own, called (and inlined by LLVM) from the kernels."""

# ------------------------------------------------------------------ math3d's scalar formulas
qmul = _call(math3d.qmul_xyzw)
"""qmul(ax, ay, az, aw, bx, by, bz, bw) -> a ⊗ b (apply b first), Hamilton order."""
quat_mat = _call(math3d.mat3_xyzw)
"""quat_mat(x, y, z, w) -> the rotation matrix as 9 values, row-major."""
slerp_shoemake = _call(math3d.slerp_xyzw)
"""slerp_shoemake(ax, ..., bw, u) -> slerp(a, b, u) for 0 < u < 1 (normalised lerp when
cos θ > 0.9995), the interior of :func:`avatars.math3d.quat_slerp_scalar`."""


# ------------------------------------------------------------------ 3x4 affine algebra
@_call
def world34(world, n):
    """The top three rows of ``world[n]`` ((N, 4, 4)) as a 3x4 tuple; n < 0: identity."""
    if n < 0:
        return IDENT
    return (world[n, 0, 0], world[n, 0, 1], world[n, 0, 2], world[n, 0, 3],
            world[n, 1, 0], world[n, 1, 1], world[n, 1, 2], world[n, 1, 3],
            world[n, 2, 0], world[n, 2, 1], world[n, 2, 2], world[n, 2, 3])


@_call
def put_world(world, n, m):
    """Write the 3x4 tuple ``m`` as world[n] (4x4, bottom row 0 0 0 1)."""
    for r in range(3):
        for c in range(4):
            world[n, r, c] = m[4 * r + c]
    world[n, 3, 0] = 0.0
    world[n, 3, 1] = 0.0
    world[n, 3, 2] = 0.0
    world[n, 3, 3] = 1.0


@_call
def row34(a, r, c):
    """Twelve values of row ``r`` of the 2-D array ``a`` from column ``c`` as a 3x4 tuple."""
    return (a[r, c], a[r, c + 1], a[r, c + 2], a[r, c + 3], a[r, c + 4], a[r, c + 5],
            a[r, c + 6], a[r, c + 7], a[r, c + 8], a[r, c + 9], a[r, c + 10], a[r, c + 11])


@_call
def put34(a, r, c, m):
    """Write the 3x4 tuple ``m`` into row ``r`` of ``a`` from column ``c`` (see :func:`row34`)."""
    for j in range(12):
        a[r, c + j] = m[j]


@_inline
def mul34(a, b):
    """a · b of two 3x4 affine tuples (the bottom rows taken as 0 0 0 1)."""
    return (
        a[0] * b[0] + a[1] * b[4] + a[2] * b[8],
        a[0] * b[1] + a[1] * b[5] + a[2] * b[9],
        a[0] * b[2] + a[1] * b[6] + a[2] * b[10],
        a[0] * b[3] + a[1] * b[7] + a[2] * b[11] + a[3],
        a[4] * b[0] + a[5] * b[4] + a[6] * b[8],
        a[4] * b[1] + a[5] * b[5] + a[6] * b[9],
        a[4] * b[2] + a[5] * b[6] + a[6] * b[10],
        a[4] * b[3] + a[5] * b[7] + a[6] * b[11] + a[7],
        a[8] * b[0] + a[9] * b[4] + a[10] * b[8],
        a[8] * b[1] + a[9] * b[5] + a[10] * b[9],
        a[8] * b[2] + a[9] * b[6] + a[10] * b[10],
        a[8] * b[3] + a[9] * b[7] + a[10] * b[11] + a[11],
    )


@_call
def pt(m, x, y, z):
    """The point (x, y, z) transformed by the 3x4 ``m``."""
    return (m[0] * x + m[1] * y + m[2] * z + m[3],
            m[4] * x + m[5] * y + m[6] * z + m[7],
            m[8] * x + m[9] * y + m[10] * z + m[11])


@_call
def vec(m, x, y, z):
    """The direction (x, y, z) transformed by the 3x3 part of ``m``."""
    return (m[0] * x + m[1] * y + m[2] * z,
            m[4] * x + m[5] * y + m[6] * z,
            m[8] * x + m[9] * y + m[10] * z)


@_call
def det3(m):
    """Determinant of the 3x3 part of ``m``."""
    return (m[0] * (m[5] * m[10] - m[6] * m[9])
            - m[1] * (m[4] * m[10] - m[6] * m[8])
            + m[2] * (m[4] * m[9] - m[5] * m[8]))


@_inline
def inv34(m):
    """Inverse of an affine 3x4 (adjugate / determinant); a singular matrix gives identity."""
    det = det3(m)
    if abs(det) < 1e-300:
        return IDENT
    i = 1.0 / det
    r00 = (m[5] * m[10] - m[6] * m[9]) * i
    r01 = (m[2] * m[9] - m[1] * m[10]) * i
    r02 = (m[1] * m[6] - m[2] * m[5]) * i
    r10 = (m[6] * m[8] - m[4] * m[10]) * i
    r11 = (m[0] * m[10] - m[2] * m[8]) * i
    r12 = (m[2] * m[4] - m[0] * m[6]) * i
    r20 = (m[4] * m[9] - m[5] * m[8]) * i
    r21 = (m[1] * m[8] - m[0] * m[9]) * i
    r22 = (m[0] * m[5] - m[1] * m[4]) * i
    tx, ty, tz = m[3], m[7], m[11]
    return (r00, r01, r02, -(r00 * tx + r01 * ty + r02 * tz),
            r10, r11, r12, -(r10 * tx + r11 * ty + r12 * tz),
            r20, r21, r22, -(r20 * tx + r21 * ty + r22 * tz))


@_call
def inv_vec(m, x, y, z):
    """M3^-1 @ v without forming the inverse (adjugate times v over the determinant)."""
    det = det3(m)
    if abs(det) < 1e-300:
        return x, y, z
    i = 1.0 / det
    return (((m[5] * m[10] - m[6] * m[9]) * x + (m[2] * m[9] - m[1] * m[10]) * y
             + (m[1] * m[6] - m[2] * m[5]) * z) * i,
            ((m[6] * m[8] - m[4] * m[10]) * x + (m[0] * m[10] - m[2] * m[8]) * y
             + (m[2] * m[4] - m[0] * m[6]) * z) * i,
            ((m[4] * m[9] - m[5] * m[8]) * x + (m[1] * m[8] - m[0] * m[9]) * y
             + (m[0] * m[5] - m[1] * m[4]) * z) * i)


@_call
def compose34(tx, ty, tz, qx, qy, qz, qw, sx, sy, sz):
    """T·R·S as a 3x4 tuple from translation, unit rotation (x, y, z, w) and scale: column j
    of R times s_j (the formula of :func:`avatars.math3d.mat_compose`)."""
    m = quat_mat(qx, qy, qz, qw)
    return (m[0] * sx, m[1] * sy, m[2] * sz, tx,
            m[3] * sx, m[4] * sy, m[5] * sz, ty,
            m[6] * sx, m[7] * sy, m[8] * sz, tz)


@_call
def rotate_frame(m, q):
    """The 3x4 ``m`` with its 3x3 part post-multiplied by the rotation q (translation kept)."""
    r = quat_mat(q[0], q[1], q[2], q[3])
    return (m[0] * r[0] + m[1] * r[3] + m[2] * r[6], m[0] * r[1] + m[1] * r[4] + m[2] * r[7],
            m[0] * r[2] + m[1] * r[5] + m[2] * r[8], m[3],
            m[4] * r[0] + m[5] * r[3] + m[6] * r[6], m[4] * r[1] + m[5] * r[4] + m[6] * r[7],
            m[4] * r[2] + m[5] * r[5] + m[6] * r[8], m[7],
            m[8] * r[0] + m[9] * r[3] + m[10] * r[6], m[8] * r[1] + m[9] * r[4] + m[10] * r[7],
            m[8] * r[2] + m[9] * r[5] + m[10] * r[8], m[11])


# ------------------------------------------------------------------ quaternions, Hamilton order
@_call
def arc_quat(ax, ay, az, bx, by, bz):
    """Unit quaternion (x, y, z, w) of the shortest arc from unit a to unit b (half-way
    quaternion, as :func:`avatars.math3d.quat_from_vecs`; antiparallel: a half turn about an
    axis perpendicular to a)."""
    d = ax * bx + ay * by + az * bz
    if d < -1.0 + 1e-12:
        px, py, pz = 0.0, az, -ay           # a x (1, 0, 0)
        n = px * px + py * py + pz * pz
        if n < 1e-12:
            px, py, pz = -az, 0.0, ax       # a x (0, 1, 0)
            n = px * px + py * py + pz * pz
        n = math.sqrt(n)
        return px / n, py / n, pz / n, 0.0
    cx = ay * bz - az * by
    cy = az * bx - ax * bz
    cz = ax * by - ay * bx
    w = 1.0 + d
    n = math.sqrt(cx * cx + cy * cy + cz * cz + w * w)
    return cx / n, cy / n, cz / n, w / n


@_call
def quat_rotate(qx, qy, qz, qw, vx, vy, vz):
    """v rotated by unit q: v + w t + (u × t) with t = 2 u × v, u = q's vector part (the
    grouping of :func:`avatars.math3d.vec_transform_quat`)."""
    tx, ty, tz = 2.0 * (qy * vz - qz * vy), 2.0 * (qz * vx - qx * vz), 2.0 * (qx * vy - qy * vx)
    return (vx + qw * tx + (qy * tz - qz * ty), vy + qw * ty + (qz * tx - qx * tz),
            vz + qw * tz + (qx * ty - qy * tx))


@_call
def slerp_from_identity(qx, qy, qz, qw, t):
    """slerp(I, q, t), shortest arc, normalised: the arithmetic of
    :func:`avatars.math3d.quat_slerp` with a = I (sin θ < 1e-9: linear weights).
    Source: Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985."""
    d = qw
    if d < 0.0:
        qx, qy, qz, qw, d = -qx, -qy, -qz, -qw, -d
    th = math.acos(min(max(d, -1.0), 1.0))
    s = math.sin(th)
    if s < 1e-9:
        wa, wb = 1.0 - t, t
    else:
        wa, wb = math.sin((1.0 - t) * th) / s, math.sin(t * th) / s
    x, y, z, w = wb * qx, wb * qy, wb * qz, wa + wb * qw
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if n > 0.0:
        return x / n, y / n, z / n, w / n
    return 0.0, 0.0, 0.0, 1.0


# ------------------------------------------------------------------ quaternions, three.js order
@_call
def qmul_three(ax, ay, az, aw, bx, by, bz, bw):
    """a · b (three.js ``Quaternion.multiplyQuaternions``, same arithmetic order)."""
    return (ax * bw + aw * bx + ay * bz - az * by,
            ay * bw + aw * by + az * bx - ax * bz,
            az * bw + aw * bz + ax * by - ay * bx,
            aw * bw - ax * bx - ay * by - az * bz)


@_call
def quat_rotate_three(qx, qy, qz, qw, vx, vy, vz):
    """v rotated by q (three.js ``Vector3.applyQuaternion``): v + w t + q×t, t = 2 q×v."""
    tx = 2.0 * (qy * vz - qz * vy)
    ty = 2.0 * (qz * vx - qx * vz)
    tz = 2.0 * (qx * vy - qy * vx)
    return (vx + qw * tx + qy * tz - qz * ty,
            vy + qw * ty + qz * tx - qx * tz,
            vz + qw * tz + qx * ty - qy * tx)


@_call
def quat_normalize_three(x, y, z, w):
    """(x, y, z, w) over its length (three.js ``Quaternion.normalize``: times 1 / length;
    a zero quaternion gives the identity)."""
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if n == 0.0:
        return 0.0, 0.0, 0.0, 1.0
    n = 1.0 / n
    return x * n, y * n, z * n, w * n


@_call
def quat_from_unit_vecs_three(fx, fy, fz, tx, ty, tz):
    """The shortest-arc rotation from unit f to unit t (three.js ``setFromUnitVectors``:
    antiparallel below 1 + f·t = 1e-8, then normalised)."""
    r = fx * tx + fy * ty + fz * tz + 1.0
    if r < 1e-8:
        if abs(fx) > abs(fz):
            x, y, z, w = -fy, fx, 0.0, 0.0
        else:
            x, y, z, w = 0.0, -fz, fy, 0.0
    else:
        x, y, z, w = fy * tz - fz * ty, fz * tx - fx * tz, fx * ty - fy * tx, r
    return quat_normalize_three(x, y, z, w)


@_call
def slerp_three(ax, ay, az, aw, bx, by, bz, bw, t):
    """slerp(a, b, t) (three.js ``Quaternion.slerp``: a at t = 0, b at t = 1, shortest arc)."""
    if t == 0.0:
        return ax, ay, az, aw
    if t == 1.0:
        return bx, by, bz, bw
    c = aw * bw + ax * bx + ay * by + az * bz
    if c < 0.0:
        bx, by, bz, bw, c = -bx, -by, -bz, -bw, -c
    if c >= 1.0:
        return ax, ay, az, aw
    s2 = 1.0 - c * c
    if s2 <= 2.220446049250313e-16:
        s = 1.0 - t
        return quat_normalize_three(s * ax + t * bx, s * ay + t * by, s * az + t * bz, s * aw + t * bw)
    s = math.sqrt(s2)
    half = math.atan2(s, c)
    ra = math.sin((1.0 - t) * half) / s
    rb = math.sin(t * half) / s
    return ax * ra + bx * rb, ay * ra + by * rb, az * ra + bz * rb, aw * ra + bw * rb


@_call
def slerp_flat_three(ax, ay, az, aw, bx, by, bz, bw, t):
    """three.js ``Quaternion.slerpFlat`` (r150+), operation for operation: exactly a at t = 0
    and b at t = 1; shortest arc; θ by atan2; a normalised lerp only for tiny steps."""
    if t == 0.0:
        return ax, ay, az, aw
    if t == 1.0:
        return bx, by, bz, bw
    if aw != bw or ax != bx or ay != by or az != bz:
        s = 1.0 - t
        cos = ax * bx + ay * by + az * bz + aw * bw
        dr = 1.0 if cos >= 0.0 else -1.0
        sqr = 1.0 - cos * cos
        lerp = True
        if sqr > 2.220446049250313e-16:
            sn = math.sqrt(sqr)
            ln = math.atan2(sn, cos * dr)
            s = math.sin(s * ln) / sn
            t = math.sin(t * ln) / sn
            lerp = False
        td = t * dr
        ax, ay, az, aw = ax * s + bx * td, ay * s + by * td, az * s + bz * td, aw * s + bw * td
        if lerp:
            f = 1.0 / math.sqrt(ax * ax + ay * ay + az * az + aw * aw)
            ax, ay, az, aw = ax * f, ay * f, az * f, aw * f
    return ax, ay, az, aw


@_call
def rotation34_three(m):
    """The rotation of the 3x4 tuple ``m`` as (x, y, z, w): columns divided by their lengths
    (the first negated when the determinant is negative), then the rotation matrix to a
    quaternion (three.js ``Matrix4.decompose`` / ``Quaternion.setFromRotationMatrix``)."""
    sx = math.sqrt(m[0] * m[0] + m[4] * m[4] + m[8] * m[8])
    sy = math.sqrt(m[1] * m[1] + m[5] * m[5] + m[9] * m[9])
    sz = math.sqrt(m[2] * m[2] + m[6] * m[6] + m[10] * m[10])
    det = (m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8])
           + m[2] * (m[4] * m[9] - m[5] * m[8]))
    if det < 0.0:
        sx = -sx
    ix, iy, iz = 1.0 / sx, 1.0 / sy, 1.0 / sz
    m11, m12, m13 = m[0] * ix, m[1] * iy, m[2] * iz
    m21, m22, m23 = m[4] * ix, m[5] * iy, m[6] * iz
    m31, m32, m33 = m[8] * ix, m[9] * iy, m[10] * iz
    trace = m11 + m22 + m33
    if trace > 0.0:
        s = 0.5 / math.sqrt(trace + 1.0)
        return (m32 - m23) * s, (m13 - m31) * s, (m21 - m12) * s, 0.25 / s
    if m11 > m22 and m11 > m33:
        s = 2.0 * math.sqrt(1.0 + m11 - m22 - m33)
        return 0.25 * s, (m12 + m21) / s, (m13 + m31) / s, (m32 - m23) / s
    if m22 > m33:
        s = 2.0 * math.sqrt(1.0 + m22 - m11 - m33)
        return (m12 + m21) / s, 0.25 * s, (m23 + m32) / s, (m13 - m31) / s
    s = 2.0 * math.sqrt(1.0 + m33 - m11 - m22)
    return (m13 + m31) / s, (m23 + m32) / s, 0.25 * s, (m21 - m12) / s


# ------------------------------------------------------------------ sorted times
@_call
def cursor_search(times, o, n, t, k):
    """The key k in [0, n) with times[o + k] <= t < times[o + k + 1] (the last key when t is
    at or past it, 0 before the first): ``k`` (the previous answer; anything out of range
    is fine) is tried first, since sampling mostly moves forward, else a binary search
    (numpy's ``searchsorted(side="right") - 1``, clamped). ``times`` is a 1-D array holding
    n increasing values from offset ``o``."""
    if 0 <= k < n and times[o + k] <= t and (k + 1 == n or t < times[o + k + 1]):
        return k
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if times[o + mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return min(max(lo - 1, 0), n - 1)


# the compiled helpers above (and math3d's formulas they call) are cached on their own too
kernel_cache.refresh(cursor_search)
