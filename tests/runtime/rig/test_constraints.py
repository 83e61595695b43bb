"""Node constraints in the rig (runtime/rig/constraints.py, constraint_kernels.py): each kind
against hand-computed cases, weights 0 / 0.5 / 1, dependency order, the spec's pseudocode in
numpy on random poses, and the rig's substep and drawn frame (docs/design.md §10: drive ->
constraints -> posing -> hair)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from avatars import AimConstraint, RollConstraint, RotationConstraint, Skeleton, load_avatar
from avatars.constraint_avatar import build_constrained_avatar
from avatars.generate import default_avatar_path
from avatars.math3d import mat_compose, quat_from_axis_angle, quat_mul, quat_normalize, vec_transform_quat
from runtime.eval.constraint_reference import rotation_angle, run_ours
from runtime.pose_inputs import TrackInput, head_turn_track
from runtime.rig import AvatarRig
from runtime.rig import kernels as RK
from runtime.rig.constraints import ConstraintPlan
from runtime.rig.posing import DrivenPose
from tracking.pose_track import PoseSample

from .reference_constraints import apply_constraints
from .reference_pose import NumpyHeadDrive

#: rotations (radians) / world-matrix entries: the compiled plan against closed forms and the
#: numpy pseudocode (same formulas, other arithmetic), rounding only
ROUND_OFF = 1e-12
Q = slice(RK.TRS_Q, RK.TRS_Q + 4)


def rot(axis, deg) -> np.ndarray:
    a = np.asarray(axis, float)
    return quat_from_axis_angle(a / np.linalg.norm(a), math.radians(deg))


@pytest.fixture(scope="module")
def constrained():
    return load_avatar("constrained.vrm", data=build_constrained_avatar())


# --------------------------------------------------------------------------- a small skeleton

# 0 root; 1 parent (Rz 90°, at y = 1); 2 source, 3 roll, 4 rotation, 5 aim: children of 1;
# 6 the aim's target, a root. Rest rotations are not identities.
D = rot([1, 0, 0], 30)                       # the destinations' rest rotation
S0 = quat_mul(rot([0, 1, 0], 40), rot([1, 0, 0], 10))


def small_skeleton() -> Skeleton:
    r = np.tile([0.0, 0.0, 0.0, 1.0], (7, 1))
    r[1], r[2], r[3], r[4], r[5] = rot([0, 0, 1], 90), S0, D, D, D
    t = np.zeros((7, 3))
    t[1], t[2], t[5] = (0, 1, 0), (0.2, 0, 0), (0.1, 0, 0)
    return Skeleton(names=tuple(f"n{i}" for i in range(7)), parents=np.array([-1, 0, 1, 1, 1, 1, -1]),
                    rest_translation=t, rest_rotation=r, rest_scale=np.ones((7, 3)))


def evaluate(constraints, set_pose) -> tuple[DrivenPose, np.ndarray]:
    """Drive nodes 1, 2, 6 and every destination; ``set_pose(pose)`` writes the drive rows;
    returns the pose after the plan and the world matrices (FK after the constraints)."""
    sk = small_skeleton()
    pose = DrivenPose(sk, [1, 2, 6] + [c.node for c in constraints])
    set_pose(pose)
    world = np.ascontiguousarray(pose.base_world.copy())
    ConstraintPlan.build(pose, constraints).run(world, pose)
    return pose, pose.forward_kinematics(np.empty_like(world))


def local_q(pose: DrivenPose, node: int) -> np.ndarray:
    return pose.trs[pose.slot_of[node], Q]


@pytest.mark.parametrize("w", [0.0, 0.5, 1.0])
def test_rotation_copies_the_source_change_local_local(w):
    """dst = D · slerp(I, S0⁻¹ S, w): the source turned by 70° about v from its rest turns the
    destination by 70°·w about v in its own frame."""
    v = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])

    def pose_it(pose):
        pose.trs[pose.slot_of[2], Q] = quat_mul(S0, rot(v, 70))

    pose, _ = evaluate([RotationConstraint(node=4, source=2, weight=w)], pose_it)
    assert rotation_angle(local_q(pose, 4), quat_mul(D, rot(v, 70 * w))) < ROUND_OFF
    if w == 0.0:
        assert np.array_equal(local_q(pose, 4), D)          # exactly the rest rotation


@pytest.mark.parametrize("w", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("axis", ["X", "Y", "Z"])
def test_roll_keeps_the_twist_about_its_axis_and_drops_the_swing(axis, w):
    """The source's rest-relative rotation in the parent frame is a swing of 50° about an axis
    perpendicular to the roll axis after a twist of 80° about it (both axes in the
    destination's frame, carried to the parent frame by D): the destination gets
    D · Rot(a, 80°·w), the swing removed."""
    a = np.array([axis == "X", axis == "Y", axis == "Z"], float)
    perp = np.roll(a, 1)
    change = quat_mul(rot(vec_transform_quat(perp, D), 50), rot(vec_transform_quat(a, D), 80))

    def pose_it(pose):
        pose.trs[pose.slot_of[2], Q] = quat_mul(change, S0)

    pose, _ = evaluate([RollConstraint(node=3, source=2, roll_axis=axis, weight=w)], pose_it)
    assert rotation_angle(local_q(pose, 3), quat_mul(D, rot(a, 80 * w))) < ROUND_OFF


def test_roll_ignores_a_pure_swing():
    def pose_it(pose):
        pose.trs[pose.slot_of[2], Q] = quat_mul(rot(vec_transform_quat([0, 1, 0], D), 60), S0)

    pose, _ = evaluate([RollConstraint(node=3, source=2, roll_axis="X", weight=1.0)], pose_it)
    assert rotation_angle(local_q(pose, 3), D) < ROUND_OFF


@pytest.mark.parametrize("w", [0.0, 0.5, 1.0])
def test_aim_points_its_axis_at_the_source(w):
    """Parent world rotation P = Rz(90°), D = Rx(30°), aim axis +X: at rest the axis points along
    world +Y (P·D·x = y). With the target straight ahead of the destination (+Z), the smallest
    turn is 90° about world +X, i.e. about P⁻¹x = −Y in the parent frame: dst = Rot(−Y, 90°·w) · D."""
    def pose_it(pose):
        base = pose.base_world
        dst = base[1] @ np.append(pose.skeleton.rest_translation[5], 1.0)
        pose.trs[pose.slot_of[6], RK.TRS_T:RK.TRS_T + 3] = dst[:3] + [0.0, 0.0, 0.5]

    pose, world = evaluate([AimConstraint(node=5, source=6, aim_axis="PositiveX", weight=w)], pose_it)
    assert rotation_angle(local_q(pose, 5), quat_mul(rot([0, -1, 0], 90 * w), D)) < ROUND_OFF
    x_world = world[5, :3, 0]
    expect = np.array([0.0, math.cos(math.radians(90 * w)), math.sin(math.radians(90 * w))])
    assert np.abs(x_world - expect).max() < ROUND_OFF


def test_aim_follows_a_moving_parent_and_source():
    """The aim reads the current world matrices: its parent (node 1) and target (node 6) are
    driven; the world aim axis points at the target whatever they do."""
    rng = np.random.default_rng(3)
    for axis in ("PositiveX", "NegativeY", "PositiveZ"):
        c = AimConstraint(node=5, source=6, aim_axis=axis, weight=1.0)
        for _ in range(5):
            q1, q6 = quat_normalize(rng.normal(size=(2, 4)))
            target = rng.normal(size=3)

            def pose_it(pose, q1=q1, q6=q6, target=target):
                pose.trs[pose.slot_of[1], Q] = q1
                pose.trs[pose.slot_of[6], Q] = q6
                pose.trs[pose.slot_of[6], RK.TRS_T:RK.TRS_T + 3] = target

            _, world = evaluate([c], pose_it)
            u = target - world[5, :3, 3]
            assert np.abs(world[5, :3, :3] @ c.axis - u / np.linalg.norm(u)).max() < ROUND_OFF


def test_undriven_source_uses_the_base_pose():
    """A source outside the driven set is read at its base rotation (rest + static overrides):
    here a static 45° turn of node 2 is copied by a rotation constraint."""
    sk = small_skeleton()
    static = {2: quat_mul(S0, rot([0, 0, 1], 45))}
    c = RotationConstraint(node=4, source=2, weight=1.0)
    pose = DrivenPose(sk, [4], static_rotations=static)
    plan = ConstraintPlan.build(pose, [c])
    plan.run(np.ascontiguousarray(pose.base_world.copy()), pose)
    assert rotation_angle(local_q(pose, 4), quat_mul(D, rot([0, 0, 1], 45))) < ROUND_OFF
    assert plan.steps[0, 3] == -1       # the source has no slot: a constant of the plan


def test_plan_errors():
    sk = small_skeleton()
    c = RotationConstraint(node=4, source=2)
    with pytest.raises(ValueError, match="not in the driven set"):
        ConstraintPlan.build(DrivenPose(sk, [2]), [c])
    with pytest.raises(ValueError, match="constrained twice"):
        ConstraintPlan.build(DrivenPose(sk, [4]), [c, RollConstraint(node=4, source=2, roll_axis="X")])
    with pytest.raises(ValueError, match="cycle"):
        ConstraintPlan.build(DrivenPose(sk, [3, 4]), [RotationConstraint(node=4, source=3),
                                                      RotationConstraint(node=3, source=4)])


# --------------------------------------------------------------------------- the test avatar


def random_poses(avatar, frames: int, seed: int):
    """Local rotations (F, M, 4) of every humanoid bone and hips translations: random, large."""
    sk = avatar.skeleton
    posed = np.array(sorted(set(avatar.humanoid.values())))
    rng = np.random.default_rng(seed)
    rots = quat_normalize(rng.normal(size=(frames, len(posed), 4)))
    trans = sk.rest_translation[posed][None] + rng.normal(scale=0.05, size=(frames, len(posed), 3))
    return posed, rots, trans


def test_plan_matches_the_spec_pseudocode(constrained):
    """Every constraint of the test avatar (roll, aim, rotation, chained, weights 0 / 0.5 /
    0.7 / 1) on 30 random poses of every humanoid bone: the compiled plan equals the
    README's pseudocode in numpy evaluated in Avatar.constraints order."""
    sk = constrained.skeleton
    posed, rots, trans = random_poses(constrained, 30, seed=11)
    ours = run_ours(constrained, posed, rots, trans)
    worst = 0.0
    for f in range(len(rots)):
        r, t = np.array(sk.rest_rotation), np.array(sk.rest_translation)
        r[posed], t[posed] = rots[f], trans[f]
        apply_constraints(sk, constrained.constraints, r, t)
        worst = max(worst, float(rotation_angle(ours["rotations"][f], r[ours["nodes"]]).max()))
    assert worst < ROUND_OFF, worst


def test_dependency_order_matters(constrained):
    """CollarTwist rolls with Collar's result of the same frame; evaluated in file order
    (CollarTwist first) it would read the previous value — the plan's order gives the
    reference, file order does not."""
    sk = constrained.skeleton
    posed, rots, trans = random_poses(constrained, 1, seed=5)
    r, t = np.array(sk.rest_rotation), np.array(sk.rest_translation)
    r[posed], t[posed] = rots[0], trans[0]
    right = r.copy()
    apply_constraints(sk, constrained.constraints, right, t)
    wrong = r.copy()
    apply_constraints(sk, sorted(constrained.constraints, key=lambda c: c.node), wrong, t)
    ours = run_ours(constrained, posed, rots, trans)
    k = int(np.nonzero(ours["nodes"] == sk.find("CollarTwist"))[0][0])
    assert rotation_angle(ours["rotations"][0, k], right[sk.find("CollarTwist")]) < ROUND_OFF
    assert rotation_angle(right[sk.find("CollarTwist")], wrong[sk.find("CollarTwist")]) > 0.05
    pad = int(np.nonzero(ours["nodes"] == sk.find("PadAim_L"))[0][0])
    assert rotation_angle(ours["rotations"][0, pad], right[sk.find("PadAim_L")]) < ROUND_OFF
    assert rotation_angle(right[sk.find("PadAim_L")], wrong[sk.find("PadAim_L")]) > 1e-3
    plan_nodes = [sk.names[n] for n in ConstraintPlan.build(
        DrivenPose(sk, [c.node for c in constrained.constraints]), constrained.constraints).nodes]
    assert plan_nodes.index("Collar") < plan_nodes.index("CollarTwist")


def test_substep_evaluates_only_what_the_solver_reads(constrained):
    """Per substep: the constraints above the springs' anchors (SleeveTwist_L for the sleeve,
    Collar for the hood, NeckAim for the scarf) and nothing else; the drawn frame: all."""
    rig = AvatarRig(constrained)
    sk = constrained.skeleton
    assert {sk.names[n] for n in rig.constraint_plan.nodes} == {"SleeveTwist_L", "Collar", "NeckAim"}
    assert len(rig.draw_constraint_plan.nodes) == len(constrained.constraints)
    assert set(rig.pose.nodes.tolist()) == set(rig.drive.nodes) | {c.node for c in constrained.constraints}


def _reference_body(avatar, drive, static, sample) -> np.ndarray:
    sk = avatar.skeleton
    r, t = np.array(sk.rest_rotation), np.array(sk.rest_translation)
    for n, q in static.items():
        r[n] = q
    drive.apply(np.asarray(sample.rotation, float), sample.translation, r, t)
    apply_constraints(sk, avatar.constraints, r, t)
    return sk.world_matrices(mat_compose(t, r, sk.rest_scale))


def test_rig_substep_and_draw_pose_with_constraints(constrained):
    """Over the standard head turn (with a lean): the world matrices the solver receives at
    every read index, and the drawn frame everywhere, equal numpy FK of the head drive then
    the constraints (in the README's pseudocode) — docs/design.md §10's order; and the constraints do
    move what the solver reads (the hood's anchor turns with half the neck)."""
    rig = AvatarRig(constrained)
    reads = rig.chains.world_reads()
    drive = NumpyHeadDrive(constrained)
    static = rig.drive.relaxed_arms(constrained)
    inp = TrackInput(head_turn_track())
    s = PoseSample()
    rig.reset(inp.sample(0, s))
    draw = np.empty_like(rig.world)
    collar = constrained.skeleton.find("Collar")
    worst_sub = worst_draw = moved = 0.0
    for n in range(1, 481, 4):
        t_ns = n * 1_000_000_000 // 120
        inp.sample(t_ns, s)
        s.translation[:] = [0.1 * math.sin(t_ns * 1e-9), 0.0, 0.05 * math.cos(t_ns * 1e-9)]
        rig.substep(s)
        ref = _reference_body(constrained, drive, static, s)
        worst_sub = max(worst_sub, float(np.abs(rig.world[reads] - ref[reads]).max()))
        rig.pose_world(s, draw)
        worst_draw = max(worst_draw, float(np.abs(draw - ref).max()))
        moved = max(moved, float(np.abs(rig.world[collar, :3, :3] - rig.pose.base_world[collar, :3, :3]).max()))
    assert worst_sub < ROUND_OFF and worst_draw < ROUND_OFF, (worst_sub, worst_draw)
    assert collar in reads and moved > 0.1


def test_drawing_never_changes_the_physics_with_constraints(constrained):
    """The drawn frame evaluates every constraint into the shared TRS buffer; the substep
    rewrites what it reads: hair with drawing between substeps is bit-identical."""
    runs = []
    for draw in (False, True):
        rig = AvatarRig(constrained)
        inp = TrackInput(head_turn_track())
        s, d = PoseSample(), PoseSample()
        rig.reset(inp.sample(0, s))
        states = []
        for n in range(1, 241):
            t_ns = n * 1_000_000_000 // 120
            rig.substep(inp.sample(t_ns, s))
            if draw:
                rig.draw_pose(inp.sample(t_ns + 3_000_000, d), 0.4)
            states.append(rig.hair_state())
        runs.append(states)
    for (a, va), (b, vb) in zip(*runs):
        assert np.array_equal(a, b) and np.array_equal(va, vb)


def test_without_constraints_the_substep_is_the_drive_and_the_plan(godette_path):
    """Avatars without constraints: the constraint plans are empty and the substep gives
    bit-identical hair to the path without a constraint stage (head drive, pose plan,
    solver step as separate compiled calls), over the whole standard head turn."""
    for avatar in (load_avatar(godette_path), load_avatar(default_avatar_path())):
        rig, old = AvatarRig(avatar), AvatarRig(avatar)
        assert rig.constraint_plan.steps.shape == (0, 5) and rig.draw_constraint_plan.steps.shape == (0, 5)
        # the driven set: the head drive's nodes and, for a bone lookAt (the default avatar's
        # eye bones), the eyes the gaze turns (none move in the head turn: no gaze)
        assert np.array_equal(rig.pose.nodes, np.array(rig.drive.nodes + rig.eyes.nodes))
        inp = TrackInput(head_turn_track())
        s = PoseSample()
        rig.reset(inp.sample(0, s))
        old.reset(inp.sample(0, s))
        for n in range(1, len(inp.track)):
            inp.sample(n * 1_000_000_000 // 120, s)
            rig.substep(s)
            old.drive.write(s.rotation, s.translation, old.pose.trs, old._hslots)
            old.plan.pose(old.world, old.pose)
            old.chains.step(old.world)
            assert np.array_equal(rig.chains.tails, old.chains.tails), n
            assert np.array_equal(rig.chains.velocities, old.chains.velocities), n


def test_rebuild_plans_follows_the_read_set(constrained):
    """After the solver's read set changes (an authored joint), rebuild_plans poses and
    constrains what it now reads."""
    rig = AvatarRig(constrained)
    sk = constrained.skeleton
    sleeve = sk.find("Sleeve_L_2")
    rig.chains.set_authored([sleeve])
    rig.rebuild_plans()
    assert sleeve in rig.plan.nodes.tolist()
    assert sk.find("SleeveTwist_L") in rig.constraint_plan.nodes.tolist()
    s = PoseSample()
    rig.reset(s)
    rig.world[:] = np.nan
    rig.substep(s)
    reads = rig.chains.world_reads()
    assert not np.isnan(rig.world[reads]).any()


@pytest.mark.parametrize("program", ["idle", "walk"])
def test_constraints_run_after_a_clip_in_the_substep_and_the_drawn_frame(constrained, program):
    """docs/design.md §10 with body motion: clip -> head on top -> constraints -> posing. At every
    substep the world matrices the solver reads equal the drawn frame's at the same time (the
    substep evaluates only the constraints and clip rows its reads need — a missing row would
    show here), and the constrained nodes move with the clip."""
    from avatars.clips import load_file
    from runtime.rig import MotionOptions
    from tests.conftest import asset

    rig = AvatarRig(constrained, motion=MotionOptions())
    if program == "walk":
        rig.play_motion(load_file(asset("anim", "ual", "AnimationLibrary_Godot_Standard.gltf"), names=["Walk_Loop"]))
    else:
        rig.play_motion("idle")
    reads = rig.chains.world_reads()
    inp = TrackInput(head_turn_track())
    s = PoseSample()
    rig.reset(inp.sample(0, s))
    draw = np.empty_like(rig.world)
    hood = constrained.skeleton.find("Collar")
    first = None
    worst = moved = 0.0
    for n in range(1, 361, 3):
        t_ns = n * 1_000_000_000 // 120
        rig.substep(inp.sample(t_ns, s))
        rig.pose_world(s, draw)
        worst = max(worst, float(np.abs(rig.world[reads] - draw[reads]).max()))
        first = draw[hood].copy() if first is None else first
        moved = max(moved, float(np.abs(draw[hood] - first).max()))
    assert worst < ROUND_OFF, worst
    assert moved > 1e-3
