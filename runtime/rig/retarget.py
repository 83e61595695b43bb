"""World-space retargeting of a :class:`avatars.clips.Clip` onto one avatar (docs/design.md §10).

From the clip's rest pose to the avatar's rest pose, in world space, so any humanoid plays
any clip whatever its bones' local axes (VRM 1.0 T-pose, VRM 0.x turned to face +Z by the
loader, our A-posed generated avatars). Terms (all rotations world, xyzw; module doc of
:mod:`avatars.clips.model` for D_b):

- R0_b: the avatar bone's rest world rotation; R0_np the rest world rotation of its node
  parent (a humanoid bone or a helper node between bones);
- G_b (*rest alignment*): the shortest arc taking the avatar's rest bone direction (bone ->
  child bone) onto the clip's, for limbs, hands, feet and fingers (torso and head: I; a bone
  without a child on both sides takes its parent's G). The avatar "in the clip's rest
  pose" is then G_b · R0_b: an A-posed avatar lifts its arms to the clip's T-pose before
  the clip's motion applies;
- E_b(t): the avatar bone's world delta. A bone the clip drives: E_b = D_b(t) · G_b. A bone
  the clip does not drive keeps its base local rotation B_b (the rest, or the lowered arms
  of :meth:`runtime.rig.drive.HeadDrive.relaxed_arms`): E_b = E_a · R0_np · B_b · R0_b⁻¹,
  a the nearest humanoid ancestor;
- the local rotation written for the bone: L_b(t) = R0_np⁻¹ · E_a(t)⁻¹ · E_b(t) · R0_b (a
  helper node between a and b is rigid: its world rotation is E_a · R0_np).

So bones only one side has are handled in world space: a clip's upperChest folds into the
avatar's chest -> neck, an avatar's upperChest the clip lacks follows the chest.

Hips translation: the avatar's hips world position is its rest position plus the clip's hips
motion from the clip's rest, scaled by leg length (s = avatar / clip, thigh + shin, both
sides averaged; the hips height above the feet when a leg is missing):
p(t) = p0_avatar + s · (p_clip(t) − p0_clip). *Root motion*: with ``in_place`` the clip's
horizontal drift from its first key to its last is removed linearly in time (the sway and
bob stay); a clip that does not loop (a motion capture that starts from standing, curves or
slows down) also loses the rest of its slow horizontal path (:data:`IN_PLACE_WINDOW_S`), so
it never walks toward or away from the camera; without it the player carries the drift on
from loop to loop.

Node tracks (hair and other non-humanoid nodes): an avatar node of the same name that is
neither a humanoid bone nor above one plays the clip's local rotation relative to the
clip's rest: L = B_node · L0_clip⁻¹ · L_clip(t) (exactly the clip's when the rests agree).

Everything here is numpy at build time; :mod:`runtime.rig.motion` samples the result per
substep without allocating.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from avatars import Avatar
from avatars.clips import Clip, ClipError
from avatars.humanoid import HUMAN_BONES, REQUIRED_BONES
from avatars.math3d import mat_decompose, quat_conj, quat_from_vecs, quat_mul, quat_normalize

IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


#: In place, a one-shot clip's horizontal hips motion slower than this window (seconds) is its
#: path, removed; faster motion (the sway of a step, ~1 s a gait cycle) stays.
IN_PLACE_WINDOW_S = 2.0
_PATH_RATE_HZ = 120.0


def _slow_path(times: np.ndarray, move: np.ndarray) -> np.ndarray:
    """(K, 3) the slow part of ``move`` (K, 3) sampled at ``times`` (K,) seconds, less its
    value at the first key: a centred local quadratic fit over :data:`IN_PLACE_WINDOW_S` (the
    clip's length when shorter; Savitzky-Golay smoothing weights on a 120 Hz grid), so a path
    that speeds up or slows down is followed (a moving average lagged a start from standing
    by ~20 cm) while the sway of each step (~1 s) is kept (97 % of it in
    tests/runtime/rig/test_in_place_capture.py); the ends extended by point reflection, so a
    straight path leaves nothing and the first and last keys stay where they are."""
    t0, t1 = float(times[0]), float(times[-1])
    n = max(int(round((t1 - t0) * _PATH_RATE_HZ)), 1)
    grid = np.linspace(t0, t1, n + 1)
    x = np.stack([np.interp(grid, times, move[:, c]) for c in range(3)], axis=1)
    half = max(1, min(int(round(IN_PLACE_WINDOW_S * _PATH_RATE_HZ / 2)), n))
    ext = np.concatenate([2 * x[0] - x[half:0:-1], x, 2 * x[-1] - x[-2:-half - 2:-1]])
    m = half
    j = np.arange(-m, m + 1, dtype=np.float64)
    w = 3.0 * (3 * m * m + 3 * m - 1 - 5 * j * j) / ((2 * m + 3) * (2 * m + 1) * (2 * m - 1))
    avg = np.stack([np.convolve(ext[:, k], w[::-1], mode="valid") for k in range(3)], axis=1)
    slow = avg - avg[0]
    return np.stack([np.interp(times, grid, slow[:, k]) for k in range(3)], axis=1)


def _parent_map() -> dict[str, str | None]:
    p: dict[str, str | None] = {"hips": None, "spine": "hips", "chest": "spine", "upperChest": "chest",
                                "neck": "upperChest", "head": "neck", "leftEye": "head", "rightEye": "head",
                                "jaw": "head"}
    for s in ("left", "right"):
        p.update({f"{s}UpperLeg": "hips", f"{s}LowerLeg": f"{s}UpperLeg", f"{s}Foot": f"{s}LowerLeg",
                  f"{s}Toes": f"{s}Foot", f"{s}Shoulder": "upperChest", f"{s}UpperArm": f"{s}Shoulder",
                  f"{s}LowerArm": f"{s}UpperArm", f"{s}Hand": f"{s}LowerArm"})
        for f in ("Thumb", "Index", "Middle", "Ring", "Little"):
            segs = ("Metacarpal", "Proximal", "Distal") if f == "Thumb" else ("Proximal", "Intermediate", "Distal")
            prev = f"{s}Hand"
            for seg in segs:
                p[f"{s}{f}{seg}"] = prev
                prev = f"{s}{f}{seg}"
    return p


#: The VRM 1.0 humanoid hierarchy (three-vrm's VRMHumanBoneParentMap).
HUMAN_PARENT = _parent_map()

#: The child whose direction defines a bone's direction for the rest alignment.
_DIRECTION_CHILD = {}
for _s in ("left", "right"):
    _DIRECTION_CHILD.update({
        f"{_s}Shoulder": f"{_s}UpperArm", f"{_s}UpperArm": f"{_s}LowerArm", f"{_s}LowerArm": f"{_s}Hand",
        f"{_s}Hand": f"{_s}MiddleProximal", f"{_s}UpperLeg": f"{_s}LowerLeg", f"{_s}LowerLeg": f"{_s}Foot",
        f"{_s}Foot": f"{_s}Toes"})
    for _f in ("Thumb", "Index", "Middle", "Ring", "Little"):
        _segs = ("Metacarpal", "Proximal", "Distal") if _f == "Thumb" else ("Proximal", "Intermediate", "Distal")
        for _a, _b in zip(_segs, _segs[1:]):
            _DIRECTION_CHILD[f"{_s}{_f}{_a}"] = f"{_s}{_f}{_b}"
        _DIRECTION_CHILD.setdefault(f"{_s}{_f}{_segs[-1]}", None)
#: Bones the rest alignment applies to (limbs, hands, feet, fingers).
ALIGNED = frozenset(b for b in HUMAN_BONES if b.startswith(("left", "right")) and not b.endswith("Eye"))


@dataclass(frozen=True)
class RetargetOptions:
    """How a clip is put on an avatar.

    Attributes:
        in_place: remove the clip's horizontal root motion (module doc).
        rest_align: align limb directions from the clip's rest pose to the avatar's (G_b);
            False plays the clip's deltas on the avatar's rest as they are (three-vrm's way).
    """

    in_place: bool = False
    rest_align: bool = True


@dataclass(frozen=True, eq=False)
class RetargetedClip:
    """A clip ready to play on one avatar.

    Attributes:
        name: the clip's name; ``source`` its file.
        times: (K,) key times, seconds from 0.
        nodes: (B,) int64 avatar nodes whose local rotation the clip writes.
        local: (K, B, 4) their local rotations (xyzw) at every key.
        hips: the avatar's hips node, or −1 when the clip does not move it.
        hips_local: (K, 3) the hips' local translation at every key (metres).
        drift: (3,) hips local translation gained per loop (root motion carried on; zero
            when in place or for clips without it).
        loop: the clip loops.
        authored: (A,) int64 the hair (spring) joints among ``nodes``: the clip owns them.
        expressions: {expression: (K,) weight}.
        bones: {VRM bone: node} of the humanoid bones the clip drives on this avatar.
        scale: the leg-length ratio s applied to the hips' motion.
        missing_required: VRM-required bones the avatar has that the clip does not drive.
        notes: what the retargeting assumed.
    """

    name: str
    source: str
    times: np.ndarray
    nodes: np.ndarray
    local: np.ndarray
    hips: int
    hips_local: np.ndarray
    drift: np.ndarray
    loop: bool
    authored: np.ndarray
    expressions: dict[str, np.ndarray] = field(default_factory=dict)
    bones: dict[str, int] = field(default_factory=dict)
    scale: float = 1.0
    missing_required: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def duration_s(self) -> float:
        return float(self.times[-1])


def _leg(pos: dict[str, np.ndarray]) -> float | None:
    sides = []
    for s in ("left", "right"):
        keys = (f"{s}UpperLeg", f"{s}LowerLeg", f"{s}Foot")
        if all(k in pos for k in keys):
            a, b, c = (pos[k] for k in keys)
            sides.append(float(np.linalg.norm(b - a) + np.linalg.norm(c - b)))
    return float(np.mean(sides)) if sides else None


def humanoid_ancestor(avatar: Avatar, node: int, humanoid_nodes: set[int]) -> int:
    """The nearest strict ancestor of ``node`` that is a humanoid bone, or −1."""
    p = int(avatar.skeleton.parents[node])
    while p >= 0 and p not in humanoid_nodes:
        p = int(avatar.skeleton.parents[p])
    return p


def retarget(clip: Clip, avatar: Avatar, *, options: RetargetOptions = RetargetOptions(),
             base_rotation: np.ndarray | None = None) -> RetargetedClip:
    """Put ``clip`` on ``avatar`` (module doc).

    Args:
        base_rotation: (N, 4) the rig's base local rotations (rest with static overrides);
            None: the avatar's rest rotations.

    Raises:
        ClipError: the avatar has no hips, the clip drives none of the avatar's bones, or a
            value came out non-finite (the message names clip, avatar and bone).
    """
    sk = avatar.skeleton
    hum = {b: n for b, n in avatar.humanoid.items() if b in HUMAN_BONES}
    if "hips" not in hum:
        raise ClipError(clip.source, f"clip {clip.name!r}", f"{avatar.path}: the avatar has no humanoid hips")
    rest_t, rest_q, _ = mat_decompose(sk.rest_world)
    rest_q = quat_normalize(rest_q)
    base = sk.rest_rotation if base_rotation is None else np.asarray(base_rotation, np.float64)
    hnodes = set(hum.values())
    k = len(clip.times)
    notes = list(clip.notes)
    # rest alignment G_b
    align = {}
    if options.rest_align and clip.rest is not None:
        cp = clip.rest.position
        ap = {b: rest_t[n] for b, n in hum.items()}
        for b in sorted(ALIGNED & set(hum) & set(clip.rotations), key=HUMAN_BONES.index):
            c = _DIRECTION_CHILD.get(b)
            if c is not None and c in ap and c in cp:
                u_av, u_cl = ap[c] - ap[b], cp[c] - cp[b]
                if np.linalg.norm(u_av) > 1e-6 and np.linalg.norm(u_cl) > 1e-6:
                    align[b] = quat_from_vecs(u_av / np.linalg.norm(u_av), u_cl / np.linalg.norm(u_cl))
                    continue
            p = HUMAN_PARENT.get(b)
            while p is not None and p not in align and p not in hum:
                p = HUMAN_PARENT.get(p)
            align[b] = align.get(p, IDENTITY) if p is not None else IDENTITY
    # world deltas E_b, parents first
    order = sorted(hum, key=lambda b: (len(_node_path(sk.parents, hum[b])), HUMAN_BONES.index(b)))
    E: dict[int, np.ndarray] = {}
    covered = {}
    local = {}
    for b in order:
        n = hum[b]
        a = humanoid_ancestor(avatar, n, hnodes)
        ea = E[a] if a >= 0 else np.broadcast_to(IDENTITY, (k, 4))
        np_ = int(sk.parents[n])
        r0np = rest_q[np_] if np_ >= 0 else IDENTITY
        if b in clip.rotations:
            e = quat_mul(clip.rotations[b], align.get(b, IDENTITY))
            covered[b] = n
            # L = R0_np⁻¹ · E_a⁻¹ · E_b · R0_b
            local[n] = quat_mul(quat_mul(quat_conj(r0np), quat_mul(quat_conj(ea), e)), rest_q[n])
        else:
            z = quat_mul(quat_mul(r0np, base[n]), quat_conj(rest_q[n]))
            e = quat_mul(ea, z)
        E[n] = quat_normalize(e)
    if not covered:
        raise ClipError(clip.source, f"clip {clip.name!r}", f"drives none of the humanoid bones of {avatar.path}")
    # hips translation
    hips = hum["hips"]
    hp = int(sk.parents[hips])
    parent_world = sk.rest_world[hp] if hp >= 0 else np.eye(4)
    inv_parent = np.linalg.inv(parent_world)
    drift = np.zeros(3)
    scale = 1.0
    if clip.hips_position is not None:
        pos = np.asarray(clip.hips_position, np.float64)
        if clip.rest is None:
            move = pos
        else:
            ap = {b: rest_t[n] for b, n in hum.items()}
            la, lc = _leg(ap), _leg(clip.rest.position)
            if la is not None and lc is not None and lc > 1e-6:
                scale = la / lc
            else:
                ha = rest_t[hips][1] - min(rest_t[n][1] for n in hnodes)
                hc = clip.rest.position["hips"][1] - clip.rest.ground_y
                scale = ha / hc if hc > 1e-6 else 1.0
                notes.append("hips motion scaled by hips height (no whole leg on one side)")
            move = scale * (pos - clip.rest.position["hips"])
        horiz = np.array([1.0, 0.0, 1.0])
        d = (move[-1] - move[0]) * horiz
        if options.in_place and clip.duration_s > 0:
            move = move - (clip.times / clip.duration_s)[:, None] * d
            if not clip.loop:         # a one-shot capture's path may curve or change speed
                move = move - _slow_path(clip.times, move * horiz)
        elif clip.loop:
            drift = inv_parent[:3, :3] @ d
        world = rest_t[hips] + move
        hips_local = world @ inv_parent[:3, :3].T + inv_parent[:3, 3]
    else:
        hips_local = np.broadcast_to(sk.rest_translation[hips], (k, 3)).copy()
    # node tracks
    above = set()
    for n in hnodes:
        p = int(sk.parents[n])
        while p >= 0:
            above.add(p)
            p = int(sk.parents[p])
    by_name: dict[str, int] = {}
    for i, nm in enumerate(sk.names):
        if nm and nm not in by_name:
            by_name[nm] = i
    for nm, track in clip.node_tracks.items():
        n = by_name.get(nm, -1)
        if n < 0 or n in hnodes or n in above:
            continue
        delta = quat_mul(quat_conj(clip.node_rest[nm]), track)
        local[n] = quat_normalize(quat_mul(base[n], delta))
    nodes = np.array(sorted(local), np.int64)
    rot = np.ascontiguousarray(np.stack([quat_normalize(local[n]) for n in nodes], axis=1))
    spring_nodes = {int(j.node) for s in avatar.springs for j in s.joints}
    authored = np.array(sorted(set(nodes.tolist()) & spring_nodes), np.int64)
    bad_humanoid = set(covered.values()) & spring_nodes
    if bad_humanoid:
        raise ClipError(clip.source, f"clip {clip.name!r}", f"{avatar.path}: humanoid bones "
                        f"{sorted(bad_humanoid)} are spring joints; a body track would fight the hair")
    for arr, what in ((rot, "rotation"), (hips_local, "hips translation")):
        if not np.all(np.isfinite(arr)):
            raise ClipError(clip.source, f"clip {clip.name!r}", f"retargeted {what} on {avatar.path} is not finite")
    missing = tuple(b for b in REQUIRED_BONES if b in hum and b not in covered)
    return RetargetedClip(
        name=clip.name, source=clip.source, times=np.ascontiguousarray(clip.times), nodes=nodes, local=rot,
        hips=hips if clip.hips_position is not None else -1, hips_local=np.ascontiguousarray(hips_local),
        drift=drift, loop=clip.loop, authored=authored, expressions=dict(clip.expressions), bones=covered,
        scale=float(scale), missing_required=missing, notes=tuple(notes))


def _node_path(parents: np.ndarray, n: int) -> list[int]:
    out = []
    while n >= 0:
        out.append(n)
        n = int(parents[n])
    return out


def normalized_rotations(rc: RetargetedClip, avatar: Avatar, local: np.ndarray) -> dict[str, np.ndarray]:
    """{VRM bone: (..., 4)} normalized local rotations (three-vrm's normalized humanoid:
    n_b = R0_hp · L_b · R0_b⁻¹ with hp the node parent) of local rotations ``local``
    (..., B, 4) laid out as ``rc.nodes`` — for comparing with three-vrm."""
    sk = avatar.skeleton
    _, rest_q, _ = mat_decompose(sk.rest_world)
    rest_q = quat_normalize(rest_q)
    col = {int(n): i for i, n in enumerate(rc.nodes)}
    out = {}
    for b, n in rc.bones.items():
        p = int(sk.parents[n])
        r0p = rest_q[p] if p >= 0 else IDENTITY
        out[b] = quat_mul(quat_mul(r0p, local[..., col[n], :]), quat_conj(rest_q[n]))
    return out
