"""VRMC_node_constraint 1.0 on VRM 1.0 nodes -> :class:`RollConstraint`, :class:`AimConstraint`,
:class:`RotationConstraint` (parse, then build; the runtime evaluates them).

The extension sits on the destination node (vrm-c/vrm-specification,
specification/VRMC_node_constraint-1.0)::

    nodes[i].extensions.VRMC_node_constraint = {"specVersion": "1.0",
        "constraint": {"roll": {"source": 3, "rollAxis": "X", "weight": 0.5}}}

with exactly one of ``roll`` {source, rollAxis, weight}, ``aim`` {source, aimAxis, weight}
or ``rotation`` {source, weight}; ``weight`` defaults to 1. Like three-vrm's loader
(``VRMNodeConstraintLoaderPlugin``), specVersion "1.0" and "1.0-beta" are read and the file
must be VRM 1.0.

Every broken constraint is skipped with a warning naming its JSON path, and the rest of the
file loads: not an object, an unknown specVersion, none of roll/aim/rotation, a source that
is missing, not a node or the destination itself, an unknown or missing axis, a weight that
is not a number in [0, 1], and the constraints of a dependency cycle. A node constrained
twice (``roll`` and ``aim`` in one constraint) keeps the first of roll, aim, rotation, as
three-vrm does; the others are skipped with a warning.

Dependencies (:func:`dependencies`) follow what each constraint reads: a roll or rotation
constraint reads its source's local rotation, so it depends on the constraint whose
destination is the source; an aim constraint reads the world matrices of its source and of
its destination's parent, so it depends on every constraint whose destination is one of
those nodes or one of their ancestors. An aim whose source is below its own destination
depends on itself (a cycle). three-vrm's manager is stricter for roll/rotation (it also
waits for constraints on the source's ancestors, and refuses a roll whose source is below
its destination); ordering by what is read gives the same values wherever three-vrm runs.
"""

from __future__ import annotations

import heapq

from .gltf_io import GltfDocument
from .model import AimConstraint, NodeConstraint, RollConstraint, RotationConstraint
from .skeleton import Skeleton

EXTENSION = "VRMC_node_constraint"
#: specVersion values read (three-vrm 3.x reads the same two).
SPEC_VERSIONS = ("1.0", "1.0-beta")
ROLL_AXES = ("X", "Y", "Z")
AIM_AXES = ("PositiveX", "NegativeX", "PositiveY", "NegativeY", "PositiveZ", "NegativeZ")
_KINDS = ("roll", "aim", "rotation")   # three-vrm's precedence when a constraint names several


def build_constraints(doc: GltfDocument, skeleton: Skeleton, vrm_version: str | None) -> tuple[NodeConstraint, ...]:
    """Every valid VRMC_node_constraint of the file's nodes, in :func:`evaluation_order`.

    Only VRM 1.0 files are read; on other files the extension is ignored with one warning.
    Broken constraints and the constraints of a cycle are skipped with warnings (module doc).
    """
    nodes = doc.json.get("nodes", []) or []
    found = [(i, node["extensions"][EXTENSION]) for i, node in enumerate(nodes)
             if isinstance(node, dict) and isinstance(node.get("extensions"), dict)
             and EXTENSION in node["extensions"]]
    if not found:
        return ()
    if vrm_version != "1.0":
        doc.issues.warn(f"nodes[{found[0][0]}].extensions.{EXTENSION}",
                        f"{EXTENSION} is a VRM 1.0 extension; ignored on this {vrm_version or 'glTF'} file "
                        f"({len(found)} node(s))")
        return ()
    if EXTENSION not in (doc.json.get("extensionsUsed") or []):
        doc.issues.warn("extensionsUsed", f"{EXTENSION} is used by {len(found)} node(s) but not listed; read anyway")
    parsed = [c for c in (_parse(doc, i, ext, skeleton.node_count) for i, ext in found) if c is not None]
    order, cycles = evaluation_order(parsed, skeleton)
    if cycles:
        dropped = set()
        for cycle in cycles:
            for k in cycle:
                c = parsed[k]
                doc.issues.warn(f"{_element(c.node, c.kind)}.source", _cycle_reason(parsed, cycle, k))
            dropped.update(cycle)
        parsed = [c for k, c in enumerate(parsed) if k not in dropped]
        order, cycles = evaluation_order(parsed, skeleton)
        assert not cycles  # removing every strongly connected component leaves none
    return tuple(parsed[k] for k in order)


def _element(node: int, kind: str | None = None) -> str:
    base = f"nodes[{node}].extensions.{EXTENSION}"
    return base if kind is None else f"{base}.constraint.{kind}"


