"""Targeted posing (runtime.rig.posing, runtime.rig): the world matrices handed to the solver
equal whole-skeleton forward kinematics at every index the solver reads, on the standard
head turn, for Godette, the generated default and the layered avatars."""

from __future__ import annotations

import math

import numpy as np
import pytest

from avatars import load_avatar
from avatars.generate import default_avatar_path, layered_avatar_path
from avatars.math3d import mat_compose, quat_from_euler
from runtime.pose_inputs import TrackInput, head_turn_track
from runtime.rig.posing import DrivenPose, PosePlan
from runtime.rig import AvatarRig
from tracking.pose_track import PoseSample

from .reference_pose import NumpyHeadDrive, reference_world

#: world-matrix entries (metres for translations, unitless for rotations): the compiled and
#: numpy paths associate the same products differently, so they agree to rounding only
POSE_TOL = 1e-12


@pytest.fixture(scope="module", params=["godette", "default", "layered"])
def avatar(request, godette_path):
    path = {"godette": godette_path, "default": default_avatar_path(), "layered": layered_avatar_path()}
    return load_avatar(path[request.param])


def lean(t: float) -> np.ndarray:
    """Head translation (metres) that leans the hips, past the 8 cm clamp on x."""
    return np.array([0.2 * math.sin(2 * math.pi * 0.4 * t), 0.03 * math.sin(2 * math.pi * 0.9 * t),
                     -0.1 * math.sin(2 * math.pi * 0.25 * t)])


def test_solver_world_is_full_fk_at_every_read_index(avatar):
    rig = AvatarRig(avatar)
    reads = rig.chains.world_reads()
    assert set(reads.tolist()) <= set(rig.plan.nodes.tolist())
    ref_drive = NumpyHeadDrive(avatar)
    static = rig.drive.relaxed_arms(avatar)
    inp = TrackInput(head_turn_track())
    s = PoseSample()
    rig.reset(inp.sample(0, s))
    worst = 0.0
    n_substeps = len(inp.track)
    for n in range(1, n_substeps):
        t_ns = n * 1_000_000_000 // 120
        inp.sample(t_ns, s)
        s.translation[:] = lean(t_ns * 1e-9)
        rig.substep(s)                     # rig.world is what ChainSet.step read
        ref = reference_world(avatar, ref_drive, static, s.rotation, s.translation)
        worst = max(worst, float(np.abs(rig.world[reads] - ref[reads]).max()))
    assert worst < POSE_TOL, worst
    assert n_substeps == 1441


def test_draw_pose_body_is_full_fk_everywhere(avatar):
    rig = AvatarRig(avatar)
    ref_drive = NumpyHeadDrive(avatar)
    static = rig.drive.relaxed_arms(avatar)
    out = np.empty_like(rig.world)
    s = PoseSample()
    for k in range(40):
        t = 0.1 * k
        s.rotation[:] = quat_from_euler(0.9 * math.sin(t), 0.3 * math.sin(1.3 * t), 0.2 * math.sin(0.7 * t))
        s.translation[:] = lean(t)
        rig.pose_world(s, out)
        ref = reference_world(avatar, ref_drive, static, s.rotation, s.translation)
        assert np.abs(out - ref).max() < POSE_TOL


def test_reset_poses_every_entry(avatar):
    rig = AvatarRig(avatar)
    s = PoseSample()
    s.rotation[:] = quat_from_euler(0.5, 0.1, -0.2)
    rig.world[:] = np.nan
    rig.reset(s)
    ref = reference_world(avatar, NumpyHeadDrive(avatar), rig.drive.relaxed_arms(avatar), s.rotation, s.translation)
    assert np.abs(rig.world - ref).max() < POSE_TOL


def test_plan_writes_only_its_nodes(godette_path):
    rig = AvatarRig(load_avatar(godette_path))
    rig.world[:] = np.nan
    rig.substep(PoseSample())
    written = ~np.isnan(rig.world).any(axis=(1, 2))
    assert np.array_equal(np.nonzero(written)[0], np.sort(rig.plan.nodes))


