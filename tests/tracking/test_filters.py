"""One Euro filters: exact steady-state lag, rate independence, noise attenuation."""

import math

import numpy as np
import pytest

from avatars.math3d import quat_angle, quat_from_axis_angle, quat_from_euler
from tracking.filters import OneEuroFilter, OneEuroParams, QuaternionOneEuro

LAG_TOL = 1e-6  # relative, after convergence


def tau(fc):
    return 1.0 / (2 * math.pi * fc)


@pytest.mark.parametrize("rate_hz", [30, 120])
@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_ramp_lags_v_tau_at_any_rate(rate_hz, beta):
    p = OneEuroParams(min_cutoff_hz=1.5, beta=beta, d_cutoff_hz=1.0)
    f = OneEuroFilter(1, p)
    v = 0.3  # units/s
    for k in range(rate_hz * 40):
        t_ns = k * 1_000_000_000 // rate_hz
        y = f(np.array([v * t_ns * 1e-9]), t_ns)[0]
    lag = v * t_ns * 1e-9 - y
    assert lag == pytest.approx(v * tau(p.min_cutoff_hz + beta * v), rel=1e-3)


def test_constant_input_is_a_fixed_point_and_old_times_are_ignored():
    f = OneEuroFilter(3)
    x = np.array([1.0, -2.0, 0.5])
    for k in range(10):
        out = f(x, k * 33_000_000)
    assert np.array_equal(out, x)
    assert np.array_equal(f(np.zeros(3), 5 * 33_000_000).copy(), x)  # not after the last time


def test_beta_reduces_lag_of_fast_motion():
    def lag(beta):
        f = OneEuroFilter(1, OneEuroParams(min_cutoff_hz=1.0, beta=beta))
        for k in range(300):
            y = f(np.array([2.0 * k / 30]), k * 1_000_000_000 // 30)[0]
        return 2.0 * (299 / 30) - y

    assert lag(1.0) < 0.5 * lag(0.0)


def test_noise_attenuation_at_rest():
    rng = np.random.default_rng(1)
    f = OneEuroFilter(1, OneEuroParams(min_cutoff_hz=1.0, beta=0.0))
    noise = rng.normal(0, 1.0, 3000)
    out = np.array([f(noise[k : k + 1], k * 1_000_000_000 // 30)[0] for k in range(3000)])
    # first-order low-pass at 1 Hz on white noise sampled at 30 Hz: variance ratio alpha/(2-alpha)
    a = 1 / (1 + tau(1.0) * 30)
    assert np.std(out[300:]) == pytest.approx(math.sqrt(a / (2 - a)), rel=0.15)


@pytest.mark.parametrize("rate_hz", [30, 120])
def test_quaternion_constant_spin_lags_omega_tau(rate_hz):
    p = OneEuroParams(min_cutoff_hz=1.0, beta=0.3, d_cutoff_hz=1.0)
    f = QuaternionOneEuro(p)
    w = 0.8  # rad/s about a tilted axis
    axis = np.array([0.2, 1.0, 0.1])
    for k in range(rate_hz * 30):
        t_ns = k * 1_000_000_000 // rate_hz
        q = quat_from_axis_angle(axis, w * t_ns * 1e-9)
        y = f(q, t_ns)
    assert quat_angle(y, q) == pytest.approx(w * tau(p.min_cutoff_hz + p.beta * w), rel=1e-3)
    assert f.angular_speed == pytest.approx(w, rel=1e-3)


def test_quaternion_filter_accepts_both_hemispheres():
    f = QuaternionOneEuro(OneEuroParams(min_cutoff_hz=2.0))
    q = quat_from_euler(0.3, 0.1, 0.0)
    f(q, 0)
    prev = f.value.copy()
    for k in range(1, 30):
        y = f(q if k % 2 else -q, k * 33_333_333).copy()
        assert quat_angle(y, q) < 1e-9
        assert float(y @ prev) > 0.999  # continuous: no sign flip of the output
        prev = y
