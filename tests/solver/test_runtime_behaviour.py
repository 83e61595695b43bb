"""Scale, teleports, authored motion, fast motion, allocation-free substeps."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from avatars.clips.head_turn import head_turn_rotation
from avatars.math3d import mat3_from_quat, quat_from_axis_angle, quat_mul
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser
from solver.eval.synthetic import hair_cap_avatar

from .geometry import point_segment_distance, segment_distance

SCALE_REL = 1e-9          # normalized trajectories agree to ~1e-9 of the avatar size
INSIDE_TOL_M = 1e-6       # a link may end a substep this far inside a collider


@pytest.mark.parametrize("name", ["godette", "generated_default"])
def test_scaled_avatars_move_the_same(name, request):
    av = request.getfixturevalue(name)
    tracks = {}
    for s in (0.2, 1.0, 10.0):
        root = np.diag([s, s, s, 1.0])
        cs = ChainSet.from_avatar(av)
        poser = SubtreePoser(av.skeleton, av.head_node(), root=root)
        cs.reset(poser.rest)
        w = poser.rest.copy()
        out = []
        for n in range(1, 481):
            poser.world(head_turn_rotation(n / 120), out=w)
            assert not cs.step(w)
            out.append(cs.tails / s)
        tracks[s] = np.array(out)
    size = np.abs(tracks[1.0]).max()
    for s in (0.2, 10.0):
        assert np.abs(tracks[s] - tracks[1.0]).max() < SCALE_REL * size
    assert np.abs(tracks[1.0] - tracks[1.0][0]).max() > 0.01       # it did move


def test_reset_and_automatic_reset_on_teleport(godette):
    cs = ChainSet.from_avatar(godette)
    poser = SubtreePoser(godette.skeleton, godette.head_node())
    w = poser.rest.copy()
    for n in range(1, 61):
        poser.world(head_turn_rotation(n / 120), out=w)
        cs.step(w)
    assert np.abs(cs.velocities).max() > 0.01
    # teleport the whole avatar 3 m: the next step is an automatic reset
    far = SubtreePoser(godette.skeleton, godette.head_node(), root=np.array(
        [[1, 0, 0, 3.0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], float))
    wf = far.world(head_turn_rotation(61 / 120))
    assert cs.step(wf) is True and cs.auto_resets == 1
    assert np.all(cs.velocities == 0.0)
    np.testing.assert_allclose(cs.tails, cs.rest_arc_tails(wf), atol=1e-12)
    # an explicit reset does the same
    cs.step(far.world(head_turn_rotation(62 / 120)))
    cs.reset(wf)
    assert np.all(cs.velocities == 0.0) and np.array_equal(cs.tails, cs.prev_tails)
    # ordinary fast motion never triggers it
    cs2 = ChainSet.from_avatar(godette)
    for n in range(1, 121):
        cs2.step(poser.world(quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), math.radians(600.0) * n / 120)))
    assert cs2.auto_resets == 0


def _animated_world(sk, poser, j0, j1, n):
    """World matrices at substep n of the head turn with an animation driving joint j1's
    local rotation (0.6 rad about X on top of its rest rotation): FK below j1 uses the
    animated local. Returns (world, j1's animated local matrix)."""
    w = poser.world(head_turn_rotation(n / 120)).copy()
    loc = sk.rest_local[j1].copy()
    loc[:3, :3] = mat3_from_quat(quat_mul(sk.rest_rotation[j1], quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), 0.6)))
    w[j1] = w[j0] @ loc
    for c in sk.descendants(j1)[1:]:
        w[c] = w[sk.parents[c]] @ sk.rest_local[c]
    return w, loc


def test_authored_joints_are_left_to_the_animation(smoke):
    sk = smoke.skeleton
    j0, j1 = smoke.springs[0].joints[0].node, smoke.springs[0].joints[1].node
    cs = ChainSet.from_avatar(smoke, authored_nodes=[j1])
    poser = SubtreePoser(sk, smoke.head_node())
    out_q = np.tile([0.0, 0.0, 0.0, 1.0], (sk.node_count, 1))
    for n in range(1, 241):
        w, loc = _animated_world(sk, poser, j0, j1, n)
        # the runtime's FK would put j1 under the solved j0; the solver handles that itself
        cs.step(w)
        out_q[j1] = [9.0, 9.0, 9.0, 9.0]
        cs.write_local_rotations(w, out_q)
        assert np.all(out_q[j1] == 9.0)           # never overwritten
    patched = w.copy()
    cs.apply(patched)
    # the authored joint keeps its animated local transform below the solved parent
    local = np.linalg.inv(patched[j0]) @ patched[j1]
    np.testing.assert_allclose(local[:3, :3], loc[:3, :3], atol=1e-12)



def test_joints_authored_at_run_time_behave_like_joints_authored_at_build(smoke):
    """set_authored on a running chain set: the joint leaves the fast path (its root is no
    longer its parent's tail; it used to collapse onto it) and the result is the same as
    marking it at build time; released, the chain set is flagged as built."""
    from solver import layout as L
    sk = smoke.skeleton
    j0, j1 = smoke.springs[0].joints[0].node, smoke.springs[0].joints[1].node
    built = ChainSet.from_avatar(smoke, authored_nodes=[j1])
    late = ChainSet.from_avatar(smoke)
    flags = late._segi[:, [L.SI_FAST, L.SI_NEEDW]].copy()
    late.set_authored([j1])
    np.testing.assert_array_equal(late._segi, built._segi)
    poser = SubtreePoser(sk, smoke.head_node())
    for n in range(1, 121):
        w, _ = _animated_world(sk, poser, j0, j1, n)
        built.step(w)
        late.step(w)
        assert np.array_equal(late.tails, built.tails)
    i1 = list(late.segment_nodes).index(j1)
    np.testing.assert_allclose(np.linalg.norm(late.tails[i1] - late.tails[i1 - 1]), late.rest_lengths[i1], rtol=1e-12)
    late.set_authored([j1], False)
    np.testing.assert_array_equal(late._segi[:, [L.SI_FAST, L.SI_NEEDW]], flags)

