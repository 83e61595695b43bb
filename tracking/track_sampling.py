"""Compiled pose-track sampling (numba, ``cache=True``, no NRT): the body of
:meth:`tracking.pose_track.PoseTrack.sample`, one call, no allocation (the runtime samples
a track at every 120 Hz substep).

Semantics (module doc of :mod:`tracking.pose_track`): at track time t, with k the last
observation at or before t, u = (t − t_k) / (t_{k+1} − t_k):

- rotation: slerp(q_k, q_{k+1}, u), shortest arc (Shoemake, SIGGRAPH 1985; normalised lerp
  when the two are within ~1e-7 rad: :func:`avatars.math_kernels.slerp_shoemake`, the
  compiled interior of :func:`avatars.math3d.quat_slerp_scalar`);
- translation, blendshapes, confidence: a + (b − a) · u; found: found_k and found_{k+1};
- before the first observation, after the last, or at a recorded time: that observation
  exactly.

The arithmetic is the Python implementation's, operation for operation (bit-identical
results; the tests compare). The key search is :func:`avatars.math_kernels.cursor_search`.
"""

from __future__ import annotations

from numba import njit

from avatars.kernel_cache import refresh
from avatars.math_kernels import cursor_search, slerp_shoemake


@njit(cache=True, _nrt=False)
def sample_kernel(t_ns, offset_ns, times, rotations, translations, blendshapes, confidence, found, cursor,
                  out_rot, out_tr, out_bs):
    """Sample at track time t = ``t_ns − offset_ns`` (int ns) into ``out_rot`` (4,), ``out_tr`` (3,), ``out_bs``
    (B,); returns (confidence, found). Arrays: ``times`` (N,) int64 strictly increasing,
    ``rotations`` (N, 4) xyzw, ``translations`` (N, 3) metres, ``blendshapes`` (N, B),
    ``confidence`` (N,), ``found`` (N,) bool, ``cursor`` (1,) int64."""
    t = t_ns - offset_ns
    n = times.shape[0]
    k = cursor_search(times, 0, n, t, cursor[0])
    cursor[0] = k
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
    q = rotations
    r = slerp_shoemake(q[k, 0], q[k, 1], q[k, 2], q[k, 3], q[k + 1, 0], q[k + 1, 1], q[k + 1, 2], q[k + 1, 3], u)
    for j in range(4):
        out_rot[j] = r[j]
    for j in range(3):
        out_tr[j] = (translations[k + 1, j] - translations[k, j]) * u + translations[k, j]
    for j in range(out_bs.shape[0]):
        out_bs[j] = (blendshapes[k + 1, j] - blendshapes[k, j]) * u + blendshapes[k, j]
    c0, c1 = confidence[k], confidence[k + 1]
    return c0 + (c1 - c0) * u, found[k] and found[k + 1]


@njit(cache=True, _nrt=False)
def sample_rows_kernel(t_ns, offset_ns, times, rows, cursor, out):
    """Rows ``rows`` (N, W) at track time ``t_ns − offset_ns``: linear between the two
    records around it, a record's own row at its time and held outside (the voice column
    of a track, :mod:`tracking.audio`)."""
    t = t_ns - offset_ns
    n = times.shape[0]
    k = cursor_search(times, 0, n, t, cursor[0])
    cursor[0] = k
    if t <= times[0] or k == n - 1 or t == times[k]:
        i = 0 if t <= times[0] else k
        for j in range(out.shape[0]):
            out[j] = rows[i, j]
        return 0
    u = float(t - times[k]) / float(times[k + 1] - times[k])
    for j in range(out.shape[0]):
        out[j] = (rows[k + 1, j] - rows[k, j]) * u + rows[k, j]
    return 0


# the kernels of this folder (here and tracking.body) inline the shared math only
refresh(sample_kernel)
refresh(sample_rows_kernel)
