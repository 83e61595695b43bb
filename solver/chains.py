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
retune nor a solver switch snaps the hair to rest.

Terms. A *segment* is a simulated joint: joint i of a spring with a tail (joint i+1, or the
VRM 0.x virtual tail); VRM 1.0 last joints have no segment and follow their parent. Rows of
``tails``/``velocities`` are segments in processing order (parents first); ``segment_nodes``
names their joint nodes. A chain's *attachment* is the parent node of its first joint; its
*anchor* is the nearest non-simulated ancestor (the head for a branch chain hanging from a
simulated joint): R_H in DESIGN §4.1 is the anchor's animated rotation.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from dataclasses import dataclass

import numpy as np

from avatars import Avatar

from .kernels import step as K
from .kernels import pose as kpose
from . import layout as L
from .build import (  # noqa: F401 - re-exported build options and report
    BEND_LIMIT_DEG, BEND_PARENT_SHARE, CONTACT_PASSES, CONTACT_TOLERANCE, CONTACT_U_MIN, RELAX_PASSES,
    REST_OVERLAP_MARGIN, REST_OVERLAP_TOLERANCE, SUBSTEP_SECONDS, TELEPORT_DISTANCE, BuildReport, Packed, Tuning,
    _writable, allowances_of, damping_factor, pack_avatar, path_flags, preload_of, rest_overlap_depths,
    rest_overlap_list,
)
from .params import Overrides, check_stable, override_for


@dataclass(frozen=True)
class SpringParams:
    """The parameters one spring (chain) runs with, per joint (segment), as
    :meth:`ChainSet.get_params` reads them back. Units as :class:`solver.params.SpringOverride`.

    Attributes:
        name: the spring's name (``ChainSet.chain_names``).
        nodes: (n,) joint nodes of its segments, in processing order.
        k: (n,) stiffness, 1/s².
        c: (n,) damping rate, 1/s.
        gravity: (n,) of (x, y, z) m/s², avatar frame (+Y up), model metres.
        hit_radius: (n,) metres, model scale.
    """

    name: str
    nodes: tuple[int, ...]
    k: tuple[float, ...]
    c: tuple[float, ...]
    gravity: tuple[tuple[float, float, float], ...]
    hit_radius: tuple[float, ...]

    def as_dict(self) -> dict:
        """JSON-ready: {"name", "nodes", "k", "c", "gravity", "hit_radius"} with lists."""
        return {"name": self.name, "nodes": list(self.nodes), "k": list(self.k), "c": list(self.c),
                "gravity": [list(g) for g in self.gravity], "hit_radius": list(self.hit_radius)}


