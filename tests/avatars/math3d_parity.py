"""Parity cases of :mod:`avatars.math3d` against the two modules it replaced.

``transforms.py`` in avatars (vectorised numpy) and ``rotations.py`` in tracking (scalar,
with an SVD projection) existed until math3d replaced them; both exist at
:data:`OLD_COMMIT`. Each :class:`Case` names an old computation and the new one that must
reproduce it, on the seeded inputs of :func:`make_inputs`:

- ``check="exact"``: same bits (the callers' results are compared bit for bit: hair states,
  pose tracks, face tracks);
- ``check=<tolerance name>``: the new function is a different formula (a unified name, or
  the other library's behaviour); the tolerance is one of :data:`TOLERANCES`.

Golden file. The old outputs are frozen in ``golden/math3d_parity.npz`` together with the
inputs and a probe of the platform's libm / LAPACK / BLAS results (:func:`platform_probe`).
Regenerate it (only if the inputs or the cases change) with::

    python -m tests.avatars.math3d_parity            # old modules read from git (OLD_COMMIT)
    python -m tests.avatars.math3d_parity --rev REV  # ... from another revision

which loads the two old files with ``git show REV:path`` (they import only math and numpy)
and writes the npz. Cases marked ``platform=True`` go through sin/acos/atan2, norms,
determinants or SVD, whose last bits may differ on another CPU or numpy build; there the
test compares them exactly only when the probe matches the stored one, and to
:data:`PLATFORM_TOL` otherwise (saying so).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from avatars import math3d as M

OLD_COMMIT = "6c6a79cd0ecd0b3cbdad893503dc845d398ca4ab"
OLD_FILES = {"transforms": ("avatars", "transforms.py"), "rotations": ("tracking", "rotations.py")}  # (dir, file)
GOLDEN = Path(__file__).resolve().parent / "golden" / "math3d_parity.npz"
SEED = 20260613
N = 160  # random rows per input set (plus the hand-picked edge cases)

#: Named tolerances (absolute, on unit quaternions / unit-scale vectors and matrices).
TOLERANCES = {
    # normalising an axis whose length is 1 to rounding (avatars did not normalise)
    "AXIS_NORMALISE_TOL": 4e-16,
    # Ry·Rx·Rz as a product of three quaternions (avatars) vs the expanded closed form
    "EULER_FORM_TOL": 1e-15,
    # cross-product rotation vs v·Rᵀ through the matrix
    "ROTATE_FORM_TOL": 4e-15,
    # Shepperd on the matrix as given vs on its SVD projection, for a proper rotation
    "PROJECTION_TOL": 2e-15,
    # vectorised slerp (lerp only below sin θ < 1e-9) vs scalar slerp (normalised lerp when
    # cos θ > 0.9995, θ < 0.032: off the arc by up to ~3.5e-7 per component)
    "SLERP_FORM_TOL": 5e-7,
}
#: Exact cases whose inputs pass through libm / LAPACK / BLAS, on another platform.
PLATFORM_TOL = 1e-13


# ----------------------------------------------------------------------------- inputs


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True))


def _rot_from_quat(q: np.ndarray) -> np.ndarray:
    """Plain rotation matrices (..., 3, 3) of unit quaternions, written independently of
    both libraries (for inputs only)."""
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z], -1),
    ], -2)


def make_inputs(seed: int = SEED) -> dict[str, np.ndarray]:
    """The seeded input set: random values plus the edge cases each old function branches on."""
    rng = np.random.default_rng(seed)
    s2 = math.sqrt(0.5)
    special_q = np.array([
        [0, 0, 0, 1], [0, 0, 0, -1], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0],  # identity, half turns
        [s2, 0, 0, s2], [0, s2, 0, -s2], [0, 0, -s2, s2], [0.5, 0.5, 0.5, 0.5], [-0.5, 0.5, -0.5, -0.5],
        [1e-13, 0, 0, 1], [0, -3e-13, 1e-14, -1], [1e-7, 2e-7, -1e-7, 1],  # tiny rotations
        [0.6, 0, 0.8, 0], [0, 0.28, 0.96, 0],  # w = 0 (half turns about oblique axes)
    ], dtype=np.float64)
    q = np.concatenate([special_q, _unit(rng.normal(size=(N, 4)))])
    q[len(special_q):] = _unit(q[len(special_q):])
    n = len(q)
    # second quaternion of each pair: random, equal, opposite, near (both sides of 0.9995), far
    q2 = _unit(rng.normal(size=(n, 4)))
    kinds = rng.integers(0, 6, n)
    near = _unit(q + rng.normal(size=(n, 4)) * rng.choice([1e-12, 1e-9, 3e-8, 1e-7, 1e-5, 1e-2, 3e-2], n)[:, None])
    q2 = np.where((kinds == 1)[:, None], q, q2)
    q2 = np.where((kinds == 2)[:, None], -q, q2)
    q2 = np.where((kinds == 3)[:, None], near, q2)
    q2 = np.where((kinds == 4)[:, None], -near, q2)
    t = rng.uniform(0.0, 1.0, n)
    t[rng.integers(0, n, 12)] = 0.0
    t[rng.integers(0, n, 12)] = 1.0
    t_ext = t.copy()
    t_ext[rng.integers(0, n, 20)] = rng.uniform(-0.5, 1.5, 20)
    q_raw = q * rng.uniform(0.2, 3.0, (n, 1))
    q_raw[:3] = 0.0  # zero quaternions normalise to the identity
    v = rng.normal(size=(n, 3)) * rng.choice([1e-6, 1.0, 50.0], (n, 1))
    v[:2] = 0.0
    # axes: exact unit axes (the solver tests use those), random lengths, zero
    exact_axes = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1]], np.float64)
    axis_exact = exact_axes[rng.integers(0, 6, n)]
    axis_any = rng.normal(size=(n, 3)) * rng.uniform(0.1, 5.0, (n, 1))
    axis_any[:2] = 0.0
    axis_unit = _unit(rng.normal(size=(n, 3)))
    angle = rng.uniform(-2 * math.pi, 2 * math.pi, n)
    angle[:4] = [0.0, math.pi, -math.pi, 1e-12]
    ypr = rng.uniform(-math.pi, math.pi, (n, 3))
    ypr[:, 1] /= 2.0
    ypr[:6] = [[0, 0, 0], [0.3, math.pi / 2, 0.2], [-0.3, -math.pi / 2, 0.1], [math.pi, 0, 0],
               [0, 0, -math.pi], [1e-9, -1e-9, 1e-9]]
    rotvec = _unit(rng.normal(size=(n, 3))) * rng.uniform(0.0, math.pi, (n, 1))
    rotvec[:5] = [[0, 0, 0], [1e-13, 0, 0], [0, 3e-13, -1e-13], [0, 0, math.pi], [1e-6, 0, 0]]
    rot3 = _rot_from_quat(q)
    # measured-like matrices for the SVD projection: scale, drift, reflections, 4x4 blocks
    drift = rng.normal(size=(n, 3, 3)) * rng.choice([0.0, 1e-9, 1e-4], (n, 1, 1))
    noisy = rot3 * rng.uniform(0.5, 2.0, (n, 1, 1)) + drift
    noisy[rng.integers(0, n, 16), :, 2] *= -1.0  # reflections
    noisy4 = np.tile(np.eye(4), (n, 1, 1))
    noisy4[:, :3, :3] = noisy
    noisy4[:, :3, 3] = rng.normal(size=(n, 3)) * 30.0
    # TRS: translations, rotations, scales (uniform, non-uniform, negative, zero)
    trs_t = rng.normal(size=(n, 3))
    trs_s = rng.uniform(0.1, 3.0, (n, 3))
    trs_s[rng.integers(0, n, 20)] = rng.uniform(0.1, 3.0, (20, 1))
    neg = rng.integers(0, n, 20)
    trs_s[neg, rng.integers(0, 3, 20)] *= -1.0
    trs_s[:2, 1] = 0.0
    affine = np.tile(np.eye(4), (n, 1, 1))
    affine[:, :3, :] = rng.normal(size=(n, 3, 4))  # shear too: decompose must not crash
    # vector pairs for the shortest arc: random, parallel, antiparallel (also along +-X)
    va = _unit(rng.normal(size=(n, 3)))
    vb = _unit(rng.normal(size=(n, 3)))
    pk = rng.integers(0, 4, n)
    vb = np.where((pk == 1)[:, None], va, vb)
    vb = np.where((pk == 2)[:, None], -va, vb)
    va[:4] = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, 0, 1]]
    vb[:4] = [[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 0, 1]]
    vecs = rng.normal(size=(7, 3))
    return {
        "q": q, "q2": q2, "t": t, "t_ext": t_ext, "q_raw": q_raw, "v": v, "axis_exact": axis_exact,
        "axis_any": axis_any, "axis_unit": axis_unit, "angle": angle, "ypr": ypr, "rotvec": rotvec,
        "rot3": rot3, "noisy": noisy, "noisy4": noisy4, "trs_t": trs_t, "trs_s": trs_s, "affine": affine,
        "va": va, "vb": vb, "vecs": vecs,
    }


# ----------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """``old(T, R, x)`` must match ``new(x)`` per ``check`` (T = the old transforms.py of
    avatars, R = the old rotations.py of tracking); ``platform``: goes through libm / LAPACK /
    BLAS."""

    name: str
    old: Callable
    new: Callable
    check: str = "exact"
    platform: bool = True


def _rows(f, *arrays) -> np.ndarray:
    """Stack ``f`` applied row by row (single-quaternion paths)."""
    return np.array([f(*row) for row in zip(*arrays)])


def _rows_out(f, shape, *arrays) -> np.ndarray:
    """Like :func:`_rows`, through ``out=`` (a preallocated buffer per row)."""
    res = []
    for row in zip(*arrays):
        buf = np.full(shape, np.nan)
        r = f(*row, out=buf)
        assert r is buf
        res.append(buf.copy())
    return np.array(res)


def _batch_out(f, shape, *arrays, **kw) -> np.ndarray:
    buf = np.full(shape, np.nan)
    r = f(*arrays, out=buf, **kw)
    assert r is buf
    return buf


def _trs(x):
    return x["trs_t"], x["q"], x["trs_s"]


def _trs_mats(x):
    """Composed TRS matrices plus general affine ones (the decompose inputs)."""
    t, q, s = _trs(x)
    m = np.tile(np.eye(4), (len(t), 1, 1))
    m[:, :3, :3] = _rot_from_quat(q) * s[:, None, :]
    m[:, :3, 3] = t
    return np.concatenate([m, x["affine"]])


def _decomposed(res) -> np.ndarray:
    t, q, s = res
    return np.concatenate([t, q, s], axis=-1)


def _decompose_rows(x) -> np.ndarray:
    return np.array([_decomposed(M.mat_decompose(m)) for m in _trs_mats(x)])


def _decompose_out(x) -> np.ndarray:
    mats = _trs_mats(x)
    out = (np.empty((len(mats), 3)), np.empty((len(mats), 4)), np.empty((len(mats), 3)))
    res = M.mat_decompose(mats, out=out)
    assert all(a is b for a, b in zip(res, out))
    return _decomposed(out)


def _slerp_pairs(x):
    return x["q"], x["q2"], x["t"]


def _rotate_rows_matrix(f, x):
    """One quaternion applied to the 7 vectors ``vecs``, for every quaternion."""
    return np.array([f(q) for q in x["q"]])


def _embed4(x):
    """The rotations ``rot3`` as the blocks of 4x4 matrices with a translation."""
    m = np.tile(np.eye(4), (len(x["rot3"]), 1, 1))
    m[:, :3, :3] = x["rot3"]
    m[:, :3, 3] = x["trs_t"]
    return m


CASES: list[Case] = [
    # --- identical in both old modules
    Case("normalize/T", lambda T, R, x: T.quat_normalize(x["q_raw"]), lambda x: M.quat_normalize(x["q_raw"])),
    Case("normalize/R", lambda T, R, x: R.quat_normalize(x["q_raw"]), lambda x: M.quat_normalize(x["q_raw"])),
    Case("normalize/rows", lambda T, R, x: _rows(R.quat_normalize, x["q_raw"]),
         lambda x: _rows_out(M.quat_normalize, (4,), x["q_raw"])),
    Case("mul/T", lambda T, R, x: T.quat_mul(x["q"], x["q2"]), lambda x: M.quat_mul(x["q"], x["q2"]), platform=False),
    Case("mul/T-out", lambda T, R, x: T.quat_mul(x["q"], x["q2"]),
         lambda x: _batch_out(M.quat_mul, (len(x["q"]), 4), x["q"], x["q2"]), platform=False),
    Case("mul/T-broadcast", lambda T, R, x: T.quat_mul(x["q"][5], x["q2"]), lambda x: M.quat_mul(x["q"][5], x["q2"]),
         platform=False),
    Case("mul/R-rows", lambda T, R, x: _rows(R.quat_mul, x["q"], x["q2"]), lambda x: _rows(M.quat_mul, x["q"], x["q2"]),
         platform=False),
    Case("mul/R-rows-out", lambda T, R, x: _rows(R.quat_mul, x["q"], x["q2"]),
         lambda x: _rows_out(M.quat_mul, (4,), x["q"], x["q2"]), platform=False),
    Case("conj/T", lambda T, R, x: T.quat_conj(x["q"]), lambda x: M.quat_conj(x["q"]), platform=False),
    Case("conj/R-rows", lambda T, R, x: _rows(R.quat_conj, x["q"]), lambda x: _rows_out(M.quat_conj, (4,), x["q"]),
         platform=False),
    Case("mat3/T", lambda T, R, x: T.quat_to_mat3(x["q"]), lambda x: M.mat3_from_quat(x["q"]), platform=False),
    Case("mat3/T-rows", lambda T, R, x: _rows(T.quat_to_mat3, x["q"]), lambda x: _rows(M.mat3_from_quat, x["q"]),
         platform=False),
    Case("mat3/R-rows", lambda T, R, x: _rows(R.quat_to_matrix, x["q"]),
         lambda x: _rows_out(M.mat3_from_quat, (3, 3), x["q"]), platform=False),
    # --- behaviours of the old transforms.py (avatars)
    Case("rotate/T", lambda T, R, x: T.quat_rotate(x["q"], x["v"]), lambda x: M.vec_transform_quat(x["v"], x["q"]),
         platform=False),
    Case("rotate/T-rows", lambda T, R, x: _rows(T.quat_rotate, x["q"], x["v"]),
         lambda x: _rows_out(lambda q, v, out: M.vec_transform_quat(v, q, out=out), (3,), x["q"], x["v"]),
         platform=False),
    Case("axis_angle/T-exact-axes", lambda T, R, x: T.quat_from_axis_angle(x["axis_exact"], x["angle"]),
         lambda x: _rows(M.quat_from_axis_angle, x["axis_exact"], x["angle"])),
    Case("axis_angle/T-exact-axes-batch", lambda T, R, x: T.quat_from_axis_angle(x["axis_exact"], x["angle"]),
         lambda x: M.quat_from_axis_angle(x["axis_exact"], x["angle"])),
    Case("axis_angle/T-unit-axes", lambda T, R, x: T.quat_from_axis_angle(x["axis_unit"], x["angle"]),
         lambda x: M.quat_from_axis_angle(x["axis_unit"], x["angle"]), check="AXIS_NORMALISE_TOL"),
    Case("euler/T-yxz", lambda T, R, x: _rows(T.quat_from_euler_yxz, *x["ypr"].T),
         lambda x: _rows(M.quat_from_euler, *x["ypr"].T), check="EULER_FORM_TOL"),
    Case("mat3_to_quat/T", lambda T, R, x: T.mat3_to_quat(x["rot3"]), lambda x: M.quat_from_mat(x["rot3"])),
    Case("mat3_to_quat/T-out", lambda T, R, x: T.mat3_to_quat(x["rot3"]),
         lambda x: _batch_out(M.quat_from_mat, (len(x["rot3"]), 4), x["rot3"])),
    Case("mat3_to_quat/T-rows", lambda T, R, x: _rows(T.mat3_to_quat, x["rot3"]),
         lambda x: _rows(M.quat_from_mat, x["rot3"])),
    Case("mat3_to_quat/T-4x4", lambda T, R, x: T.mat3_to_quat(x["rot3"]), lambda x: M.quat_from_mat(_embed4(x))),
    Case("slerp/T", lambda T, R, x: T.quat_slerp(x["q"], x["q2"], x["t_ext"]),
         lambda x: M.quat_slerp(x["q"], x["q2"], x["t_ext"])),
    Case("slerp/T-out", lambda T, R, x: T.quat_slerp(x["q"], x["q2"], x["t_ext"]),
         lambda x: _batch_out(M.quat_slerp, (len(x["q"]), 4), x["q"], x["q2"], x["t_ext"])),
    Case("slerp/T-rows", lambda T, R, x: _rows(T.quat_slerp, x["q"], x["q2"], x["t_ext"]),
         lambda x: _rows(M.quat_slerp, x["q"], x["q2"], x["t_ext"])),
    Case("slerp/T-rows-float-t", lambda T, R, x: _rows(lambda a, b, u: T.quat_slerp(a, b, float(u)), *_slerp_pairs(x)),
         lambda x: _rows_out(lambda a, b, u, out: M.quat_slerp(a, b, float(u), out=out), (4,), *_slerp_pairs(x))),
    Case("compose/T", lambda T, R, x: T.compose_trs(*_trs(x)), lambda x: M.mat_compose(*_trs(x)), platform=False),
    Case("compose/T-out", lambda T, R, x: T.compose_trs(*_trs(x)),
         lambda x: _batch_out(M.mat_compose, (len(x["q"]), 4, 4), *_trs(x)), platform=False),
    Case("compose/T-rows", lambda T, R, x: _rows(T.compose_trs, *_trs(x)),
         lambda x: _rows_out(M.mat_compose, (4, 4), *_trs(x)), platform=False),
    Case("decompose/T", lambda T, R, x: _decomposed(T.decompose_trs(_trs_mats(x))),
         lambda x: _decomposed(M.mat_decompose(_trs_mats(x)))),
    Case("decompose/T-out", lambda T, R, x: _decomposed(T.decompose_trs(_trs_mats(x))), _decompose_out),
    Case("decompose/T-rows", lambda T, R, x: np.array([_decomposed(T.decompose_trs(m)) for m in _trs_mats(x)]),
         _decompose_rows),
    Case("shortest_arc/T", lambda T, R, x: T.shortest_arc(x["va"], x["vb"]),
         lambda x: M.quat_from_vecs(x["va"], x["vb"])),
    Case("shortest_arc/T-rows", lambda T, R, x: _rows(T.shortest_arc, x["va"], x["vb"]),
         lambda x: _rows_out(M.quat_from_vecs, (4,), x["va"], x["vb"])),
    # --- behaviours of the old rotations.py (tracking)
    Case("axis_angle/R-rows", lambda T, R, x: _rows(R.quat_from_axis_angle, x["axis_any"], x["angle"]),
         lambda x: _rows_out(M.quat_from_axis_angle, (4,), x["axis_any"], x["angle"])),
    Case("axis_angle/R-batch", lambda T, R, x: _rows(R.quat_from_axis_angle, x["axis_any"], x["angle"]),
         lambda x: M.quat_from_axis_angle(x["axis_any"], x["angle"])),
    Case("from_matrix/R-rows", lambda T, R, x: _rows(R.quat_from_matrix, x["noisy"]),
         lambda x: _rows(lambda m: M.quat_from_mat(m, project=True), x["noisy"])),
    Case("from_matrix/R-4x4-batch", lambda T, R, x: _rows(R.quat_from_matrix, x["noisy4"]),
         lambda x: M.quat_from_mat(x["noisy4"], project=True)),
    Case("from_matrix/R-out", lambda T, R, x: _rows(R.quat_from_matrix, x["noisy4"]),
         lambda x: _rows_out(lambda m, out: M.quat_from_mat(m, project=True, out=out), (4,), x["noisy4"])),
    Case("euler/R-rows", lambda T, R, x: _rows(R.quat_from_euler, *x["ypr"].T),
         lambda x: _rows_out(M.quat_from_euler, (4,), *x["ypr"].T)),
    Case("euler_from_quat/R", lambda T, R, x: R.euler_from_quat(x["q"]), lambda x: M.euler_from_quat(x["q"])),
    Case("euler_from_quat/R-out", lambda T, R, x: R.euler_from_quat(x["q"]),
         lambda x: _batch_out(M.euler_from_quat, (len(x["q"]), 3), x["q"])),
    Case("euler_from_quat/R-rows", lambda T, R, x: _rows(R.euler_from_quat, x["q"]),
         lambda x: _rows(M.euler_from_quat, x["q"])),
    Case("angle/R", lambda T, R, x: R.quat_angle(x["q"], x["q2"]), lambda x: M.quat_angle(x["q"], x["q2"])),
    Case("angle/R-rows", lambda T, R, x: _rows(R.quat_angle, x["q"], x["q2"]),
         lambda x: _rows(M.quat_angle, x["q"], x["q2"])),
    Case("log/R-rows", lambda T, R, x: _rows(R.quat_log, x["q"]), lambda x: _rows(M.rotvec_from_quat, x["q"])),
    Case("log/R-rows-out", lambda T, R, x: _rows(R.quat_log, x["q"]),
         lambda x: _rows_out(M.rotvec_from_quat, (3,), x["q"])),
    Case("exp/R-rows", lambda T, R, x: _rows(R.quat_exp, x["rotvec"]),
         lambda x: _rows(M.quat_from_rotvec, x["rotvec"])),
    Case("exp/R-rows-out", lambda T, R, x: _rows(R.quat_exp, x["rotvec"]),
         lambda x: _rows_out(M.quat_from_rotvec, (4,), x["rotvec"])),
    Case("slerp/R-rows", lambda T, R, x: _rows(R.quat_slerp, x["q"], x["q2"], x["t_ext"]),
         lambda x: _rows(M.quat_slerp_scalar, x["q"], x["q2"], x["t_ext"])),
    Case("slerp/R-rows-out", lambda T, R, x: _rows(R.quat_slerp, x["q"], x["q2"], x["t_ext"]),
         lambda x: _rows_out(M.quat_slerp_scalar, (4,), x["q"], x["q2"], x["t_ext"])),
    Case("rotate/R-matrix", lambda T, R, x: _rotate_rows_matrix(lambda q: R.quat_rotate(q, x["vecs"]), x),
         lambda x: _rotate_rows_matrix(lambda q: M.vec_transform_quat(x["vecs"], q, via_matrix=True), x)),
    Case("rotate/R-matrix-one", lambda T, R, x: _rows(R.quat_rotate, x["q"], x["v"]),
         lambda x: _rows_out(lambda q, v, out: M.vec_transform_quat(v, q, via_matrix=True, out=out), (3,),
                             x["q"], x["v"])),
    # --- where the two old modules differ: the new single name against the OTHER behaviour
    Case("cross/rotate-matrix-vs-T", lambda T, R, x: T.quat_rotate(x["q"], x["va"]),
         lambda x: _rows(lambda q, v: M.vec_transform_quat(v, q, via_matrix=True), x["q"], x["va"]),
         check="ROTATE_FORM_TOL"),
    Case("cross/from-matrix-projected-vs-T", lambda T, R, x: T.mat3_to_quat(x["rot3"]),
         lambda x: M.quat_from_mat(x["rot3"], project=True), check="PROJECTION_TOL"),
    Case("cross/slerp-scalar-vs-T", lambda T, R, x: T.quat_slerp(x["q"], x["q2"], x["t"]),
         lambda x: _rows(M.quat_slerp_scalar, x["q"], x["q2"], x["t"]), check="SLERP_FORM_TOL"),
]


def old_outputs(T: types.ModuleType, R: types.ModuleType, x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every case's old result, keyed by case name."""
    with np.errstate(all="ignore"):
        return {c.name: np.asarray(c.old(T, R, x), np.float64) for c in CASES}


