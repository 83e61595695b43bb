"""math3d conventions (the Euler order and signs, matrix <-> quaternion, mul / conj / angle /
rotation vector, slerp end points): checked against explicit rotation matrices.

Moved from tests/tracking/test_rotations.py with the tracking module rotations.py (now
math3d); the assertions are unchanged, only the names are math3d's."""

import math

import numpy as np
import pytest

from avatars.math3d import (
    euler_from_quat,
    mat3_from_quat,
    quat_angle,
    quat_conj,
    quat_from_axis_angle,
    quat_from_euler,
    quat_from_mat,
    quat_mul,
    quat_slerp_scalar,
    rotvec_from_quat,
)

EXACT = 1e-12
TIGHT = 1e-9


def rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


ANGLES = [(0.3, -0.2, 0.1), (-1.2, 0.7, -2.5), (2.9, -1.4, 0.0), (0.0, 0.0, 0.0)]


@pytest.mark.parametrize("ypr", ANGLES)
def test_euler_order_is_ry_rx_rz(ypr):
    yaw, pitch, roll = ypr
    expected = ry(yaw) @ rx(pitch) @ rz(roll)
    assert np.allclose(mat3_from_quat(quat_from_euler(yaw, pitch, roll)), expected, atol=TIGHT)
    assert np.allclose(euler_from_quat(quat_from_euler(yaw, pitch, roll)), ypr, atol=TIGHT)


def test_sign_conventions_documented():
    # yaw > 0 turns the nose (+Z) toward +X; pitch > 0 turns it down; roll > 0 tilts the top (+Y) toward -X.
    nose, top = np.array([0, 0, 1.0]), np.array([0, 1.0, 0])
    assert (mat3_from_quat(quat_from_euler(0.3, 0, 0)) @ nose)[0] > 0.2
    assert (mat3_from_quat(quat_from_euler(0, 0.3, 0)) @ nose)[1] < -0.2
    assert (mat3_from_quat(quat_from_euler(0, 0, 0.3)) @ top)[0] < -0.2


@pytest.mark.parametrize("ypr", ANGLES)
def test_matrix_round_trip(ypr):
    q = quat_from_euler(*ypr)
    q = q if q[3] >= 0 else -q
    assert np.allclose(quat_from_mat(mat3_from_quat(q), project=True), q, atol=TIGHT)
    m4 = np.eye(4)
    m4[:3, :3] = 1.02 * mat3_from_quat(q)  # a uniform scale is removed
    assert np.allclose(quat_from_mat(m4, project=True), q, atol=TIGHT)


def test_mul_conj_angle_log():
    a = quat_from_axis_angle([0, 1, 0], 0.4)
    b = quat_from_axis_angle([0, 1, 0], 0.1)
    assert np.allclose(quat_mul(a, b), quat_from_axis_angle([0, 1, 0], 0.5), atol=EXACT)
    assert np.allclose(quat_mul(a, quat_conj(a)), [0, 0, 0, 1], atol=EXACT)
    assert quat_angle(a, b) == pytest.approx(0.3, abs=TIGHT)
    assert quat_angle(a, -b) == pytest.approx(0.3, abs=TIGHT)
    assert np.allclose(rotvec_from_quat(quat_from_axis_angle([1, 0, 0], -0.7)), [-0.7, 0, 0], atol=TIGHT)
    assert np.allclose(quat_mul(quat_from_axis_angle([1, 0, 0], 0.2), quat_from_axis_angle([0, 1, 0], 0.3)),
                       quat_from_mat(rx(0.2) @ ry(0.3), project=True), atol=TIGHT)


def test_slerp_endpoints_exact_and_midpoint_on_arc():
    a = quat_from_euler(0.1, 0.2, 0.3)
    b = quat_from_euler(-0.5, 0.1, 0.0)
    assert np.array_equal(quat_slerp_scalar(a, b, 0.0), a)
    assert np.array_equal(quat_slerp_scalar(a, b, 1.0), b)
    m = quat_slerp_scalar(a, b, 0.5)
    assert quat_angle(a, m) == pytest.approx(0.5 * quat_angle(a, b), abs=TIGHT)
    assert quat_angle(m, b) == pytest.approx(0.5 * quat_angle(a, b), abs=TIGHT)
    # shortest arc across hemispheres
    m2 = quat_slerp_scalar(a, -b, 0.5)
    assert quat_angle(m2, m) < TIGHT
