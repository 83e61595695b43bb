"""Node constraints (VRMC_node_constraint 1.0) in the rig: which constraints run, in which
order, with which world matrices — built once as data, run compiled
(:mod:`runtime.rig.constraint_kernels` has the formulas).

Where they run (docs/design.md §10: body drive (and clips) -> node constraints -> posing -> hair):

- per 120 Hz substep, inside the one compiled posing call
  (:func:`runtime.rig.kernels.drive_and_pose_kernel`): after the drives wrote their rows of
  the driven TRS buffer, a :class:`ConstraintPlan` built for the solver's targets evaluates
  only the constraints those targets' world matrices depend on, then the pose plan poses the
  targets;
- per drawn frame (:func:`runtime.rig.kernels.drive_and_fk_kernel`): after the drives, the
  plan of every constraint, then whole-skeleton forward kinematics.

Every constraint destination is a node of the driven set (:class:`runtime.rig.posing.DrivenPose`);
a constraint step writes its rotation row (translation and scale stay as the base pose or a
drive left them). A constraint reads its source's local rotation from the driven TRS buffer
when the source is driven (by the head drive, a clip, or an earlier constraint), else the
source's base rotation (the rest pose with static overrides such as the lowered arms); an
aim constraint reads world matrices, which the plan's pose rows write first (the same rows
as :class:`runtime.rig.posing.PosePlan`). A drive that feeds constraints only has to put its
nodes in the driven set and write their rows before the compiled call: the plan reads
``slot_of`` when it is built, so build the plans after the driven set is final.

The rest rotations the formulas are relative to are the file's (``Skeleton.rest_rotation``),
as three-vrm captures them when it loads the file.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from avatars import AimConstraint, NodeConstraint, RollConstraint, RotationConstraint
from avatars.constraints import evaluation_order, reads
from avatars.math3d import quat_conj, quat_mul

from . import constraint_kernels as CK
from . import kernels as RK
from .errors import RigError
from .posing import DrivenPose, PosePlan

_KIND = {RollConstraint: CK.STEP_ROLL, AimConstraint: CK.STEP_AIM, RotationConstraint: CK.STEP_ROTATION}


def constrained_nodes(constraints: Sequence[NodeConstraint]) -> tuple[int, ...]:
    """The destination nodes (to add to the driven set), in the constraints' order."""
    return tuple(int(c.node) for c in constraints)


@dataclass(frozen=True, eq=False)
class ConstraintPlan:
    """The steps one constraint evaluation runs, in order (module doc).

    Attributes:
        steps: (K, 5) int64 rows (:data:`runtime.rig.constraint_kernels.STEP_KIND` ...): a pose
            row (kind 0: node, source row's node, slot) or a constraint step (kind roll 1,
            aim 2, rotation 3: destination slot, source node, source slot, destination parent).
        vals: (K, 16) float64: a pose row's constant 3x4 factor, or a constraint's axis, rest
            rotation, source term, weight and undriven source rotation.
        constraints: the constraints evaluated, in evaluation order.
    """

    steps: np.ndarray
    vals: np.ndarray
    constraints: tuple[NodeConstraint, ...]

    @property
    def nodes(self) -> np.ndarray:
        """(C,) int64 the destination nodes evaluated, in order."""
        return np.array(constrained_nodes(self.constraints), np.int64)

    @property
    def world_nodes(self) -> np.ndarray:
        """(P,) int64 the nodes whose world matrices the pose rows write."""
        return self.steps[self.steps[:, CK.STEP_KIND] == CK.STEP_POSE, CK.ST_NODE]

    def slots_read(self) -> set[int]:
        """The driven-set slots whose TRS rows the plan reads or writes (pose rows' locals,
        constraints' sources and destinations): the rows a body clip must write before it
        runs."""
        st = self.steps
        pose = st[:, CK.STEP_KIND] == CK.STEP_POSE
        cols = (st[pose, CK.ST_SLOT], st[~pose, CK.ST_SOURCE_SLOT], st[~pose, CK.ST_DST_SLOT])
        return {int(v) for c in cols for v in c if v >= 0}

    @classmethod
    def build(cls, pose: DrivenPose, constraints: Sequence[NodeConstraint],
              targets: Iterable[int] | None = None) -> ConstraintPlan:
        """The plan of ``constraints`` under ``pose``'s driven set.

        Args:
            pose: the driven set; every destination must be in it.
            constraints: the avatar's constraints (``Avatar.constraints``), acyclic.
            targets: nodes whose world matrices will be read after the plan (the solver's
                targets); only the constraints they depend on are evaluated (a destination on
                a target's path to the root, and what those constraints read, transitively).
                None: every constraint (the drawn frame).

        Raises:
            RigError: a destination is not driven, two constraints share a destination, or
                the constraints form a cycle.
        """
        sk = pose.skeleton
        cons = tuple(constraints)
        by_node = {}
        for k, c in enumerate(cons):
            if c.node in by_node:
                raise RigError(f"node {c.node} is constrained twice")
            if pose.slot_of[c.node] < 0:
                raise RigError(f"constrained node {c.node} is not in the driven set")
            by_node[c.node] = k
        order, cycles = evaluation_order(cons, sk)
        if cycles:
            raise RigError(f"constraint cycle among the constraints of nodes {[cons[k].node for k in cycles[0]]}")
        need = set(range(len(cons))) if targets is None else _needed(cons, by_node, sk, targets)
        order = [k for k in order if k in need]
        # the world matrices the aims read, as pose rows (with the driven nodes above them)
        world_reads = sorted({n for k in order for n in reads(cons[k], sk)[1]})
        rows = PosePlan.build(pose, world_reads)
        n_con, n_rows = len(order), len(rows.ops)
        step_of_con = {k: i for i, k in enumerate(order)}
        row_of = {int(n): n_con + r for r, n in enumerate(rows.nodes)}
        deps: list[set[int]] = [set() for _ in range(n_con + n_rows)]
        for i, k in enumerate(order):
            local, world = reads(cons[k], sk)
            deps[i].update(step_of_con[by_node[s]] for s in local if s in by_node)
            deps[i].update(row_of[n] for n in world)
        for r, (node, src, _slot) in enumerate(rows.ops.tolist()):
            if src >= 0:
                deps[n_con + r].add(row_of[src])
            if node in by_node:
                deps[n_con + r].add(step_of_con[by_node[node]])
        steps = np.zeros((n_con + n_rows, CK.ST_W), np.int64)
        vals = np.zeros((n_con + n_rows, CK.V_W))
        for out, i in enumerate(_topological(deps)):
            if i >= n_con:
                r = i - n_con
                node, src, slot = rows.ops[r].tolist()
                steps[out] = (CK.STEP_POSE, node, src, slot, 0)
                vals[out, CK.V_M:CK.V_M + 12] = rows.mats[r]
            else:
                steps[out], vals[out] = _constraint_row(cons[order[i]], pose)
        return cls(np.ascontiguousarray(steps), np.ascontiguousarray(vals), tuple(cons[k] for k in order))

    def run(self, world: np.ndarray, pose: DrivenPose) -> np.ndarray:
        """Evaluate the plan: write the constrained rotations into ``pose.trs`` and the pose
        rows into ``world`` (N, 4, 4) float64, C-contiguous (one compiled call); returns ``world``."""
        RK.constrain_kernel(world, self.steps, self.vals, pose.trs)
        return world


