"""Colliders and bounce-free contact (docs/design.md §4.4) on synthetic strands."""

from __future__ import annotations

import numpy as np
import pytest

from solver.chains import ChainSet
from solver.params import SpringOverride
from solver.eval.synthetic import prop_node, strand_avatar

from .geometry import point_segment_distance, segment_distance

H = 1.0 / 120.0
CONTACT_TOL_M = 1e-6        # a link may end a substep this far inside a collider
TOUCH_M = 1e-5              # "still in contact": gap below 0.01 mm
NO_BOUNCE = 0.01            # outward normal speed after contact / inward speed at impact


def _gap(cs, seg, avatar_col_index=0):
    """Segment gap to collider 0 (metres, < 0 overlapping), measured independently."""
    col = cs.collider_world[avatar_col_index]
    a, b, r = col[:3], col[3:6], col[6]
    root = _root(cs, seg)
    d, _ = segment_distance(root, cs.tails[seg], a, b)
    return float(d - r - cs.hit_radii[seg])


def _root(cs, seg):
    sp = seg - 1 if seg > 0 else -1
    return cs.tails[sp] if sp >= 0 else cs._root_world


def _setup(avatar, **kw):
    cs = ChainSet.from_avatar(avatar, **kw)
    w = avatar.skeleton.rest_world.copy().copy()
    cs._root_world = w[cs.segment_nodes[0], :3, 3].copy()
    return cs, w


def _lying_strand(gravity, collider):
    av = strand_avatar([(0.0, 0.0, 0.0), (0.1, 0.0, 0.0)], colliders=[collider])
    # no stiffness, no preload: gravity alone lays the strand onto the collider
    return _setup(av, overrides=SpringOverride(k=0.0, c=1.0, g=gravity), gravity_preload=False)


@pytest.mark.parametrize("collider", [
    dict(shape="sphere", offset=(0.05, -0.06, 0.0), radius=0.03),
    dict(shape="capsule", offset=(0.05, -0.06, -0.1), tail=(0.05, -0.06, 0.1), radius=0.03),
])
def test_strand_falls_onto_a_collider_and_stays_without_bounce(collider):
    cs, w = _lying_strand((0.0, -9.81, 0.0), collider)
    first = None
    for n in range(240):
        cs.step(w)
        gap = _gap(cs, 0)
        assert gap > -CONTACT_TOL_M
        if first is None and cs.last_contacts:
            first = n
        if first is not None:
            # stays in contact: never lifts off the surface once it landed
            assert gap < TOUCH_M, f"substep {n}: lifted {gap:.2e} m off the collider"
    assert first is not None and first < 60
    assert np.linalg.norm(cs.velocities[0]) < 1e-6          # at rest on the collider


def _normal_speed(cs, collider_row):
    a, b = collider_row[:3], collider_row[3:6]
    _, u = segment_distance(cs._root_world, cs.tails[0], a, b)
    p = cs._root_world + u * (cs.tails[0] - cs._root_world)
    e = b - a
    q = a + np.clip((p - a) @ e / (e @ e), 0.0, 1.0) * e if e @ e > 0 else a
    n = (p - q) / np.linalg.norm(p - q)
    return float(cs.velocities[0] @ n)


def test_contact_keeps_tangential_motion_sliding_along_a_capsule():
    # gravity tilted along the capsule axis (z): pressed onto it, the strand slides along it
    cs, w = _lying_strand((0.0, -9.81, 3.0),
                          dict(shape="capsule", offset=(0.05, -0.06, -0.2), tail=(0.05, -0.06, 0.2), radius=0.03))
    impact = 0.0
    while not cs.last_contacts:
        impact = -_normal_speed(cs, cs.collider_world[0])
        cs.step(w)
        assert cs.steps < 120
    assert impact > 0.5                                   # it hit the capsule at > 0.5 m/s
    z_at_contact = float(cs.tails[0, 2])
    max_out = 0.0
    for _ in range(24):                                   # 0.2 s pressed onto the capsule
        cs.step(w)
        assert cs.last_contacts > 0
        assert abs(_gap(cs, 0)) < TOUCH_M
        max_out = max(max_out, _normal_speed(cs, cs.collider_world[0]))
    assert cs.tails[0, 2] - z_at_contact > 0.02           # slid more than 2 cm while touching
    assert max_out < NO_BOUNCE * impact                   # the push-out never became velocity


