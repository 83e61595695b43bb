"""One avatar's animated state for the loop: head pose -> body pose -> hair -> draw pose.

Per 120 Hz substep (:meth:`AvatarRig.substep`): the head pose sampled at t_n drives the
neck/head (:class:`runtime.drive.HeadDrive`), forward kinematics gives the world matrices
of every node with the hair joints at their rest local rotations, and the hair solver
(:class:`solver.chains.ChainSet`) advances one substep reading its anchors and colliders
from them. For drawing (:meth:`AvatarRig.draw_pose`): the body pose at the draw time and
the hair interpolated by the driver's alpha, patched into a copy (the physics state is
never changed by drawing).
"""

from __future__ import annotations

import logging

import numpy as np

from avatars import Avatar
from avatars.math3d import mat_compose
from solver.chains import ChainSet
from tracking.expressions import ExpressionMapper, ExpressionOptions, PerfectSync
from tracking.pose_track import PoseSample

from .drive import DriveOptions, HeadDrive
from .hair_params import parse_hair

log = logging.getLogger(__name__)


class AvatarRig:
    """Pose buffers, head drive, hair solver and expression mapping of one avatar.

    Args:
        avatar: a loaded avatar with a humanoid head.
        solver: "rest-shape" (default), "legacy" or "vrm" (see :mod:`solver.chains`).
        drive: neck/head split and lean options.
        hair: ``[hair]`` settings (see :mod:`runtime.hair_params`).
        mirror: selfie view for expressions (must match the tracker's head mirror).

    Raises:
        ValueError: no humanoid head, bad hair settings, or springs the solver cannot order.
    """

    def __init__(self, avatar: Avatar, *, solver: str = "rest-shape", drive: DriveOptions = DriveOptions(),
                 hair: dict | None = None, mirror: bool = True):
        self.avatar = avatar
        self.solver = solver
        self.hair_params = dict(hair or {})
        sk = avatar.skeleton
        self.drive = HeadDrive(avatar, options=drive)
        self.chains = (ChainSet.from_avatar(avatar, solver=solver, overrides=parse_hair(self.hair_params))
                       if avatar.springs else None)
        self._rot = sk.rest_rotation.copy()
        self._t = sk.rest_translation.copy()
        self._local = np.ascontiguousarray(sk.rest_local, dtype=np.float64).copy()
        for node, q in self.drive.relaxed_arms(avatar).items():  # a static pose: set once
            self._rot[node] = q
            self._local[node] = mat_compose(sk.rest_translation[node], q, sk.rest_scale[node])
        self._driven = np.array(self.drive.nodes, dtype=np.int64)
        self.world = np.ascontiguousarray(sk.rest_world, dtype=np.float64).copy()
        self.draw_world = self.world.copy()
        self.expressions = ExpressionMapper(ExpressionOptions(mirror=mirror))
        custom = [n for n, e in avatar.expressions.items() if not e.preset]
        self.perfect_sync = PerfectSync(custom, mirror=mirror)

    # ------------------------------------------------------------------ posing
    def pose_world(self, sample: PoseSample, out: np.ndarray) -> np.ndarray:
        """World matrices (N, 4, 4) of the body posed by ``sample``, hair at rest local rotations."""
        sk = self.avatar.skeleton
        d = self._driven
        self.drive.apply(sample.rotation, sample.translation, self._rot, self._t)
        # only the driven bones differ from the rest pose: recompose just their locals
        self._local[d] = mat_compose(self._t[d], self._rot[d], sk.rest_scale[d])
        return sk.world_matrices(self._local, out=out)

    def substep(self, sample: PoseSample) -> bool:
        """Advance the hair one substep with the body posed by ``sample`` (at t_n).
        Returns True when the solver reset itself (the avatar teleported)."""
        self.pose_world(sample, self.world)
        return bool(self.chains.step(self.world)) if self.chains is not None else False

    def reset(self, sample: PoseSample) -> None:
        """Teleport: hair at rest under the pose ``sample``, velocities zero."""
        self.pose_world(sample, self.world)
        if self.chains is not None:
            self.chains.reset(self.world)

    def warm_up(self) -> None:
        """Run the compiled solver paths once (numba compiles or loads them on first use, which
        can take seconds on a cold cache), then return to rest. Call before live timing starts."""
        s = PoseSample()
        self.substep(s)
        self.draw_pose(s, 0.5)
        self.reset(s)

    def draw_pose(self, sample: PoseSample, alpha: float) -> np.ndarray:
        """World matrices for drawing: body at ``sample`` (the draw time), hair interpolated
        between the last two substeps by ``alpha``. Returns an internal (N, 4, 4) buffer."""
        self.pose_world(sample, self.draw_world)
        if self.chains is not None:
            self.chains.apply(self.draw_world, alpha)
        return self.draw_world

    def expression_values(self, sample: PoseSample) -> dict[str, float]:
        """VRM expression weights from the sample's blendshapes (presets + perfect sync)."""
        if not sample.found and not sample.blendshapes.any():
            return {}
        values = self.expressions.map_dict(sample.blendshapes)
        if self.perfect_sync.names:
            values.update(self.perfect_sync.as_dict(sample.blendshapes))
        return values

    # ------------------------------------------------------------------ state for checks
    def hair_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of (tails (S, 3), velocities (S, 3)) — empty when the avatar has no springs."""
        if self.chains is None:
            return np.zeros((0, 3)), np.zeros((0, 3))
        return self.chains.tails.copy(), self.chains.velocities.copy()
