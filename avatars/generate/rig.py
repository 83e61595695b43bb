"""The generated avatars' skeleton: humanoid bone layout, node list and skin weights.

All bones have identity rest rotations and unit scale, so a bone's rest world matrix is a
pure translation to its world position and its inverse bind matrix is the translation by
minus that position (exact). Positions are metres in the avatar frame: +Y up, the avatar
faces +Z, its left side is +X. The arms hang in a relaxed A-pose (about 20 degrees from
vertical) rather than the "VRM T-pose" of the VRMC_vrm 1.0 spec (tpose.md: arms along X):
the product frames a bust shot and only drives the head, so the arms stay as modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Head ellipsoid centre (metres): the face is built around it; crown ~1.627 m, chin ~1.41 m.
HEAD_CENTER = np.array([0.0, 1.515, 0.0])
#: Upper-arm direction (unit, left side; mirror x for the right): about 20 degrees from vertical.
ARM_DIR = np.array([np.sin(np.radians(20.0)), -np.cos(np.radians(20.0)), 0.0])
UPPER_ARM_LEN, LOWER_ARM_LEN = 0.27, 0.24

# (name, parent, world position); sides are mirrored for "right*" bones.
_SPINE = [
    ("hips", None, (0.0, 0.93, 0.0)),
    ("spine", "hips", (0.0, 1.03, 0.0)),
    ("chest", "spine", (0.0, 1.14, 0.0)),
    ("upperChest", "chest", (0.0, 1.24, -0.005)),
    ("neck", "upperChest", (0.0, 1.355, -0.01)),
    ("head", "neck", (0.0, 1.43, -0.005)),
]


def _limb_positions(sign: float) -> list[tuple[str, str, tuple[float, float, float]]]:
    side = "left" if sign > 0 else "right"
    shoulder = np.array([0.025 * sign, 1.325, -0.01])
    upper = np.array([0.138 * sign, 1.318, -0.012])
    d = ARM_DIR * np.array([sign, 1.0, 1.0])
    lower = upper + UPPER_ARM_LEN * d
    hand = lower + LOWER_ARM_LEN * d
    leg = np.array([0.085 * sign, 0.88, 0.0])
    knee = np.array([0.09 * sign, 0.49, 0.005])
    foot = np.array([0.095 * sign, 0.085, -0.01])
    cap = lambda s: side + s  # noqa: E731
    return [
        (cap("Shoulder"), "upperChest", tuple(shoulder)),
        (cap("UpperArm"), cap("Shoulder"), tuple(upper)),
        (cap("LowerArm"), cap("UpperArm"), tuple(lower)),
        (cap("Hand"), cap("LowerArm"), tuple(hand)),
        (cap("UpperLeg"), "hips", tuple(leg)),
        (cap("LowerLeg"), cap("UpperLeg"), tuple(knee)),
        (cap("Foot"), cap("LowerLeg"), tuple(foot)),
    ]


@dataclass
class Rig:
    """A growing node list (index = glTF node index) with world rest positions.

    Attributes:
        names: node names.
        parents: parent node index per node (-1 for roots).
        world: (3,) world rest position per node, metres.
        humanoid: VRM 1.0 humanoid bone name -> node index.
        joints: the nodes that are skin joints, in skin order.
    """

    names: list[str] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    world: list[np.ndarray] = field(default_factory=list)
    humanoid: dict[str, int] = field(default_factory=dict)
    joints: list[int] = field(default_factory=list)

    def add(self, name: str, parent: int, position, joint: bool = True) -> int:
        """Add a node at world ``position`` (3,) under ``parent`` (-1: root); returns its index."""
        self.names.append(name)
        self.parents.append(int(parent))
        self.world.append(np.asarray(position, np.float64))
        if joint:
            self.joints.append(len(self.names) - 1)
        return len(self.names) - 1

    def local_translation(self, node: int) -> np.ndarray:
        """Rest translation of ``node`` in its parent's frame (identity rotations: a difference)."""
        p = self.parents[node]
        return self.world[node] - (self.world[p] if p >= 0 else 0.0)

    def bone(self, name: str) -> int:
        """Node index of a humanoid bone."""
        return self.humanoid[name]

    def pos(self, name: str) -> np.ndarray:
        """World rest position (3,) of a humanoid bone."""
        return self.world[self.humanoid[name]]


