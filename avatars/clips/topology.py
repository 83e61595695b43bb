"""Humanoid bones from a skeleton's shape: topology and rest pose, with names as hints.

For skeletons whose joint names follow no known convention (:mod:`avatars.clips.bonemap`):
a CMU conversion's ``Hips, LHipJoint, LeftHip, LeftKnee, LeftAnkle``, Unreal's ``pelvis,
thigh_l, calf_l``, a Blender metarig's ``spine.003, upper_arm.L``, anything else.

1. **Hips**: the joint nearest the root with at least three child subtrees that are chains
   of two joints or more (two legs and the spine); a joint named like ``hips``/``pelvis``
   wins among those.
2. **Spine and legs**: the **spine** is the largest of those subtrees (it carries the arms and
   the head), the **legs** the two with the longest chains; **up** points from the legs' ends
   to the hips.
3. **Trunk**: from the spine upward, at every fork the child named like a trunk joint
   (``spine``, ``chest``, ``neck``, ``head``...), else the one whose highest joint is highest
   above the hips less its distance from the up axis through them; the trunk ends where
   its next segment turns more than 60° away from up (face joints point forward). The **arms** are the two trunk branches (chains of three joints
   or more) reaching farthest from that axis; the joint they hang from is the top of
   the spine (``spine``, ``chest``, ``upperChest`` in order below it; more than three: the
   first, the middle, the last). Above it: ``neck`` (when two or more joints) and ``head``
   (the lowest one named like ``head``, else the last one that is not an end joint).
4. **Limbs**: each limb's main chain follows the child with the farthest-reaching subtree
   (twist, roll and helper leaves are passed over). Arm: the hand is the joint named like
   ``hand``/``wrist``, else the first with two or more finger chains, else the chain's end;
   lower and upper arm are the two joints before it, a shoulder the one before those. Leg:
   the joint named like ``foot``/``ankle``, else the end of the two longest consecutive
   segments (thigh and shin); toes the next joint.
5. **Sides**: ``left``/``right`` from names (``Left``, ``L``, ``.L``, ``_l``...), else from the
   rest pose: facing the way the toes point (+Z without toes), the avatar's left is
   ``up × forward`` (+X for a glTF avatar facing +Z).
6. **Fingers** of each hand's chains: by name (``thumb``, ``index``, ``middle``, ``ring``,
   ``pinky``/``little``), else, with exactly five chains, ordered from the most forward
   (thumb) to the most backward (little); a ``metacarpal`` joint of a non-thumb finger is
   skipped; thumb segments are VRM 1.0's Metacarpal, Proximal, Distal.
"""

from __future__ import annotations

import re

import numpy as np

_IGNORE = re.compile(r"twist|roll|share|helper|_ik|ik_|pole|target|ctrl|mch-|nub|_end$|end$|end_site|site$",
                     re.IGNORECASE)
_END = re.compile(r"end|top|nub|tip|site", re.IGNORECASE)
_TRUNK = re.compile(r"spine|chest|torso|back|abdomen|tummy|belly|waist|neck|head", re.IGNORECASE)
_FINGER_WORDS = (("Thumb", r"thumb"), ("Index", r"index|pointer"), ("Middle", r"middle"),
                 ("Ring", r"ring"), ("Little", r"pinky|little|small"))


def _side_of_name(name: str) -> str | None:
    """'left', 'right' or None from a joint name's side marker."""
    n = name.rsplit(":", 1)[-1]
    if re.search(r"left", n, re.IGNORECASE):
        return "left"
    if re.search(r"right", n, re.IGNORECASE):
        return "right"
    if re.search(r"(^|[._\-\s])[lL]($|[._\-\s\d])", n) or re.match(r"^L(?=[A-Z])", n):
        return "left"
    if re.search(r"(^|[._\-\s])[rR]($|[._\-\s\d])", n) or re.match(r"^R(?=[A-Z])", n):
        return "right"
    return None


class _Tree:
    def __init__(self, names, parents, positions):
        self.names = [str(n) for n in names]
        self.parents = np.asarray(parents, np.int64)
        self.pos = np.asarray(positions, np.float64)
        n = len(self.names)
        self.children = [[] for _ in range(n)]
        for j, p in enumerate(self.parents.tolist()):
            if p >= 0:
                self.children[p].append(j)
        self.depth = np.zeros(n, np.int64)
        for j in range(n):
            d, p = 0, self.parents[j]
            while p >= 0:
                d, p = d + 1, self.parents[p]
            self.depth[j] = d

    def subtree(self, j: int) -> list[int]:
        out, stack = [], [j]
        while stack:
            k = stack.pop()
            out.append(k)
            stack.extend(self.children[k])
        return out

    def chain_len(self, j: int) -> int:
        """Joints on the longest downward path from j (j counted)."""
        return 1 + max((self.chain_len(c) for c in self.children[j]), default=0)

    def ignorable(self, j: int) -> bool:
        return bool(_IGNORE.search(self.names[j])) and not self.children[j]

    def reach(self, j: int, axis: np.ndarray, origin: np.ndarray) -> float:
        return float(max((self.pos[k] - origin) @ axis for k in self.subtree(j)))

    def main_chain(self, j: int) -> list[int]:
        """j, then repeatedly the child whose subtree reaches farthest from j's position."""
        chain = [j]
        while True:
            kids = [c for c in self.children[chain[-1]] if not self.ignorable(c)]
            if not kids:
                return chain
            base = self.pos[chain[-1]]
            chain.append(max(kids, key=lambda c: max(np.linalg.norm(self.pos[k] - base) for k in self.subtree(c))))