def _parse(doc: GltfDocument, node: int, ext, n_nodes: int) -> NodeConstraint | None:
    warn = doc.issues.warn
    elem = _element(node)
    if not isinstance(ext, dict):
        warn(elem, "is not an object; constraint skipped")
        return None
    spec = ext.get("specVersion")
    if spec not in SPEC_VERSIONS:
        warn(f"{elem}.specVersion", f"{spec!r} is not a known specVersion ({', '.join(SPEC_VERSIONS)}); "
             "constraint skipped")
        return None
    con = ext.get("constraint")
    if not isinstance(con, dict):
        warn(f"{elem}.constraint", "is missing or not an object; constraint skipped")
        return None
    kinds = [k for k in _KINDS if con.get(k) is not None]
    if not kinds:
        warn(f"{elem}.constraint", "has none of roll, aim, rotation; constraint skipped")
        return None
    if len(kinds) > 1:
        warn(f"{elem}.constraint", f"constrains node {node} twice ({', '.join(kinds)}); {kinds[0]} is used "
             f"(as three-vrm does), {', '.join(kinds[1:])} skipped")
    kind = kinds[0]
    body = con[kind]
    kelem = f"{elem}.constraint.{kind}"
    if not isinstance(body, dict):
        warn(kelem, "is not an object; constraint skipped")
        return None
    source = body.get("source")
    if isinstance(source, bool) or not isinstance(source, int) or not 0 <= source < n_nodes:
        warn(f"{kelem}.source", f"node {source!r} does not exist ({n_nodes} nodes); constraint skipped")
        return None
    if source == node:
        warn(f"{kelem}.source", f"is the destination node {node} itself; constraint skipped")
        return None
    weight = body.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
        warn(f"{kelem}.weight", f"{weight!r} is not a number in [0, 1]; constraint skipped")
        return None
    weight = float(weight)
    if kind == "roll":
        axis = body.get("rollAxis")
        if axis not in ROLL_AXES:
            warn(f"{kelem}.rollAxis", f"{axis!r} is not one of {', '.join(ROLL_AXES)}; constraint skipped")
            return None
        return RollConstraint(node=node, source=source, roll_axis=axis, weight=weight)
    if kind == "aim":
        axis = body.get("aimAxis")
        if axis not in AIM_AXES:
            warn(f"{kelem}.aimAxis", f"{axis!r} is not one of {', '.join(AIM_AXES)}; constraint skipped")
            return None
        return AimConstraint(node=node, source=source, aim_axis=axis, weight=weight)
    return RotationConstraint(node=node, source=source, weight=weight)


# --------------------------------------------------------------------------- dependencies


def reads(c: NodeConstraint, skeleton: Skeleton) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(nodes whose local rotation ``c`` reads, nodes whose world matrix it reads)."""
    if isinstance(c, AimConstraint):
        parent = int(skeleton.parents[c.node])
        return (), (c.source,) if parent < 0 else (c.source, parent)
    return (c.source,), ()


def dependencies(constraints, skeleton: Skeleton) -> list[list[int]]:
    """For each constraint (by index), the indices of the constraints whose results it reads
    (module doc); a constraint may list itself (an aim whose source is below its destination)."""
    by_node = {c.node: k for k, c in enumerate(constraints)}
    out = []
    for c in constraints:
        local, world = reads(c, skeleton)
        deps = {by_node[n] for n in local if n in by_node}
        for n in world:
            while n >= 0:               # the node and its ancestors
                if n in by_node:
                    deps.add(by_node[n])
                n = int(skeleton.parents[n])
        out.append(sorted(deps))
    return out


def evaluation_order(constraints, skeleton: Skeleton) -> tuple[list[int], list[list[int]]]:
    """(order, cycles) of ``constraints`` (a sequence of constraints; indices into it).

    ``order`` lists every constraint outside a cycle after the constraints it depends on,
    ties broken by destination node index; ``cycles`` lists the strongly connected
    components that form cycles (several constraints, or one that depends on itself), each
    sorted. A constraint that only depends on a cycle is ordered as if the cycle's
    constraints were absent (they are what the loader drops).
    """
    deps = dependencies(constraints, skeleton)
    cycles = _cycles(deps)
    in_cycle = {k for cyc in cycles for k in cyc}
    live = [k for k in range(len(constraints)) if k not in in_cycle]
    waiting = {k: {d for d in deps[k] if d not in in_cycle} for k in live}
    users: dict[int, list[int]] = {k: [] for k in live}
    for k in live:
        for d in waiting[k]:
            users[d].append(k)
    ready = [(constraints[k].node, k) for k in live if not waiting[k]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, k = heapq.heappop(ready)
        order.append(k)
        for u in users[k]:
            waiting[u].discard(k)
            if not waiting[u]:
                heapq.heappush(ready, (constraints[u].node, u))
    return order, cycles


def _cycles(deps: list[list[int]]) -> list[list[int]]:
    """Strongly connected components that are cycles (Tarjan, iterative)."""
    n = len(deps)
    index, low, on_stack = [-1] * n, [0] * n, [False] * n
    stack, out, counter = [], [], 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            if i < len(deps[v]):
                work.append((v, i + 1))
                w = deps[v][i]
                if index[w] < 0:
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in deps[v]:
                    out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def _cycle_reason(constraints, cycle: list[int], k: int) -> str:
    c = constraints[k]
    if len(cycle) == 1:
        return (f"the source node {c.source} is below the destination node {c.node}: the aim depends on its own "
                "result (a constraint cycle); constraint skipped")
    nodes = ", ".join(str(constraints[j].node) for j in cycle)
    return f"constraint cycle among the constraints of nodes {nodes} (each reads another's result); constraint skipped"