def _scalar(value, name: str, who: str = "set_params") -> float:
    """``value`` as a finite float >= 0; ValueError naming ``who``, ``name`` and the value otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{who}: {name}={value!r} is not a number")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{who}: {name}={value!r} is not finite")
    if v < 0.0:
        raise ValueError(f"{who}: {name}={value!r} is below 0")
    return v


def _vector(value, name: str, who: str = "set_params") -> np.ndarray:
    """``value`` as three finite floats (3,); ValueError naming ``who``, ``name`` and the value otherwise."""
    bad = ValueError(f"{who}: {name}={value!r} is not three numbers [x, y, z]")
    if isinstance(value, (str, bytes)):
        raise bad
    try:
        items = list(value)
    except TypeError:
        raise bad from None
    numbers = (int, float, np.integer, np.floating)
    if len(items) != 3 or any(isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers) for x in items):
        raise bad
    g = np.array([float(x) for x in items], np.float64)
    if not np.all(np.isfinite(g)):
        raise ValueError(f"{who}: {name}={value!r} is not finite")
    return g


class ChainSet:
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
    def from_avatar(cls, avatar: Avatar, *, state_from: ChainSet | None = None, **options) -> ChainSet:
        """Pack the avatar's springs and colliders; the state starts at rest (rest pose), or
        is taken over from ``state_from`` (see :meth:`copy_state_from`: a solver switch
        mid-motion then continues from where the hair is instead of snapping to rest).

        ``options`` are the keyword options of :func:`solver.build.pack_avatar` (solver
        "rest-shape" | "legacy" | "vrm", torso_capsule "auto" | "on" | "off", overrides,
        mapping, substep, gravity_preload, contact_passes, relax_passes, bend_limit_deg,
        teleport_distance, rest_overlap "allow" | "push", collisions, authored_nodes).

        Raises:
            ValueError: unknown solver/torso option, chains the solver cannot order, or a
                ``state_from`` built for another skeleton.
            TypeError: an option pack_avatar does not have.
        """
        packed = pack_avatar(avatar, **options)
        cs = cls(packed.F, packed.I, mode=packed.mode, node_count=packed.node_count,
                 segment_nodes=packed.segment_nodes, segment_chain=packed.segment_chain,
                 chain_names=packed.chain_names, chain_anchor=packed.chain_anchor,
                 rest_lengths=packed.rest_lengths, report=packed.report, fast_eligible=packed.fast_eligible,
                 tuning=packed.tuning)
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

    # ------------------------------------------------------------------ parameters in place
    def spring_segments(self, springs: str = "*") -> np.ndarray:
        """Segment indices (processing order) of the springs whose names match the fnmatch
        pattern ``springs`` (as :func:`solver.params.override_for` matches; "*" for all).

        Raises:
            ValueError: the pattern matches no spring (the message lists the names).
        """
        chains = [k for k, name in enumerate(self.chain_names) if fnmatch.fnmatchcase(name, springs)]
        if not chains:
            raise ValueError(f"springs={springs!r} matches no spring (springs: {', '.join(self.chain_names)})")
        return np.flatnonzero(np.isin(self.segment_chain, chains))

    def get_params(self, springs: str = "*") -> dict[str, SpringParams]:
        """The parameters every matching spring runs with now, per joint: {name: SpringParams}
        in chain order (for a service to echo them). ``springs`` as :meth:`spring_segments`.

        Raises:
            ValueError: the pattern matches no spring.
        """
        rows = self.spring_segments(springs)
        p = self.params
        out: dict[str, SpringParams] = {}
        for k, name in enumerate(self.chain_names):
            seg = rows[self.segment_chain[rows] == k]
            if len(seg) == 0:
                continue
            out[name] = SpringParams(
                name=name, nodes=tuple(int(n) for n in self.segment_nodes[seg]),
                k=tuple(float(x) for x in p.k[seg]), c=tuple(float(x) for x in p.c[seg]),
                gravity=tuple(tuple(float(x) for x in g) for g in p.gravity[seg]),
                hit_radius=tuple(float(x) for x in p.hit_radius[seg]))
        return out

    def set_params(self, *, k: float | None = None, c: float | None = None, gravity=None,
                   hit_radius: float | None = None, springs: str = "*") -> tuple[str, ...]:
        """Change spring parameters in place, mid-motion: the state (tails, velocities,
        previous tails) is not touched, so the hair continues from where it is.

        Args:
            k: stiffness toward the rest arc, 1/s² (>= 0).
            c: damping rate, 1/s (>= 0); exp(−c h) is rederived.
            gravity: (3,) m/s², avatar frame (+Y up), model metres; the rest-shape gravity
                preload (the across-link part of g in the rest pose) is rederived.
            hit_radius: metres, model scale (>= 0), for every joint of the matching springs;
                the chain reach and the rest-overlap contact allowances are rederived from
                the rest pose on a scratch copy of the buffers. Which chains get the fitted
                torso capsule stays as built.
            springs: fnmatch pattern over the spring (chain) names; every joint of every
                matching spring gets the values. None keeps a parameter.

        Same units and derivations as :class:`solver.params.SpringOverride` at build: setting
        the values a chain set was built with changes no bit of its motion; setting other
        values gives the parameters (every ``params`` field, the allowances) a build with
        those overrides has. In the "vrm" mode the Verlet reads the VRM values, so only
        ``hit_radius`` changes its motion (as with build overrides).

        Returns:
            The names of the springs changed.

        Raises:
            ValueError: a value not finite, not a number, below its minimum, a gravity that
                is not three numbers, or a pattern that matches no spring; the message names
                the parameter and the value. Nothing is changed then.
        """
        kv = None if k is None else _scalar(k, "k")
        cv = None if c is None else _scalar(c, "c")
        gv = None if gravity is None else _vector(gravity, "gravity")
        hv = None if hit_radius is None else _scalar(hit_radius, "hit_radius")
        rows = self.spring_segments(springs)
        n = len(rows)
        if kv is not None or cv is not None:
            self._check_stable(rows, self.params.k[rows] if kv is None else np.full(n, kv),
                               self.params.c[rows] if cv is None else np.full(n, cv))
        self._write_params(rows, None if kv is None else np.full(n, kv), None if cv is None else np.full(n, cv),
                           None if gv is None else np.tile(gv, (n, 1)), None if hv is None else np.full(n, hv))
        return tuple(self.chain_names[k_] for k_ in np.unique(self.segment_chain[rows]))

    def set_hit_radii(self, radii, *, allowances: bool = True) -> None:
        """Set every segment's hit radius (metres, model scale), per segment: ``radii`` (S,)
        in processing order (:attr:`segment_nodes`). The chain reach is rederived, and with
        ``allowances`` the rest-overlap allowances too (as :meth:`set_params` does: a
        measurement on the rest pose, ~0.1-1 ms); without, the allowances of the last
        radii stay (cheap: the runtime raises a radius over a few substeps with it, so hair
        already in contact is eased out instead of pushed out in one substep, and rederives
        the allowances at the last step). The state is not touched.

        Raises:
            ValueError: not S values, or a value not finite or below 0; nothing is changed then.
        """
        r = np.asarray(radii, dtype=np.float64)
        if r.shape != (self.segment_count,):
            raise ValueError(f"set_hit_radii: {r.shape} values for {self.segment_count} segments")
        if not (np.all(np.isfinite(r)) and np.all(r >= 0.0)):
            j = int(np.flatnonzero(~(np.isfinite(r) & (r >= 0.0)))[0])
            _scalar(float(r[j]), f"hit_radius[{j}]", "set_hit_radii")
        if allowances:
            self._write_params(np.arange(self.segment_count), None, None, None, r)
        else:
            self.params.hit_radius[:] = r
            self._rederive_reach(np.arange(self.segment_count))

    def set_overrides(self, overrides: Overrides) -> None:
        """Set every spring's parameters to what a build with ``overrides`` gives (the file's
        mapped values where an override leaves one unset), in place, state untouched.

        ``overrides`` as :func:`solver.build.pack_avatar` takes them: a
        :class:`solver.params.SpringOverride` for every spring, a mapping {fnmatch pattern:
        SpringOverride} (the first matching pattern wins), or None (the file's values).

        Raises:
            ValueError: an override value that :meth:`set_params` would refuse.
        """
        t = self._tuning
        S = self.segment_count
        k, c = t.mapped_k.copy(), t.mapped_c.copy()
        g, hit = t.mapped_gravity.copy(), t.mapped_hit.copy()
        tuned = np.zeros(S, bool)
        for kc, name in enumerate(self.chain_names):
            ov = override_for(overrides, name)
            if ov is None:
                continue
            rows = self.segment_chain == kc
            tuned |= rows & (ov.k is not None or ov.c is not None)
            where = f"override {name!r}"
            if ov.k is not None:
                k[rows] = _scalar(ov.k, f"{where}.k", "set_overrides")
            if ov.c is not None:
                c[rows] = _scalar(ov.c, f"{where}.c", "set_overrides")
            if ov.g is not None:
                g[rows] = _vector(ov.g, f"{where}.g", "set_overrides")
            if ov.hit_radius is not None:
                hit[rows] = _scalar(ov.hit_radius, f"{where}.hit_radius", "set_overrides")
        rows = np.flatnonzero(tuned)
        self._check_stable(rows, k[rows], c[rows])
        self._write_params(np.arange(S), k, c, g, hit)

    def _check_stable(self, rows, k, c) -> None:
        """ValueError unless every (k, c) of ``rows`` is stable at this h
        (:func:`solver.params.check_stable`); the "vrm" mode does not read k and c."""
        if self.mode == "vrm":
            return
        for j, i in enumerate(rows):
            check_stable(f"spring {self.chain_names[self.segment_chain[i]]!r} joint node {int(self.segment_nodes[i])}",
                         float(k[j]), float(c[j]), self.h)

    def _write_params(self, rows, k, c, g, hit) -> None:
        """Write (validated) per-row values into the parameter section and rederive what
        depends on them, exactly as the build does (one expression each: damping_factor,
        preload_of, the reach sum, rest_overlap_depths)."""
        p = self.params
        t = self._tuning
        h = self.h
        for j, i in enumerate(rows):
            if k is not None:
                p.k[i] = float(k[j])
            if c is not None:
                cj = float(c[j])
                p.c[i] = cj
                p.damp[i] = damping_factor(cj, h)
            if g is not None:
                gj = np.asarray(g[j], np.float64)
                p.gravity[i] = gj
                if t.gravity_preload:
                    p.gravity_preload[i] = preload_of(gj, t.rest_dirs[i], t.anchor_rest_inv3[self.segment_chain[i]])
            if hit is not None:
                p.hit_radius[i] = float(hit[j])
        if hit is not None:
            self._rederive_hit(rows)

    def _rederive_reach(self, rows) -> None:
        """Chain reach (the broad phase's) after hit radii changed (``rows``)."""
        chains = self.sections["chains"]
        for kc in np.unique(self.segment_chain[rows]):
            reach, max_hit = 0.0, 0.0
            for i in np.flatnonzero(self.segment_chain == kc):
                reach += float(self.rest_lengths[i])
                max_hit = max(max_hit, float(self.params.hit_radius[i]))
            chains.reach[kc] = reach + max_hit

    def _rederive_hit(self, rows) -> None:
        """Chain reach and rest-overlap allowances after hit radii changed (``rows``)."""
        self._rederive_reach(rows)
        # the build's measurement on the rest pose, on copies: the live state stays as it is
        depths = rest_overlap_depths(self._F.copy(), self._I.copy(), self._tuning.rest_world)
        if self._tuning.allow_rest_overlap:
            allow = self.sections["allowances"].allowance
            new = allowances_of(depths)
            for i in rows:
                p0, p1 = int(self._segi[i, L.SI_P0]), int(self._segi[i, L.SI_P1])
                allow[p0:p1] = new[p0:p1]
        self.report = dataclasses.replace(self.report, rest_overlaps=rest_overlap_list(
            depths, self._I, self.chain_names, self.segment_chain, self.segment_nodes))

    def set_damping(self, c: np.ndarray | float) -> None:
        """Set c (1/s) for every segment (scalar or (S,)); recomputes exp(−c h). Kept for
        callers of the old API; :meth:`set_params` validates and matches springs by name."""
        cc = np.broadcast_to(np.asarray(c, np.float64), (self.segment_count,))
        for x in cc:
            _scalar(float(x), "c", "set_damping")
        self._write_params(np.arange(self.segment_count), None, cc, None, None)

    # ------------------------------------------------------------------ state across a switch
    def copy_state_from(self, other: ChainSet, *, world: np.ndarray | None = None) -> int:
        """Take over the motion state of ``other`` (a chain set of the same avatar, any
        solver): for every segment whose joint node ``other`` also simulates, its tail,
        velocity and previous tail (the :attr:`state` section: the same in every solver —
        the "vrm" Verlet reads the previous tail as its history, the others the velocity);
        for every chain of the same name, anchor and centre, the chain state (previous anchor
        position for the teleport test, previous centre-node matrix, scale). Parameters,
        rest constants, authored flags and counters stay this chain set's own.

        Args:
            other: the chain set to copy from (not modified).
            world: (N, 4, 4) the current world matrices; when given, every tail is first put
                at rest under it (:meth:`reset`), so that segments ``other`` does not have
                start from the current pose instead of the last one.

        Returns:
            The number of segments taken over.

        Raises:
            ValueError: ``other`` was built for another skeleton (node count or rest pose).
        """
        if other.node_count != self.node_count:
            raise ValueError(f"copy_state_from: the other chain set has {other.node_count} nodes, "
                             f"this one {self.node_count} (another avatar)")
        if not np.array_equal(other._tuning.rest_world, self._tuning.rest_world):
            raise ValueError("copy_state_from: the other chain set's skeleton has another rest pose (another avatar)")
        if world is not None:
            self.reset(world)
        index = {int(n): i for i, n in enumerate(other.segment_nodes)}
        mine = np.array([i for i, n in enumerate(self.segment_nodes) if int(n) in index], np.int64)
        theirs = np.array([index[int(self.segment_nodes[i])] for i in mine], np.int64)
        for f in L.SEG_STATE.fields:
            getattr(self.state, f.attr)[mine] = getattr(other.state, f.attr)[theirs]
        ci_mine, ci_theirs = self.sections["chain_ints"], other.sections["chain_ints"]
        chains = {name: k for k, name in enumerate(other.chain_names)}
        for k, name in enumerate(self.chain_names):
            j = chains.get(name)
            if j is None or ci_mine.anchor[k] != ci_theirs.anchor[j] or ci_mine.center[k] != ci_theirs.center[j]:
                continue
            for attr in L.CHAIN_STATE:
                getattr(self.sections["chains"], attr)[k] = getattr(other.sections["chains"], attr)[j]
        return len(mine)

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
        return self._pose.local_rotations

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
        return self.sections["chain_ints"].end - 1

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