def test_any_driven_set(godette_path):
    """The driven set is data: every humanoid bone driven (as body clips will), random local
    TRS, random targets (hair joints, colliders, fingers): the plan agrees with full FK."""
    avatar = load_avatar(godette_path)
    sk = avatar.skeleton
    rng = np.random.default_rng(7)
    driven = sorted(set(avatar.humanoid.values()))
    pose = DrivenPose(sk, driven)
    targets = rng.choice(sk.node_count, size=25, replace=False)
    plan = PosePlan.build(pose, targets)
    world = np.zeros((sk.node_count, 4, 4))
    for _ in range(10):
        q = rng.normal(size=(len(driven), 4))
        pose.trs[:, 3:7] = q / np.linalg.norm(q, axis=1, keepdims=True)
        pose.trs[:, 0:3] += rng.normal(scale=0.01, size=(len(driven), 3))
        pose.trs[:, 7:10] = rng.uniform(0.8, 1.2, size=(len(driven), 3))
        plan.pose(world, pose)
        ref = sk.world_matrices(pose.local_matrices())
        assert np.abs(world[targets] - ref[targets]).max() < POSE_TOL
        full = pose.forward_kinematics(np.empty_like(world))
        assert np.abs(full - ref).max() < POSE_TOL
    # the local matrices the plan composes are mat_compose's
    np.testing.assert_allclose(pose.local_matrices()[driven],
                               mat_compose(pose.trs[:, 0:3], pose.trs[:, 3:7], pose.trs[:, 7:10]), rtol=0, atol=0)


def test_plan_rows_are_parents_first_and_minimal(godette_path):
    avatar = load_avatar(godette_path)
    rig = AvatarRig(avatar)
    sk = avatar.skeleton
    rows = rig.plan.ops
    seen = set()
    for node, src, slot in rows.tolist():
        assert src == -1 or src in seen      # a source is written before it is read
        assert slot == int(rig.pose.slot_of[node])
        seen.add(node)
    driven_rows = [n for n in rig.plan.nodes.tolist() if rig.pose.slot_of[n] >= 0]
    # only driven nodes above a target are posed (not the arms, not the hips' other children)
    reads = set(rig.chains.world_reads().tolist())
    assert all(any(sk.is_ancestor(d, r) or d == r for r in reads) for d in driven_rows)
    assert len(rows) == len(reads | set(driven_rows))


def test_driven_set_errors(godette_path):
    sk = load_avatar(godette_path).skeleton
    with pytest.raises(ValueError, match="distinct"):
        DrivenPose(sk, [3, 3])
    with pytest.raises(ValueError, match="distinct"):
        DrivenPose(sk, [sk.node_count])
    with pytest.raises(ValueError, match="does not exist"):
        PosePlan.build(DrivenPose(sk, [3]), [sk.node_count + 2])


def test_drawing_never_changes_the_physics(godette_path):
    """The draw pose shares the driven TRS buffer with the substeps (each drive rewrites its
    slots every call): hair states with drawing at 30 / 144 fps (jittered) are bit-identical
    to a physics-only replay."""
    from runtime.clock import frame_times
    from runtime.loop import Loop

    avatar = load_avatar(godette_path)
    runs = []
    for fps, jitter, draw in ((60, 0.0, False), (30, 0.0, True), (144, 0.9, True)):
        states: dict = {}
        loop = Loop(AvatarRig(avatar), TrackInput(head_turn_track()),
                    on_substep=lambda n, t, r, states=states: states.__setitem__(n, r.hair_state()),
                    draw=(lambda info: None) if draw else None)
        for t in frame_times(fps, 3 * 1_000_000_000, start_ns=0, jitter=jitter, seed=4):
            loop.frame(t)
        runs.append(states)
    common = sorted(set(runs[0]) & set(runs[1]) & set(runs[2]))
    assert len(common) > 300
    for n in common:
        for other in runs[1:]:
            assert np.array_equal(runs[0][n][0], other[n][0]) and np.array_equal(runs[0][n][1], other[n][1]), n
