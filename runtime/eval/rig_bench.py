"""The runtime's substep and drawn frame for ``swaycam bench solver`` (the ``rig`` factory
injected into :func:`solver.eval.bench.run_solver_bench`; solver/ never imports runtime/).

One :class:`PosedRig` holds an :class:`runtime.rig.AvatarRig` driven by the standard head
turn as a pose track (:func:`runtime.pose_inputs.head_turn_track`, the ``turn-test``
source), exactly as the loop runs it (:class:`runtime.loop.Loop`): per substep
``TrackInput.sample`` then :meth:`AvatarRig.substep`; per drawn frame the sample at the draw
time, :meth:`AvatarRig.draw_pose` and the skinning matrices the renderer uploads
(:class:`render.joint_matrices.JointMatrices`, the CPU half of
:class:`render.skinning.JointPalette`: no GL context needed, no upload timed). With a body
motion (``swaycam bench solver --motion CLIP``) the rig plays it: the substep then also
samples the clip (and the head goes on top), the draw poses the whole moving body.
"""

from __future__ import annotations

from avatars import Avatar
from render.joint_matrices import JointMatrices
from tracking.pose_track import PoseSample

from ..pose_inputs import TrackInput, head_turn_track
from ..rig import AvatarRig, MotionSetup


class PosedRig:
    """:class:`solver.eval.bench.PosedSubstep` of the runtime (module doc).

    Raises:
        ValueError: the avatar has no humanoid head (see :class:`AvatarRig`).
    """

    def __init__(self, avatar: Avatar, solver: str = "rest-shape", motion: MotionSetup | None = None):
        self.rig = AvatarRig(avatar, solver=solver, motion=motion.options if motion is not None else None)
        if motion is not None:
            motion.apply(self.rig)
        self.input = TrackInput(head_turn_track())
        self._sample = PoseSample()
        self._draw_sample = PoseSample()
        self.skin = JointMatrices(avatar)

    def reset(self, t_ns: int) -> None:
        self.rig.reset(self.input.sample(t_ns, self._sample))

    def substep(self, t_ns: int) -> None:
        self.rig.substep(self.input.sample(t_ns, self._sample))

    def draw(self, t_ns: int, alpha: float) -> None:
        self.skin.compute(self.rig.draw_pose(self.input.sample(t_ns, self._draw_sample), alpha))


def posed_rig(avatar: Avatar, solver: str, motion: MotionSetup | None = None) -> PosedRig | None:
    """The factory ``swaycam bench solver`` injects: None for an avatar without a humanoid
    head (the synthetic sets), which the runtime cannot drive."""
    if avatar.head_node() < 0:
        return None
    return PosedRig(avatar, solver, motion)


def posed_rig_with(motion: MotionSetup):
    """A :func:`posed_rig` factory whose rigs play ``motion`` (``bench solver --motion``)."""
    return lambda avatar, solver: posed_rig(avatar, solver, motion)
