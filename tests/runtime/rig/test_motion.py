"""Body motion playback (issue 15 items 3-4): sampled at the substep times (bit-identical hair
at any render rate), loops, speed, cross-fades, the tracked head on top (additive / override),
the clip's expressions, a broken clip changes nothing, and authored hair: a clip that animates
hair joints owns them while it plays and hands them back without a jump."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.clips import Clip, ClipError, load_file
from avatars.generate import default_avatar_path, layered_avatar_path
from avatars.math3d import mat_decompose, quat_angle, quat_conj, quat_from_euler, quat_mul
from runtime.clock import frame_times
from runtime.loop import Loop
from runtime.pose_inputs import TrackInput, head_turn_track
from runtime.replay import check_fps
from runtime.rig import AvatarRig, MotionOptions, MotionSetup, load_motion
from tests.conftest import asset
from tracking.pose_track import PoseSample

from .motion_clips import hair_clip_gltf

UAL = ("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")
H_NS = 1_000_000_000 // 120
#: Poses computed two ways (formula, or the old head drive) agree to this (rad / m).
POSE_TOL = 1e-12
#: An authored tail follows the clip's pose to this (m): the same FK, other operation order.
FOLLOW_TOL = 1e-12
#: After the hand-back no substep moves a tail more than this multiple of the largest move of
#: the substeps before it (the clip's own motion).
HANDBACK_RATIO = 2.0


def _t(n: int) -> int:
    return n * 1_000_000_000 // 120


@pytest.fixture(scope="module")
def default_avatar():
    return load_avatar(default_avatar_path())


@pytest.fixture(scope="module")
def ual():
    return {c.name: c for c in load_file(asset(*UAL), names=["Walk_Loop", "Jog_Fwd_Loop", "Roll", "Dance_Loop",
                                                              "Jump_Start", "Jump_Loop", "Jump_Land"])}


# ---------------------------------------------------------------------------- frame-rate rule
@pytest.mark.parametrize("avatar_name,program", [
    ("default", "idle"), ("default", "Jump_Start+Jump_Loop+Jump_Land"), ("layered", "Walk_Loop"),
])
def test_hair_is_bit_identical_at_any_render_rate_with_a_clip(ual, avatar_name, program):
    avatar = load_avatar(default_avatar_path() if avatar_name == "default" else layered_avatar_path())
    if program == "idle":
        setup = load_motion("idle")
    else:
        setup = MotionSetup(tuple(ual[n] for n in program.split("+")), MotionOptions(), None, program)
    rows = check_fps(avatar, head_turn_track(), motion=setup, duration_ns=5_000_000_000)
    assert all(r.max_position_diff == 0.0 and r.max_velocity_diff == 0.0 for r in rows), rows


def test_drawing_between_substeps_never_changes_the_physics(default_avatar, ual):
    runs = []
    for fps, jitter, draw in ((60, 0.0, False), (30, 0.0, True), (144, 0.9, True)):
        states: dict = {}
        rig = AvatarRig(default_avatar, motion=MotionOptions())
        rig.play_motion([ual["Walk_Loop"]])
        loop = Loop(rig, TrackInput(head_turn_track()),
                    on_substep=lambda n, t, r, states=states: states.__setitem__(n, r.hair_state()),
                    draw=(lambda info: None) if draw else None)
        for t in frame_times(fps, 2 * 1_000_000_000, start_ns=0, jitter=jitter, seed=5):
            loop.frame(t)
        runs.append(states)
    common = sorted(set(runs[0]) & set(runs[1]) & set(runs[2]))
    assert len(common) > 200
    for n in common:
        for other in runs[1:]:
            assert np.array_equal(runs[0][n][0], other[n][0]) and np.array_equal(runs[0][n][1], other[n][1]), n


# ---------------------------------------------------------------------------- the head on top
def _plan_world(rig, sample):
    out = np.zeros_like(rig.world)
    rig.pose_solver_world(sample, out)
    return out[rig.plan.targets]


@pytest.mark.parametrize("layer", ["additive", "override"])
def test_with_a_still_body_both_layers_are_the_old_head_drive(default_avatar, layer):
    old = AvatarRig(default_avatar)
    new = AvatarRig(default_avatar, motion=MotionOptions(layer=layer))
    new.play_motion("rest")
    track = head_turn_track()
    s = PoseSample()
    new.reset(track.sample(0, s))
    for n in range(0, 480, 7):
        track.sample(_t(n), s)
        a, b = _plan_world(old, s), _plan_world(new, s)
        assert np.abs(a - b).max() < POSE_TOL, n


def _normalized(rig, avatar, world, bone):
    rest = mat_decompose(avatar.skeleton.rest_world)[1]
    n = avatar.humanoid[bone]
    return quat_mul(mat_decompose(world[n])[1], quat_conj(rest[n]))


def test_additive_turns_the_head_on_top_of_the_clip_and_override_replaces_it(default_avatar, ual):
    q = quat_from_euler(0.4, -0.2, 0.1)
    s = PoseSample(rotation=q)
    worlds = {}
    for layer in ("additive", "override", "clip"):
        rig = AvatarRig(default_avatar, motion=MotionOptions(layer="additive" if layer == "clip" else layer))
        rig.play_motion([ual["Dance_Loop"]])
        rig.reset(PoseSample())
        s.t_ns = _t(40)
        worlds[layer] = rig.pose_world(s if layer != "clip" else PoseSample(t_ns=_t(40)), np.empty_like(rig.world))
    chest = lambda w: _normalized(None, default_avatar, w, "upperChest")  # noqa: E731
    head = lambda w: _normalized(None, default_avatar, w, "head")  # noqa: E731
    # additive: head delta relative to the chest = q · (the clip's)
    clip_rel = quat_mul(quat_conj(chest(worlds["clip"])), head(worlds["clip"]))
    add_rel = quat_mul(quat_conj(chest(worlds["additive"])), head(worlds["additive"]))
    assert quat_angle(add_rel, quat_mul(q, clip_rel)) < 1e-9
    # override: relative to the chest the head turns by q alone
    ov_rel = quat_mul(quat_conj(chest(worlds["override"])), head(worlds["override"]))
    assert quat_angle(ov_rel, q) < 1e-9


# ---------------------------------------------------------------------------- timeline
def _pose(rig, t_ns):
    return rig.pose_world(PoseSample(t_ns=t_ns), np.empty_like(rig.world))


def test_loops_speed_and_cross_fades(default_avatar, ual):
    walk, dance = ual["Walk_Loop"], ual["Dance_Loop"]
    rig = AvatarRig(default_avatar, motion=MotionOptions(in_place=True))
    rig.play_motion([walk])
    rig.reset(PoseSample())
    period = int(round(walk.duration_s * 1e9))
    a, b = _pose(rig, 300_000_000), _pose(rig, 300_000_000 + 3 * period)
    assert np.abs(a - b).max() < 1e-9                       # a loop repeats (in place: no drift)
    fast = AvatarRig(default_avatar, motion=MotionOptions(in_place=True, speed=2.0))
    fast.play_motion([walk])
    fast.reset(PoseSample())
    assert np.abs(_pose(fast, 200_000_000) - _pose(rig, 400_000_000)).max() < 1e-9
    # a cross-fade: the switch is continuous, per-substep moves stay those of the clips
    rig.play_motion([dance])
    hips = default_avatar.humanoid["hips"]
    hand = default_avatar.humanoid["leftHand"]
    start = 10 * period
    prev = _pose(rig, start)
    moves = []
    for n in range(1, 120):
        w = _pose(rig, start + _t(n))
        moves.append(max(np.linalg.norm(w[hand, :3, 3] - prev[hand, :3, 3]), np.linalg.norm(w[hips, :3, 3] - prev[hips, :3, 3])))
        prev = w
    assert rig.motion.playing == "Dance_Loop"
    assert max(moves) < 0.03                                 # no jump: < 3 cm per 1/120 s (3.6 m/s)


def test_a_one_shot_fades_to_the_idle_at_its_end(default_avatar, ual):
    rig = AvatarRig(default_avatar, motion=MotionOptions(fade_s=0.25))
    rig.play_motion([ual["Jump_Land"]])
    rig.reset(PoseSample())
    end = int(ual["Jump_Land"].duration_s * 1e9)
    _pose(rig, end - 300_000_000)
    assert rig.motion.playing == "Jump_Land"
    _pose(rig, end - 200_000_000)
    assert rig.motion.playing == "idle" and rig.motion.b is not None      # fading
    _pose(rig, end + 100_000_000)
    assert rig.motion.b is None


def test_clip_expressions_replace_tracking(default_avatar):
    (clip,) = load_file(asset("anim", "test.vrma"))
    rig = AvatarRig(default_avatar, motion=MotionOptions())
    rig.play_motion([clip])
    rig.reset(PoseSample())
    s = PoseSample(t_ns=int(clip.times[np.argmax(clip.expressions["happy"])] * 1e9), found=True)
    s.blendshapes[9] = 1.0                                   # a tracked blink
    v = rig.expression_values(s)
    assert set(v) == {"happy"} and v["happy"] > 0.5


def test_a_clip_that_cannot_play_changes_nothing(default_avatar, ual):
    rig = AvatarRig(default_avatar, motion=MotionOptions())
    rig.play_motion([ual["Walk_Loop"]])
    rig.reset(PoseSample())
    before = _pose(rig, _t(50))
    eyes_only = Clip(name="Point", source="", times=np.array([0.0, 1.0]),     # the avatar has no fingers
                     rotations={"leftIndexProximal": np.tile([0.0, 0, 0, 1], (2, 1))}, hips_position=None,
                     rest=None)
    with pytest.raises(ClipError, match="drives none of the humanoid bones"):
        rig.play_motion([eyes_only])
    assert rig.motion.playing == "Walk_Loop" and rig.motion._pending is None
    assert np.array_equal(_pose(rig, _t(50)), before)
    with pytest.raises(ValueError, match="no body motion"):
        AvatarRig(default_avatar).play_motion("idle")


# ---------------------------------------------------------------------------- authored hair
def test_a_clip_that_animates_hair_owns_it_and_hands_it_back_smoothly(default_avatar, tmp_path):
    avatar = default_avatar
    pony = [int(j.node) for s in avatar.springs if s.name == "Ponytail" for j in s.joints]
    path = tmp_path / "pony.gltf"
    hair_clip_gltf(avatar, path, hair_nodes=pony)
    (clip,) = load_file(path)
    assert sorted(clip.node_tracks) == sorted(avatar.skeleton.names[n] for n in pony)
    rig = AvatarRig(avatar, motion=MotionOptions(fade_s=0.3))
    (rc,) = rig.play_motion([clip])
    assert sorted(rc.authored.tolist()) == pony
    cs = rig.chains
    seg = {int(n): i for i, n in enumerate(cs.segment_nodes)}
    pony_segs = [seg[n] for n in pony if n in seg]
    inp = TrackInput(head_turn_track())
    s = PoseSample()
    rig.reset(inp.sample(0, s))
    full = np.empty_like(rig.world)
    tails = []
    release = 300                                            # 2.5 s in: the idle takes over
    for n in range(1, 540):
        if n == release:
            rig.play_motion("idle")
        rig.substep(inp.sample(_t(n), s))
        tails.append(cs.tails[pony_segs].copy())
        if n < release and n % 10 == 0:
            # while the clip plays, each authored tail is exactly where the clip's FK puts its child
            rig.pose_world(s, full)
            for i, node in zip(pony_segs, pony):
                child = pony[pony.index(node) + 1]
                assert np.abs(cs.tails[i] - full[child, :3, 3]).max() < FOLLOW_TOL, (n, node)
    moves = np.linalg.norm(np.diff(np.array(tails), axis=0), axis=2).max(axis=1)   # per substep, metres
    before = moves[release - 60:release - 1].max()
    after = moves[release - 1:]
    assert after.max() <= HANDBACK_RATIO * before, (after.max(), before)
    assert np.abs(np.diff(after)).max() <= HANDBACK_RATIO * np.abs(np.diff(moves[:release - 1])).max()
    # handed back: the solver owns them again (their rotation is no longer the clip's)
    from solver import layout as L

    assert all(cs._segi[i, L.SI_AUTH] == 0 for i in pony_segs)
