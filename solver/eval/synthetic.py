"""Synthetic avatars for benchmarks and tests: plain :class:`avatars.Avatar` data, no file.

- :func:`strand_avatar`: one strand hanging from a "head" node, plus optional collider
  nodes ("prop" nodes that tests move freely) - for contact and regression tests.
- :func:`hair_cap_avatar`: a head with ``joints`` hair joints in chains of 8 spread over a
  cap, and a body of 16 colliders (head, neck, shoulders, chest, back...) that every chain
  collides with - the synthetic 64/256/1024-joint sets of the solver benchmark.

All nodes have identity rest rotations and unit scale; positions are metres, +Y up, the
avatar faces +Z (docs/design.md §3).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from avatars import Avatar, Collider, ColliderGroup, Meta, Skeleton, Spring, SpringJoint


class _Nodes:
    def __init__(self) -> None:
        self.names: list[str] = []
        self.parents: list[int] = []
        self.world: list[np.ndarray] = []

    def add(self, name: str, parent: int, world_pos) -> int:
        self.names.append(name)
        self.parents.append(parent)
        self.world.append(np.asarray(world_pos, np.float64))
        return len(self.names) - 1

    def skeleton(self) -> Skeleton:
        n = len(self.names)
        t = np.zeros((n, 3))
        for i, (p, w) in enumerate(zip(self.parents, self.world)):
            t[i] = w - (self.world[p] if p >= 0 else 0.0)
        rot = np.zeros((n, 4))
        rot[:, 3] = 1.0
        return Skeleton(names=tuple(self.names), parents=np.array(self.parents, np.int64), rest_translation=t,
                        rest_rotation=rot, rest_scale=np.ones((n, 3)))


def strand_avatar(points: Sequence[Sequence[float]], *, hit_radii: Sequence[float] | float = 0.0,
                  stiffness: float = 1.0, drag: float = 0.4, gravity_power: float = 0.0,
                  tail_offset: Sequence[float] | None = None, colliders: Sequence[dict] = (),
                  head_position: Sequence[float] = (0.0, 0.0, 0.0)) -> Avatar:
    """One strand of joints at world ``points`` hanging from a "head" node.

    Args:
        points: (J, 3) world positions of the joints (the first is the root).
        hit_radii: per-joint hitRadius (metres) or one value for all.
        stiffness, drag, gravity_power: VRM parameters of every joint (gravity along −Y).
        tail_offset: VRM 0.x style virtual tail of the last joint (its local frame), or
            None for VRM 1.0 style (the last joint has no segment).
        colliders: dicts with ``shape`` and, in world coordinates at rest, ``offset``,
            ``tail``, ``radius``, ``normal``, and ``node``: "head" (moves with the head) or
            "prop" (a separate root node, index :func:`prop_node`, that tests move).
        head_position: the head node's world position.

    Returns:
        An avatar with ``humanoid == {"head": 0}``; node 1 is the prop node.
    """
    nodes = _Nodes()
    head = nodes.add("head", -1, head_position)
    prop = nodes.add("prop", -1, (0.0, 0.0, 0.0))
    pts = np.asarray(points, np.float64)
    radii = np.broadcast_to(np.asarray(hit_radii, np.float64), (len(pts),))
    joints = []
    parent = head
    for i, p in enumerate(pts):
        parent = nodes.add(f"strand_{i}", parent, p)
        joints.append(SpringJoint(node=parent, hit_radius=float(radii[i]), stiffness=stiffness, drag_force=drag,
                                  gravity_power=gravity_power))
    cols = []
    for c in colliders:
        node = head if c.get("node", "head") == "head" else prop
        base = nodes.world[node]
        off = np.asarray(c["offset"], np.float64) - base
        tail = np.asarray(c.get("tail", c["offset"]), np.float64) - base
        normal = None if c.get("normal") is None else np.asarray(c["normal"], np.float64)
        cols.append(Collider(node=node, shape=c["shape"], offset=off, radius=float(c.get("radius", 0.0)), tail=tail,
                             normal=normal))
    groups = (ColliderGroup("all", tuple(range(len(cols)))),) if cols else ()
    spring = Spring(name="strand", joints=tuple(joints), collider_groups=(0,) if cols else (),
                    tail_offset=None if tail_offset is None else np.asarray(tail_offset, np.float64))
    return Avatar(path="<strand>", vrm_version="1.0", meta=Meta(name="strand"), skeleton=nodes.skeleton(),
                  humanoid={"head": head}, springs=(spring,), colliders=tuple(cols), collider_groups=groups)


def prop_node() -> int:
    """Node index of the free "prop" node of :func:`strand_avatar`."""
    return 1


HEAD_CENTER = np.array([0.0, 1.55, 0.0])
HEAD_RADIUS = 0.10


def hair_cap_avatar(joints: int, *, colliders: int = 16, joints_per_chain: int = 8,
                    link: float = 0.035, seed: int = 0) -> Avatar:
    """A head with ``joints`` hair joints (chains of ``joints_per_chain``) and ``colliders``
    body colliders (spheres and capsules), every chain colliding with every collider.

    Chains start on the back and sides of a head sphere and hang down and outward with
    links of ``link`` metres; parameters are typical VRM values (stiffness 1, drag 0.4,
    gravityPower 0.2, hitRadius 0.01). The layout is deterministic for a given ``seed``.
    """
    if joints % joints_per_chain:
        raise ValueError("joints must be a multiple of joints_per_chain")
    rng = np.random.default_rng(seed)
    nodes = _Nodes()
    hips = nodes.add("hips", -1, (0.0, 0.95, 0.0))
    spine = nodes.add("spine", hips, (0.0, 1.10, 0.0))
    chest = nodes.add("chest", spine, (0.0, 1.25, 0.0))
    neck = nodes.add("neck", chest, (0.0, 1.40, 0.0))
    head = nodes.add("head", neck, (0.0, 1.47, 0.0))
    l_sh = nodes.add("leftUpperArm", chest, (0.17, 1.36, 0.0))
    r_sh = nodes.add("rightUpperArm", chest, (-0.17, 1.36, 0.0))
    springs = []
    n_chains = joints // joints_per_chain
    for c in range(n_chains):
        # roots over the back half of the head (azimuth behind the ears), slightly jittered
        az = np.pi * (0.5 + (c + 0.5) / n_chains) + rng.uniform(-0.05, 0.05)
        el = rng.uniform(0.15, 0.6)
        out = np.array([np.sin(az) * np.cos(el), np.sin(el), np.cos(az) * np.cos(el)])
        root = HEAD_CENTER + (HEAD_RADIUS + 0.012) * out
        flat_out = np.array([out[0], 0.0, out[2]]) / np.linalg.norm([out[0], out[2]])
        p = root
        parent = head
        js = []
        for j in range(joints_per_chain):
            parent = nodes.add(f"hair_{c}_{j}", parent, p)
            js.append(SpringJoint(node=parent, hit_radius=0.01, stiffness=1.0, drag_force=0.4, gravity_power=0.2))
            # arc: first outward over the head, then down
            tilt = min(1.0, (j + 1) / 3.0)
            d = (1.0 - tilt) * out + tilt * (0.35 * flat_out + np.array([0.0, -1.0, 0.0]))
            p = p + link * d / np.linalg.norm(d)
        springs.append(Spring(name=f"chain{c}", joints=tuple(js), collider_groups=(0,),
                              tail_offset=np.array([0.0, -link, 0.0])))
    # body colliders: (node, shape, world offset, world tail, radius)
    body = [
        (head, "sphere", HEAD_CENTER, None, HEAD_RADIUS),
        (neck, "capsule", (0.0, 1.33, -0.01), (0.0, 1.45, -0.01), 0.055),
        (chest, "capsule", (0.0, 1.12, -0.02), (0.0, 1.28, -0.02), 0.13),
        (chest, "sphere", (0.0, 1.27, -0.08), None, 0.09),
        (l_sh, "sphere", (0.16, 1.36, -0.02), None, 0.06),
        (r_sh, "sphere", (-0.16, 1.36, -0.02), None, 0.06),
        (l_sh, "capsule", (0.17, 1.36, 0.0), (0.22, 1.12, 0.0), 0.045),
        (r_sh, "capsule", (-0.17, 1.36, 0.0), (-0.22, 1.12, 0.0), 0.045),
        (chest, "sphere", (0.09, 1.24, 0.06), None, 0.07),
        (chest, "sphere", (-0.09, 1.24, 0.06), None, 0.07),
        (spine, "capsule", (0.0, 0.98, 0.0), (0.0, 1.12, 0.0), 0.12),
        (head, "sphere", (0.0, 1.50, 0.07), None, 0.065),
        (head, "sphere", (0.07, 1.52, 0.0), None, 0.06),
        (head, "sphere", (-0.07, 1.52, 0.0), None, 0.06),
        (chest, "capsule", (-0.1, 1.30, -0.06), (0.1, 1.30, -0.06), 0.06),
        (hips, "capsule", (-0.08, 0.95, 0.0), (0.08, 0.95, 0.0), 0.12),
    ]
    if colliders > len(body):
        raise ValueError(f"at most {len(body)} colliders")
    cols = []
    for node, shape, off, tail, radius in body[:colliders]:
        base = nodes.world[node]
        o = np.asarray(off, np.float64) - base
        t = o if tail is None else np.asarray(tail, np.float64) - base
        cols.append(Collider(node=node, shape=shape, offset=o, radius=radius, tail=t))
    humanoid = {"hips": hips, "spine": spine, "chest": chest, "neck": neck, "head": head,
                "leftUpperArm": l_sh, "rightUpperArm": r_sh}
    return Avatar(path=f"<hair_cap_{joints}>", vrm_version="1.0", meta=Meta(name=f"hair cap {joints}"),
                  skeleton=nodes.skeleton(), humanoid=humanoid, springs=tuple(springs), colliders=tuple(cols),
                  collider_groups=(ColliderGroup("body", tuple(range(len(cols)))),))


def branched_avatar() -> Avatar:
    """A VRM 0.x style branched strand: chain A = a0 -> a1 -> a2 (+ virtual tail) hangs from
    the head; chain B = b0 -> b1 (+ virtual tail) hangs from a1 (b0 is a1's second child), as
    the VRM 0.x importer expands a branching bone group. Humanoid: ``{"head": 0}``."""
    nodes = _Nodes()
    head = nodes.add("head", -1, (0.0, 1.5, 0.0))
    a0 = nodes.add("a0", head, (0.0, 1.55, -0.10))
    a1 = nodes.add("a1", a0, (0.0, 1.50, -0.15))
    a2 = nodes.add("a2", a1, (0.0, 1.44, -0.17))
    b0 = nodes.add("b0", a1, (0.04, 1.48, -0.16))
    b1 = nodes.add("b1", b0, (0.07, 1.43, -0.17))

    def joints(*ns):
        return tuple(SpringJoint(node=n, hit_radius=0.01, stiffness=1.5, drag_force=0.4, gravity_power=0.0)
                     for n in ns)
    tail = np.array([0.0, -0.05, 0.0])
    springs = (Spring(name="A", joints=joints(a0, a1, a2), tail_offset=tail),
               Spring(name="B", joints=joints(b0, b1), tail_offset=tail))
    return Avatar(path="<branched>", vrm_version="0.x", meta=Meta(name="branched"), skeleton=nodes.skeleton(),
                  humanoid={"head": head}, springs=springs)


def extended_collider_avatar(strands_per_kind: int = 4) -> Avatar:
    """A still head with one-link strands (two-joint VRM 1.0 springs) resting against the
    extended colliders of VRMC_springBone_extended_collider — a plane, an inside sphere, an
    inside capsule — plus an outside sphere and capsule, each kind in its own collider group
    with ``strands_per_kind`` strands (gravityPower 1, stiffness 0.5, drag 0.3, hitRadius
    0.01): gravity swings the strands into their collider from the first step. The roots hang
    from the head, so they do not move while it is still (the three-vrm comparison,
    tests/solver/eval/test_threevrm_extended.py)."""
    nodes = _Nodes()
    hips = nodes.add("hips", -1, (0.0, 0.95, 0.0))
    head = nodes.add("head", hips, (0.0, 1.5, 0.0))
    # kind: (collider as (shape, world offset, world tail, radius, normal), strand roots, direction, length)
    kinds = [
        (("plane", (0.0, 1.485, 0.0), None, 0.0, (0.1, 1.0, -0.05)), (0.0, 1.5, 0.0), (0.0, 0.0, 1.0), 0.1),
        (("inside_sphere", (0.3, 1.5, 0.0), None, 0.09, None), (0.34, 1.5, 0.0), (1.0, 0.0, 0.0), 0.05),
        (("inside_capsule", (-0.3, 1.56, 0.0), (-0.3, 1.40, 0.0), 0.05, None), (-0.27, 1.55, 0.0),
         (0.0, 0.0, 1.0), 0.06),
        (("sphere", (0.0, 1.42, -0.35), None, 0.05, None), (0.0, 1.5, -0.25), (0.0, 0.0, -1.0), 0.1),
        (("capsule", (0.25, 1.47, -0.3), (0.35, 1.47, -0.3), 0.03, None), (0.3, 1.5, -0.22), (0.0, 0.0, -1.0), 0.1),
    ]
    cols, groups, springs = [], [], []
    for k, ((shape, off, tail, radius, normal), root, direction, length) in enumerate(kinds):
        base = nodes.world[head]
        o = np.asarray(off, np.float64) - base
        t = o if tail is None else np.asarray(tail, np.float64) - base
        n = None if normal is None else np.asarray(normal, np.float64) / np.linalg.norm(normal)
        cols.append(Collider(node=head, shape=shape, offset=o, radius=radius, tail=t, normal=n))
        groups.append(ColliderGroup(shape, (k,)))
        d = np.asarray(direction, np.float64)
        for s in range(strands_per_kind):
            # strands side by side across their direction, turned a little each
            side = np.cross(d, [0.0, 1.0, 0.0])
            r = np.asarray(root, np.float64) + (s - 0.5 * (strands_per_kind - 1)) * 0.012 * side
            turn = d + 0.15 * (s - 0.5 * (strands_per_kind - 1)) * side
            j0 = nodes.add(f"{shape}_{s}", head, r)
            j1 = nodes.add(f"{shape}_{s}_tip", j0, r + length * turn / np.linalg.norm(turn))
            joint = dict(hit_radius=0.01, stiffness=0.5, drag_force=0.3, gravity_power=1.0)
            springs.append(Spring(name=f"{shape}/{s}", joints=(SpringJoint(node=j0, **joint),
                                                               SpringJoint(node=j1, **joint)),
                                  collider_groups=(k,)))
    return Avatar(path="<extended colliders>", vrm_version="1.0", meta=Meta(name="extended colliders"),
                  skeleton=nodes.skeleton(), humanoid={"hips": hips, "head": head}, springs=tuple(springs),
                  colliders=tuple(cols), collider_groups=tuple(groups))