def _link_inside(cs, roots):
    """Deepest overlap (m) of any link with a collider it references, measured independently;
    links whose root is already inside a collider are checked at the tail only. A link's radius
    against a collider is its hit radius less the pair's cover allowance (solver/drawn.py)."""
    worst = 0.0
    col = cs.collider_world
    cover = cs.sections["cover"].cover
    seg = cs.sections["segment_ints"]
    for i in range(cs.segment_count):
        p0 = int(seg.pair_begin[i])
        for j, c in enumerate(cs.collider_refs(i)):
            r_h = cs.hit_radii[i] - cover[p0 + j]
            a, b, rad = col[c, :3], col[c, 3:6], col[c, 6]
            d_root = point_segment_distance(roots[i], a, b)
            if d_root - np.linalg.norm(cs.tails[i] - roots[i]) > rad + r_h:
                continue                         # the link cannot reach the collider
            if d_root < rad + r_h:
                d = point_segment_distance(cs.tails[i], a, b)
            else:
                d, _ = segment_distance(roots[i], cs.tails[i], a, b, iters=80)
            worst = max(worst, rad + r_h - d)
    return worst


def _roots(cs, w):
    """(S, 3) link roots: the joint's animated position, or its simulated parent's tail."""
    roots = np.array([w[n, :3, 3] for n in cs.segment_nodes])
    for i, sp in enumerate(cs.simulated_parents):
        if sp >= 0:
            roots[i] = cs.tails[sp]
    return roots


@pytest.mark.parametrize("name", ["godette", "generated_default", "hair_cap"])
def test_fast_head_yaw_never_leaves_a_link_inside_a_collider(name, request):
    av = hair_cap_avatar(64) if name == "hair_cap" else request.getfixturevalue(name)
    cs = ChainSet.from_avatar(av, rest_overlap="push")
    poser = SubtreePoser(av.skeleton, av.head_node())
    w = poser.rest.copy()
    # settle into the pushed-out pose first
    for _ in range(120):
        cs.step(w)
    rate = math.radians(600.0)                      # 600°/s, back and forth every 0.2 s
    worst = 0.0
    for n in range(1, 241):
        t = n / 120
        phase = (t / 0.2) % 2.0
        yaw = rate * 0.2 * (phase if phase < 1.0 else 2.0 - phase) - rate * 0.1
        pitch = math.radians(20.0) * math.sin(2 * math.pi * 1.5 * t)
        q = quat_mul(quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), yaw),
                     quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), pitch))
        poser.world(q, out=w)
        cs.step(w)
        assert cs.last_unresolved == 0          # the solver's own check, every substep
        if n % 4 == 0:                           # the independent check, every 4th substep
            worst = max(worst, _link_inside(cs, _roots(cs, w)))
    assert worst < INSIDE_TOL_M


def test_substep_allocates_nothing(godette):
    cs = ChainSet.from_avatar(godette)
    poser = SubtreePoser(godette.skeleton, godette.head_node())
    worlds = [poser.world(head_turn_rotation(n / 120)).copy() for n in range(1, 201)]
    for w in worlds[:10]:
        cs.step(w)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for w in worlds:
        cs.step(w)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(st.size_diff for st in after.compare_to(before, "filename") if st.size_diff > 0)
    assert grown < 1024, f"{grown} bytes allocated over 200 substeps"


def test_compiled_substeps_allocate_nothing(godette):
    """numba's own allocator: a call allocates only the 3 argument wrappers, however many
    substeps it runs (so every substep inside allocates nothing)."""
    from numba.core.runtime import _nrt_python, rtsys

    _nrt_python.memsys_enable_stats()
    cs = ChainSet.from_avatar(godette)
    poser = SubtreePoser(godette.skeleton, godette.head_node())
    worlds = np.array([poser.world(head_turn_rotation(n / 120)) for n in range(1, 101)])
    cs.step_many(worlds[:10])
    a0 = rtsys.get_allocation_stats().alloc
    cs.step_many(worlds[:10])
    a1 = rtsys.get_allocation_stats().alloc
    cs.step_many(worlds)
    a2 = rtsys.get_allocation_stats().alloc
    assert a1 - a0 == a2 - a1 <= 3


@pytest.mark.parametrize("solver", ["rest-shape", "vrm"])
def test_centre_space_removes_the_centre_motion(solver):
    """A spring simulated in its head's space (VRM ``center``) feels none of the head's
    motion: the strand stays exactly on its rest arc while the head turns and moves."""
    from dataclasses import replace

    from solver.eval.synthetic import strand_avatar

    av = strand_avatar([(0.0, 1.5, 0.1), (0.0, 1.45, 0.12), (0.0, 1.40, 0.13)], tail_offset=(0.0, -0.05, 0.0),
                       head_position=(0.0, 1.5, 0.0))
    av = replace(av, springs=(replace(av.springs[0], center=0),))
    cs = ChainSet.from_avatar(av, solver=solver)
    poser = SubtreePoser(av.skeleton, 0)
    w = poser.rest.copy()
    for n in range(1, 241):
        poser.world(head_turn_rotation(n / 120), out=w, offset=np.array([0.05 * math.sin(n / 20), 0.0, 0.0]))
        cs.step(w)
        np.testing.assert_allclose(cs.tails, cs.rest_arc_tails(w), rtol=0, atol=1e-9)
