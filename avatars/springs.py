"""Spring bones and colliders: VRMC_springBone 1.0 (+ VRMC_springBone_extended_collider)
and VRM 0.x ``secondaryAnimation`` -> :class:`Spring`, :class:`Collider`, :class:`ColliderGroup`.

VRM 0.x (as three-vrm's VRMSpringBoneLoaderPlugin imports it): each boneGroup root expands
over all its descendants; every node becomes a joint whose tail is its first child, so a
root's subtree becomes chains (the first-child path, plus one chain per further branch,
hanging from the branching joint); leaves get a virtual tail 7 cm along their own rest
translation direction; the parameters are per group and the stiffness key is spelled
``stiffiness``; collider offsets are left-handed, so z is negated.

swaycam's extension for linked hair sheets (written by the try-on auto-rig, read back here;
the solver does not use it yet): a spring's ``extras.swaycamSheet`` (the connected hair sheet
it carries with others), a joint's ``extras.swaycamMaxBend`` (radians: a cone limit proposed
for its segment, stiffer at the root), and VRMC_springBone's ``extras.swaycamSpringLinks``,
a list of {``springs``: [a, b], ``joints``: [[i, j], ...], ``rest``: [metres, ...], ``sheet``,
``shared``} — sideways links between joint i of spring a and joint j of spring b, their rest
distances (:class:`avatars.model.SpringLink`). Other readers ignore ``extras``.

Angle limits of joints (the VRMC_springBone_limit draft, or an ``angleLimit`` in a joint's
VRMC_springBone_extended_collider extension) are read by :mod:`avatars.spring_limits`.

Broken required parts (a VRM 1.0 joint node that does not exist, a joint that is not a
descendant of the one before it) raise AvatarError; broken optional parts (a collider, a
group reference, a center, a VRM 0.x bone-group root that does not exist) warn and are
skipped — a missing 0.x root skips that root only. A VRM 1.0 joint in two springs (prohibited
by the VRMC_springBone 1.0 README, "Exception") warns: when both springs would rotate it the
later spring is skipped; when it is only one spring's tail both run.
"""

from __future__ import annotations

import numpy as np

from .gltf_io import GltfDocument
from .model import Collider, ColliderGroup, Spring, SpringJoint, SpringLink
from .nodes import check_node
from .spring_limits import joint_limit
from .skeleton import Skeleton

VRM0_TAIL_LENGTH = 0.07  # metres, UniVRM / three-vrm VRM 0.x virtual leaf tail


def _vec(v, n, default):
    try:
        a = np.asarray(v if v is not None else default, float).reshape(n)
    except (ValueError, TypeError):
        return None
    return a if np.all(np.isfinite(a)) else None


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return v / n if n > 1e-12 else np.array([0.0, -1.0, 0.0])


# --------------------------------------------------------------------------- VRM 1.0


