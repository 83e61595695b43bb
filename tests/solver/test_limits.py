"""Angle limits (VRMC_springBone_limit-1.0 draft, vrm-specification commit 75fbd48):
solver/kernels/limits.py, solver/limits.py, avatars/spring_limits.py.

The limits are measured from outside the solver: after every substep the chain set patches the
world matrices (``apply``), and each limited joint's tail direction is read in its limit space
— the parent's posed world frame times the joint's rest local frame, times the draft's
axisRotation · rotation — and compared with the limit's angles.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from avatars import JointLimit, load_avatar
from avatars.generate import default_avatar_path
from avatars.inspect import summarize
from avatars.vrm1 import save_vrm1
from avatars.clips.head_turn import head_turn_rotation
from solver import BuildOptions, ChainSet
from solver.errors import SolverOptionError
from solver.eval.posing import SubtreePoser
from solver.kernels.limits import limit_direction
from solver.limits import axis_rotation, limit_frame
from solver.layout import LIMITS
from tests.conftest import asset

#: how far beyond its limit a joint may end a substep, radians
LIMIT_TOL = 1e-6
UAL = ("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")


# ------------------------------------------------------------------ the draft's reference code, in Python
def _draft(kind, d, angle, yaw):
    x, y, z = d
    if kind == "cone":
        c = math.cos(angle)
        if y < c:
            r = math.sqrt((1 - c * c) / (1 - y * y))
            return np.array([x * r, c, z * r])
        return np.array(d)
    if kind == "hinge":
        n = math.hypot(y, z)
        y, z = y / n, z / n
        c = math.cos(angle)
        if y < c:
            z *= math.sqrt((1 - c * c) / (1 - y * y))
            y = c
        return np.array([0.0, y, z])
    pitch, yw = math.atan2(z, y), math.asin(x)
    pitch = max(-angle, min(angle, pitch))
    yw = max(-yaw, min(yaw, yw))
    return np.array([math.sin(yw), math.cos(yw) * math.cos(pitch), math.cos(yw) * math.sin(pitch)])


@pytest.mark.parametrize("kind", ["cone", "hinge", "spherical"])
def test_the_kernel_limits_directions_as_the_drafts_reference_code(kind):
    rng = np.random.default_rng(5)
    angle, yaw = 0.7, 0.4
    for _ in range(2000):
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        x, y, z, _ = limit_direction(LIMITS[kind], angle, yaw, math.cos(angle), *d)
        assert abs(math.sqrt(x * x + y * y + z * z) - 1.0) <= 1e-12
        if kind == "hinge" and abs(d[2]) < 1e-3 * math.hypot(d[1], d[2]):
            # the draft's sqrt((1 − cos²a) / (1 − y²)) loses digits as y → −1 (~1e-6 here); the
            # kernel takes z = ±sin a, exact
            continue
        assert np.allclose([x, y, z], _draft(kind, d, angle, yaw), rtol=0, atol=1e-12)


def test_limit_space_maps_plus_y_to_the_rest_tail_direction():
    for axis in ([0.0, -1.0, 0.0], [0.3, -0.9, 0.1], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]):
        a = np.array(axis) / np.linalg.norm(axis)
        m = limit_frame(a * 0.07, [0.0, 0.0, 0.0, 1.0])
        assert np.allclose(m @ [0.0, 1.0, 0.0], a, atol=1e-12)
        assert np.allclose(m.T @ m, np.eye(3), atol=1e-12)
    # exactly −Y: the draft's half turn about X
    assert np.array_equal(axis_rotation(np.array([0.0, -1.0, 0.0])), [1.0, 0.0, 0.0, 0.0])


# ------------------------------------------------------------------ a file carrying limits
_KINDS = [JointLimit("cone", math.radians(20.0), rotation=np.array([0.0, 0.0, 0.0, 1.0])),
          JointLimit("hinge", math.radians(25.0), rotation=np.array([0.0, 0.0, 0.3826834, 0.9238795])),
          JointLimit("spherical", math.radians(30.0), yaw=math.radians(12.0),
                     rotation=np.array([0.2588190, 0.0, 0.0, 0.9659258]))]


@pytest.fixture(scope="module")
def limited_file(tmp_path_factory):
    """The default avatar written as a VRM 1.0 file whose every spring joint carries a limit
    (cone, hinge, spherical in turn) in the draft's extension."""
    av = load_avatar(default_avatar_path())
    springs = []
    for s, sp in enumerate(av.springs):
        joints = tuple(dataclasses.replace(j, limit=_KINDS[(s + k) % 3]) for k, j in enumerate(sp.joints))
        springs.append(dataclasses.replace(sp, joints=joints))
    path = tmp_path_factory.mktemp("limits") / "limited.vrm"
    save_vrm1(dataclasses.replace(av, springs=tuple(springs)), path)
    return load_avatar(path)


def test_the_file_reads_back_with_its_limits_and_inspect_lists_them(limited_file):
    got = [j.limit for sp in limited_file.springs for j in sp.joints]
    assert all(g is not None for g in got)
    first = limited_file.springs[0].joints
    assert [j.limit.kind for j in first[:3]] == ["cone", "hinge", "spherical"]
    assert first[2].limit.yaw == pytest.approx(math.radians(12.0), abs=1e-12)
    assert np.allclose(first[1].limit.rotation, _KINDS[1].rotation, atol=1e-7)
    listed = summarize(limited_file)["angle_limits"]
    assert len(listed) == len(got)
    assert listed[0]["kind"] == "cone" and listed[0]["angle_deg"] == pytest.approx(20.0)