def new_output(case: Case, x: dict[str, np.ndarray]) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(case.new(x), np.float64)


# ----------------------------------------------------------------------------- platform probe


def platform_probe() -> dict[str, np.ndarray]:
    """Results of the primitives the platform-dependent cases rely on, on fixed inputs."""
    rng = np.random.default_rng(7)
    a = rng.uniform(-7.0, 7.0, 512)
    c = rng.uniform(-1.0, 1.0, 512)
    m = rng.normal(size=(24, 3, 3))
    v = rng.normal(size=(64, 4))
    svd = [np.linalg.svd(mi) for mi in m]
    return {
        "np_sin": np.sin(a), "np_cos": np.cos(a), "np_arccos": np.arccos(c), "np_arcsin": np.arcsin(c),
        "np_arctan2": np.arctan2(a, a[::-1]),
        "math_sin": np.array([math.sin(t) for t in a]), "math_cos": np.array([math.cos(t) for t in a]),
        "math_acos": np.array([math.acos(t) for t in c]),
        "math_atan2": np.array([math.atan2(p, r) for p, r in zip(a, a[::-1])]),
        "norm_dot": np.array([np.linalg.norm(r) for r in v]), "norm_axis": np.linalg.norm(v, axis=-1),
        "det": np.linalg.det(m), "svd_u": np.array([s[0] for s in svd]), "svd_vt": np.array([s[2] for s in svd]),
        "matmul": m @ m[::-1],
    }