def _needed(cons, by_node, sk, targets) -> set[int]:
    need: set[int] = set()
    stack: list[int] = []

    def world_of(n: int) -> None:        # a world matrix depends on the node and its ancestors
        while n >= 0:
            if n in by_node:
                stack.append(by_node[n])
            n = int(sk.parents[n])

    for t in targets:
        if int(t) >= 0:
            world_of(int(t))
    while stack:
        k = stack.pop()
        if k in need:
            continue
        need.add(k)
        local, world = reads(cons[k], sk)
        stack.extend(by_node[s] for s in local if s in by_node)
        for n in world:
            world_of(n)
    return need


def _topological(deps: list[set[int]]) -> list[int]:
    """Indices in an order where each comes after its dependencies (lowest index first among
    the ready ones: constraint steps in evaluation order, then pose rows in depth order)."""
    waiting = [set(d) for d in deps]
    users: list[list[int]] = [[] for _ in deps]
    for i, d in enumerate(deps):
        for j in d:
            users[j].append(i)
    ready = [i for i, d in enumerate(waiting) if not d]
    heapq.heapify(ready)
    out = []
    while ready:
        i = heapq.heappop(ready)
        out.append(i)
        for u in users[i]:
            waiting[u].discard(i)
            if not waiting[u]:
                heapq.heappush(ready, u)
    if len(out) != len(deps):
        raise RigError("constraint steps depend on each other in a cycle")
    return out


def _constraint_row(c: NodeConstraint, pose: DrivenPose) -> tuple[tuple, np.ndarray]:
    sk = pose.skeleton
    d = sk.rest_rotation[c.node]
    s0 = sk.rest_rotation[c.source]
    v = np.zeros(CK.V_W)
    if isinstance(c, RotationConstraint):
        term = quat_conj(s0)
    elif isinstance(c, RollConstraint):
        term = quat_mul(quat_conj(s0), d)
    else:
        term = np.array([0.0, 0.0, 0.0, 1.0])
    if not isinstance(c, RotationConstraint):
        v[CK.V_AXIS:CK.V_AXIS + 3] = c.axis
    v[CK.V_DST_REST:CK.V_DST_REST + 4] = d
    v[CK.V_SRC_TERM:CK.V_SRC_TERM + 4] = term
    v[CK.V_WEIGHT] = c.weight
    v[CK.V_SRC_LOCAL:CK.V_SRC_LOCAL + 4] = pose.base_rotation[c.source]
    row = (_KIND[type(c)], int(pose.slot_of[c.node]), int(c.source), int(pose.slot_of[c.source]),
           int(sk.parents[c.node]))
    return row, v