def _collider_1(doc, c: dict, elem: str) -> Collider | None:
    node = check_node(doc, c.get("node"), f"{elem}.node", optional=True)
    if node is None:
        return None
    shape = c.get("shape") or {}
    ext_obj = (c.get("extensions") or {}).get("VRMC_springBone_extended_collider") or {}
    if ext_obj and isinstance(ext_obj, dict):     # three-vrm 3.x reads "1.0" only
        doc.issues.spec_version(f"{elem}.extensions.VRMC_springBone_extended_collider", ext_obj, ("1.0",))
    ext = ext_obj.get("shape") if isinstance(ext_obj, dict) else None
    kind, data, inside = None, None, False
    if ext:
        for k in ("sphere", "capsule", "plane"):
            if k in ext:
                kind, data = k, ext[k] or {}
                inside = bool(data.get("inside", False))
                elem = f"{elem}.extensions.VRMC_springBone_extended_collider.shape.{k}"
                break
    if kind is None:
        for k in ("sphere", "capsule"):
            if k in shape:
                kind, data = k, shape[k] or {}
                elem = f"{elem}.shape.{k}"
                break
    if kind is None:
        doc.issues.warn(elem, "collider has no sphere/capsule/plane shape; skipped")
        return None
    offset = _vec(data.get("offset"), 3, [0, 0, 0])
    radius = data.get("radius", 0.0)
    if offset is None or not isinstance(radius, (int, float)) or not np.isfinite(radius) or radius < 0:
        doc.issues.warn(elem, f"bad offset/radius ({data.get('offset')}, {radius}); skipped")
        return None
    if kind == "plane":
        normal = _vec(data.get("normal"), 3, [0, 0, 1])
        if normal is None or np.linalg.norm(normal) < 1e-12:
            doc.issues.warn(elem, f"bad plane normal {data.get('normal')}; skipped")
            return None
        return Collider(node=node, shape="plane", offset=offset, radius=0.0, tail=offset.copy(), normal=_unit(normal))
    tail = offset.copy()
    if kind == "capsule":
        tail = _vec(data.get("tail"), 3, [0, 0, 0])
        if tail is None:
            doc.issues.warn(elem, f"bad capsule tail {data.get('tail')}; skipped")
            return None
    shape_name = ("inside_" if inside else "") + kind
    return Collider(node=node, shape=shape_name, offset=offset, radius=float(radius), tail=tail)


def _groups(doc, raw_groups, n_raw, remap, base) -> tuple[ColliderGroup, ...]:
    out = []
    for g, grp in enumerate(raw_groups):
        ids = []
        for k, ci in enumerate(grp.get("colliders", []) or []):
            if not isinstance(ci, int) or not 0 <= ci < n_raw:
                doc.issues.warn(f"{base}[{g}].colliders[{k}]", f"collider {ci} does not exist; skipped")
            elif remap[ci] < 0:
                doc.issues.warn(f"{base}[{g}].colliders[{k}]", f"collider {ci} was skipped; reference dropped")
            else:
                ids.append(remap[ci])
        out.append(ColliderGroup(name=str(grp.get("name", f"group{g}")), colliders=tuple(ids)))
    return tuple(out)


def _group_refs(doc, refs, n_groups, elem) -> tuple[int, ...]:
    out = []
    for k, gi in enumerate(refs or []):
        if isinstance(gi, int) and 0 <= gi < n_groups:
            out.append(gi)
        else:
            doc.issues.warn(f"{elem}[{k}]", f"collider group {gi} does not exist; skipped")
    return tuple(out)


#: Valid joint parameter ranges (VRMC_springBone-1.0 schema: hitRadius, stiffness and
#: gravityPower >= 0, dragForce in [0, 1]; VRM 0.x uses the same meaning per bone group).
JOINT_RANGES = {"hitRadius": (0.0, np.inf), "stiffness": (0.0, np.inf), "dragForce": (0.0, 1.0),
                "gravityPower": (0.0, np.inf)}


def _in_range(doc, where: str, key: str, v: float, what: str) -> float:
    """``v`` clamped to :data:`JOINT_RANGES` [key], with a warning at ``where`` when it was not in it."""
    lo, hi = JOINT_RANGES[key]
    if lo <= v <= hi:
        return v
    c = min(max(v, lo), hi)
    doc.issues.warn(where, f"{v:g} is outside {what} [{lo:g}, {hi:g}]; {c:g} is used")
    return c