def _rise(t: _Tree, c: int, o, up, off_axis) -> float:
    """How well the subtree of ``c`` continues the trunk: the height of its highest joint
    above the hips less that joint's distance from the up axis (a head top scores high; a
    raised hand, as high but beside the axis, lower; a hanging accessory low)."""
    k = max(t.subtree(c), key=lambda j: float((t.pos[j] - o) @ up))
    return float((t.pos[k] - o) @ up) - off_axis(k)


def _find_hips(t: _Tree) -> int | None:
    cands = [j for j in range(len(t.names))
             if sum(1 for c in t.children[j] if not t.ignorable(c) and t.chain_len(c) >= 2) >= 3]
    if not cands:
        return None
    named = [j for j in cands if re.search(r"hip|pelvis", t.names[j], re.IGNORECASE)
             and not _side_of_name(t.names[j])]
    pool = named or cands
    return min(pool, key=lambda j: (t.depth[j], j))


def topology_bone_map(names, parents, positions) -> dict[str, int]:
    """{VRM 1.0 bone: joint index} from ``names`` (J,), ``parents`` (J,) (−1 for roots) and
    rest world ``positions`` (J, 3) (module doc); {} when no hips-like joint is found. Any
    length unit; bones it cannot place are left out."""
    t = _Tree(names, parents, positions)
    hips = _find_hips(t)
    if hips is None:
        return {}
    o = t.pos[hips]
    kids = [c for c in t.children[hips] if not t.ignorable(c) and t.chain_len(c) >= 2]
    # the spine holds the arms and the head: the largest subtree; the legs: the two longest others
    spine_c = max(kids, key=lambda c: (len(t.subtree(c)), -c))
    legs = sorted((c for c in kids if c != spine_c), key=lambda c: (-t.chain_len(c), c))[:2]
    ends = [t.pos[t.main_chain(leg)[-1]] for leg in legs]
    up = o - np.mean(ends, axis=0) if ends else np.array([0.0, 1.0, 0.0])
    up = up / (np.linalg.norm(up) or 1.0)

    def off_axis(k: int) -> float:
        d = t.pos[k] - o
        return float(np.linalg.norm(d - (d @ up) * up))

    bones: dict[str, int] = {"hips": hips}
    # trunk: from the spine up, always into the child whose subtree stays nearest the up axis
    trunk = [spine_c]
    while True:
        nxt = [c for c in t.children[trunk[-1]] if not t.ignorable(c)]
        if not nxt:
            break
        hinted = [c for c in nxt if _TRUNK.search(t.names[c]) and not _side_of_name(t.names[c])]
        c = max(hinted or nxt, key=lambda c: (_rise(t, c, o, up, off_axis), -c))
        seg = t.pos[c] - t.pos[trunk[-1]]
        n = float(np.linalg.norm(seg))
        if n > 1e-9 * max(1.0, float(np.linalg.norm(t.pos[c]))) and seg @ up < 0.5 * n:
            break                                # turns away from up (> 60°): the face, not the trunk
        trunk.append(c)
    on_trunk = set(trunk)
    branches = [(j, c) for j in trunk for c in t.children[j] if c not in on_trunk and not t.ignorable(c)
                and t.chain_len(c) >= 3]
    # forward: the toes' direction from the feet (else +Z); side axis = up x forward
    fwd = np.array([0.0, 0.0, 1.0])
    feet_dirs = []
    for leg in legs:
        ch = t.main_chain(leg)
        if len(ch) >= 2:
            d = t.pos[ch[-1]] - t.pos[ch[-2]]
            d = d - (d @ up) * up
            if np.linalg.norm(d) > 1e-9:
                feet_dirs.append(d / np.linalg.norm(d))
    if feet_dirs:
        f = np.mean(feet_dirs, axis=0)
        if np.linalg.norm(f) > 1e-9:
            fwd = f / np.linalg.norm(f)
    side_axis = np.cross(up, fwd)
    side_axis = side_axis / (np.linalg.norm(side_axis) or 1.0)

    def side(j: int) -> str:
        s = _side_of_name(t.names[j])
        if s is not None:
            return s
        return "left" if (t.pos[t.main_chain(j)[-1]] - o) @ side_axis > 0 else "right"

    arms = sorted(branches, key=lambda jc: (-max(off_axis(k) for k in t.subtree(jc[1])), jc[1]))[:2]
    if len(arms) == 2 and arms[0][0] == arms[1][0]:
        top = trunk.index(arms[0][0])
    elif arms:
        top = max(trunk.index(j) for j, _ in arms)
    else:
        top = None
    if top is not None:
        spine = trunk[:top + 1]
        above = trunk[top + 1:]
        if len(spine) == 1:
            bones["spine"] = spine[0]
        elif len(spine) == 2:
            bones["spine"], bones["chest"] = spine
        elif len(spine) == 3:
            bones["spine"], bones["chest"], bones["upperChest"] = spine
        else:
            bones["spine"], bones["chest"], bones["upperChest"] = spine[0], spine[len(spine) // 2], spine[-1]
        named = [j for j in above if re.search(r"head", t.names[j], re.IGNORECASE)
                 and not _END.search(t.names[j].lower().replace("head", ""))]
        if named:
            head = named[0]
        else:
            real = [j for j in above if not (not t.children[j] and _END.search(t.names[j]))]
            head = real[-1] if real else None
        if head is not None:
            bones["head"] = head
            neck = above[:above.index(head)]
            if neck:
                bones["neck"] = neck[0]
        for _, c in arms:
            _arm(t, c, side(c), bones, up, fwd)
    for leg in legs:
        _leg(t, leg, side(leg), bones)
    return bones


def _arm(t: _Tree, root: int, s: str, bones: dict, up, fwd) -> None:
    chain = t.main_chain(root)
    named = [i for i, j in enumerate(chain) if re.search(r"hand|wrist", t.names[j], re.IGNORECASE)
             and not any(re.search(w, t.names[j], re.IGNORECASE) for _, w in _FINGER_WORDS)]
    if named:
        h = named[0]
    else:
        fan = [i for i, j in enumerate(chain) if i >= 2
               and sum(1 for c in t.children[j] if not t.ignorable(c)) >= 2]
        h = fan[0] if fan else len(chain) - 1
    if h < 2:
        return
    bones[f"{s}Hand"], bones[f"{s}LowerArm"], bones[f"{s}UpperArm"] = chain[h], chain[h - 1], chain[h - 2]
    if h >= 3:
        bones[f"{s}Shoulder"] = chain[h - 3]
    _fingers(t, chain[h], s, bones, fwd)


def _leg(t: _Tree, root: int, s: str, bones: dict) -> None:
    chain = t.main_chain(root)
    named = [i for i, j in enumerate(chain) if re.search(r"foot|ankle", t.names[j], re.IGNORECASE)]
    if named and named[0] >= 2:
        f = named[0]
    else:
        seg = [np.linalg.norm(t.pos[chain[i + 1]] - t.pos[chain[i]]) for i in range(len(chain) - 1)]
        if len(seg) < 2:
            return
        i = max(range(len(seg) - 1), key=lambda k: seg[k] + seg[k + 1])
        f = i + 2
        if f >= len(chain):
            return
    bones[f"{s}UpperLeg"], bones[f"{s}LowerLeg"], bones[f"{s}Foot"] = chain[f - 2], chain[f - 1], chain[f]
    if f + 1 < len(chain) and (t.children[chain[f + 1]] or not _END.search(t.names[chain[f + 1]])):
        bones[f"{s}Toes"] = chain[f + 1]


def _fingers(t: _Tree, hand: int, s: str, bones: dict, fwd) -> None:
    chains = [c for c in t.children[hand] if not t.ignorable(c)]
    kinds: dict[str, int] = {}
    for c in chains:
        for finger, word in _FINGER_WORDS:
            if any(re.search(word, t.names[k], re.IGNORECASE) for k in t.main_chain(c)[:2]) and finger not in kinds:
                kinds[finger] = c
                break
    if len(kinds) < len(chains) and len(chains) == 5 and not kinds:
        order = sorted(chains, key=lambda c: -float((t.pos[t.main_chain(c)[-1]] - t.pos[hand]) @ fwd))
        kinds = dict(zip(("Thumb", "Index", "Middle", "Ring", "Little"), order))
    for finger, c in kinds.items():
        joints = [j for j in t.main_chain(c) if not (not t.children[j] and _END.search(t.names[j]))]
        if finger != "Thumb" and len(joints) > 3 and re.search(r"metacarpal|base|palm", t.names[joints[0]], re.I):
            joints = joints[1:]
        segs = ("Metacarpal", "Proximal", "Distal") if finger == "Thumb" else ("Proximal", "Intermediate", "Distal")
        for seg, j in zip(segs, joints):
            bones[f"{s}{finger}{seg}"] = j