def build_humanoid() -> Rig:
    """The body skeleton: node 0 is the "Root" (not a joint), then hips...head and the limbs.

    Humanoid bones: hips, spine, chest, upperChest, neck, head, left/right Shoulder,
    UpperArm, LowerArm, Hand, UpperLeg, LowerLeg, Foot (20 bones, all VRM 1.0 required
    bones included). The feet rest on y = 0 (the shoe soles).
    """
    rig = Rig()
    root = rig.add("Root", -1, (0.0, 0.0, 0.0), joint=False)
    bones = list(_SPINE)
    for sign in (1.0, -1.0):
        bones += _limb_positions(sign)
    for name, parent, pos in bones:
        pidx = root if parent is None else rig.humanoid[parent]
        rig.humanoid[name] = rig.add(_node_name(name), pidx, pos)
    return rig


def _node_name(bone: str) -> str:
    for side, tag in (("left", "L"), ("right", "R")):
        if bone.startswith(side):
            return f"J_{bone[len(side):]}_{tag}"
    return f"J_{bone[0].upper()}{bone[1:]}"


# --------------------------------------------------------------------------- weights


def rigid(count: int, node: int) -> tuple[np.ndarray, np.ndarray]:
    """Skin weights binding ``count`` vertices fully to ``node``: (joints (V, 4), weights (V, 4))."""
    j = np.zeros((count, 4), np.int64)
    j[:, 0] = node
    w = np.zeros((count, 4))
    w[:, 0] = 1.0
    return j, w


def blend_1d(s: np.ndarray, knots: np.ndarray, nodes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Piecewise-linear skin weights along a 1-D parameter.

    Args:
        s: (V,) vertex parameters (e.g. height or arc position).
        knots: (K,) increasing parameters where node k has weight 1.
        nodes: (K,) node per knot. Outside the knot range the end node has weight 1.

    Returns:
        (joints (V, 4) node indices, weights (V, 4)): at most two non-zero weights per vertex
        (the two knots around ``s``), summing to 1.
    """
    s = np.asarray(s, float)
    knots = np.asarray(knots, float)
    nodes_a = np.asarray(nodes, np.int64)
    k = np.clip(np.searchsorted(knots, s, side="right") - 1, 0, len(knots) - 2)
    f = np.clip((s - knots[k]) / (knots[k + 1] - knots[k]), 0.0, 1.0)
    j = np.zeros((len(s), 4), np.int64)
    w = np.zeros((len(s), 4))
    j[:, 0], j[:, 1] = nodes_a[k], nodes_a[k + 1]
    w[:, 0], w[:, 1] = 1.0 - f, f
    # keep the dominant influence first (readers that look at slot 0 get the main bone)
    swap = w[:, 1] > w[:, 0]
    j[swap] = j[swap][:, [1, 0, 2, 3]]
    w[swap] = w[swap][:, [1, 0, 2, 3]]
    j[w == 0.0] = j[:, :1].repeat(4, 1)[w == 0.0]
    return j, w


def chain_weights(u: np.ndarray, root: int, chain: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Weights of a strand skinned to a spring chain.

    ``u`` (V,) is the spline parameter along the chain: u = i + f between joint i and joint
    i+1 (see :func:`geometry.catmull_rom`). Segment i moves with joint i, so joint i's weight
    peaks at its segment's middle (u = i + 0.5) and blends linearly into its neighbours;
    the root (u = 0) is weighted fully to ``root`` (the head), the last half segment fully
    to the last segment joint. The tip joint (the last node of the chain) gets no weight.
    """
    n_seg = len(chain) - 1
    knots = np.concatenate([[0.0], np.arange(n_seg) + 0.5])
    return blend_1d(u, knots, [root] + list(chain[:-1]))
