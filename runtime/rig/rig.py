"""One avatar's animated state for the loop: head pose -> body pose -> hair -> draw pose.

Per 120 Hz substep (:meth:`AvatarRig.substep`), one compiled call poses only what the solver
reads (docs/design.md §7 "update only what the simulation reads"): the head drive
(:mod:`runtime.rig.drive`) writes the driven nodes' local TRS sampled at t_n, the node
constraints the solver's targets depend on write their destinations' rotations
(:class:`runtime.rig.constraints.ConstraintPlan`, docs/design.md §10), and the pose plan
(:class:`runtime.rig.posing.PosePlan`) writes the world matrices of the solver's targets
(:meth:`solver.chains.ChainSet.world_reads`: anchors, centre nodes, colliders, joints hanging
from the body, authored joints); then the hair solver (:class:`solver.chains.ChainSet`)
advances one substep. Nothing on that path allocates. For drawing (:meth:`AvatarRig.draw_pose`):
the body at the draw time by the drive, every node constraint and whole-skeleton forward
kinematics (compiled, once per drawn frame) and the hair interpolated by the driver's alpha,
patched into a separate buffer (the physics state is never changed by drawing).

The driven set is data (:class:`runtime.rig.posing.DrivenPose`): without body motion the head
drive's hips, neck and head and every node constraint's destination, with the lowered T-pose
arms baked into the base pose. With body motion (``motion=``, :mod:`runtime.rig.motion`) every
humanoid bone and every node a clip of the program animates (authored hair) joins it too, and
one compiled call per substep runs, in the order of docs/design.md §10:

    clip sample (A, and B cross-fading out)  ->  tracked neck/head on top  ->
    node constraints (VRMC_node_constraint; those the solver's reads depend on)  ->
    posing of what the solver reads  ->  hair

(:func:`runtime.rig.motion_kernels.motion_drive_kernel` then
:func:`runtime.rig.kernels.constrain_and_pose_kernel` / ``constrain_and_fk_kernel`` for the substep /
drawn frame; without motion :func:`runtime.rig.kernels.drive_and_pose_kernel` /
``drive_and_fk_kernel``). The constraints read the driven TRS rows the steps before wrote and
write their destinations' rows.
"""

from __future__ import annotations

import logging

import numpy as np

from avatars import Avatar
from solver.build_options import BuildOptions
from solver.errors import SolverError
from solver.chains import ChainSet
from tracking.audio import V_ON
from tracking.expressions import ExpressionMapper, ExpressionOptions, PerfectSync
from tracking.body import BodyPose
from tracking.pose_track import PoseSample

from . import hair_external
from . import kernels as RK
from . import motion_kernels as MK
from .constraints import ConstraintPlan, constrained_nodes
from .drive import DriveOptions, HeadDrive
from ..errors import SettingsError
from ..lipsync.mix import MixOptions, mix_mouth
from .errors import MotionError, RigError
from .eyes import BodyDrive, EyeDrive, look_at_multiplier
from .hair_params import ResolvedHair, parse_hair, parse_links, resolve_hair, unmatched_springs
from .motion import MotionPlayer
from .motion_options import MotionOptions
from .posing import DrivenPose, PosePlan

log = logging.getLogger(__name__)

#: A hit radius raised mid-run grows by at most this much per second (0.5 mm per 120 Hz
#: substep): hair already in contact is eased out over a few substeps instead of being
#: pushed out in one (a jump). Lowered radii take effect at once (nothing is pushed).
HIT_RADIUS_RAMP_M_PER_S = 0.06