def _joint(doc, j: dict, node: int, elem: str, defaults: dict) -> SpringJoint:
    vals = {}
    for key, attr in (("hitRadius", "hit_radius"), ("stiffness", "stiffness"), ("dragForce", "drag_force"),
                      ("gravityPower", "gravity_power")):
        v = j.get(key, defaults[attr])
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
            raise doc.issues.error(f"{elem}.{key}", f"{v!r} is not a finite number")
        vals[attr] = _in_range(doc, f"{elem}.{key}", key, float(v), "the spec's range")
    gdir = _vec(j.get("gravityDir"), 3, defaults["gravity_dir"])
    if gdir is None:
        raise doc.issues.error(f"{elem}.gravityDir", f"{j.get('gravityDir')!r} is not 3 finite numbers")
    bend = (j.get("extras") or {}).get("swaycamMaxBend") if isinstance(j.get("extras"), dict) else None
    if bend is not None and (isinstance(bend, bool) or not isinstance(bend, (int, float)) or not np.isfinite(bend)
                             or bend <= 0):
        doc.issues.warn(f"{elem}.extras.swaycamMaxBend", f"{bend!r} is not a positive angle; ignored")
        bend = None
    limit = joint_limit(doc, j, elem, _joint_name(doc, node)) if isinstance(j, dict) else None
    return SpringJoint(node=node, gravity_dir=_unit(gdir), max_bend=None if bend is None else float(bend),
                       limit=limit, **vals)


def _joint_name(doc, node: int) -> str:
    """``node N ("name")`` for messages."""
    try:
        name = (doc.json.get("nodes") or [])[node].get("name")
    except (AttributeError, IndexError, TypeError):
        name = None
    return f"node {node}" + (f" ({name!r})" if name else "")


_DEFAULTS_1 = dict(hit_radius=0.0, stiffness=1.0, drag_force=0.5, gravity_power=0.0, gravity_dir=[0, -1, 0])


#: VRMC_springBone 1.0 README, "Exception": multiple spring chains must not share a joint.
_SHARED_JOINT = "a joint in two springs is prohibited by VRMC_springBone 1.0"


def build_springs_1(doc: GltfDocument, ext: dict, skeleton: Skeleton, kept: list[int] | None = None):
    """VRMC_springBone -> (springs, colliders, collider_groups); ``kept``, when given, gets the
    file index of each spring returned (skipped springs leave gaps: spring links map through it)."""
    base = "VRMC_springBone"
    raw_colliders = ext.get("colliders", []) or []
    colliders, remap = [], []
    for i, c in enumerate(raw_colliders):
        col = _collider_1(doc, c or {}, f"{base}.colliders[{i}]")
        remap.append(len(colliders) if col is not None else -1)
        if col is not None:
            colliders.append(col)
    raw_groups = ext.get("colliderGroups", []) or []
    groups = _groups(doc, raw_groups, len(raw_colliders), remap, f"{base}.colliderGroups")
    springs = []
    rotated: dict[int, str] = {}      # node -> the spring whose segment rotates it (every joint but the tail)
    listed: dict[int, str] = {}       # node -> the first spring listing it
    for s, spring in enumerate(ext.get("springs", []) or []):
        elem = f"springs[{s}]"
        joints = []
        for k, j in enumerate(spring.get("joints", []) or []):
            jelem = f"{elem}.joints[{k}]"
            node = check_node(doc, (j or {}).get("node"), jelem)
            if joints and not skeleton.is_ancestor(joints[-1].node, node):
                raise doc.issues.error(jelem, f"node {node} is not a descendant of node {joints[-1].node} (joints[{k - 1}])")
            joints.append(_joint(doc, j, node, jelem, _DEFAULTS_1))
        if len(joints) < 2:
            doc.issues.warn(elem, f"spring has {len(joints)} joint(s); needs 2 to form a segment; skipped")
            continue
        name = str(spring.get("name", f"spring{s}"))
        both = [(k, jt.node) for k, jt in enumerate(joints[:-1]) if jt.node in rotated]
        if both:     # two springs would both rotate the node: the later one is skipped
            k, node = both[0]
            doc.issues.warn(f"{elem}.joints[{k}]", f"node {node} is already a joint of spring {rotated[node]!r} "
                            f"({_SHARED_JOINT}); spring {name!r} skipped")
            continue
        tails = [(k, jt.node) for k, jt in enumerate(joints) if jt.node in listed]
        if tails:    # one of the two only reads the node as its tail: both springs run
            k, node = tails[0]
            doc.issues.warn(f"{elem}.joints[{k}]", f"node {node} is also a joint of spring {listed[node]!r} "
                            f"({_SHARED_JOINT}); kept: only one of them rotates it")
        for jt in joints[:-1]:
            rotated[jt.node] = name
        for jt in joints:
            listed.setdefault(jt.node, name)
        center = spring.get("center", -1)
        if center != -1 and check_node(doc, center, f"{elem}.center", optional=True) is None:
            center = -1
        extras = spring.get("extras") if isinstance(spring.get("extras"), dict) else {}
        sheet = extras.get("swaycamSheet", -1)
        if isinstance(sheet, bool) or not isinstance(sheet, int) or sheet < -1:
            doc.issues.warn(f"{elem}.extras.swaycamSheet", f"{sheet!r} is not a sheet index; ignored")
            sheet = -1
        if kept is not None:
            kept.append(s)
        springs.append(Spring(
            name=name, joints=tuple(joints),
            collider_groups=_group_refs(doc, spring.get("colliderGroups"), len(groups), f"{elem}.colliderGroups"),
            center=int(center), sheet=int(sheet),
        ))
    return tuple(springs), tuple(colliders), groups


