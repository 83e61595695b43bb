"""The chain set: every spring chain of an avatar packed into flat arrays, and its solver.

:meth:`ChainSet.from_avatar` walks the avatar's springs once (avatars/ data, rest pose) and
packs, for all chains at once (struct of arrays, :mod:`solver.layout`): tails x, velocities
v, previous tails, rest offsets a_i (in the joint frame and in the anchor frame, i.e. R_i^0
a_i), rest lengths, per-joint k, c, g, hit radii, links to simulated parents, each chain's
anchor (the frame its rest arc is carried by) and the colliders. Every substep is then one
compiled call (:func:`solver.kernels.step.step_kernel`) that reads the animated world matrices.

Parameters apart from state (solver/LAYOUT.md): every segment has a *state* section (tails,
velocities, previous tails: what the motion carries), a *parameter* section (k, c, g, hit
radius, VRM values and what derives from them alone), *rest* constants and *scratch*.
:meth:`ChainSet.set_params` / :meth:`ChainSet.set_overrides` change parameters mid-motion
without touching the state; :meth:`ChainSet.copy_state_from` (or ``from_avatar(...,
state_from=old)``) carries the state over to a chain set of another solver, so neither a
retune nor a solver switch snaps the hair to rest. Those live in :mod:`solver.tuning`.

Terms. A *segment* is a simulated joint: joint i of a spring with a tail (joint i+1, or the
VRM 0.x virtual tail); VRM 1.0 last joints have no segment and follow their parent. Rows of
``tails``/``velocities`` are segments in processing order (parents first); ``segment_nodes``
names their joint nodes. A chain's *attachment* is the parent node of its first joint; its
*anchor* is the nearest non-simulated ancestor (the head for a branch chain hanging from a
simulated joint): R_H in docs/design.md §4.1 is the anchor's animated rotation.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from avatars import Avatar

from .kernels import step as K
from .kernels import pose as kpose
from . import layout as L
from .build import BuildReport, Tuning, _writable, pack_avatar, path_flags
from .build_options import BuildOptions
from .tuning import ChainTuning, SpringParams  # noqa: F401 - SpringParams re-exported


class ChainSet(ChainTuning):
    """All hair chains of one avatar with their solver state (see module doc).

    Build with :meth:`from_avatar`. Per substep the runtime does forward kinematics of the
    whole skeleton at the substep time t_n (head/neck animated, hair joints at their rest
    local rotations) and calls :meth:`step` with those world matrices; for drawing it calls
    :meth:`apply` (patch world matrices) or :meth:`write_local_rotations` with the
    interpolation alpha of the fixed-step driver.

    The packed buffers are read and written through named views of their sections
    (:mod:`solver.layout`, S = :attr:`segment_count`):

    - :attr:`state`: ``tails`` (S, 3) m, ``velocities`` (S, 3) m/s, ``prev_tails`` (S, 3) m,
      world frame — what the motion carries from substep to substep;
    - :attr:`params`: ``k`` (S,) 1/s², ``c`` (S,) 1/s, ``damp`` (S,) exp(−c h), ``gravity``
      (S, 3) model m/s² (avatar frame), ``gravity_preload`` (S, 3), ``hit_radius`` (S,)
      model m, ``vrm_stiffness``, ``vrm_drag``, ``vrm_gravity`` — change them with
      :meth:`set_params` / :meth:`set_overrides`, which rederive what depends on them;
    - :attr:`rest` (rest shape), :attr:`scratch` (within a substep), and every other section
      in :attr:`sections` (``colliders``, ``chains``, ``globals``, ``pose``...).

    The old names stay: :attr:`tails`, :attr:`velocities`, :attr:`prev_tails`,
    :attr:`stiffness`, :attr:`damping`, :attr:`gravity`, :attr:`hit_radii`.
    """

    def __init__(self, F: np.ndarray, I: np.ndarray, *, mode: str, node_count: int,  # noqa: E741
                 segment_nodes: np.ndarray, segment_chain: np.ndarray, chain_names: tuple[str, ...],
                 chain_anchor: np.ndarray, rest_lengths: np.ndarray, report: BuildReport,
                 fast_eligible: np.ndarray, tuning: Tuning | None = None):
        self._F = F
        self._I = I
        self.mode = mode
        self.node_count = int(node_count)
        self.segment_nodes = segment_nodes
        self.segment_chain = segment_chain
        self.chain_names = chain_names
        self.chain_anchor = chain_anchor
        self.rest_lengths = rest_lengths
        self.report = report
        self._fast_eligible = fast_eligible
        self._tuning = tuning
        #: (S,) the hit radius is still the build's (covering included, solver/drawn.py): not
        #: set by a build override nor retuned since (ChainTuning.set_overrides keeps these).
        self._hit_as_built = (np.ones(len(segment_nodes), bool) if tuning is None or tuning.hit_fixed is None
                              else ~tuning.hit_fixed)
        #: {section key: named views} of every section of the packed buffers (solver.layout).
        self.sections: dict[str, L.Block] = L.all_views(F, I)
        #: Segment state views: ``tails``, ``velocities``, ``prev_tails`` (S, 3), world.
        self.state: L.Block = self.sections["state"]
        #: Segment parameter views: ``k``, ``c``, ``damp``, ``gravity``, ``gravity_preload``,
        #: ``hit_radius``, ``vrm_stiffness``, ``vrm_drag``, ``vrm_gravity`` (see the class doc).
        self.params: L.Block = self.sections["params"]
        #: Segment rest-constant views: ``rest_offset``, ``length``, ``tail_local``, ``rel_frame``.
        self.rest: L.Block = self.sections["rest"]
        #: Segment scratch views: ``root``, ``length``, ``unresolved``, ``not_converged``, ``frame``.
        self.scratch: L.Block = self.sections["scratch"]
        self._segi = self.sections["segment_ints"].array
        self._col = self.sections["colliders"]
        self._pose = self.sections["pose"]
        self._g = self.sections["globals"]
        self._no_q = np.zeros((0, 4))
        self._step = K.step_kernel

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_avatar(cls, avatar: Avatar, options: BuildOptions | None = None, *,
                    state_from: ChainSet | None = None, **fields) -> ChainSet:
        """Pack the avatar's springs and colliders (:func:`solver.build.pack_avatar`); the
        state starts at rest (rest pose), or is taken over from ``state_from`` (see
        :meth:`copy_state_from`: a solver switch mid-motion then continues from where the
        hair is instead of snapping to rest).

        ``options`` are the build options (:class:`solver.build_options.BuildOptions`,
        default: its defaults); ``fields`` replace some of them (``from_avatar(avatar,
        solver="vrm")`` is ``from_avatar(avatar, BuildOptions(solver="vrm"))``).

        Raises:
            SolverOptionError: an unknown solver/torso option or a value out of range;
            ChainBuildError: chains the solver cannot build or order;
            HairParamsError: an override that is not stable at the substep;
            StateTransferError: a ``state_from`` built for another skeleton (all ValueErrors).
            TypeError: a field BuildOptions does not have.
        """
        options = options if options is not None else BuildOptions()
        if fields:
            options = dataclasses.replace(options, **fields)
        packed = pack_avatar(avatar, options)
        cs = cls(packed.F, packed.I, mode=packed.mode, node_count=packed.node_count,
                 segment_nodes=packed.segment_nodes, segment_chain=packed.segment_chain,
                 chain_names=packed.chain_names, chain_anchor=packed.chain_anchor,
                 rest_lengths=packed.rest_lengths, report=packed.report, fast_eligible=packed.fast_eligible,
                 tuning=packed.tuning)
        cs._avatar = avatar            # what solver.limits.repack re-resolves limits from
        cs._rest_tails = packed.rest_tails
        cs._anchor_rest_inv = packed.anchor_rest_inv
        cs.reset(avatar.skeleton.rest_world)
        if state_from is not None:
            cs.copy_state_from(state_from)
        return cs

    # ------------------------------------------------------------------ sizes and state
    @property
    def segment_count(self) -> int:
        """S: number of simulated joints (rows of the state arrays)."""
        return int(self._I[L.H_S])

    @property
    def simulated_parents(self) -> np.ndarray:
        """(S,) segment index of each joint's nearest simulated ancestor, −1 when it hangs
        from the body."""
        return self._segi[:, L.SI_SPAR]

    @property
    def chain_count(self) -> int:
        return int(self._I[L.H_K])

    @property
    def collider_count(self) -> int:
        return int(self._I[L.H_C])

    @property
    def h(self) -> float:
        """Substep length in seconds (1/120 for the runtime)."""
        return float(self._g.h)

    @property
    def tails(self) -> np.ndarray:
        """(S, 3) tail positions x after the last substep, world metres (view; ``state.tails``)."""
        return self.state.tails

    @property
    def velocities(self) -> np.ndarray:
        """(S, 3) tail velocities v after the last substep, world m/s (view; ``state.velocities``)."""
        return self.state.velocities

    @property
    def prev_tails(self) -> np.ndarray:
        """(S, 3) tail positions one substep earlier, world metres (view; ``state.prev_tails``)."""
        return self.state.prev_tails

    @property
    def joint_frames(self) -> np.ndarray:
        """(S, 3, 4) world frames of the simulated joints computed by the last :meth:`apply`
        / :meth:`write_local_rotations` (view)."""
        return self._pose.frames

    @property
    def stiffness(self) -> np.ndarray:
        """(S,) k, 1/s² (view of ``params.k``; writable, takes effect at the next substep)."""
        return self.params.k

    @property
    def damping(self) -> np.ndarray:
        """(S,) c, 1/s (view of ``params.c``; change it with :meth:`set_params`, which also
        sets exp(−c h))."""
        return self.params.c

    @property
    def gravity(self) -> np.ndarray:
        """(S, 3) g, model m/s², avatar frame (view of ``params.gravity``; change it with
        :meth:`set_params`, which also sets the rest-shape preload)."""
        return self.params.gravity

    @property
    def hit_radii(self) -> np.ndarray:
        """(S,) hit radius of each joint's own segment, model metres (view of
        ``params.hit_radius``; change it with :meth:`set_params`, which also sets the
        contact allowances)."""
        return self.params.hit_radius

    @property
    def collider_world(self) -> np.ndarray:
        """(C, 7): world head (3), tail (3) and radius of every collider at the last substep."""
        c = self._col
        return np.concatenate([c.world_head, c.world_tail, c.world_radius[:, None]], axis=1)

    @property
    def collider_normals(self) -> np.ndarray:
        """(C, 3) world unit normals of plane colliders at the last substep (zeros otherwise)."""
        return self._col.world_normal

    @property
    def collider_shapes(self) -> np.ndarray:
        """(C,) shape codes (:data:`solver.layout.SHAPES`)."""
        return self.sections["collider_ints"].shape

    def collider_refs(self, segment: int) -> np.ndarray:
        """Collider indices tested against ``segment``'s link."""
        p0, p1 = self._segi[segment, L.SI_P0], self._segi[segment, L.SI_P1]
        return self.sections["pairs"].collider[p0:p1]

    @property
    def auto_resets(self) -> int:
        """Automatic (teleport) resets so far."""
        return int(self._I[L.H_N_AUTO_RESET])

    @property
    def steps(self) -> int:
        """Substeps performed so far (an automatic reset counts as one)."""
        return int(self._I[L.H_N_STEPS])

    @property
    def last_contacts(self) -> int:
        """Contact corrections applied in the last substep."""
        return int(self._I[L.H_N_CONTACT])

    @property
    def last_unresolved(self) -> int:
        """(link, collider) overlaps deeper than 1 µm left after the last substep's passes."""
        return int(self._I[L.H_N_UNRESOLVED])

    @property
    def last_root_inside(self) -> int:
        """(link, collider) pairs in the last substep whose root lay inside the collider
        (tested at the tail only, since a root cannot move)."""
        return int(self._I[L.H_N_ROOT_INSIDE])

    @property
    def link_count(self) -> int:
        """L: sideways links of linked sheets (:mod:`solver.sheets`)."""
        return int(self._I[L.H_L])

    @property
    def links(self) -> np.ndarray:
        """(L, 2) segment indices of the two tails of every sheet link (a view)."""
        return self.sections["sheet_link_ints"].array

    @property
    def last_caps(self) -> tuple[int, int]:
        """(stretch, squish): sheet links held at their stretch / squish cap in the last pass
        of the last substep."""
        return int(self._I[L.H_N_STRETCH_CAP]), int(self._I[L.H_N_SQUISH_CAP])

    @property
    def cap_bindings(self) -> int:
        """Sheet-link cap bindings (a link at its stretch or squish cap, per pass) so far."""
        return int(self._I[L.H_N_CAP_TOTAL])

    def set_authored(self, nodes, authored: bool = True) -> None:
        """Mark joint ``nodes`` as driven by an animation (authored motion wins): the solver
        follows their animated pose, never writes their rotation, and keeps their tails and
        velocities consistent so that simulation resumes smoothly when released.

        An authored joint's root comes from its animated frame, so it leaves the fast path
        (root = the simulated parent's tail) and its simulated parent keeps its solved frame
        for it; released joints go back."""
        nodes = set(int(n) for n in nodes)
        for i, n in enumerate(self.segment_nodes):
            if int(n) in nodes:
                self._segi[i, L.SI_AUTH] = 1 if authored else 0
        path_flags(self._segi, self._fast_eligible, self.mode == "rest-shape")

    # ------------------------------------------------------------------ per substep
    def step(self, world: np.ndarray) -> bool:
        """Advance one substep of h seconds.

        Args:
            world: (N, 4, 4) float64 C-contiguous world matrices at the substep time t_n:
                the skeleton's forward kinematics with the animated body/head and the hair
                joints at their rest local rotations (authored hair joints at their
                animated ones). Colliders and chain anchors are read from it.

        Returns:
            True when the step was replaced by an automatic reset (an anchor jumped farther
            than the teleport distance within the substep).
        """
        return self._step(world, self._F, self._I) != 0

    def step_many(self, worlds: np.ndarray) -> int:
        """Several substeps in one compiled call; ``worlds`` (n, N, 4, 4), one per substep.
        Returns the number of automatic resets among them."""
        return int(K.step_many_kernel(worlds, self._F, self._I))

    def reset(self, world: np.ndarray) -> None:
        """Teleport: every tail at rest under ``world`` (N, 4, 4), velocities zero."""
        K.reset_kernel(_writable(world), self._F, self._I)

    # ------------------------------------------------------------------ rendering
    def interpolated_tails(self, alpha: float, out: np.ndarray | None = None) -> np.ndarray:
        """(S, 3) tails between the last two substeps: prev + alpha (tails − prev), alpha in [0, 1]."""
        out = np.empty((self.segment_count, 3)) if out is None else out
        kpose.interpolate_kernel(self._F, self._I, float(alpha), out)
        return out

    def write_local_rotations(self, world: np.ndarray, out_rotations: np.ndarray, alpha: float = 1.0) -> None:
        """Local rotations (xyzw) of the simulated joints for skinning.

        Each is the rest local rotation times the shortest arc from the rest axis to the
        (interpolated) tail direction, in the joint's frame (docs/design.md §4.1).

        Args:
            world: (N, 4, 4) the frame's animated world matrices (hair at rest local
                rotations); not modified.
            out_rotations: (N, 4) local rotations; only simulated, non-authored joints are written.
            alpha: interpolation between the last two substeps (the driver's alpha).
        """
        kpose.pose_kernel(_writable(world), self._F, self._I, float(alpha), out_rotations)

    def apply(self, world: np.ndarray, alpha: float = 1.0) -> None:
        """Patch ``world`` (N, 4, 4) in place: simulated joints get their solved frames (from
        tails interpolated by ``alpha``) and every descendant follows. Simulation state is
        not modified, so rendering never changes the physics."""
        kpose.pose_kernel(world, self._F, self._I, float(alpha), self._no_q)
        kpose.apply_kernel(world, self._F, self._I)

    @property
    def local_rotations(self) -> np.ndarray:
        """(S, 4) local rotations computed by the last :meth:`apply` / :meth:`write_local_rotations`."""
        return self._pose.local_rotations

    # ------------------------------------------------------------------ measures
    def rest_arc_tails(self, world: np.ndarray) -> np.ndarray:
        """(S, 3) where every tail lies on the rest arc carried by its chain's anchor under
        ``world`` (N, 4, 4): the rest pose moved rigidly with the anchor, T = M_A · M_A⁰⁻¹.
        The tentacle measure (docs/design.md §4.5) is the distance of the tips from these points."""
        out = np.empty((self.segment_count, 3))
        for k in range(self.chain_count):
            a = int(self.chain_anchor[k])
            t = (world[a] if a >= 0 else np.eye(4)) @ self._anchor_rest_inv[k]
            rows = self.segment_chain == k
            out[rows] = self._rest_tails[rows] @ t[:3, :3].T + t[:3, 3]
        return out

    def tips(self) -> np.ndarray:
        """(K,) segment index of each chain's last segment (its tip)."""
        return self.sections["chain_ints"].end - 1

    def world_reads(self) -> np.ndarray:
        """Sorted (R,) int64 nodes whose world matrices :meth:`step` and :meth:`reset` read from
        ``world``: chain anchors, VRM centre nodes, collider nodes, the joints hanging from
        the body (their frames), and every authored joint with its simulated parent's joint.
        The runtime poses only these per substep (docs/design.md §7); the set changes with
        :meth:`set_authored`. Read from the packed buffers (:mod:`solver.layout`)."""
        I = self._I  # noqa: E741
        K, C = self.chain_count, self.collider_count
        chi = I[int(I[L.H_OI_CH]):int(I[L.H_OI_CH]) + K * L.KI].reshape(K, L.KI)
        coli = I[int(I[L.H_OI_COL]):int(I[L.H_OI_COL]) + C * L.CI].reshape(C, L.CI)
        segi = self._segi
        auth = segi[:, L.SI_AUTH] != 0
        spar = segi[:, L.SI_SPAR]
        nodes = np.concatenate([chi[:, L.KI_ANCHOR], chi[:, L.KI_CENTER], coli[:, L.CI_NODE],
                                segi[spar < 0, L.SI_NODE], segi[auth, L.SI_NODE],
                                segi[spar[auth & (spar >= 0)], L.SI_NODE]]).astype(np.int64)
        return np.unique(nodes[nodes >= 0])