class AvatarRig:
    """Pose buffers, head drive, hair solver and expression mapping of one avatar.

    Args:
        avatar: a loaded avatar with a humanoid head.
        solver: "rest-shape" (default), "legacy" or "vrm" (see :mod:`solver.chains`).
        drive: neck/head split and lean options.
        hair: ``[hair]`` settings (see :mod:`runtime.rig.hair_params`).
        mirror: selfie view for expressions (must match the tracker's head mirror).
        motion: body motion options (:class:`runtime.rig.motion_options.MotionOptions`; the generated
            idle plays until :meth:`play_motion`), or None: no body motion (the head drive alone).
        body: a network performer may drive the whole body (:mod:`runtime.vmc`): every
            humanoid bone joins the driven set and a sample's :class:`tracking.body.BodyPose`
            is applied on top of the head drive and the clip (its bones win).

    Eyes: an avatar with a bone-type lookAt (or eye bones and no lookAt) has its eye bones in
    the driven set, turned by the sample's gaze (:class:`runtime.rig.eyes.EyeDrive`) in the
    same compiled call; an expression-type lookAt gives lookUp/Down/Left/Right weights
    (:meth:`expression_values`).

    Attributes:
        world: (N, 4, 4) the solver's input at the last substep. Only the plan's nodes
            (:attr:`plan`) are written per substep; every entry is the full pose after
            :meth:`reset` (the whole buffer is valid at rest and after a reset, e.g. for framing).
        draw_world: (N, 4, 4) the last :meth:`draw_pose`.
        pose: the driven set and its TRS buffer.
        plan: the per-substep pose plan.
        constraint_plan: the node constraints evaluated per substep (those the solver's
            targets depend on); ``draw_constraint_plan``: every node constraint (drawn frame,
            reset).
        motion: the body motion player, or None.

    Raises:
        RigError (a ValueError): no humanoid head, node constraints in a cycle, springs the
            solver cannot build or settings it cannot keep stable; SettingsError: bad
            ``[hair]`` settings.
    """

    def __init__(self, avatar: Avatar, *, solver: str = "rest-shape", drive: DriveOptions = DriveOptions(),
                 hair: dict | None = None, mirror: bool = True, motion: MotionOptions | None = None,
                 body: bool = False, hands: bool = False):
        self.avatar = avatar
        self.body_on = bool(body) or bool(hands)
        #: the webcam's arms and hands (``--hands``: runtime.hands), or None
        self.hands = None
        self._hand_rows = None
        if hands:
            from ..hands.drive import HandDrive

            self.hands = HandDrive(avatar)
        self.eyes = EyeDrive(avatar)
        self.body = BodyDrive(avatar)
        self._no_body = BodyPose()
        self._expr_cache: tuple | None = None
        self.solver = solver
        self.hair_params = dict(hair or {})
        self.mirror = mirror
        sk = avatar.skeleton
        self.drive = HeadDrive(avatar, options=drive)
        #: the packed parameters of the compiled drive: head (HP), lookAt (LP), body (55 x BP_W)
        self._hp = np.concatenate([self.drive.params, self.eyes.lp, self.body.bp.ravel()])
        overrides = parse_hair(self.hair_params)   # validated with or without springs
        links = parse_links(self.hair_params)      # linked sheets: fixed at this build
        try:
            self.chains = (ChainSet.from_avatar(avatar, BuildOptions(solver=solver, overrides=overrides, links=links,
                                                                     **hair_external.build_fields(self.hair_params)))
                           if avatar.springs else None)
            hair_external.start_wind(self.chains, self.hair_params)
        except SolverError as exc:      # springs the solver cannot build, or settings it cannot keep stable
            raise RigError(str(exc)) from None
        for note in self.hair_warnings():
            log.warning("%s: %s", avatar.path, note)
        # the lowered arms are a static pose: baked into the base pose, not driven
        self._static = self.drive.relaxed_arms(avatar)
        self.motion: MotionPlayer | None = None
        if motion is not None:
            base_rot = np.array(sk.rest_rotation, np.float64)
            for node, q in self._static.items():
                base_rot[node] = q
            self.motion = MotionPlayer(avatar, options=motion, base_rotation=base_rot)
            self.motion.on_authored = self._authored_changed
        self._build_pose()
        self.world = np.ascontiguousarray(self.pose.base_world, dtype=np.float64).copy()
        self.draw_world = self.world.copy()
        #: per-segment hit radii a raised radius is growing toward (see :meth:`set_hair`), or None
        self._hit_target: np.ndarray | None = None
        self.expressions = ExpressionMapper(ExpressionOptions(mirror=mirror))
        self._overrides_look_at = any(e.override_look_at != "none" for e in avatar.expressions.values())
        custom = [n for n, e in avatar.expressions.items() if not e.preset]
        self.perfect_sync = PerfectSync(custom, mirror=mirror)
        #: how the audio's visemes meet the camera's mouth (:mod:`runtime.lipsync.mix`; ``[lipsync]``)
        self.mouth = MixOptions()

    # ------------------------------------------------------------------ driven set and plan
    def _build_pose(self) -> None:
        """The driven set (head drive, node constraints' destinations; with motion every
        humanoid bone and every node a known clip writes), its slots and the plans (build time
        and motion events)."""
        nodes = list(self.drive.nodes)
        nodes += [n for n in self.eyes.nodes if n not in nodes]
        if self.body_on:
            nodes += [n for n in self.body.nodes if n not in nodes]
        nodes += [n for n in constrained_nodes(self.avatar.constraints) if n not in nodes]
        if self.motion is not None:
            nodes += sorted(self.motion.driven_nodes() - set(nodes))
        self.pose = DrivenPose(self.avatar.skeleton, nodes, static_rotations=self._static)
        hs = np.full(RK.HSX, -1, np.int64)
        hs[:3] = self.drive.slots(self.pose.slot_of)
        hs[RK.HS_EYES:RK.HS_EYES + 2] = self.eyes.slots(self.pose.slot_of)
        hs[RK.HS_BODY:] = self.body.slots(self.pose.slot_of, self.body_on)
        self._hslots = hs
        self.rebuild_plans()

    def _build_plan(self) -> None:
        self.rebuild_plans()

    def _authored_changed(self, old: np.ndarray, new: np.ndarray) -> None:
        """Hair joints change hands (authored motion wins while a clip drives them; released
        ones go back to the solver with the clip's last tails and velocities): the solver's
        reads change, so the plan is rebuilt (an event between substeps, not per substep)."""
        if self.chains is None:
            return
        if len(old):
            self.chains.set_authored(old, False)
        if len(new):
            self.chains.set_authored(new, True)
        self._build_plan()

    # ------------------------------------------------------------------ body motion
    def play_motion(self, clips, *, loop: bool | None = None) -> list:
        """Play ``clips`` (a list of :class:`avatars.clips.Clip`, played in sequence, or
        "idle" / "rest") from the next substep time, cross-fading from what plays now.

        Returns:
            the retargeted clips ([] for "idle" / "rest").

        Raises:
            MotionError: the rig has no body motion; ClipError (a ValueError): a clip the
                avatar cannot play — nothing changes then (the previous clip keeps playing).
        """
        m = self.motion
        if m is None:
            raise MotionError("this rig has no body motion (--motion none)")
        if isinstance(clips, str):
            m.play(clips, loop=loop)
            return []
        rcs = m.retarget(list(clips))
        if m.needs_nodes(rcs):
            m._known.extend(rcs)
            self._build_pose()
        m.play(rcs, loop=loop)
        return rcs

    # ------------------------------------------------------------------ posing
    def rebuild_plans(self) -> None:
        """Build the per-substep constraint and pose plans for the solver's current read set
        (:meth:`solver.chains.ChainSet.world_reads`) and the drawn frame's constraint plan,
        from the driven set as it is now. Call after the read set changes
        (:meth:`solver.chains.ChainSet.set_authored`); not on the substep path."""
        targets = self.chains.world_reads() if self.chains is not None else np.zeros(0, np.int64)
        self.constraint_plan = ConstraintPlan.build(self.pose, self.avatar.constraints, targets)
        self.draw_constraint_plan = ConstraintPlan.build(self.pose, self.avatar.constraints)
        self.plan = PosePlan.build(self.pose, targets)
        if self.motion is not None:
            # the substep's clip rows: every slot the pose plan or the substep's constraints read
            ops = self.plan.ops
            slots = set(ops[ops[:, RK.OP_SLOT] >= 0, RK.OP_SLOT].tolist())
            slots |= self.constraint_plan.slots_read()
            self.motion.bind(self.pose.slot_of, self.pose.base_trs, np.array(sorted(slots), np.int64))

    def pose_solver_world(self, sample: PoseSample, out: np.ndarray) -> np.ndarray:
        """Drive the body by ``sample`` (and the body motion at ``sample.t_ns``), evaluate the
        node constraints the solver's targets depend on, and write the plan's world matrices
        (the nodes the solver reads, hair joints at rest local rotations, authored ones at the
        clip's) into ``out`` (N, 4, 4) float64, C-contiguous; other entries are left as they
        are, apart from the world matrices the constraints read. One compiled call, no
        allocation."""
        p, c = self.plan, self.constraint_plan
        m = self.motion
        b = sample.body
        if b is None:                 # inline (a method call allocates on the substep path)
            b = self._no_body if self.hands is None else self._hands_body(sample)
        if m is None:
            RK.drive_and_pose_kernel(sample.rotation, sample.translation, True, self._hp, self._hslots, sample.gaze,
                                     b.data, self.pose.trs, c.steps, c.vals, p.ops, p.mats, out)
            return out
        if sample.t_ns >= m.next_event_ns:
            m.event(sample.t_ns)
            p, c = self.plan, self.constraint_plan
        a = m.a
        b = m.b or a
        bd = sample.body
        if bd is None:
            bd = self._no_body if self.hands is None else self._hands_body(sample)
        MK.motion_drive_kernel(sample.t_ns, m.tl, m.tf, a.cf, a.ci, b.cf, b.ci, m.buf, sample.rotation,
                               sample.translation, sample.gaze, bd.data, self._hp, self._hslots, self.pose.trs, False)
        RK.constrain_and_pose_kernel(self.pose.trs, c.steps, c.vals, p.ops, p.mats, out)
        return out

    def _hands_body(self, sample: PoseSample) -> BodyPose:
        """The body pose of the webcam's arms (``hands``) for a sample without a network
        performer's body."""
        if self.motion is None:
            # no clip rewrites the arm rows each substep: start them from the base pose, so
            # the hands' weights blend over the avatar's own pose (not over their last blend)
            rows = self._hand_rows
            if rows is None or rows[0] is not self.pose:
                nodes = [self.body.node_of[b] for bs in self.hands.solver.bones.values() for b in bs]
                slots = np.array([self.pose.slot_of[n] for n in nodes if n >= 0 and self.pose.slot_of[n] >= 0],
                                 np.int64)
                rows = self._hand_rows = (self.pose, slots)
            self.pose.trs[rows[1]] = self.pose.base_trs[rows[1]]
        return self.hands.body(sample)

    def pose_world(self, sample: PoseSample, out: np.ndarray) -> np.ndarray:
        """World matrices (N, 4, 4) of the whole body posed by ``sample`` (and the body motion
        at ``sample.t_ns``) with every node constraint, hair at rest local rotations, into
        ``out`` (float64, C-contiguous): whole-skeleton FK, one compiled call."""
        ps, c = self.pose, self.draw_constraint_plan
        m = self.motion
        bd = sample.body
        if bd is None:
            bd = self._no_body if self.hands is None else self._hands_body(sample)
        if m is None:
            RK.drive_and_fk_kernel(sample.rotation, sample.translation, True, self._hp, self._hslots, sample.gaze,
                                   bd.data, ps.trs, c.steps, c.vals, ps.fk, ps.base34, out)
            return out
        if sample.t_ns >= m.next_event_ns:
            m.event(sample.t_ns)
            ps, c = self.pose, self.draw_constraint_plan
        a = m.a
        b = m.b or a
        MK.motion_drive_kernel(sample.t_ns, m.tl, m.tf, a.cf, a.ci, b.cf, b.ci, m.buf, sample.rotation,
                               sample.translation, sample.gaze, bd.data, self._hp, self._hslots, ps.trs, True)
        RK.constrain_and_fk_kernel(ps.trs, c.steps, c.vals, ps.fk, ps.base34, out)
        return out

    def substep(self, sample: PoseSample) -> bool:
        """Advance the hair one substep with the body posed by ``sample`` (at t_n).
        Returns True when the solver reset itself (the avatar teleported). Allocates nothing."""
        if self.chains is None:
            return False
        if self._hit_target is not None:
            self._grow_hit_radii()
        self.pose_solver_world(sample, self.world)
        return self.chains.step(self.world)

    def reset(self, sample: PoseSample) -> None:
        """Teleport: hair at rest under the pose ``sample``, velocities zero (every entry of
        :attr:`world` is posed)."""
        self.pose_world(sample, self.world)
        if self.chains is not None:
            self.chains.reset(self.world)

    def warm_up(self) -> None:
        """Run the compiled paths once (numba compiles or loads them on first use, which can
        take seconds on a cold cache), then return to rest. Call before live timing starts."""
        s = PoseSample()
        self.substep(s)
        self.draw_pose(s, 0.5)
        self.reset(s)
        if self.motion is not None:
            self.motion.rewind()          # the loop's first time anchors the motion, not the warm-up
    def draw_pose(self, sample: PoseSample, alpha: float) -> np.ndarray:
        """World matrices for drawing: body at ``sample`` (the draw time), hair interpolated
        between the last two substeps by ``alpha``. Returns an internal (N, 4, 4) buffer.
        The eyes' overrideLookAt factor is taken from this frame's expressions first (when
        an expression of the avatar overrides lookAt; it holds for the substeps after)."""
        if self.eyes.nodes and self._overrides_look_at:
            values = self._expression_values(sample)
            self._expr_cache = (sample.t_ns, sample, values)
            self._hp[RK.HP_LP + RK.LP_SCALE] = look_at_multiplier(self.avatar, values)
        self.pose_world(sample, self.draw_world)
        if self.chains is not None:
            self.chains.apply(self.draw_world, alpha)
        return self.draw_world

    def expression_values(self, sample: PoseSample) -> dict[str, float]:
        """VRM expression weights from the sample's blendshapes (presets + perfect sync), or
        the playing clip's expression tracks when it carries any (docs/design.md §10)."""
        c, self._expr_cache = self._expr_cache, None
        if c is not None and c[0] == sample.t_ns and c[1] is sample:
            return c[2]          # computed by draw_pose for this very frame
        return self._expression_values(sample)

    def _expression_values(self, sample: PoseSample) -> dict[str, float]:
        """(see :meth:`expression_values`) A network body's preset weights replace the mapped
        blendshapes (its ARKit channels still feed perfect sync); an expression-type lookAt
        sets lookUp/Down/Left/Right from the gaze, a bone-type one sets them to 0 (the eyes
        turn instead)."""
        if self.motion is not None:
            clip = self.motion.expressions(sample.t_ns)
            if clip is not None:
                return clip
        b = sample.body
        from_body = b is not None and b.flags[2] != 0.0
        voiced = sample.voice[V_ON] != 0.0
        if not from_body and not voiced and not sample.found and not sample.blendshapes.any() and not sample.gaze.any():
            return {}
        if from_body:
            from tracking.body import EXPRESSION_NAMES

            values = {n: float(v) for n, v in zip(EXPRESSION_NAMES, b.expressions) if n != "neutral" or v}
        else:
            values = self.expressions.map_dict(sample.blendshapes)
        if self.perfect_sync.names:
            values.update(self.perfect_sync.as_dict(sample.blendshapes))
        la = self.eyes.look_at
        if la is not None and not from_body:
            if la.type == "expression":
                values.update(la.expression_weights(float(np.degrees(sample.gaze[0])),
                                                    float(np.degrees(sample.gaze[1]))))
            else:
                for k in ("lookUp", "lookDown", "lookLeft", "lookRight"):
                    values[k] = 0.0
        if voiced:
            mix_mouth(values, sample.voice, sample.confidence if sample.found else 0.0, self.mouth)
        return values

    # ------------------------------------------------------------------ hair settings, in place
    def resolve_hair(self, hair: dict | None, *, gate=None) -> ResolvedHair:
        """``hair`` resolved for this avatar's springs (any thread; :func:`resolve_hair`, its
        ``gate``): hand it to :meth:`set_hair` of this rig or of another rig of the same
        avatar. Raises SettingsError for bad settings."""
        return resolve_hair(hair, self.chains.chain_names if self.chains is not None else (), gate=gate)

    def set_hair(self, hair: dict | None, resolved: ResolvedHair | None = None) -> None:
        """Replace the ``[hair]`` settings (:mod:`runtime.rig.hair_params`; None or {}: the
        avatar's own parameters) of the running solver in place: k, c, gravity and a lowered
        hit radius change between two substeps while tails and velocities go on
        (:meth:`solver.chains.ChainSet.set_overrides`), so the hair does not snap to rest; a
        raised hit radius grows at :data:`HIT_RADIUS_RAMP_M_PER_S` over the next substeps, so
        hair already in contact is eased out instead of jumping.

        ``resolved``: ``hair`` resolved beforehand (:meth:`resolve_hair`, off the render thread)
        for these springs; None: resolved here.

        Raises:
            SettingsError (a ValueError): an unknown key, a value that is not a finite number,
                a negative one, a k its c cannot keep stable (the message names it); nothing
                is changed then.
        """
        names = self.chains.chain_names if self.chains is not None else ()
        if resolved is None or resolved.names != tuple(names):
            resolved = resolve_hair(hair, names)
        overrides = resolved.overrides
        if self.chains is not None:
            before = self.chains.params.hit_radius.copy()
            try:
                self.chains.set_overrides(overrides)
            except ValueError as exc:   # a k its c cannot keep stable at 120 Hz (solver.params.check_stable)
                raise SettingsError(str(exc)) from None
            hair = hair_external.retune(self.chains, self.hair_params, hair)   # wind, limits, wind_drag
            target = self.chains.params.hit_radius.copy()
            if np.any(target > before):    # raised radii grow from where they were
                self.chains.set_hit_radii(np.minimum(target, before))
                self._hit_target = target
            else:
                self._hit_target = None
        self.hair_params = dict(hair or {})

    def _grow_hit_radii(self) -> None:
        """One substep of a raised hit radius growing toward its target
        (:data:`HIT_RADIUS_RAMP_M_PER_S`); allocates while a radius grows, never after."""
        target = self._hit_target
        now = np.minimum(target, self.chains.params.hit_radius + HIT_RADIUS_RAMP_M_PER_S * self.chains.h)
        done = bool(np.array_equal(now, target))
        self.chains.set_hit_radii(now, allowances=done)   # the rest-pose measurement once, at the end
        if done:
            self._hit_target = None

    def hair_warnings(self) -> list[str]:
        """What the ``[hair]`` settings name but this avatar does not have (spring patterns
        that match no spring)."""
        return unmatched_springs(self.hair_params, self.chains.chain_names if self.chains is not None else ())

    def hair_springs(self) -> dict[str, dict]:
        """The parameters in effect per spring: {name: {"k" 1/s², "c" 1/s, "gravity" m/s²
        (3,), "hit_radius" m, ...}} ({} without springs)."""
        if self.chains is None:
            return {}
        return {name: p.as_dict() for name, p in self.chains.get_params().items()}

    def with_solver(self, solver: str) -> AvatarRig:
        """A rig of the same avatar, drive options and ``[hair]`` settings with another solver
        whose hair takes over this rig's motion (tails, velocities, previous tails, chain
        state: :meth:`solver.chains.ChainSet.copy_state_from`), so a solver switch does not
        snap the hair to rest. This rig is not changed.

        Raises:
            ValueError: an unknown solver.
        """
        rig = AvatarRig(self.avatar, solver=solver, drive=self.drive.options, hair=self.hair_params,
                        mirror=self.mirror, motion=self.motion.options if self.motion is not None else None,
                        body=self.body_on, hands=self.hands is not None)
        rig.mouth = self.mouth
        if self.motion is not None:
            rig.take_motion_from(self)
        if rig.chains is not None and self.chains is not None:
            rig.chains.copy_state_from(self.chains)
            if self._hit_target is not None:          # a radius still growing goes on growing
                rig.chains.set_hit_radii(self.chains.params.hit_radius)
                rig._hit_target = self._hit_target.copy()
        return rig

    def take_motion_from(self, rig: AvatarRig) -> None:
        """Continue ``rig``'s body motion program and timeline (a rig of the same avatar: a
        solver switch, the compare mode's companion): the body goes on where it is."""
        other = rig.motion
        m = self.motion
        m._known = list(other._known)
        self._build_pose()
        m.copy_state_from(other)
        if self.chains is not None and len(m.authored):
            self.chains.set_authored(m.authored, True)
        self._build_plan()

    # ------------------------------------------------------------------ state for checks
    def hair_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of (tails (S, 3), velocities (S, 3)) — empty when the avatar has no springs."""
        if self.chains is None:
            return np.zeros((0, 3)), np.zeros((0, 3))
        return self.chains.tails.copy(), self.chains.velocities.copy()
