"""Which joints form which chains, in what order, hanging from what: the chain topology of an
avatar's springs in its rest pose (build time, numpy; :func:`solver.build.pack_avatar` packs it).

Terms (as in :mod:`solver.chains`): a *segment* is a simulated joint, joint i of a spring
with a tail (joint i+1, or the VRM 0.x virtual tail ``tail_offset``); a VRM 1.0 last joint
has no segment and follows its parent. A chain's *anchor* is the nearest ancestor of its
first joint that no spring simulates (−1: the world), the frame its rest arc is carried by;
a joint's *simulated parent* is the segment of its nearest simulated ancestor (−1: none).

Rules:

- a spring whose joint another (earlier) spring already simulates is skipped, with a note;
  a spring with no segment is dropped;
- chains are processed parents first: sorted (stably) by the skeleton depth of their first
  joint, so a branch hanging from another chain's joint comes after it;
- every node the solver moves is a simulated joint or one of its descendants, moved by the
  segment of its nearest simulated ancestor (:attr:`ChainTopology.affected`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from avatars import Avatar, Spring, SpringJoint

from .errors import ChainBuildError


@dataclass(frozen=True, eq=False)
class Link:
    """One segment in the rest pose.

    Attributes:
        joint: the spring joint it simulates (its node is ``joint.node``).
        tail_local: (3,) the tail in the joint's local frame, model metres.
        tail_node: the node at the tail (the spring's next joint), −1 for a virtual tail.
        head, tail: (3,) rest world positions of the joint and its tail, model metres.
        length: |tail − head|, model metres (> 1e-9).
        parent: index of the simulated parent's segment, −1: none.
        at_parent_tail: the joint sits at its simulated parent's tail (that spring's next
            joint), so its root is that tail in the rest-shape solver's fast path.
    """

    joint: SpringJoint
    tail_local: np.ndarray
    tail_node: int
    head: np.ndarray
    tail: np.ndarray
    length: float
    parent: int
    at_parent_tail: bool


@dataclass(frozen=True, eq=False)
class Chain:
    """One spring's segments.

    Attributes:
        spring: the avatar's spring.
        anchor: the anchor node (module doc), −1: the world.
        first: index of its first segment (segments ``first`` .. ``first + len(links) − 1``).
        links: its segments, root first.
    """

    spring: Spring
    anchor: int
    first: int
    links: tuple[Link, ...]


@dataclass(frozen=True, eq=False)
class ChainTopology:
    """The chains of an avatar in processing order (module doc).

    Attributes:
        chains: the chains, parents first; their segments are numbered in this order.
        simulated: {joint node: spring name} of every simulated joint.
        affected: (node, segment) of every node the solver moves, in node order.
        notes: skipped springs, human readable.
    """

    chains: tuple[Chain, ...]
    simulated: dict[int, str]
    affected: tuple[tuple[int, int], ...]
    notes: tuple[str, ...]

    @property
    def links(self) -> list[Link]:
        """Every segment in processing order."""
        return [link for chain in self.chains for link in chain.links]


def _singular(m: np.ndarray) -> bool:
    """True when the 3x3 part of ``m`` cannot be inverted: a zero scale (exactly, or 1e-12 of
    its largest axis), so a spring in it has no frame to simulate in."""
    sv = np.linalg.svd(np.asarray(m, np.float64)[:3, :3], compute_uv=False)
    return not np.all(np.isfinite(sv)) or sv[-1] <= 1e-12 * sv[0] or sv[0] == 0.0


def _check_invertible(avatar: Avatar, spring: Spring, nodes: list[int]) -> None:
    """ChainBuildError naming the file, ``spring``, the first joint whose rest world frame is
    singular and the node that makes it so (the highest ancestor-or-self with a singular local
    transform, e.g. a head bone scaled to 0)."""
    sk = avatar.skeleton
    for n in nodes:
        if not _singular(sk.rest_world[n]):
            continue
        cause, m = n, n
        while m >= 0:
            if _singular(sk.rest_local[m]):
                cause = m
            m = int(sk.parents[m])

        def label(k: int) -> str:
            return f"node {k} {sk.names[k]!r}" if sk.names[k] else f"node {k}"

        raise ChainBuildError(f"{avatar.path}: spring {spring.name!r}: joint {label(n)} has no rest frame: "
                              f"{label(cause)} has a zero scale (its transform cannot be inverted); "
                              "give it a non-zero scale or remove the spring")


def chain_topology(avatar: Avatar) -> ChainTopology:
    """The chain topology of ``avatar``'s springs in its rest pose (module doc).

    Raises:
        ChainBuildError (a ValueError): a zero-length link, a joint hanging from a
            simulated joint of a chain processed after its own (interleaved chains), or a
            joint whose rest frame is singular (a zero scale on it or an ancestor: the
            message names the file, the spring, the joint and the zero-scale node).
    """
    sk = avatar.skeleton
    rest = sk.rest_world
    simulated: dict[int, str] = {}
    notes: list[str] = []
    springs = []
    for spring in avatar.springs:
        nodes = [j.node for j in spring.joints]
        _check_invertible(avatar, spring, nodes)
        dup = [n for n in nodes if n in simulated]
        if dup:
            notes.append(f"spring {spring.name!r}: node {dup[0]} already simulated by "
                         f"{simulated[dup[0]]!r}; skipped")
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
            simulated[joint.node] = spring.name
        springs.append((spring, segs))

    def depth(n: int) -> int:
        d = 0
        while sk.parents[n] >= 0:
            n = int(sk.parents[n])
            d += 1
        return d

    springs.sort(key=lambda item: depth(item[1][0][0].node))

    node_to_seg: dict[int, int] = {}
    tail_nodes: list[int] = []
    chains = []
    for spring, segs in springs:
        anchor = int(sk.parents[segs[0][0].node])
        while anchor >= 0 and anchor in simulated:
            anchor = int(sk.parents[anchor])
        first = len(tail_nodes)
        links = []
        for jj, (joint, tloc) in enumerate(segs):
            n = joint.node
            tail_node = spring.joints[jj + 1].node if jj + 1 < len(spring.joints) else -1
            m = rest[n]
            head = m[:3, 3]
            tail = m[:3, :3] @ tloc + head
            length = float(np.linalg.norm(tail - head))
            if length < 1e-9:
                raise ChainBuildError(f"spring {spring.name!r}: joint node {n} has a zero-length link")
            sp_node = int(sk.parents[n])
            while sp_node >= 0 and sp_node not in node_to_seg:
                if sp_node in simulated:
                    raise ChainBuildError(f"spring {spring.name!r}: joint node {n} hangs from simulated node "
                                          f"{sp_node} that is processed later (interleaved chains)")
                sp_node = int(sk.parents[sp_node])
            sp = node_to_seg.get(sp_node, -1)
            links.append(Link(joint=joint, tail_local=tloc, tail_node=tail_node, head=head, tail=tail,
                              length=length, parent=sp, at_parent_tail=sp >= 0 and tail_nodes[sp] == n))
            node_to_seg[n] = len(tail_nodes)
            tail_nodes.append(tail_node)
        chains.append(Chain(spring=spring, anchor=anchor, first=first, links=tuple(links)))

    affected = []
    for n in range(sk.node_count):
        m = n
        while m >= 0 and m not in node_to_seg:
            m = int(sk.parents[m])
        if m >= 0:
            affected.append((n, node_to_seg[m]))
    return ChainTopology(chains=tuple(chains), simulated=simulated, affected=tuple(affected), notes=tuple(notes))
