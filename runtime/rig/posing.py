"""Posing the skeleton from a driven set: the solver's world matrices per substep, the whole
skeleton per drawn frame (docs/design.md §2, §7 "update only what the simulation reads", §10).

Terms:

- *base pose*: every node's local transform when no drive writes it: the file's rest TRS,
  with static overrides set once (the lowered T-pose arms of
  :meth:`runtime.rig.drive.HeadDrive.relaxed_arms`). Hair joints stay at their rest local rotations.
- *driven set* (:class:`DrivenPose`): the nodes whose local TRS a drive writes at every
  substep — the head drive's hips, neck and head and the node constraints' destinations
  (:mod:`runtime.rig.constraints`); later body clips (every humanoid bone). It is data:
  ``nodes`` (D,) and the ``trs`` (D, 10) buffer the drives write (layout
  :data:`runtime.rig.kernels.TRS_T` ...).
- *targets*: the nodes whose world matrices a consumer reads at every substep
  (:meth:`solver.chains.ChainSet.world_reads`: chain anchors, centre nodes, collider nodes,
  joints hanging from the body, authored joints).

A :class:`PosePlan` writes exactly the targets (and the driven nodes above them), each as one
3x4 product (column vectors, docs/design.md §3). With a the nearest driven strict ancestor of a node
(W_a = I when there is none) and L the base local matrices:

    target n (not driven):  W_n = W_a · R_{a→n},            R_{a→n} = L_{c1} ··· L_n
    driven node d:          W_d = W_a · R_{a→parent(d)} · L_d(t)

where c1 ... n is the path below a. R is the rigid subtree W_a(rest)⁻¹ · W_n(rest) of the base
pose, precomputed as a product of locals (no inverse). Whole-skeleton FK for drawing is
W_n = W_parent · L_n over all nodes, parents first. Both run compiled
(:mod:`runtime.rig.kernels`); building here is numpy, once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from avatars import Skeleton
from avatars.math3d import mat_compose

from . import kernels as RK
from .errors import RigError


class DrivenPose:
    """The driven set of one skeleton and its local TRS buffer (module doc).

    Args:
        skeleton: the avatar skeleton.
        driven: node indices written by drives every substep (slot i = ``driven[i]``).
        static_rotations: {node: (4,) xyzw local rotation} set once in the base pose.

    Attributes:
        nodes: (D,) int64 driven nodes.
        trs: (D, 10) float64 local translation (metres), rotation (xyzw), scale of each slot;
            starts at the base pose; drives write rows in place.
        slot_of: (N,) int64 slot of every node, −1 when not driven.
        base_rotation: (N, 4) base local rotations (xyzw): the rest rotations with the static
            overrides (what an undriven node's rotation is, e.g. a node constraint's source).
        base_local: (N, 4, 4) base local matrices.
        base_world: (N, 4, 4) base world matrices (FK of ``base_local``).
        fk: (N, 3) int64 rows (node, parent, slot), parents first (whole-skeleton FK).
        base34: (N, 12) top three rows of ``base_local``, row-major.

    Raises:
        RigError: a driven node is out of range or listed twice.
    """

    def __init__(self, skeleton: Skeleton, driven: Sequence[int], *,
                 static_rotations: Mapping[int, np.ndarray] | None = None):
        n = skeleton.node_count
        self.skeleton = skeleton
        self.nodes = np.array([int(d) for d in driven], np.int64)
        if len(set(self.nodes.tolist())) != len(self.nodes) or ((self.nodes < 0) | (self.nodes >= n)).any():
            raise RigError(f"driven nodes {self.nodes.tolist()}: each must be a distinct node in [0, {n})")
        rot = np.array(skeleton.rest_rotation, np.float64)
        for node, q in (static_rotations or {}).items():
            rot[int(node)] = q
        self.base_rotation = rot
        self.base_local = np.ascontiguousarray(mat_compose(skeleton.rest_translation, rot, skeleton.rest_scale))
        self.base_world = skeleton.world_matrices(self.base_local)
        self.slot_of = np.full(n, -1, np.int64)
        self.slot_of[self.nodes] = np.arange(len(self.nodes))
        self._base_trs = np.zeros((len(self.nodes), RK.TRS_W))
        self._base_trs[:, RK.TRS_T:RK.TRS_T + 3] = skeleton.rest_translation[self.nodes]
        self._base_trs[:, RK.TRS_Q:RK.TRS_Q + 4] = rot[self.nodes]
        self._base_trs[:, RK.TRS_S:RK.TRS_S + 3] = skeleton.rest_scale[self.nodes]
        self.trs = self._base_trs.copy()
        order = np.concatenate(skeleton.levels) if skeleton.levels else np.zeros(0, np.int64)
        self.fk = np.ascontiguousarray(np.stack([order, skeleton.parents[order], self.slot_of[order]], axis=1),
                                       dtype=np.int64).reshape(-1, 3)
        self.base34 = np.ascontiguousarray(self.base_local[:, :3, :].reshape(n, 12))

    @property
    def base_trs(self) -> np.ndarray:
        """(D, 10) the base TRS of every driven slot (read-only use)."""
        return self._base_trs

    def reset(self) -> None:
        """Put every driven slot back at its base TRS."""
        self.trs[:] = self._base_trs

    def local_matrices(self) -> np.ndarray:
        """(N, 4, 4) local matrices of the current pose: base, driven slots composed from
        ``trs`` (numpy; for checks and build time, not the substep path)."""
        local = self.base_local.copy()
        t = self.trs
        local[self.nodes] = mat_compose(t[:, RK.TRS_T:RK.TRS_T + 3], t[:, RK.TRS_Q:RK.TRS_Q + 4],
                                        t[:, RK.TRS_S:RK.TRS_S + 3])
        return local

    def forward_kinematics(self, out: np.ndarray) -> np.ndarray:
        """Whole-skeleton world matrices of the current pose into ``out`` (N, 4, 4) float64,
        C-contiguous (one compiled call)."""
        RK.forward_kinematics_kernel(out, self.fk, self.base34, self.trs)
        return out


@dataclass(frozen=True, eq=False)
class PosePlan:
    """The world matrices one substep writes (module doc for the formulas).

    Attributes:
        ops: (P, 3) int64 rows (node, src, slot) in order (:data:`runtime.rig.kernels.OP_NODE` ...).
        mats: (P, 12) float64 the constant factor M of each row (3x4, row-major).
        targets: (T,) int64 the nodes asked for (sorted).
    """

    ops: np.ndarray
    mats: np.ndarray
    targets: np.ndarray

    @property
    def nodes(self) -> np.ndarray:
        """(P,) every node the plan writes: the targets and the driven nodes above them."""
        return self.ops[:, RK.OP_NODE]

    @classmethod
    def build(cls, pose: DrivenPose, targets: Iterable[int]) -> PosePlan:
        """The plan that writes ``targets`` (node indices; −1 entries are ignored) under
        ``pose``'s driven set. Raises RigError for a node out of range."""
        sk = pose.skeleton
        parents = sk.parents
        n = sk.node_count
        tg = sorted({int(t) for t in targets if int(t) >= 0})
        if tg and tg[-1] >= n:
            raise RigError(f"target node {tg[-1]} does not exist ({n} nodes)")
        driven = pose.slot_of >= 0
        # every node the plan writes: the targets and the driven nodes on their paths to the root
        rows = set(tg)
        for t in tg:
            p = int(parents[t])
            while p >= 0:
                if driven[p]:
                    rows.add(p)
                p = int(parents[p])
        depth = np.zeros(n, np.int64)
        for d, level in enumerate(sk.levels):
            depth[level] = d
        order = sorted(rows, key=lambda k: (int(depth[k]), k))
        ops = np.zeros((len(order), RK.OP_W), np.int64)
        mats = np.zeros((len(order), 12))
        for r, node in enumerate(order):
            # R = product of base locals from below the nearest driven strict ancestor down to
            # the node (exclusive of the node when it is driven: its local is composed last)
            path = []
            p = node if not driven[node] else int(parents[node])
            while p >= 0 and not driven[p]:
                path.append(p)
                p = int(parents[p])
            m = np.eye(4)
            for k in reversed(path):
                m = m @ pose.base_local[k]
            ops[r] = (node, p, pose.slot_of[node])
            mats[r] = m[:3, :].reshape(12)
        return cls(ops, np.ascontiguousarray(mats), np.array(tg, np.int64))

    def pose(self, world: np.ndarray, pose: DrivenPose) -> np.ndarray:
        """Write the plan's world matrices into ``world`` (N, 4, 4) from ``pose.trs`` (one
        compiled call); the other entries are left as they are."""
        RK.pose_plan_kernel(world, self.ops, self.mats, pose.trs)
        return world