def _violations(cs, avatar, world, limits):
    """Largest excess (radians) of any limited joint over its limit, read off the posed frames."""
    sk = avatar.skeleton
    rest = sk.rest_world
    posed = world.copy()
    cs.apply(posed, alpha=1.0)
    worst = -np.inf
    for lim in limits:
        i, node = lim["segment"], lim["node"]
        parent = int(sk.parents[node])
        h = posed[parent] @ (np.linalg.inv(rest[parent]) @ rest[node])
        d = cs.tails[i] - posed[node][:3, 3]
        local = np.linalg.solve(h[:3, :3], d)
        local /= np.linalg.norm(local)
        tail_local = np.linalg.solve(rest[node][:3, :3], cs.rest_arc_tails(rest)[i] - rest[node][:3, 3])
        q = limit_frame(tail_local, lim["rotation"])
        x, y, z = q.T @ local
        if lim["kind"] == "cone":
            over = math.acos(min(1.0, y)) - lim["angle"]
        elif lim["kind"] == "hinge":
            over = max(math.asin(min(1.0, abs(x))), math.atan2(abs(z), y) - lim["angle"])
        else:
            over = max(abs(math.atan2(z, y)) - lim["angle"], abs(math.asin(max(-1.0, min(1.0, x)))) - lim["yaw"])
        worst = max(worst, over)
    return worst


def _limits_of(cs, avatar):
    rot = {int(j.node): j.limit.rotation for sp in avatar.springs for j in sp.joints if j.limit is not None}
    return [{**lim, "rotation": rot[lim["node"]]} for lim in cs.report.angle_limits]


def test_a_file_with_limits_stays_within_them_over_a_head_turn(limited_file):
    cs = ChainSet.from_avatar(limited_file)
    free = ChainSet.from_avatar(limited_file, limits={"*": None})
    limits = _limits_of(cs, limited_file)
    assert len(limits) == cs.segment_count and not free.report.angle_limits
    poser = SubtreePoser(limited_file.skeleton, limited_file.head_node())
    worst, worst_free = -np.inf, -np.inf
    for n in range(0, 600):
        w = poser.world(head_turn_rotation(n / 120.0)).copy()
        cs.step(w)
        free.step(w)
        if n % 3 == 0:
            worst = max(worst, _violations(cs, limited_file, w, limits))
            worst_free = max(worst_free, _violations(free, limited_file, w, limits))
    print(f"head turn: worst excess over a limit {worst:.3g} rad (without the limits {worst_free:.3g} rad)")
    assert worst <= LIMIT_TOL
    assert worst_free > 0.05          # without them the hair does go beyond (the test can fail)


def test_a_file_with_limits_stays_within_them_through_a_jog(limited_file):
    from runtime.eval.hair_quality import motion_pose
    from runtime.rig.motion import load_motion

    setup = load_motion(f"{asset(*UAL)}#Jog_Fwd_Loop")
    pose = motion_pose(limited_file, setup, 2.0)
    cs = ChainSet.from_avatar(limited_file)
    free = ChainSet.from_avatar(limited_file, limits={"*": None})
    limits = _limits_of(cs, limited_file)
    w = limited_file.skeleton.rest_world.copy()
    worst, worst_free = -np.inf, -np.inf
    for n in range(0, 360):
        pose(n, w)
        cs.step(w)
        free.step(w)
        if n % 2 == 0:
            worst = max(worst, _violations(cs, limited_file, w, limits))
            worst_free = max(worst_free, _violations(free, limited_file, w, limits))
    print(f"jog: worst excess over a limit {worst:.3g} rad (without the limits {worst_free:.3g} rad)")
    assert worst <= LIMIT_TOL
    assert worst_free > 0.05           # the jog does throw the hair beyond them


def test_config_limits_win_over_the_files_and_bad_ones_are_refused(limited_file):
    name = limited_file.springs[0].name
    cs = ChainSet.from_avatar(limited_file, limits={name: JointLimit("cone", 0.1, source="config")})
    mine = [lim for lim in cs.report.angle_limits if lim["spring"] == name]
    assert mine and all(lim["kind"] == "cone" and lim["source"] == "config" for lim in mine)
    with pytest.raises(SolverOptionError, match="limit angle"):
        ChainSet.from_avatar(limited_file, limits={"*": JointLimit("cone", -1.0)})


@pytest.mark.parametrize("solver", ["rest-shape", "legacy", "vrm"])
def test_branched_chains_stay_within_config_limits_in_every_solver(solver):
    """Chains hanging from a simulated joint of another chain (their limit space hangs from its
    limited frame), a config cone on every joint, the head turning fast."""
    from solver.eval.synthetic import branched_avatar

    av = branched_avatar()
    cone = JointLimit("cone", math.radians(10.0), source="config")
    cs = ChainSet.from_avatar(av, solver=solver, limits={"*": cone})
    limits = [{**lim, "rotation": cone.rotation} for lim in cs.report.angle_limits]
    assert len(limits) == cs.segment_count and (cs.simulated_parents[cs.sections["chain_ints"].first] >= 0).any()
    poser = SubtreePoser(av.skeleton, av.head_node())
    worst = -np.inf
    for n in range(360):
        w = poser.world(head_turn_rotation(2.0 * n / 120.0)).copy()
        cs.step(w)
        worst = max(worst, _violations(cs, av, w, limits))
    assert worst <= LIMIT_TOL
