"""Parameters in place and the motion state across a solver switch: the half of
:class:`solver.chains.ChainSet` that tunes a running chain set (docs/design.md §7 "settings apart
from state"; the layout keeps parameters apart from state: solver/LAYOUT.md).

- :meth:`ChainTuning.set_params`, :meth:`ChainTuning.set_overrides`,
  :meth:`ChainTuning.set_hit_radii`: change k, c, gravity and hit radius between two
  substeps, rederiving what depends on them exactly as the build does, never touching the
  state (tails, velocities, previous tails), so the hair goes on from where it is;
  (k, c) pairs the 120 Hz step cannot keep stable are refused (:func:`solver.params.check_stable`);
- :meth:`ChainTuning.get_params`: the parameters in effect per spring;
- :meth:`ChainTuning.copy_state_from`: another chain set's motion, for a solver switch.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import layout as L
from .build import allowances_of, damping_factor, preload_of, rest_overlap_depths, rest_overlap_list
from .errors import HairParamsError, StateTransferError
from .params import Overrides, check_stable, override_for

if TYPE_CHECKING:  # pragma: no cover
    from .chains import ChainSet


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
    """``value`` as a finite float >= 0; HairParamsError naming ``who``, ``name`` and the value otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise HairParamsError(f"{who}: {name}={value!r} is not a number")
    v = float(value)
    if not math.isfinite(v):
        raise HairParamsError(f"{who}: {name}={value!r} is not finite")
    if v < 0.0:
        raise HairParamsError(f"{who}: {name}={value!r} is below 0")
    return v


def _vector(value, name: str, who: str = "set_params") -> np.ndarray:
    """``value`` as three finite floats (3,); HairParamsError naming ``who``, ``name`` and the value otherwise."""
    bad = HairParamsError(f"{who}: {name}={value!r} is not three numbers [x, y, z]")
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
        raise HairParamsError(f"{who}: {name}={value!r} is not finite")
    return g


class ChainTuning:
    """The tuning methods of :class:`solver.chains.ChainSet` (a mixin: it reads the chain
    set's buffers, views and build data; not used on its own)."""

    # ------------------------------------------------------------------ parameters in place
    def spring_segments(self, springs: str = "*") -> np.ndarray:
        """Segment indices (processing order) of the springs whose names match the fnmatch
        pattern ``springs`` (as :func:`solver.params.override_for` matches; "*" for all).

        Raises:
            HairParamsError (a ValueError): the pattern matches no spring (the message lists
                the names).
        """
        chains = [k for k, name in enumerate(self.chain_names) if fnmatch.fnmatchcase(name, springs)]
        if not chains:
            raise HairParamsError(f"springs={springs!r} matches no spring (springs: {', '.join(self.chain_names)})")
        return np.flatnonzero(np.isin(self.segment_chain, chains))

    def get_params(self, springs: str = "*") -> dict[str, SpringParams]:
        """The parameters every matching spring runs with now, per joint: {name: SpringParams}
        in chain order (for a service to echo them). ``springs`` as :meth:`spring_segments`.

        Raises:
            HairParamsError (a ValueError): the pattern matches no spring.
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
            HairParamsError (a ValueError): a value not finite, not a number, below its
                minimum, a gravity that is not three numbers, or a pattern that matches no
                spring; the message names the parameter and the value. Nothing is changed then.
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
            HairParamsError (a ValueError): not S values, or a value not finite or below 0;
                nothing is changed then.
        """
        r = np.asarray(radii, dtype=np.float64)
        if r.shape != (self.segment_count,):
            raise HairParamsError(f"set_hit_radii: {r.shape} values for {self.segment_count} segments")
        if not (np.all(np.isfinite(r)) and np.all(r >= 0.0)):
            j = int(np.flatnonzero(~(np.isfinite(r) & (r >= 0.0)))[0])
            _scalar(float(r[j]), f"hit_radius[{j}]", "set_hit_radii")
        if allowances:
            self._write_params(np.arange(self.segment_count), None, None, None, r)
        else:
            self.params.hit_radius[:] = r
            self._hit_as_built[:] = False
            self._rederive_reach(np.arange(self.segment_count))

    def set_overrides(self, overrides: Overrides) -> None:
        """Set every spring's parameters to what a build with ``overrides`` gives (the file's
        mapped values where an override leaves one unset), in place, state untouched.

        ``overrides`` as :class:`solver.build_options.BuildOptions` takes them: a
        :class:`solver.params.SpringOverride` for every spring, a mapping {fnmatch pattern:
        SpringOverride} (the first matching pattern wins), or None (the file's values).
        A joint no override gives a hit radius keeps its radius while it is still the build's
        (the covering of the drawn hair included, :mod:`solver.drawn`); one retuned since, or
        set by a build override, takes the file's radius, uncovered.

        Raises:
            HairParamsError (a ValueError): an override value that :meth:`set_params` would refuse.
        """
        t = self._tuning
        S = self.segment_count
        k, c = t.mapped_k.copy(), t.mapped_c.copy()
        g, hit = t.mapped_gravity.copy(), t.mapped_hit.copy()
        tuned = np.zeros(S, bool)
        hit_set = np.zeros(S, bool)
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
                hit_set |= rows
        rows = np.flatnonzero(tuned)
        self._check_stable(rows, k[rows], c[rows])
        # a joint whose radius is still the build's and that no override sets keeps it: the
        # build's radius is what a build with these overrides gives, covering included
        # (solver/drawn.py); the others take the file's (or the override's) radius, uncovered
        change = np.flatnonzero(hit_set | ~self._hit_as_built)
        self._write_params(np.arange(S), k, c, g, None)
        if change.size:
            self._write_params(change, None, None, None, hit[change])

    def _check_stable(self, rows, k, c) -> None:
        """HairParamsError unless every (k, c) of ``rows`` is stable at this h
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
        self._hit_as_built[rows] = False
        self._rederive_reach(rows)
        # the build's measurement on the rest pose, on copies: the live state stays as it is
        depths = rest_overlap_depths(self._F.copy(), self._I.copy(), self._tuning.rest_world)
        # a retuned radius drops the covering of the drawn hair (solver/drawn.py) on its rows
        cover = self.sections["cover"].cover
        for i in rows:
            p0, p1 = int(self._segi[i, L.SI_P0]), int(self._segi[i, L.SI_P1])
            if not self._tuning.allow_rest_overlap:
                self.sections["allowances"].allowance[p0:p1] -= cover[p0:p1]
            cover[p0:p1] = 0.0
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
            StateTransferError (a ValueError): ``other`` was built for another skeleton (node
                count or rest pose).
        """
        if other.node_count != self.node_count:
            raise StateTransferError(f"copy_state_from: the other chain set has {other.node_count} nodes, "
                             f"this one {self.node_count} (another avatar)")
        if not np.array_equal(other._tuning.rest_world, self._tuning.rest_world):
            raise StateTransferError("copy_state_from: the other chain set's skeleton has another rest pose "
                                     "(another avatar)")
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
