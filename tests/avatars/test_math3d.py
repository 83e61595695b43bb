"""avatars.math3d: parity with the two modules it replaced, and the functions new to it.

Parity: every case of :mod:`tests.avatars.math3d_parity` (old computation -> new one, exact
or a named tolerance) on the seeded inputs frozen in golden/math3d_parity.npz, whose old
outputs come from the two modules math3d replaced (transforms.py in avatars, rotations.py
in tracking; see math3d_parity for how the file is regenerated from git).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from avatars import math3d as M

from . import math3d_parity as P

EXACT = 1e-12  # identities that hold to rounding
GEOM = 1e-12  # geometric properties of look-at / perspective / frames on unit-scale inputs

STORED_INPUTS, STORED_OLD, STORED_PLATFORM = P.read_golden()
SAME_PLATFORM = all(
    np.array_equal(STORED_PLATFORM[k], v, equal_nan=True) for k, v in P.platform_probe().items()
)


def _compare(case: P.Case, new: np.ndarray, old: np.ndarray) -> None:
    assert new.shape == old.shape, f"{case.name}: shape {new.shape} != {old.shape}"
    if case.check == "exact":
        if SAME_PLATFORM or not case.platform:
            bad = ~((new == old) | (np.isnan(new) & np.isnan(old)))
            assert not bad.any(), (f"{case.name}: {int(bad.sum())} of {bad.size} values differ from the old "
                                   f"module (max {np.nanmax(np.abs(new - old)):.3g}); first at {np.argwhere(bad)[0]}")
        elif case.name.startswith("from_matrix/"):
            _compare_projection(case, new, old)
        else:
            np.testing.assert_allclose(new, old, rtol=0, atol=P.PLATFORM_TOL, equal_nan=True,
                                       err_msg=f"{case.name} (another platform: libm/LAPACK differ from the golden's)")
    else:
        tol = P.TOLERANCES[case.check]
        err = float(np.nanmax(np.abs(new - old)))
        assert err <= tol, f"{case.name}: {err:.3g} > {case.check} = {tol:g}"


#: relative gap (sigma2 - sigma3) / sigma1 below which a reflection has no one weakest axis
DEGENERATE_GAP = 1e-6


def _compare_projection(case: P.Case, new: np.ndarray, old: np.ndarray) -> None:
    """The SVD projection on another platform. A reflection's nearest rotation flips its
    weakest axis, which is as well conditioned as the gap between the two smallest singular
    values: another LAPACK moves it by about eps * sigma1 / gap (Davis-Kahan), so the rows
    are compared to that bound; with equal singular values (uniform scale times a reflection)
    (up to a gap under :data:`DEGENERATE_GAP`) every axis is about as weak, every such flip is
    a nearest rotation, and the row is checked by that property instead: its rotation R lies
    at distance 2 * sigma1 of M, give or take the spread of the singular values."""
    m = STORED_INPUTS["noisy"]
    q = new.reshape(len(m), 4)
    s = np.linalg.svd(m, compute_uv=False)
    gap = (s[:, 1] - s[:, 2]) / s[:, 0]
    refl = np.linalg.det(m) < 0
    degenerate = refl & (gap < DEGENERATE_GAP)
    tol = np.where(refl, P.PLATFORM_TOL + 64 * np.finfo(float).eps / np.maximum(gap, DEGENERATE_GAP), P.PLATFORM_TOL)
    err = np.abs(q - old.reshape(q.shape)).max(axis=1)
    bad = ~degenerate & ~(err <= tol)
    assert not bad.any(), (f"{case.name} (another platform): rows {np.flatnonzero(bad)[:8]} differ by "
                           f"{err[bad].max():.3g} > their conditioning bound")
    for i in np.flatnonzero(degenerate):
        r = M.mat3_from_quat(q[i])
        assert abs(np.linalg.norm(q[i]) - 1.0) < EXACT and q[i, 3] >= 0.0, (case.name, i)
        spread = 4.0 * (s[i, 0] - s[i, 2]) + 1e-12 * s[i, 0]
        assert abs(np.linalg.norm(m[i] - s[i, 0] * r) - 2.0 * s[i, 0]) < spread, (case.name, i)


def test_golden_inputs_are_the_seeded_ones():
    """The stored inputs are what make_inputs() builds (no silent drift of the case set)."""
    fresh = P.make_inputs()
    assert set(fresh) == set(STORED_INPUTS)
    for k, v in fresh.items():
        assert np.array_equal(v, STORED_INPUTS[k]), k
    assert set(STORED_OLD) == {c.name for c in P.CASES}


@pytest.mark.parametrize("case", P.CASES, ids=lambda c: c.name)
def test_parity_with_golden(case):
    _compare(case, P.new_output(case, STORED_INPUTS), STORED_OLD[case.name])


def test_platform_probe_reported():
    """Not a check of math3d: says whether exact platform cases ran exactly here."""
    if not SAME_PLATFORM:
        pytest.skip("libm/LAPACK/BLAS results differ from the golden's platform: "
                    f"platform cases compared to PLATFORM_TOL = {P.PLATFORM_TOL:g}")


def test_parity_checks_can_fail():
    """A one-ulp change of an exact output, and a tolerance case beyond its bound, are caught."""
    case = next(c for c in P.CASES if c.name == "mul/T")
    old = STORED_OLD[case.name].copy()
    new = P.new_output(case, STORED_INPUTS)
    new[3, 1] = np.nextafter(new[3, 1], np.inf)
    with pytest.raises(AssertionError, match="differ"):
        _compare(case, new, old)
    slerp = next(c for c in P.CASES if c.check == "SLERP_FORM_TOL")
    with pytest.raises(AssertionError, match="SLERP_FORM_TOL"):
        _compare(slerp, STORED_OLD[slerp.name] + 2 * P.TOLERANCES["SLERP_FORM_TOL"], STORED_OLD[slerp.name])


# ----------------------------------------------------------------------------- properties


def test_out_may_alias_inputs():
    rng = np.random.default_rng(3)
    a, b = P._unit(rng.normal(size=(2, 4)))
    want = M.quat_mul(a, b)
    buf = a.copy()
    assert M.quat_mul(buf, b, out=buf) is buf and np.array_equal(buf, want)
    many_a, many_b = P._unit(rng.normal(size=(2, 5, 4)))
    want = M.quat_mul(many_a, many_b)
    assert np.array_equal(M.quat_mul(many_a, many_b, out=many_b), want)
    buf = a.copy()
    want = M.quat_slerp_scalar(a, b, 0.3)
    assert np.array_equal(M.quat_slerp_scalar(buf, b, 0.3, out=buf), want)


def test_identity_is_read_only():
    assert np.array_equal(M.QUAT_IDENTITY, [0, 0, 0, 1])
    with pytest.raises(ValueError):
        M.QUAT_IDENTITY[0] = 1.0


def test_compose_decompose_round_trip():
    rng = np.random.default_rng(5)
    q = M.quat_normalize(rng.normal(size=(50, 4)))
    q[q[:, 3] < 0] *= -1
    t, s = rng.normal(size=(50, 3)), rng.uniform(0.2, 2.0, (50, 3))
    t2, q2, s2 = M.mat_decompose(M.mat_compose(t, q, s))
    assert np.allclose(t2, t, atol=EXACT) and np.allclose(s2, s, atol=EXACT) and np.allclose(q2, q, atol=EXACT)


def test_axis_angle_and_rotvec_agree():
    q = M.quat_from_axis_angle([0.0, 0.0, 2.0], 0.5)  # any axis length
    assert np.allclose(q, [0, 0, math.sin(0.25), math.cos(0.25)], atol=EXACT)
    assert np.allclose(M.rotvec_from_quat(q), [0, 0, 0.5], atol=EXACT)
    assert np.allclose(M.quat_from_rotvec([0, 0, 0.5]), q, atol=EXACT)
    assert np.array_equal(M.quat_from_axis_angle([0.0, 0.0, 0.0], 1.0), M.QUAT_IDENTITY)
    assert np.array_equal(M.quat_from_axis_angle(np.zeros((2, 3)), [1.0, 2.0]), [M.QUAT_IDENTITY] * 2)


def test_rotate_forms_agree_and_validate():
    q = M.quat_from_euler(0.3, -0.2, 0.5)
    v = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]])
    r = M.mat3_from_quat(q)
    assert np.allclose(M.vec_transform_quat(v, q), v @ r.T, atol=EXACT)
    assert np.allclose(M.vec_transform_quat(v, q, via_matrix=True), v @ r.T, atol=EXACT)
    with pytest.raises(ValueError, match="one quaternion"):
        M.vec_transform_quat(v, np.stack([q, q]), via_matrix=True)


def test_quat_from_mat_rejects_other_shapes():
    with pytest.raises(ValueError, match=r"3, 3\) or"):
        M.quat_from_mat(np.eye(2))


def test_z_axis_frame():
    for axis in ([0, 0, 2.0], [3.0, 0, 0], [0.2, -0.5, 0.1], [-1.0, 0.9, 0.0], [0.0, 0.0, 0.0]):
        m = M.mat3_from_z_axis(axis)
        assert np.allclose(m.T @ m, np.eye(3), atol=GEOM) and np.linalg.det(m) == pytest.approx(1.0, abs=GEOM)
        n = np.linalg.norm(axis)
        assert np.allclose(m[:, 2], np.asarray(axis) / n if n else [0, 1, 0], atol=GEOM)


def test_look_at_and_perspective():
    eye, target = np.array([0.3, 1.5, 2.0]), np.array([0.0, 1.4, 0.0])
    v = M.mat_look_at(eye, target, [0.0, 1.0, 0.0])
    assert np.allclose(v[:3, :3] @ v[:3, :3].T, np.eye(3), atol=GEOM)
    assert np.allclose(v @ np.append(eye, 1.0), [0, 0, 0, 1], atol=GEOM)
    p = v @ np.append(target, 1.0)
    assert np.allclose(p[:2], 0.0, atol=GEOM) and p[2] == pytest.approx(-np.linalg.norm(target - eye))
    assert (v @ [0.0, 1.0, 0.0, 0.0])[1] > 0.9  # world up stays up
    down = M.mat_look_at([0, 2.0, 0], [0, 0, 0.0], [0, 1.0, 0])  # up parallel to the view: +Z hint
    assert np.all(np.isfinite(down)) and np.allclose(down[:3, :3] @ down[:3, :3].T, np.eye(3), atol=GEOM)
    proj = M.mat_perspective(math.radians(60), 2.0, 0.1, 10.0)
    for z, ndc in ((-0.1, -1.0), (-10.0, 1.0)):
        c = proj @ [0.0, 0.0, z, 1.0]
        assert c[2] / c[3] == pytest.approx(ndc, abs=GEOM)
    c = proj @ [math.tan(math.radians(30)) * 2.0 * 5.0, math.tan(math.radians(30)) * 5.0, -5.0, 1.0]
    assert np.allclose(c[:2] / c[3], [1.0, 1.0], atol=GEOM)  # the frustum's corner at depth 5
    buf = np.full((4, 4), np.nan)
    assert M.mat_perspective(1.0, 1.5, 0.1, 10.0, out=buf) is buf
    assert np.array_equal(buf, M.mat_perspective(1.0, 1.5, 0.1, 10.0))
    assert M.mat_look_at(eye, target, [0, 1.0, 0], out=buf) is buf and np.array_equal(buf, v)


def test_every_function_writes_into_out():
    """Each public function returns ``out`` when given, holding the same bits as without it."""
    rng = np.random.default_rng(11)
    q, q2 = P._unit(rng.normal(size=(2, 6, 4)))
    v, axis = rng.normal(size=(2, 6, 3))
    calls = {
        "quat_normalize": (M.quat_normalize, (q * 3.0,)), "quat_mul": (M.quat_mul, (q, q2)),
        "quat_conj": (M.quat_conj, (q,)), "quat_angle": (M.quat_angle, (q, q2)),
        "quat_slerp": (M.quat_slerp, (q, q2, 0.3)), "quat_slerp_scalar": (M.quat_slerp_scalar, (q[0], q2[0], 0.3)),
        "quat_from_axis_angle": (M.quat_from_axis_angle, (axis, rng.normal(size=6))),
        "quat_from_vecs": (M.quat_from_vecs, (P._unit(v), P._unit(axis))),
        "quat_from_euler": (M.quat_from_euler, (0.1, 0.2, 0.3)), "euler_from_quat": (M.euler_from_quat, (q,)),
        "rotvec_from_quat": (M.rotvec_from_quat, (q[0],)), "quat_from_rotvec": (M.quat_from_rotvec, (v[0],)),
        "quat_from_mat": (M.quat_from_mat, (M.mat3_from_quat(q),)),
        "vec_transform_quat": (M.vec_transform_quat, (v, q)),
        "mat3_from_quat": (M.mat3_from_quat, (q,)), "mat_compose": (M.mat_compose, (v, q, axis)),
        "mat3_from_z_axis": (M.mat3_from_z_axis, (v[0],)),
        "mat_look_at": (M.mat_look_at, (v[0], axis[0], [0.0, 1.0, 0.0])),
        "mat_perspective": (M.mat_perspective, (1.0, 1.5, 0.1, 10.0)),
    }
    public = {n for n in M.__all__ if n != "QUAT_IDENTITY"}
    assert public == set(calls) | {"mat_decompose"}
    for name, (f, args) in calls.items():
        want = f(*args)
        buf = np.full(np.shape(want), np.nan)
        assert f(*args, out=buf) is buf, name
        assert np.array_equal(buf, want), name
