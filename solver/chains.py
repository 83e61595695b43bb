"""The chain set: every spring chain of an avatar packed into flat arrays, and its solver.

:meth:`ChainSet.from_avatar` walks the avatar's springs once (avatars/ data, rest pose) and
packs, for all chains at once (struct of arrays, :mod:`solver.layout`): tails x, velocities
v, previous tails, rest offsets a_i (in the joint frame and in the anchor frame, i.e. R_i^0
a_i), rest lengths, per-joint k, c, g, hit radii, links to simulated parents, each chain's
anchor (the frame its rest arc is carried by) and the colliders. Every substep is then one
compiled call (:func:`solver.kernels.step_kernel`) that reads the animated world matrices.

Terms. A *segment* is a simulated joint: joint i of a spring with a tail (joint i+1, or the
VRM 0.x virtual tail); VRM 1.0 last joints have no segment and follow their parent. Rows of
``tails``/``velocities`` are segments in processing order (parents first); ``segment_nodes``
names their joint nodes. A chain's *attachment* is the parent node of its first joint; its
*anchor* is the nearest non-simulated ancestor (the head for a branch chain hanging from a
simulated joint): R_H in DESIGN §4.1 is the anchor's animated rotation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from avatars import Avatar, Collider

from . import kernels as K
from . import layout as L
from .colliders import collider_world, fit_torso_capsule, point_segment_distance
from .params import DEFAULT_MAPPING, Overrides, VrmMapping, override_for

log = logging.getLogger(__name__)

#: The runtime's substep: DESIGN §2, 1/120 s exactly.
SUBSTEP_SECONDS = 1.0 / 120.0
#: Automatic reset when a chain's anchor moves farther than this in one substep (model metres:
#: 0.5 m in 1/120 s is 60 m/s, a teleport, not a head movement).
TELEPORT_DISTANCE = 0.5
#: Contact projection passes per substep (stops early when a pass moves nothing; a link
#: squeezed between two colliders can need ~10).
CONTACT_PASSES = 16
#: Overlap below this counts as resolved in the diagnostics counter (metres).
CONTACT_TOLERANCE = 1e-6
#: Smallest lever parameter u when a segment contact is turned into a tail push.
CONTACT_U_MIN = 0.05
#: Links sampled against the fitted torso capsule must clear it by this much at rest (metres).
REST_OVERLAP_TOLERANCE = 1e-6
#: Added to a rest-pose overlap when it becomes a contact allowance, so that floating-point
#: round-off never turns the authored rest pose into a contact (metres).
REST_OVERLAP_MARGIN = 1e-6


@dataclass(frozen=True)
class BuildReport:
    """What :meth:`ChainSet.from_avatar` built and decided.

    Attributes:
        chains: chain names in processing order.
        segments: number of simulated joints.
        colliders: number of colliders (including a fitted torso capsule).
        collider_refs: number of (segment, collider) references checked each substep.
        torso: the torso-capsule decision, human readable.
        torso_chains: names of the chains that collide with the fitted torso capsule.
        rest_overlaps: (chain, joint node, collider index, depth m) links overlapping a
            collider in the authored rest pose. With ``rest_overlap="allow"`` that depth is
            allowed for the pair (the rest pose stays an equilibrium; contact still stops the
            link from going deeper); with "push" (and in "vrm" mode) the hair is pushed out.
        notes: other remarks (skipped chains, authored joints...).
    """

    chains: tuple[str, ...]
    segments: int
    colliders: int
    collider_refs: int
    torso: str
    torso_chains: tuple[str, ...] = ()
    rest_overlaps: tuple[tuple[str, int, int, float], ...] = ()
    notes: tuple[str, ...] = field(default=())


def _affine34(m: np.ndarray) -> np.ndarray:
    return np.asarray(m, np.float64)[:3, :4].reshape(12)


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
                 chain_anchor: np.ndarray, rest_lengths: np.ndarray, report: BuildReport):
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
    def from_avatar(
        cls,
        avatar: Avatar,
        *,
        solver: str = "rest-shape",
        torso_capsule: str = "auto",
        overrides: Overrides = None,
        mapping: VrmMapping = DEFAULT_MAPPING,
        substep: float = SUBSTEP_SECONDS,
        gravity_preload: bool = True,
        contact_passes: int = CONTACT_PASSES,
        teleport_distance: float = TELEPORT_DISTANCE,
        rest_overlap: str = "allow",
        collisions: bool = True,
        authored_nodes=(),
    ) -> ChainSet:
        """Pack the avatar's springs and colliders; the state starts at rest (rest pose).

        Args:
            avatar: a loaded avatar (faces +Z, +Y up, metres).
            solver: "rest-shape" (DESIGN §4.1, default), "legacy" (§4.2, parent-relative
                restoring direction, for comparison) or "vrm" (the three-vrm/UniVRM Verlet,
                one step per substep).
            torso_capsule: "auto" (fit one when the avatar's colliders leave the torso
                uncovered), "on" (always when it can be fitted) or "off".
            overrides: per-spring replacements of the mapped (k, c, g, hit radius), see
                :func:`solver.params.override_for`.
            mapping: VRM parameters -> (k, c, g) (DESIGN §4.3); the calibrated default.
            substep: h in seconds. The runtime keeps 1/120; other values serve the
                frame-rate-dependent VRM reference (e.g. "vrm" stepped once per 60 fps frame).
            gravity_preload: rest-shape only: balance the across-link part of gravity in the
                rest pose by a constant force carried by the anchor frame, so the authored
                rest arc is the equilibrium of a still head (gravity acts on head tilts).
            contact_passes: contact projection passes per substep.
            teleport_distance: automatic reset when an anchor jumps farther than this
                (model metres, times the avatar scale) within one substep.
            rest_overlap: "allow" (a link overlapping a collider in the authored rest pose
                may keep that overlap, so a still head leaves the hair at rest) or "push"
                (pushed out like three-vrm does). "vrm" mode always pushes.
            collisions: False drops every collider reference (dynamics-only runs).
            authored_nodes: joint nodes driven by an animation (see :meth:`set_authored`).

        Raises:
            ValueError: unknown solver/torso option, or chains the solver cannot order.
        """
        if solver not in L.MODES:
            raise ValueError(f"unknown solver {solver!r}; expected one of {sorted(L.MODES)}")
        if rest_overlap not in ("allow", "push"):
            raise ValueError(f"rest_overlap must be 'allow' or 'push', not {rest_overlap!r}")
        if torso_capsule not in ("auto", "on", "off"):
            raise ValueError(f"torso_capsule must be 'auto', 'on' or 'off', not {torso_capsule!r}")
        sk = avatar.skeleton
        rest = sk.rest_world
        notes: list[str] = []

        # ---- segments per spring
        sim_nodes: dict[int, str] = {}
        springs = []
        for spring in avatar.springs:
            nodes = [j.node for j in spring.joints]
            dup = [n for n in nodes if n in sim_nodes]
            if dup:
                notes.append(f"spring {spring.name!r}: node {dup[0]} already simulated by "
                             f"{sim_nodes[dup[0]]!r}; skipped")
                continue
            segs = []
            for i, joint in enumerate(spring.joints):
                if i + 1 < len(spring.joints):
                    child = spring.joints[i + 1].node
                    tloc = (np.linalg.inv(rest[joint.node]) @ rest[child])[:3, 3]
                elif spring.tail_offset is not None:
                    tloc = np.asarray(spring.tail_offset, np.float64)
                else:
                    continue
                segs.append((joint, tloc))
            if not segs:
                continue
            for joint, _ in segs:
                sim_nodes[joint.node] = spring.name
            springs.append((spring, segs))

        def depth(n: int) -> int:
            d = 0
            while sk.parents[n] >= 0:
                n = int(sk.parents[n])
                d += 1
            return d

        # chains whose first joint hangs from another chain's joint come after it
        springs.sort(key=lambda item: depth(item[1][0][0].node))

        # ---- colliders (+ torso capsule)
        colliders: list[Collider] = list(avatar.colliders)
        torso_idx = -1
        torso_text = "off"
        if torso_capsule != "off":
            fit = fit_torso_capsule(avatar)
            torso_text = fit.reason
            if fit.collider is not None and (torso_capsule == "on" or not fit.covered):
                torso_idx = len(colliders)
                colliders.append(fit.collider)
                torso_text += "; torso capsule added"
            elif fit.collider is not None:
                torso_text += "; torso capsule off"
            log.info("torso: %s", torso_text)
        col_world = [collider_world(c, rest) for c in colliders]

        # ---- per-segment data
        seg_rows, segi_rows, pose_rows, pairs = [], [], [], []
        chain_rows, chaini_rows, chain_names, chain_anchor = [], [], [], []
        seg_nodes, seg_chain, rest_lengths, seg_tail_node = [], [], [], []
        node_to_seg: dict[int, int] = {}
        torso_chains, rest_overlaps = [], []
        mode = L.MODES[solver]
        authored = set(int(n) for n in authored_nodes)
        for spring, segs in springs:
            kc = len(chain_names)
            first = segs[0][0].node
            anchor = int(sk.parents[first])
            while anchor >= 0 and anchor in sim_nodes:
                anchor = int(sk.parents[anchor])
            a_world = rest[anchor] if anchor >= 0 else np.eye(4)
            a_inv3 = np.linalg.inv(a_world[:3, :3])
            ov = override_for(overrides, spring.name)
            refs = sorted({ci for g in spring.collider_groups for ci in avatar.collider_groups[g].colliders})
            if not collisions:
                refs = []
            seg0 = len(seg_rows)
            reach = 0.0
            max_hit = 0.0
            chain_links = []
            for jj, (joint, tloc) in enumerate(segs):
                n = joint.node
                tail_node = spring.joints[jj + 1].node if jj + 1 < len(spring.joints) else -1
                m = rest[n]
                head = m[:3, 3]
                tail = m[:3, :3] @ tloc + head
                link = tail - head
                length = float(np.linalg.norm(link))
                if length < 1e-9:
                    raise ValueError(f"spring {spring.name!r}: joint node {n} has a zero-length link")
                d0 = link / length
                # nearest simulated ancestor
                sp_node = int(sk.parents[n])
                while sp_node >= 0 and sp_node not in node_to_seg:
                    if sp_node in sim_nodes:
                        raise ValueError(f"spring {spring.name!r}: joint node {n} hangs from simulated node "
                                         f"{sp_node} that is processed later (interleaved chains)")
                    sp_node = int(sk.parents[sp_node])
                sp = node_to_seg.get(sp_node, -1)
                k, c, gvec = mapping.kcg(joint, length)
                hit = joint.hit_radius * abs(np.linalg.det(m[:3, :3])) ** (1.0 / 3.0)
                if ov is not None:
                    k = k if ov.k is None else float(ov.k)
                    c = c if ov.c is None else float(ov.c)
                    gvec = gvec if ov.g is None else np.asarray(ov.g, np.float64)
                    hit = hit if ov.hit_radius is None else float(ov.hit_radius)
                row = np.zeros(L.SF)
                row[L.S_X:L.S_X + 3] = tail
                row[L.S_XP:L.S_XP + 3] = tail
                row[L.S_TLOC:L.S_TLOC + 3] = tloc
                row[L.S_B:L.S_B + 3] = a_inv3 @ link
                if mode == L.MODE_REST_SHAPE and gravity_preload:
                    g_t = gvec - (gvec @ d0) * d0
                    row[L.S_GPRE:L.S_GPRE + 3] = a_inv3 @ g_t
                row[L.S_G:L.S_G + 3] = gvec
                row[L.S_K] = k
                row[L.S_C] = c
                row[L.S_DAMP] = np.exp(-c * substep)
                row[L.S_HIT] = hit
                row[L.S_VST] = joint.stiffness
                row[L.S_VDRAG] = joint.drag_force
                row[L.S_VEXT:L.S_VEXT + 3] = joint.gravity_power * np.asarray(joint.gravity_dir, np.float64)
                row[L.S_W:L.S_W + 12] = _affine34(m)
                if sp >= 0:
                    rel = np.linalg.inv(rest[seg_nodes[sp]]) @ m
                    row[L.S_REL:L.S_REL + 12] = _affine34(rel)
                else:
                    row[L.S_REL:L.S_REL + 12] = _affine34(np.eye(4))
                irow = np.zeros(L.SI, np.int64)
                irow[L.SI_NODE] = n
                irow[L.SI_SPAR] = sp
                irow[L.SI_CHAIN] = kc
                irow[L.SI_AUTH] = 1 if n in authored else 0
                # the joint sits at its simulated parent's tail (the spring's next joint)
                tail_child = sp >= 0 and seg_tail_node[sp] == n
                irow[L.SI_FAST] = 1 if (mode == L.MODE_REST_SHAPE and tail_child and n not in authored) else 0
                irow[L.SI_NEEDW] = 0 if mode == L.MODE_REST_SHAPE else 1
                if sp >= 0 and not irow[L.SI_FAST]:
                    segi_rows[sp][L.SI_NEEDW] = 1
                row[L.S_L0] = length
                prow = np.zeros(L.PF)
                prow[L.P_RQ:L.P_RQ + 4] = sk.rest_rotation[n]
                prow[L.P_Q:L.P_Q + 4] = sk.rest_rotation[n]
                prow[L.P_W:L.P_W + 12] = _affine34(m)
                refs_here = list(refs)
                chain_links.append((head, tail, hit, len(seg_rows)))
                node_to_seg[n] = len(seg_rows)
                seg_rows.append(row)
                segi_rows.append(irow)
                pose_rows.append(prow)
                pairs.append(refs_here)
                seg_nodes.append(n)
                seg_tail_node.append(tail_node)
                seg_chain.append(kc)
                rest_lengths.append(length)
                reach += length
                max_hit = max(max_hit, hit)
            # torso capsule: chains that can reach it and do not lie in it at rest
            if torso_idx >= 0 and collisions:
                ta, tb, tr = col_world[torso_idx]
                root = chain_links[0][0]
                can_reach = point_segment_distance(root, ta, tb) <= reach + tr + max_hit
                overlaps = any(_link_overlap(h0, t0, hr, ta, tb, tr) for h0, t0, hr, _ in chain_links)
                if can_reach and not overlaps:
                    torso_chains.append(spring.name)
                    for *_, si in chain_links:
                        pairs[si].append(torso_idx)
                elif can_reach:
                    notes.append(f"chain {spring.name!r} lies in the fitted torso capsule at rest; "
                                 "torso capsule not used for it")
            crow = np.zeros(L.KF)
            crow[L.K_APREV:L.K_APREV + 3] = a_world[:3, 3]
            crow[L.K_CPREV:L.K_CPREV + 12] = _affine34(rest[spring.center] if spring.center >= 0 else np.eye(4))
            crow[L.K_DET0] = abs(np.linalg.det(a_world[:3, :3])) or 1.0
            crow[L.K_S] = 1.0
            crow[L.K_REACH] = reach + max_hit
            cirow = np.array([anchor, spring.center, seg0, len(seg_rows)], np.int64)
            chain_rows.append(crow)
            chaini_rows.append(cirow)
            chain_names.append(spring.name)
            chain_anchor.append(anchor)

        S = len(seg_rows)
        C = len(colliders)
        # CSR collider references
        p_flat: list[int] = []
        segi = np.array(segi_rows, np.int64).reshape(S, L.SI)
        for i, refs in enumerate(pairs):
            refs.sort()
            segi[i, L.SI_P0] = len(p_flat)
            p_flat.extend(refs)
            segi[i, L.SI_P1] = len(p_flat)
            if len(colliders) <= 63:
                segi[i, L.SI_REFMASK] = sum(1 << int(c) for c in set(refs))
        # nodes moved by the solver: simulated joints and all their descendants
        aff = []
        for n in range(sk.node_count):
            m = n
            while m >= 0 and m not in node_to_seg:
                m = int(sk.parents[m])
            if m >= 0:
                aff.append((n, node_to_seg[m]))
        # colliders
        col_rows, coli_rows = [], []
        for col in colliders:
            r = np.zeros(L.CF)
            r[L.C_OFF:L.C_OFF + 3] = col.offset
            r[L.C_TAIL:L.C_TAIL + 3] = col.offset if col.tail is None else col.tail
            r[L.C_RAD] = col.radius
            if col.normal is not None:
                r[L.C_NRM:L.C_NRM + 3] = col.normal
            col_rows.append(r)
            coli_rows.append((col.node, L.SHAPES[col.shape]))
        g = np.zeros(L.GF)
        g[L.G_H] = substep
        g[L.G_TELEPORT] = teleport_distance
        g[L.G_CONTACT_TOL] = CONTACT_TOLERANCE
        g[L.G_U_MIN] = CONTACT_U_MIN

        F, I = _pack(
            mode=mode, maxit=contact_passes,
            seg=np.array(seg_rows).reshape(S, L.SF), col=np.array(col_rows).reshape(C, L.CF),
            ch=np.array(chain_rows).reshape(len(chain_rows), L.KF), g=g,
            pose=np.array(pose_rows).reshape(S, L.PF), segi=segi,
            coli=np.array(coli_rows, np.int64).reshape(C, L.CI),
            chi=np.array(chaini_rows, np.int64).reshape(len(chaini_rows), L.KI),
            pairs=np.array(p_flat, np.int64), aff=np.array(aff, np.int64).reshape(len(aff), L.AI),
        )
        if authored:
            notes.append(f"authored joints (left to the animation): {sorted(authored & set(seg_nodes))}")
        cs_tmp_rest = _writable(rest)
        K.reset_kernel(cs_tmp_rest, F, I)
        depths = np.zeros(len(p_flat))
        K.overlap_kernel(cs_tmp_rest, F, I, depths)
        for i, refs in enumerate(pairs):
            p0 = int(segi[i, L.SI_P0])
            for j, ci in enumerate(refs):
                if depths[p0 + j] > 0.0:
                    rest_overlaps.append((chain_names[seg_chain[i]], seg_nodes[i], ci, float(depths[p0 + j])))
                    log.info("rest overlap: chain %r joint %d collider %d depth %.4f m", *rest_overlaps[-1])
        if rest_overlap == "allow" and mode != L.MODE_VRM:
            ofa = int(I[L.H_OF_PAIRF])
            F[ofa:ofa + len(p_flat)] = np.where(depths > 0.0, depths + REST_OVERLAP_MARGIN, 0.0)
        report = BuildReport(
            chains=tuple(chain_names), segments=S, colliders=C, collider_refs=len(p_flat), torso=torso_text,
            torso_chains=tuple(torso_chains), rest_overlaps=tuple(rest_overlaps), notes=tuple(notes),
        )
        cs = cls(F, I, mode=solver, node_count=sk.node_count, segment_nodes=np.array(seg_nodes, np.int64),
                 segment_chain=np.array(seg_chain, np.int64), chain_names=tuple(chain_names),
                 chain_anchor=np.array(chain_anchor, np.int64), rest_lengths=np.array(rest_lengths),
                 report=report)
        cs._rest_tails = np.array([row[L.S_X:L.S_X + 3] for row in seg_rows]).reshape(S, 3)
        cs._anchor_rest_inv = np.array([np.linalg.inv(rest[a]) if a >= 0 else np.eye(4) for a in chain_anchor])
        cs.reset(rest)
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
        velocities consistent so that simulation resumes smoothly when released."""
        nodes = set(int(n) for n in nodes)
        for i, n in enumerate(self.segment_nodes):
            if int(n) in nodes:
                self._segi[i, L.SI_AUTH] = 1 if authored else 0

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
        K.interpolate_kernel(self._F, self._I, float(alpha), out)
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
        K.pose_kernel(_writable(world), self._F, self._I, float(alpha), out_rotations)

    def apply(self, world: np.ndarray, alpha: float = 1.0) -> None:
        """Patch ``world`` (N, 4, 4) in place: simulated joints get their solved frames (from
        tails interpolated by ``alpha``) and every descendant follows. Simulation state is
        not modified, so rendering never changes the physics."""
        K.pose_kernel(world, self._F, self._I, float(alpha), self._no_q)
        K.apply_kernel(world, self._F, self._I)

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


