"""The chain set: every spring chain of an avatar packed into flat arrays, and its solver.

:meth:`ChainSet.from_avatar` walks the avatar's springs once (avatars/ data, rest pose) and
packs, for all chains at once (struct of arrays, :mod:`solver.layout`): tails x, velocities
v, previous tails, rest offsets a_i (in the joint frame and in the anchor frame, i.e. R_i^0
a_i), rest lengths, per-joint k, c, g, hit radii, links to simulated parents, each chain's
anchor (the frame its rest arc is carried by) and the colliders. Every substep is then one
compiled call (:func:`solver.kernels.step.step_kernel`) that reads the animated world matrices.

Terms. A *segment* is a simulated joint: joint i of a spring with a tail (joint i+1, or the
VRM 0.x virtual tail); VRM 1.0 last joints have no segment and follow their parent. Rows of
``tails``/``velocities`` are segments in processing order (parents first); ``segment_nodes``
names their joint nodes. A chain's *attachment* is the parent node of its first joint; its
*anchor* is the nearest non-simulated ancestor (the head for a branch chain hanging from a
simulated joint): R_H in DESIGN §4.1 is the anchor's animated rotation.
"""

from __future__ import annotations

import numpy as np

from avatars import Avatar

from .kernels import step as K
from .kernels import pose as kpose
from . import layout as L
from .build import (  # noqa: F401 - re-exported build options and report
    BEND_LIMIT_DEG, BEND_PARENT_SHARE, CONTACT_PASSES, CONTACT_TOLERANCE, CONTACT_U_MIN, RELAX_PASSES,
    REST_OVERLAP_MARGIN, REST_OVERLAP_TOLERANCE, SUBSTEP_SECONDS, TELEPORT_DISTANCE, BuildReport, Packed, _writable,
    pack_avatar, path_flags,
)