def build_spring_links(doc: GltfDocument, ext: dict, springs: tuple[Spring, ...],
                       kept: list[int] | None = None) -> tuple[SpringLink, ...]:
    """swaycam's sideways links between springs of one hair sheet (VRMC_springBone
    ``extras.swaycamSpringLinks``, module doc) -> :class:`SpringLink` s; a malformed entry
    is skipped with a warning. The file's spring indices are mapped through ``kept`` (the
    file index of each spring in ``springs``, :func:`build_springs_1`): a link to a skipped
    spring is skipped with a warning instead of landing on the spring after it."""
    raw = (ext.get("extras") or {}).get("swaycamSpringLinks") if isinstance(ext.get("extras"), dict) else None
    if not raw:
        return ()
    out = []
    for i, k in enumerate(raw if isinstance(raw, list) else []):
        elem = f"VRMC_springBone.extras.swaycamSpringLinks[{i}]"
        try:
            a, b = (int(x) for x in k["springs"])
            pairs = tuple((int(p), int(q)) for p, q in k["joints"])
            rest = tuple(float(r) for r in k["rest"])
            sheet = int(k.get("sheet", -1))
            shared = int(k.get("shared", 0))
        except (KeyError, TypeError, ValueError):
            doc.issues.warn(elem, "not a spring link (springs, joints, rest); skipped")
            continue
        if kept is not None:
            index = {f: k for k, f in enumerate(kept)}
            if (a not in index or b not in index) and all(0 <= x < len(ext.get("springs") or []) for x in (a, b)):
                doc.issues.warn(elem, f"links spring {a if a not in index else b}, which was skipped; skipped")
                continue
            a, b = index.get(a, -1), index.get(b, -1)
        ok = 0 <= a < len(springs) and 0 <= b < len(springs) and len(rest) == len(pairs) and all(
            0 <= p < len(springs[a].joints) and 0 <= q < len(springs[b].joints) for p, q in pairs)
        if not ok or not all(np.isfinite(rest)):
            doc.issues.warn(elem, "names springs or joints that do not exist; skipped")
            continue
        out.append(SpringLink(springs=(a, b), joints=pairs, rest=rest, sheet=sheet, shared=shared))
    return tuple(out)


# --------------------------------------------------------------------------- VRM 0.x


