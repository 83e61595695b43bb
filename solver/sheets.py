"""Linked sheets at build time (numpy): which tails of neighbouring chains are joined by a
sideways link, with what rest distance, rate and caps (the substep side is
:mod:`solver.kernels.sheets`; the packed rows are the ``sheet_links`` sections of
:mod:`solver.layout`).

Where links come from:

- the try-on auto-rig's sheets (:attr:`avatars.model.Avatar.spring_links`: chains that carry
  one connected hair sheet, with their joint pairs): on by default;
- authored avatars: per spring, ``[hair.springs."Pattern"] link = true`` (or a group name,
  ``link = "inner"``; ``true`` makes the pattern itself the group): the springs of one group
  are linked to their neighbours, :func:`group_links` (nearby roots, similar rest direction);
  ``link = false`` turns a spring's links off (the try-on's too).

Per spring (:class:`LinkSetting`, the first matching pattern wins; a link takes the values
of its first spring):

- ``rate`` r, 1/s: the *sheet stiffness*: a link's error (distance minus rest distance)
  decays as e^(−r t) — a first-order pull with no overshoot, and the tails' relative
  velocity against the pull decays at the same rate (bounce-free); r = 0 is no pull (only
  the caps, which hold positions, not velocities);
- ``stretch`` and ``squish``, 1 (fractions of the rest distance): the caps, as VRChat
  PhysBones' *max stretch* / *max squish*: a link is never longer than (1 + stretch) d0 nor
  shorter than (1 − squish) d0 after its pass (a hard limit; every binding is counted,
  :attr:`solver.chains.ChainSet.cap_bindings`). The *softness* of a sheet is 1/r: the time
  constant (s) in which it takes back a deformation.

Links exist in the rest-shape solver only (its relaxation is where they are solved).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .errors import SolverOptionError

#: Sheet rate r (1/s): a link's error decays as e^(−r t) (the sheet's stiffness; softness 1/r s).
SHEET_RATE = 40.0
#: Shear rate r_s (1/s): the sideways part of a link's error (across its rest offset: the
#: neighbours swinging out of phase) decays as e^(−r_s t). A quarter of the sheet rate: as
#: stiff as the distance (r_s = r) the fitted bob's head-turn p99 stretch rose 7.33 → 9.92 %
#: (phase 69.8 → 28.2°); at r/2 8.35 % (35.2°); at r/4 7.13 % (44.4°), its Jog 9.12 → 8.20 %.
SHEAR_RATE = 10.0
#: Stretch cap: a link is at most (1 + this) times its rest distance.
MAX_STRETCH = 0.15
#: Squish cap: a link is at least (1 − this) times its rest distance.
MAX_SQUISH = 0.3
#: Sheet passes per substep (links, then lengths and contact of the chains they moved).
SHEET_PASSES = 1
#: A configured group links a chain to at most this many nearest neighbours.
GROUP_NEIGHBOURS = 2
#: ... whose root lies within this factor of the chain's nearest neighbour's root distance,
GROUP_REACH = 1.8
#: ... and whose rest direction (root to last tail) is within this angle, degrees.
GROUP_ANGLE_DEG = 45.0
SHEET_CHOICES = ("auto", "off")


@dataclass(frozen=True)
class LinkSetting:
    """A spring's sheet settings (None keeps the default).

    Attributes:
        link: None (the default: the try-on's sheet links on, none for authored springs),
            False (no links), True or a group name (link to its group's neighbours; True:
            the pattern that matched is the group).
        rate: sheet rate r, 1/s (>= 0).
        stretch: max stretch, fraction of the rest distance (>= 0).
        squish: max squish, fraction of the rest distance, 0..1.
        shear_rate: sheet shear rate r_s, 1/s (>= 0): how fast the sideways part of a link's
            error decays (module doc).
    """

    link: bool | str | None = None
    rate: float | None = None
    stretch: float | None = None
    squish: float | None = None
    shear_rate: float | None = None

    def __post_init__(self) -> None:
        for name, lo, hi in (("rate", 0.0, math.inf), ("stretch", 0.0, math.inf), ("squish", 0.0, 1.0),
                             ("shear_rate", 0.0, math.inf)):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi
                                  or math.isnan(v)):
                raise SolverOptionError(f"link setting {name} = {v!r}: expected a number in [{lo:g}, {hi:g}]")
        if self.link is not None and not isinstance(self.link, (bool, str)):
            raise SolverOptionError(f"link setting link = {self.link!r}: expected true, false or a group name")


Links = Mapping[str, LinkSetting] | None


def link_for(links: Links, name: str) -> tuple[str | None, LinkSetting]:
    """(the pattern, the :class:`LinkSetting`) of spring ``name``: the first fnmatch pattern
    of ``links`` that matches, or (None, the defaults)."""
    for pattern, setting in (links or {}).items():
        if fnmatch.fnmatchcase(name, pattern):
            return pattern, setting
    return None, LinkSetting()


@dataclass(frozen=True, eq=False)
class SheetLinks:
    """The links of a build (L of them), in solving order.

    Attributes:
        a, b: (L,) segment indices of the two tails.
        rest: (L,) rest distances, model metres.
        rate: (L,) sheet rates, 1/s; stretch, squish: (L,) caps, fractions.
        pairs: (chain a, chain b, links) per linked pair of chains, by chain index.
    """

    a: np.ndarray
    b: np.ndarray
    rest: np.ndarray
    rate: np.ndarray
    stretch: np.ndarray
    squish: np.ndarray
    pairs: tuple[tuple[int, int, int], ...]
    offset: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    shear_rate: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def count(self) -> int:
        return int(self.a.size)

    def rows(self, h: float) -> np.ndarray:
        """(L, 8) the ``sheet_links`` rows: rest, e^(−r h), 1 + stretch, 1 − squish, offset (3),
        e^(−r_s h)."""
        return np.concatenate([np.stack([self.rest, np.exp(-self.rate * h), 1.0 + self.stretch, 1.0 - self.squish],
                                        axis=1), self.offset, np.exp(-self.shear_rate * h)[:, None]], axis=1) \
            if self.count else np.zeros((0, 8))


NO_LINKS = SheetLinks(*(np.zeros(0, np.int64),) * 2, *(np.zeros(0),) * 4, (), np.zeros((0, 3)), np.zeros(0))


def group_links(roots: np.ndarray, dirs: np.ndarray) -> list[tuple[int, int]]:
    """Neighbour pairs (i < j) among chains with root positions ``roots`` (n, 3) and unit
    rest directions ``dirs`` (n, 3): each chain is paired with its :data:`GROUP_NEIGHBOURS`
    nearest roots that lie within :data:`GROUP_REACH` times its nearest one's distance and
    point within :data:`GROUP_ANGLE_DEG` of it."""
    n = len(roots)
    out: set[tuple[int, int]] = set()
    cos_min = math.cos(math.radians(GROUP_ANGLE_DEG))
    for i in range(n):
        d = np.linalg.norm(roots - roots[i], axis=1)
        d[i] = np.inf
        order = [j for j in np.argsort(d, kind="stable") if np.isfinite(d[j]) and dirs[i] @ dirs[j] >= cos_min]
        if not order:
            continue
        near = d[order[0]]
        for j in order[:GROUP_NEIGHBOURS]:
            if d[j] <= GROUP_REACH * near:
                out.add((min(i, int(j)), max(i, int(j))))
    return sorted(out)


def build_links(avatar, chains, tails: np.ndarray, links: Links = None, sheets: str = "auto") -> SheetLinks:
    """The :class:`SheetLinks` of ``avatar`` (module doc).

    Args:
        chains: the topology's chains in processing order (:class:`solver.topology.Chain`).
        tails: (S, 3) rest tails of every segment, model metres.
        links: per-spring settings {fnmatch pattern: :class:`LinkSetting`}.
        sheets: "auto" (module doc) or "off" (no links at all).

    Raises:
        SolverOptionError: an unknown ``sheets`` choice.
    """
    if sheets not in SHEET_CHOICES:
        raise SolverOptionError(f"sheets must be one of {SHEET_CHOICES}, not {sheets!r}")
    if sheets == "off" or not chains:
        return NO_LINKS
    chain_of_spring = {id(c.spring): k for k, c in enumerate(chains)}
    setting = [link_for(links, c.spring.name) for c in chains]
    seg_pairs: dict[tuple[int, int], list[tuple[int, int]]] = {}

    def add(ka: int, kb: int, ja: int, jb: int) -> None:
        """Tail of segment ja of chain ka with tail of segment jb of chain kb."""
        if ka == kb or not (0 <= ja < len(chains[ka].links)) or not (0 <= jb < len(chains[kb].links)):
            return
        key = (ka, kb) if ka < kb else (kb, ka)
        pair = (chains[ka].first + ja, chains[kb].first + jb)
        pair = pair if ka < kb else pair[::-1]
        if pair not in seg_pairs.setdefault(key, []):
            seg_pairs[key].append(pair)

    # the try-on's sheets: on unless a spring's setting says link = false
    for sl in avatar.spring_links:
        ka = chain_of_spring.get(id(avatar.springs[sl.springs[0]]))
        kb = chain_of_spring.get(id(avatar.springs[sl.springs[1]]))
        if ka is None or kb is None or setting[ka][1].link is False or setting[kb][1].link is False:
            continue
        for i, j in sl.joints:
            add(ka, kb, i - 1, j - 1)    # joint i >= 1 is the tail of segment i - 1
    # configured groups of authored springs
    groups: dict[str, list[int]] = {}
    for k, (pattern, st) in enumerate(setting):
        if st.link is True or isinstance(st.link, str):
            groups.setdefault(pattern if st.link is True else str(st.link), []).append(k)
    for members in groups.values():
        if len(members) < 2:
            continue
        roots = np.array([chains[k].links[0].head for k in members])
        ends = np.array([chains[k].links[-1].tail for k in members])
        dirs = ends - roots
        dirs /= np.maximum(np.linalg.norm(dirs, axis=1, keepdims=True), 1e-12)
        for i, j in group_links(roots, dirs):
            ka, kb = members[i], members[j]
            for jj in range(min(len(chains[ka].links), len(chains[kb].links))):
                add(ka, kb, jj, jj)
    a, b, rate, stretch, squish, shear, pairs = [], [], [], [], [], [], []
    for (ka, kb), segs in sorted(seg_pairs.items()):
        st = setting[ka][1]
        for sa, sb in segs:
            a.append(sa)
            b.append(sb)
            rate.append(SHEET_RATE if st.rate is None else float(st.rate))
            shear.append(SHEAR_RATE if st.shear_rate is None else float(st.shear_rate))
            stretch.append(MAX_STRETCH if st.stretch is None else float(st.stretch))
            squish.append(MAX_SQUISH if st.squish is None else float(st.squish))
        pairs.append((ka, kb, len(segs)))
    if not a:
        return NO_LINKS
    a, b = np.array(a, np.int64), np.array(b, np.int64)
    d = tails[b] - tails[a]
    rest = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])
    keep = rest > 1e-9
    if not keep.all():
        idx = np.flatnonzero(keep)
        a, b, rest = a[idx], b[idx], rest[idx]
        rate, stretch, squish, shear = (list(np.asarray(x)[idx]) for x in (rate, stretch, squish, shear))
    d = tails[b] - tails[a]
    seg_chain = np.zeros(len(tails), np.int64)
    for k, c in enumerate(chains):
        seg_chain[c.first:c.first + len(c.links)] = k
    offset = np.empty((len(a), 3))
    rest_world = avatar.skeleton.rest_world
    for n in range(len(a)):
        anchor = chains[int(seg_chain[a[n]])].anchor
        m = np.linalg.inv(rest_world[anchor][:3, :3]) if anchor >= 0 else np.eye(3)
        offset[n] = m @ d[n]
    return SheetLinks(a=a, b=b, rest=rest, rate=np.array(rate, np.float64), stretch=np.array(stretch, np.float64),
                      squish=np.array(squish, np.float64), pairs=tuple(pairs), offset=offset,
                      shear_rate=np.array(shear, np.float64))