class ChainSet:
    """All hair chains of one avatar with their solver state (see module doc).

    Build with :meth:`from_avatar`. Per substep the runtime does forward kinematics of the
    whole skeleton at the substep time t_n (head/neck animated, hair joints at their rest
    local rotations) and calls :meth:`step` with those world matrices; for drawing it calls
    :meth:`apply` (patch world matrices) or :meth:`write_local_rotations` with the
    interpolation alpha of the fixed-step driver.

    State arrays (views into the packed buffer; S = :attr:`segment_count`, world metres):
    :attr:`tails` (S, 3), :attr:`velocities` (S, 3) m/s, :attr:`prev_tails` (S, 3).
    """

    def __init__(self, F: np.ndarray, I: np.ndarray, *, mode: str, node_count: int,  # noqa: E741
                 segment_nodes: np.ndarray, segment_chain: np.ndarray, chain_names: tuple[str, ...],
                 chain_anchor: np.ndarray, rest_lengths: np.ndarray, report: BuildReport,
                 fast_eligible: np.ndarray):
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
        S = self.segment_count
        C = int(I[L.H_C])
        Kc = int(I[L.H_K])
        of = int(I[L.H_OF_SEG])
        self._seg = F[of:of + S * L.SF].reshape(S, L.SF)
        ofc = int(I[L.H_OF_COL])
        self._col = F[ofc:ofc + C * L.CF].reshape(C, L.CF)
        ofk = int(I[L.H_OF_CH])
        self._ch = F[ofk:ofk + Kc * L.KF].reshape(Kc, L.KF)
        ofp = int(I[L.H_OF_POSE])
        self._pose = F[ofp:ofp + S * L.PF].reshape(S, L.PF)
        oi = int(I[L.H_OI_SEG])
        self._segi = I[oi:oi + S * L.SI].reshape(S, L.SI)
        self._g = F[int(I[L.H_OF_G]):int(I[L.H_OF_G]) + L.GF]
        self._no_q = np.zeros((0, 4))
        self._step = K.step_kernel

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_avatar(cls, avatar: Avatar, **options) -> ChainSet:
        """Pack the avatar's springs and colliders; the state starts at rest (rest pose).

        ``options`` are the keyword options of :func:`solver.build.pack_avatar` (solver
        "rest-shape" | "legacy" | "vrm", torso_capsule "auto" | "on" | "off", overrides,
        mapping, substep, gravity_preload, contact_passes, relax_passes, bend_limit_deg,
        teleport_distance, rest_overlap "allow" | "push", collisions, authored_nodes).

        Raises:
            ValueError: unknown solver/torso option, or chains the solver cannot order.
            TypeError: an option pack_avatar does not have.
        """
        packed = pack_avatar(avatar, **options)
        cs = cls(packed.F, packed.I, mode=packed.mode, node_count=packed.node_count,
                 segment_nodes=packed.segment_nodes, segment_chain=packed.segment_chain,
                 chain_names=packed.chain_names, chain_anchor=packed.chain_anchor,
                 rest_lengths=packed.rest_lengths, report=packed.report, fast_eligible=packed.fast_eligible)
        cs._rest_tails = packed.rest_tails
        cs._anchor_rest_inv = packed.anchor_rest_inv
        cs.reset(avatar.skeleton.rest_world)
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
        return float(self._g[L.G_H])

    @property
    def tails(self) -> np.ndarray:
        """(S, 3) tail positions x after the last substep, world metres (view)."""
        return self._seg[:, L.S_X:L.S_X + 3]

    @property
    def velocities(self) -> np.ndarray:
        """(S, 3) tail velocities v after the last substep, world m/s (view)."""
        return self._seg[:, L.S_V:L.S_V + 3]

    @property
    def prev_tails(self) -> np.ndarray:
        """(S, 3) tail positions one substep earlier, world metres (view)."""
        return self._seg[:, L.S_XP:L.S_XP + 3]

    @property
    def joint_frames(self) -> np.ndarray:
        """(S, 3, 4) world frames of the simulated joints computed by the last :meth:`apply`
        / :meth:`write_local_rotations` (view)."""
        return self._pose[:, L.P_W:L.P_W + 12].reshape(self.segment_count, 3, 4)

    @property
    def stiffness(self) -> np.ndarray:
        """(S,) k, 1/s² (view; writable, takes effect at the next substep)."""
        return self._seg[:, L.S_K]

    @property
    def damping(self) -> np.ndarray:
        """(S,) c, 1/s (view; use :meth:`set_damping` to change it)."""
        return self._seg[:, L.S_C]

    @property
    def gravity(self) -> np.ndarray:
        """(S, 3) g, model m/s² (view)."""
        return self._seg[:, L.S_G:L.S_G + 3]

    @property
    def hit_radii(self) -> np.ndarray:
        """(S,) hit radius of each joint's own segment, model metres (view)."""
        return self._seg[:, L.S_HIT]

    @property
    def collider_world(self) -> np.ndarray:
        """(C, 7): world head (3), tail (3) and radius of every collider at the last substep."""
        c = self._col
        return np.concatenate([c[:, L.C_WA:L.C_WA + 3], c[:, L.C_WB:L.C_WB + 3], c[:, L.C_WR:L.C_WR + 1]], axis=1)

    @property
    def collider_normals(self) -> np.ndarray:
        """(C, 3) world unit normals of plane colliders at the last substep (zeros otherwise)."""
        return self._col[:, L.C_WN:L.C_WN + 3]

    @property
    def collider_shapes(self) -> np.ndarray:
        """(C,) shape codes (:data:`solver.layout.SHAPES`)."""
        ofc = int(self._I[L.H_OI_COL])
        return self._I[ofc:ofc + self.collider_count * L.CI].reshape(-1, L.CI)[:, L.CI_SHAPE]

    def collider_refs(self, segment: int) -> np.ndarray:
        """Collider indices tested against ``segment``'s link."""
        p0, p1 = self._segi[segment, L.SI_P0], self._segi[segment, L.SI_P1]
        op = int(self._I[L.H_OI_PAIR])
        return self._I[op + p0:op + p1]

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

    def set_damping(self, c: np.ndarray | float) -> None:
        """Set c (1/s) for every segment (scalar or (S,)); recomputes exp(−c h)."""
        self._seg[:, L.S_C] = c
        self._seg[:, L.S_DAMP] = np.exp(-self._seg[:, L.S_C] * self.h)

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
        (interpolated) tail direction, in the joint's frame (DESIGN §4.1).

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
        return self._pose[:, L.P_Q:L.P_Q + 4]

    # ------------------------------------------------------------------ measures
    def rest_arc_tails(self, world: np.ndarray) -> np.ndarray:
        """(S, 3) where every tail lies on the rest arc carried by its chain's anchor under
        ``world`` (N, 4, 4): the rest pose moved rigidly with the anchor, T = M_A · M_A⁰⁻¹.
        The tentacle measure (DESIGN §4.5) is the distance of the tips from these points."""
        out = np.empty((self.segment_count, 3))
        for k in range(self.chain_count):
            a = int(self.chain_anchor[k])
            t = (world[a] if a >= 0 else np.eye(4)) @ self._anchor_rest_inv[k]
            rows = self.segment_chain == k
            out[rows] = self._rest_tails[rows] @ t[:3, :3].T + t[:3, 3]
        return out

    def tips(self) -> np.ndarray:
        """(K,) segment index of each chain's last segment (its tip)."""
        chi = self._I[int(self._I[L.H_OI_CH]):int(self._I[L.H_OI_CH]) + self.chain_count * L.KI]
        return chi.reshape(-1, L.KI)[:, L.KI_SEG1] - 1

    def world_reads(self) -> np.ndarray:
        """Sorted (R,) int64 nodes whose world matrices :meth:`step` and :meth:`reset` read from
        ``world``: chain anchors, VRM centre nodes, collider nodes, the joints hanging from
        the body (their frames), and every authored joint with its simulated parent's joint.
        The runtime poses only these per substep (DESIGN §7); the set changes with
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