def _writable(world: np.ndarray) -> np.ndarray:
    """``world`` as a writeable C-contiguous float64 array (copied only when it is not one),
    so the kernels see one array type and compile once."""
    if world.dtype == np.float64 and world.flags.c_contiguous and world.flags.writeable:
        return world
    return np.array(world, np.float64, order="C")


def _link_overlap(head, tail, hit, a, b, r) -> bool:
    """True when link head-tail (with hair radius ``hit``) overlaps capsule a-b of radius r
    by more than :data:`REST_OVERLAP_TOLERANCE` (sampled along the link)."""
    u = np.linspace(0.0, 1.0, 33)[:, None]
    pts = head + u * (tail - head)
    return bool((point_segment_distance(pts, a, b) < r + hit - REST_OVERLAP_TOLERANCE).any())


def _pack(*, mode, maxit, seg, col, ch, g, pose, segi, coli, chi, pairs, aff):
    """Concatenate the sections into F (float64) and I (int64) with the header of layout.py."""
    f_parts = [seg.ravel(), col.ravel(), ch.ravel(), g.ravel(), pose.ravel(), np.zeros(pairs.size),
               np.zeros(4 * col.shape[0])]
    offs = np.cumsum([0] + [p.size for p in f_parts])
    F = np.concatenate(f_parts) if offs[-1] else np.zeros(0)
    F = np.ascontiguousarray(F, np.float64)
    i_parts = [segi.ravel(), coli.ravel(), chi.ravel(), pairs.ravel(), aff.ravel(),
               np.zeros(col.shape[0] + 1, np.int64)]
    ioffs = np.cumsum([L.HDR] + [p.size for p in i_parts])
    I = np.zeros(int(ioffs[-1]), np.int64)  # noqa: E741
    for p, o in zip(i_parts, ioffs[:-1]):
        I[int(o):int(o) + p.size] = p
    I[L.H_S] = seg.shape[0]
    I[L.H_C] = col.shape[0]
    I[L.H_K] = ch.shape[0]
    I[L.H_P] = pairs.size
    I[L.H_M] = aff.shape[0]
    I[L.H_MODE] = mode
    I[L.H_MAXIT] = maxit
    (I[L.H_OF_SEG], I[L.H_OF_COL], I[L.H_OF_CH], I[L.H_OF_G], I[L.H_OF_POSE], I[L.H_OF_PAIRF],
     I[L.H_OF_CB]) = offs[:7]
    (I[L.H_OI_SEG], I[L.H_OI_COL], I[L.H_OI_CH], I[L.H_OI_PAIR], I[L.H_OI_AFF],
     I[L.H_OI_CAND]) = ioffs[:6]
    return F, I