# ----------------------------------------------------------------------------- golden file


def load_old_modules(rev: str = OLD_COMMIT, repo: Path | None = None) -> tuple[types.ModuleType, types.ModuleType]:
    """The old transforms.py (avatars) and rotations.py (tracking) modules at git revision ``rev``."""
    repo = repo or Path(__file__).resolve().parents[2]
    mods = []
    for name, parts in OLD_FILES.items():
        path = "/".join(parts)
        src = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], check=True, capture_output=True,
                             text=True).stdout
        mod = types.ModuleType(f"old_{name}")
        exec(compile(src, f"{rev[:12]}:{path}", "exec"), mod.__dict__)  # noqa: S102 (this repository's own history)
        mods.append(mod)
    return mods[0], mods[1]


def read_golden(path: Path = GOLDEN) -> tuple[dict, dict, dict]:
    """(inputs, old outputs by case name, platform probe) stored in the golden file."""
    g = np.load(path)
    part = {p: {k[len(p) + 1:]: g[k] for k in g.files if k.startswith(p + "/")}
            for p in ("in", "old", "same", "platform")}
    old = dict(part["old"])
    old.update({name: part["old"][str(src)] for name, src in part["same"].items()})
    return part["in"], old, part["platform"]


def write_golden(T, R, path: Path = GOLDEN, *, rev: str = OLD_COMMIT) -> Path:
    x = make_inputs()
    data = {f"in/{k}": v for k, v in x.items()}
    first: dict[bytes, str] = {}  # identical old results (a case's variants) are stored once
    for name, v in old_outputs(T, R, x).items():
        key = v.dtype.str.encode() + repr(v.shape).encode() + v.tobytes()
        if key in first:
            data[f"same/{name}"] = np.array(first[key])
        else:
            first[key] = name
            data[f"old/{name}"] = v
    data.update({f"platform/{k}": v for k, v in platform_probe().items()})
    data["meta/rev"] = np.array(rev)
    data["meta/seed"] = np.array(SEED)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **data)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", default=OLD_COMMIT, help="git revision holding the old modules")
    ap.add_argument("--out", type=Path, default=GOLDEN)
    args = ap.parse_args(argv)
    T, R = load_old_modules(args.rev)
    path = write_golden(T, R, args.out, rev=args.rev)
    sys.stdout.write(f"wrote {path} ({len(CASES)} cases, old modules at {args.rev})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