def build_springs_0(doc: GltfDocument, sec: dict, skeleton: Skeleton):
    """VRM.secondaryAnimation -> (springs, colliders, collider_groups). Offsets get z negated."""
    base = "VRM.secondaryAnimation"
    colliders, groups = [], []
    for g, grp in enumerate(sec.get("colliderGroups", []) or []):
        gelem = f"{base}.colliderGroups[{g}]"
        node = check_node(doc, grp.get("node"), f"{gelem}.node", optional=True)
        ids = []
        for k, c in enumerate(grp.get("colliders", []) or []):
            celem = f"{gelem}.colliders[{k}]"
            off = c.get("offset") or {}
            offset = _vec([off.get("x", 0), off.get("y", 0), off.get("z", 0)], 3, [0, 0, 0])
            radius = c.get("radius", 0.0)
            if node is None:
                continue
            if offset is None or not isinstance(radius, (int, float)) or not np.isfinite(radius) or radius < 0:
                doc.issues.warn(celem, f"bad offset/radius ({off}, {radius}); skipped")
                continue
            offset[2] = -offset[2]
            ids.append(len(colliders))
            colliders.append(Collider(node=node, shape="sphere", offset=offset, radius=float(radius), tail=offset.copy()))
        groups.append(ColliderGroup(name=f"colliderGroup{g}", colliders=tuple(ids)))
    springs = []
    seen: dict[int, str] = {}
    for g, bg in enumerate(sec.get("boneGroups", []) or []):
        gelem = f"{base}.boneGroups[{g}]"
        gd = bg.get("gravityDir") or {}
        params = {
            "hitRadius": bg.get("hitRadius", 0.02), "stiffness": bg.get("stiffiness", bg.get("stiffness", 1.0)),
            "dragForce": bg.get("dragForce", 0.4), "gravityPower": bg.get("gravityPower", 0.0),
            "gravityDir": [gd.get("x", 0.0), gd.get("y", -1.0), gd.get("z", 0.0)],
        }
        for key in JOINT_RANGES:   # once per group, not once per expanded joint
            v = params[key]
            if isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v):
                params[key] = _in_range(doc, f"{gelem}.{'stiffiness' if key == 'stiffness' else key}", key,
                                        float(v), "the valid range")
        refs = _group_refs(doc, bg.get("colliderGroups"), len(groups), f"{gelem}.colliderGroups")
        center = bg.get("center", -1)
        if center != -1 and check_node(doc, center, f"{gelem}.center", optional=True) is None:
            center = -1
        label = str(bg.get("comment") or f"boneGroup{g}")
        for r, root in enumerate(bg.get("bones", []) or []):
            relem = f"{gelem}.bones[{r}]"
            n_nodes = skeleton.node_count
            if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < n_nodes:
                # one broken root refuses nothing else: the group's other roots still simulate
                doc.issues.warn(relem, f"root node {root!r} does not exist ({n_nodes} nodes); "
                                f"this root of {label!r} is skipped")
                continue
            for chain in _expand_chains(skeleton, root):
                dup = [n for n in chain if n in seen]
                if dup:
                    doc.issues.warn(relem, f"node {dup[0]} is already a joint of {seen[dup[0]]}; chain skipped")
                    continue
                name = f"{label}/{skeleton.names[chain[0]] or chain[0]}"
                for n in chain:
                    seen[n] = name
                joints = tuple(_joint(doc, params, n, relem, _DEFAULTS_1) for n in chain)
                leaf = chain[-1]
                direction = skeleton.rest_translation[leaf]
                norm = np.linalg.norm(direction)
                tail = direction / norm * VRM0_TAIL_LENGTH if norm > 1e-9 else np.array([0.0, VRM0_TAIL_LENGTH, 0.0])
                springs.append(Spring(name=name, joints=joints, collider_groups=refs, center=int(center), tail_offset=tail))
    return tuple(springs), tuple(colliders), tuple(groups)


def _expand_chains(skeleton: Skeleton, root: int) -> list[list[int]]:
    """Chains of a VRM 0.x root: follow first children; every further child starts a chain."""
    chains, starts = [], [root]
    while starts:
        node = starts.pop(0)
        chain = [node]
        while True:
            kids = skeleton.children(chain[-1])
            if not kids:
                break
            starts.extend(kids[1:])
            chain.append(kids[0])
        chains.append(chain)
    return chains