def test_a_link_crossing_a_capsule_between_its_ends_is_pushed_out():
    """Both ends stay outside while the capsule sweeps through the middle of the link: the
    tail-only test (VRM mode) misses it; the segment-wise test pushes the link aside."""
    capsule = dict(shape="capsule", node="prop", offset=(0.05, -0.05, -0.05), tail=(0.05, -0.05, 0.05),
                   radius=0.01)
    av = strand_avatar([(0.0, 0.0, 0.0), (0.0, -0.1, 0.0)], colliders=[capsule])
    missed_by_tail_only = 0
    for solver in ("vrm", "rest-shape"):
        cs, w = _setup(av, solver=solver, overrides=SpringOverride(k=50.0, c=10.0, g=(0.0, 0.0, 0.0)))
        for n in range(1, 101):                       # the prop moves 1 mm per substep toward -x
            w[prop_node(), 0, 3] = -0.001 * n
            cs.step(w)
            gap = _gap(cs, 0)
            col = cs.collider_world[0]
            ends_out = all(point_segment_distance(p, col[:3], col[3:6]) > col[6] for p in (cs._root_world, cs.tails[0]))
            if solver == "vrm" and gap < -CONTACT_TOL_M and ends_out:
                missed_by_tail_only += 1
            if solver == "rest-shape":
                assert gap > -CONTACT_TOL_M, f"substep {n}: link inside the capsule by {-gap:.2e} m"
        if solver == "rest-shape":
            assert cs.tails[0, 0] < -0.01              # pushed aside by the capsule
    assert missed_by_tail_only > 0


def test_each_joint_uses_its_own_hit_radius():
    """Regression: segment i uses joint i's hitRadius; the last (virtual-tail) segment uses the
    last joint's, not a (non-existent) next joint's zero."""
    pts = [(0.0, 0.0, 0.0), (0.0, -0.05, 0.0), (0.0, -0.10, 0.0)]
    av = strand_avatar(pts, hit_radii=[0.0, 0.001, 0.02], tail_offset=(0.0, -0.05, 0.0),
                       colliders=[dict(shape="sphere", node="prop", offset=(0.01, -0.30, 0.0), radius=0.02)])
    cs, w = _setup(av, overrides=SpringOverride(k=20.0, c=8.0, g=(0.0, 0.0, 0.0)))
    np.testing.assert_array_equal(cs.hit_radii, [0.0, 0.001, 0.02])
    # VRM 1.0 style (no virtual tail): two segments with joints 0 and 1's radii
    av1 = strand_avatar(pts, hit_radii=[0.03, 0.0, 0.5])
    np.testing.assert_array_equal(ChainSet.from_avatar(av1).hit_radii, [0.03, 0.0])
    # a sphere rising under the tip stops at r_body + r_hair of the last joint
    for n in range(1, 121):
        w[prop_node(), 1, 3] = min(0.002 * n, 0.12)
        cs.step(w)
    col = cs.collider_world[0]
    tip_gap = np.linalg.norm(cs.tails[2] - col[:3]) - col[6]
    assert cs.last_contacts > 0
    assert tip_gap == pytest.approx(0.02, abs=1e-4)


@pytest.mark.parametrize("shape,expect", [("inside_sphere", "inside"), ("plane", "above")])
def test_inside_and_plane_shapes(shape, expect):
    if shape == "inside_sphere":
        col = dict(shape="inside_sphere", node="prop", offset=(0.0, 0.0, 0.0), radius=0.25)
    else:
        col = dict(shape="plane", node="prop", offset=(0.0, -0.3, 0.0), normal=(0.0, 1.0, 0.0))
    av = strand_avatar([(0.0, 0.0, 0.0), (0.0, -0.1, 0.0), (0.0, -0.2, 0.0)], hit_radii=0.01, colliders=[col])
    cs, w = _setup(av, overrides=SpringOverride(k=20.0, c=8.0, g=(0.0, 0.0, 0.0)))
    for n in range(1, 121):
        # the prop moves: the sphere shifts up and sideways / the plane rises
        if shape == "inside_sphere":
            w[prop_node(), :3, 3] = (min(0.001 * n, 0.05), min(0.001 * n, 0.05), 0.0)
        else:
            w[prop_node(), 1, 3] = min(0.002 * n, 0.15)
        cs.step(w)
        c = cs.collider_world[0]
        if expect == "inside":
            assert (np.linalg.norm(cs.tails - c[:3], axis=1) <= c[6] - 0.01 + CONTACT_TOL_M).all()
        else:
            assert (cs.tails[:, 1] >= c[1] + 0.01 - CONTACT_TOL_M).all()
    assert cs.last_contacts > 0
