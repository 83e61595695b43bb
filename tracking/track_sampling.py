"""Compiled pose-track sampling (numba, ``cache=True``, no NRT): the body of
:meth:`tracking.pose_track.PoseTrack.sample`, one call, no allocation (the runtime samples
a track at every 120 Hz substep).

Semantics (module doc of :mod:`tracking.pose_track`): at track time t, with k the last
observation at or before t, u = (t − t_k) / (t_{k+1} − t_k):

- rotation: slerp(q_k, q_{k+1}, u), shortest arc (Shoemake, SIGGRAPH 1985; normalised lerp
  when the two are within ~1e-7 rad, as :func:`avatars.math3d.quat_slerp_scalar`);
- translation, blendshapes, confidence: a + (b − a) · u; found: found_k and found_{k+1};
- before the first observation, after the last, or at a recorded time: that observation
  exactly.

The arithmetic is the Python implementation's, operation for operation (bit-identical
results; the tests compare).
"""

from __future__ import annotations

import math

from numba import njit


@njit(inline="always", cache=True)
def _locate(t, times, cursor):
    """Index k with times[k] <= t < times[k+1] (k = last index when t >= end, 0 before the
    start); ``cursor`` (1,) int64 keeps the last answer (sampling moves forward)."""
    n = times.shape[0]
    k = cursor[0]
    if times[k] <= t and (k + 1 == n or t < times[k + 1]):
        return k
    lo, hi = 0, n                       # searchsorted(times, t, side="right")
    while lo < hi:
        mid = (lo + hi) // 2
        if times[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    k = min(max(lo - 1, 0), n - 1)
    cursor[0] = k
    return k


@njit(cache=True, _nrt=False)
def sample_kernel(t_ns, offset_ns, times, rotations, translations, blendshapes, confidence, found, cursor,
                  out_rot, out_tr, out_bs):
    """Sample at track time t = ``t_ns − offset_ns`` (int ns) into ``out_rot`` (4,), ``out_tr`` (3,), ``out_bs``
    (B,); returns (confidence, found). Arrays: ``times`` (N,) int64 strictly increasing,
    ``rotations`` (N, 4) xyzw, ``translations`` (N, 3) metres, ``blendshapes`` (N, B),
    ``confidence`` (N,), ``found`` (N,) bool, ``cursor`` (1,) int64."""
    t = t_ns - offset_ns
    n = times.shape[0]
    k = _locate(t, times, cursor)
    if t <= times[0] or k == n - 1 or t == times[k]:
        i = 0 if t <= times[0] else k
        for j in range(4):
            out_rot[j] = rotations[i, j]
        for j in range(3):
            out_tr[j] = translations[i, j]
        for j in range(out_bs.shape[0]):
            out_bs[j] = blendshapes[i, j]
        return confidence[i], found[i]
    u = float(t - times[k]) / float(times[k + 1] - times[k])
    _slerp(rotations, k, u, out_rot)
    for j in range(3):
        out_tr[j] = (translations[k + 1, j] - translations[k, j]) * u + translations[k, j]
    for j in range(out_bs.shape[0]):
        out_bs[j] = (blendshapes[k + 1, j] - blendshapes[k, j]) * u + blendshapes[k, j]
    c0, c1 = confidence[k], confidence[k + 1]
    return c0 + (c1 - c0) * u, found[k] and found[k + 1]


@njit(inline="always", cache=True)
def _slerp(q, k, u, out):
    """slerp(q[k], q[k+1], u) for 0 < u < 1 into ``out`` (4,) (:func:`avatars.math3d.quat_slerp_scalar`)."""
    slerp4(q[k, 0], q[k, 1], q[k, 2], q[k, 3], q[k + 1, 0], q[k + 1, 1], q[k + 1, 2], q[k + 1, 3], u, out)


@njit(inline="always", cache=True)
def slerp4(ax, ay, az, aw, bx, by, bz, bw, u, out):
    """slerp(a, b, u) of two unit quaternions given as (x, y, z, w) scalars, shortest arc,
    normalised, into ``out`` (4,): the one slerp of the compiled track samplers (pose
    tracks here, whole-body records in :mod:`tracking.body`)."""
    d = ax * bx + ay * by + az * bz + aw * bw
    sign = 1.0
    if d < 0.0:
        d, sign = -d, -1.0
    if d > 0.9995:  # nearly parallel: normalised lerp is exact to ~1e-7 rad
        ka, kb = 1.0 - u, u * sign
    else:
        th = math.acos(d)
        st = math.sin(th)
        ka, kb = math.sin((1.0 - u) * th) / st, sign * math.sin(u * th) / st
    x, y, z, w = ka * ax + kb * bx, ka * ay + kb * by, ka * az + kb * bz, ka * aw + kb * bw
    nn = math.sqrt(x * x + y * y + z * z + w * w)
    out[0] = x / nn
    out[1] = y / nn
    out[2] = z / nn
    out[3] = w / nn
