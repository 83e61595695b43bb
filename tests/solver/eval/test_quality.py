"""Hair quality measures on tiny hand-made inputs with known answers (docs/design.md §4.5)."""

from __future__ import annotations

import numpy as np
import pytest

from solver.eval.quality import (StretchMeter, WorldCollider, closest_segment_segment, max_step_movement, point_depths,
                            segment_depths, stretch_percent)

PCT = 1e-9  # percent, exact arithmetic up to rounding


def test_two_edge_strip_stretched_ten_percent():
    pts = np.array([[0, 0, 0], [0, -0.1, 0], [0, -0.2, 0]], float)
    edges = np.array([[0, 1], [1, 2]])
    meter = StretchMeter(edges, np.array([0.1, 0.1]))
    meter.update(pts)
    meter.update(pts * 1.1)      # both edges 10 % longer
    meter.update(pts * 0.95)     # compression never lowers the maximum
    p99, worst = stretch_percent(meter.max_ratio)
    assert p99 == pytest.approx(10.0, abs=PCT)
    assert worst == pytest.approx(10.0, abs=PCT)


def test_p99_ignores_a_single_outlier_among_many_edges():
    n = 1000
    m = np.ones(n)
    m[-1] = 1.5   # one edge stretched 50 %
    m[:-1] = 1.01
    p99, worst = stretch_percent(m)
    assert p99 == pytest.approx(1.0, abs=1e-6)
    assert worst == pytest.approx(50.0, abs=PCT)


def test_settle_is_largest_step():
    s = np.zeros((4, 2, 3))
    s[2, 1, 0] = 0.002
    s[3, 1, 0] = 0.0025
    assert max_step_movement(s) == pytest.approx(0.002, abs=1e-15)


def test_segment_crossing_capsule_middle():
    """Both ends outside a capsule, the middle crossing its axis: detected with the full depth."""
    cap = WorldCollider("capsule", np.array([0, 0, -1.0]), np.array([0, 0, 1.0]), 0.1)
    a = np.array([[-1.0, 0.0, 0.0]])
    b = np.array([[1.0, 0.0, 0.0]])
    depth = segment_depths(a, b, np.array([0.02]), cap)
    assert depth[0] == pytest.approx(0.12, abs=1e-12)
    # end points alone are far outside
    assert point_depths(np.concatenate([a, b]), cap).max() < -0.8


def test_sphere_plane_and_inside_shapes():
    sph = WorldCollider("sphere", np.zeros(3), np.zeros(3), 0.5)
    assert point_depths(np.array([[0.3, 0, 0]]), sph)[0] == pytest.approx(0.2)
    plane = WorldCollider("plane", np.zeros(3), np.zeros(3), 0.0, normal=np.array([0, 1.0, 0]))
    assert segment_depths(np.array([[0, 0.5, 0]]), np.array([[0, -0.25, 0]]), np.array([0.01]), plane)[0] == \
        pytest.approx(0.26)
    inside = WorldCollider("inside_sphere", np.zeros(3), np.zeros(3), 1.0)
    assert point_depths(np.array([[0, 1.2, 0]]), inside)[0] == pytest.approx(0.2)
    assert point_depths(np.array([[0, 0.5, 0]]), inside)[0] == pytest.approx(-0.5)


def test_closest_points_parallel_and_degenerate():
    d, u, v = closest_segment_segment(np.array([0, 0, 0.0]), np.array([1, 0, 0.0]),
                                      np.array([0.5, 1, 0.0]), np.array([2, 1, 0.0]))
    assert d == pytest.approx(1.0)
    d, u, v = closest_segment_segment(np.array([0, 0, 0.0]), np.array([0, 0, 0.0]),
                                      np.array([-1, 2, 0.0]), np.array([1, 2, 0.0]))
    assert d == pytest.approx(2.0) and v == pytest.approx(0.5)


def test_sphere_is_a_degenerate_capsule_measured_along_the_link():
    """A sphere centre near the middle of a link (q is a point): distance from p(u = 0.5)."""
    d, u, v = closest_segment_segment(np.array([-1.0, 0, 0]), np.array([1.0, 0, 0]),
                                      np.array([0.0, 0.3, 0]), np.array([0.0, 0.3, 0]))
    assert d == pytest.approx(0.3, abs=1e-15) and u == pytest.approx(0.5) and v == 0.0
    sph = WorldCollider("sphere", np.array([0.0, 0.3, 0]), np.array([0.0, 0.3, 0]), 0.5)
    depth = segment_depths(np.array([[-1.0, 0, 0]]), np.array([[1.0, 0, 0]]), np.array([0.0]), sph)
    assert depth[0] == pytest.approx(0.2, abs=1e-12)


def test_closest_points_match_brute_force_including_degenerate_cases():
    rng = np.random.default_rng(7)
    p = rng.normal(size=(300, 4, 3))
    p[:100, 3] = p[:100, 2]     # q degenerate
    p[100:150, 1] = p[100:150, 0]  # p degenerate
    d, u, v = closest_segment_segment(p[:, 0], p[:, 1], p[:, 2], p[:, 3])
    s = np.linspace(0, 1, 201)
    for i in range(0, 300, 7):
        a = p[i, 0] + s[:, None] * (p[i, 1] - p[i, 0])
        b = p[i, 2] + s[:, None] * (p[i, 3] - p[i, 2])
        brute = np.linalg.norm(a[:, None] - b[None], axis=2).min()
        assert d[i] <= brute + 1e-12, (i, d[i], brute)  # never farther than a sampled pair
        assert d[i] >= brute - 0.02  # the brute grid is 1/200 of each segment
