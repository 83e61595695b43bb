"""The 120 Hz path allocates nothing with a clip playing (issue 15; docs/design.md §7): the substep
(pose-track sample, clip sample and cross-fade, the head on top, posing, solver step) and
the drawn frame's pose, measured like :mod:`tests.runtime.rig.test_rig_allocation` — over a
looping clip, a cross-fade between two clips, and the generated idle."""

from __future__ import annotations

import pytest

from avatars import load_avatar
from avatars.clips import load_file
from avatars.generate import default_avatar_path, layered_avatar_path
from runtime.pose_inputs import TrackInput, head_turn_track
from runtime.rig import AvatarRig, MotionOptions
from tests.conftest import asset
from tracking.pose_track import PoseSample

from .test_rig_allocation import SUBSTEPS, WARM, _measure

UAL = ("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")


@pytest.fixture(scope="module")
def clips():
    return {c.name: c for c in load_file(asset(*UAL), names=["Walk_Loop", "Dance_Loop"])}


@pytest.fixture(scope="module", params=["godette", "default", "layered", "constrained"])
def avatar(request, godette_path):
    if request.param == "constrained":          # node constraints after the clip, in the same call
        from avatars.constraint_avatar import build_constrained_avatar

        return load_avatar("constrained.vrm", data=build_constrained_avatar())
    path = {"godette": godette_path, "default": default_avatar_path(), "layered": layered_avatar_path()}
    return load_avatar(path[request.param])


def _rig(avatar, clips, program):
    rig = AvatarRig(avatar, motion=MotionOptions(fade_s=10.0))      # a long fade: both clips sampled
    if program == "idle":
        rig.play_motion("idle")
    else:
        rig.play_motion([clips["Walk_Loop"]])
    inp = TrackInput(head_turn_track())
    sample = PoseSample()
    rig.reset(inp.sample(0, sample))
    times = [n * 1_000_000_000 // 120 for n in range(WARM + SUBSTEPS)]
    sample_at, substep = inp.sample, rig.substep

    def step(t_ns: int) -> None:
        substep(sample_at(t_ns, sample))

    for t in times[:WARM]:
        step(t)
    if program == "fade":
        rig.play_motion([clips["Dance_Loop"]])     # pending: the cross-fade starts at the next substep
        step(times[WARM])                          # the event (a switch allocates; the fade does not)
        times = times[1:]
    return rig, step, times[WARM:], inp


@pytest.mark.parametrize("program", ["clip", "fade", "idle"])
def test_substep_with_a_clip_allocates_nothing(avatar, clips, program):
    rig, step, times, _ = _rig(avatar, clips, program)
    steps0 = rig.chains.steps
    grown, transient = _measure(step, times[:SUBSTEPS - 1])
    assert rig.chains.steps - steps0 == SUBSTEPS - 1
    if program == "fade":
        assert rig.motion.b is not None            # still cross-fading at the end of the window
    assert (grown, transient) == (0, 0)


def test_draw_pose_with_a_clip_allocates_nothing(avatar, clips):
    rig, _, times, inp = _rig(avatar, clips, "fade")
    sample = PoseSample()
    sample_at, draw_pose = inp.sample, rig.draw_pose

    def draw(t_ns: int) -> None:
        draw_pose(sample_at(t_ns, sample), 0.5)

    for t in times[:20]:
        draw(t)
    assert _measure(draw, times[20:220]) == (0, 0)
