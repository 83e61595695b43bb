"""A whole-body pose in a sample: humanoid bone rotations, hips, expression weights — what a
network performer (VMC, :mod:`runtime.vmc`) hands the loop besides the head pose.

Avatar-free (docs/design.md §1: tracking knows no avatar): bones are named by the VRM 1.0 humanoid
names (:data:`BODY_BONES`, the same 55 names as :data:`avatars.humanoid.HUMAN_BONES`) and
carry *normalized* local rotations: the rotation of the bone's world rest-relative change
relative to its parent's, n_b = D_parent⁻¹ · D_b with D = W · W0⁻¹ (three-vrm's normalized
humanoid; a bone at rest is the identity whatever the file's rest rotations). Frame: the
avatar frame (glTF, right-handed, +Y up, avatar facing +Z). The hips position is the hips
offset from the avatar root in world-aligned axes, metres, as the sender gave it (relative to
its root). The *root* (``root``, flag :data:`F_ROOT`) is the sender's placement of the whole
avatar (VMC ``/VMC/Ext/Root/Pos``): position and rotation applied on top of the hips, whether
the hips come from the body pose or from the avatar's own motion — a root without hips moves
the avatar as it stands, never drops it to the floor.

A body pose names what it drives — the bones with ``mask`` 1, the hips position with
:data:`F_HIPS`, the root with :data:`F_ROOT` — and leaves the rest to the avatar (its clip,
its head drive). ``weight`` (0..1) is how much of what it names it drives: 1 replaces, 0
leaves the avatar's own pose; a silent network sender is eased out by lowering it
(:mod:`runtime.vmc.input`).

Expression weights are VRM 1.0 preset names (:data:`EXPRESSION_NAMES`); ARKit ("perfect
sync") channels go to the sample's 52 blendshapes. Sampling between two records
(:func:`sample_body_kernel`) slerps every bone and the root rotation, lerps hips, root
position, expression weights and ``weight``; a bone or flag is on only when both records
have it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from avatars.kernel_cache import refresh
from avatars.math_kernels import cursor_search, slerp_shoemake

_TORSO = ["hips", "spine", "chest", "upperChest", "neck", "head", "leftEye", "rightEye", "jaw"]
_LIMBS = [f"{s}{p}" for s in ("left", "right")
          for p in ("UpperLeg", "LowerLeg", "Foot", "Toes", "Shoulder", "UpperArm", "LowerArm", "Hand")]
_FINGERS = [f"{s}{f}{g}" for s in ("left", "right")
            for f, segs in (("Thumb", ("Metacarpal", "Proximal", "Distal")),
                            ("Index", ("Proximal", "Intermediate", "Distal")),
                            ("Middle", ("Proximal", "Intermediate", "Distal")),
                            ("Ring", ("Proximal", "Intermediate", "Distal")),
                            ("Little", ("Proximal", "Intermediate", "Distal")))
            for g in segs]
#: The 55 VRM 1.0 humanoid bone names, in the order of :data:`avatars.humanoid.HUMAN_BONES`.
BODY_BONES: tuple[str, ...] = tuple(_TORSO + _LIMBS + _FINGERS)
BONE_INDEX: dict[str, int] = {n: i for i, n in enumerate(BODY_BONES)}
NUM_BONES = len(BODY_BONES)
HIPS = BONE_INDEX["hips"]

#: VRM 1.0 preset expressions a body pose carries, in this order.
EXPRESSION_NAMES: tuple[str, ...] = (
    "happy", "angry", "sad", "relaxed", "surprised", "aa", "ih", "ou", "ee", "oh",
    "blink", "blinkLeft", "blinkRight", "lookUp", "lookDown", "lookLeft", "lookRight", "neutral",
)
EXPRESSION_INDEX: dict[str, int] = {n: i for i, n in enumerate(EXPRESSION_NAMES)}
NUM_EXPRESSIONS = len(EXPRESSION_NAMES)

# the flat layout of BodyPose.data (what the compiled rig reads)
BD_BONES = 0
BD_MASK = BD_BONES + 4 * NUM_BONES
BD_HIPS = BD_MASK + NUM_BONES
BD_ROOT = BD_HIPS + 3            # (7) root position (3), rotation xyzw (4)
BD_EXPR = BD_ROOT + 7
BD_FLAGS = BD_EXPR + NUM_EXPRESSIONS

# flags (float64, 1.0 / 0.0)
F_ON = 0          # the sample carries a body (bones with mask 1 drive the avatar)
F_HIPS = 1        # the hips position is set
F_EXPR = 2        # the expression weights are set (they replace the mapped blendshapes)
F_ARKIT = 3       # the blendshapes came from the body's source (perfect sync names)
F_ROOT = 4        # the root placement is set
NUM_FLAGS = 5
BD_WEIGHT = BD_FLAGS + NUM_FLAGS   # (1) how much of what it names the pose drives, 0..1
BD_W = BD_WEIGHT + 1


class BodyPose:
    """A body pose at one time (module doc); reuse one as ``out=``.

    Attributes:
        bones: (55, 4) normalized local rotations (x, y, z, w), identity where absent.
        mask: (55,) 1.0 where a bone was received, else 0.0.
        hips: (3,) hips position, metres (valid when ``flags[F_HIPS]``).
        root: (7,) root position (metres) and rotation (x, y, z, w), avatar frame (valid when
            ``flags[F_ROOT]``; identity otherwise).
        expressions: (18,) VRM 1.0 preset weights (:data:`EXPRESSION_NAMES`), 0..1.
        flags: (5,) :data:`F_ON`, :data:`F_HIPS`, :data:`F_EXPR`, :data:`F_ARKIT`,
            :data:`F_ROOT` as 1.0/0.0.
        weight: (1,) how much of what it names the pose drives (module doc), 1.0 by default.
        data: (BD_W,) the one buffer all of the above are views of (layout ``BD_*``).
    """

    __slots__ = ("data", "bones", "mask", "hips", "root", "expressions", "flags", "weight")

    def __init__(self) -> None:
        self.data = np.zeros(BD_W)
        self.bones = self.data[BD_BONES:BD_MASK].reshape(NUM_BONES, 4)
        self.bones[:, 3] = 1.0
        self.mask = self.data[BD_MASK:BD_HIPS]
        self.hips = self.data[BD_HIPS:BD_ROOT]
        self.root = self.data[BD_ROOT:BD_EXPR]
        self.root[6] = 1.0
        self.expressions = self.data[BD_EXPR:BD_FLAGS]
        self.flags = self.data[BD_FLAGS:BD_WEIGHT]
        self.weight = self.data[BD_WEIGHT:BD_W]
        self.weight[0] = 1.0

    @property
    def on(self) -> bool:
        return bool(self.flags[F_ON])

    def clear(self) -> None:
        self.bones[:] = 0.0
        self.bones[:, 3] = 1.0
        self.mask[:] = 0.0
        self.hips[:] = 0.0
        self.root[:] = 0.0
        self.root[6] = 1.0
        self.expressions[:] = 0.0
        self.flags[:] = 0.0
        self.weight[0] = 1.0

    def copy_from(self, other: BodyPose) -> None:
        self.data[:] = other.data

    def copy(self) -> BodyPose:
        b = BodyPose()
        b.copy_from(self)
        return b


@njit(inline="always", cache=True)
def _locate(t, times, n, cursor):
    """The record k of ``times[:n]`` at or before t (:func:`avatars.math_kernels.cursor_search`);
    ``cursor`` (1,) int64 keeps it."""
    k = cursor_search(times, 0, n, t, cursor[0])
    cursor[0] = k
    return k


@njit(inline="always", cache=True)
def _slerp_row(qa, qb, u, out):
    """slerp(qa, qb, u) (:func:`avatars.math_kernels.slerp_shoemake`, as the pose tracks of
    :mod:`tracking.track_sampling`); two equal records give that record exactly."""
    ax, ay, az, aw = qa[0], qa[1], qa[2], qa[3]
    bx, by, bz, bw = qb[0], qb[1], qb[2], qb[3]
    if ax == bx and ay == by and az == bz and aw == bw:   # a held pose: exactly that pose
        out[0], out[1], out[2], out[3] = ax, ay, az, aw
        return
    out[0], out[1], out[2], out[3] = slerp_shoemake(ax, ay, az, aw, bx, by, bz, bw, u)


@njit(cache=True, _nrt=False)
def sample_gaze_kernel(t_ns, offset_ns, times, n, gaze, cursor, out_gaze):
    """Gaze (yaw, pitch) at track time ``t_ns − offset_ns`` from records ``times[:n]``,
    ``gaze[:n]`` (N, 2): linear between the two records around it, held outside."""
    t = t_ns - offset_ns
    k = _locate(t, times, n, cursor)
    if t <= times[0] or k == n - 1 or t == times[k]:
        i = 0 if t <= times[0] else k
        out_gaze[0] = gaze[i, 0]
        out_gaze[1] = gaze[i, 1]
        return 0
    u = float(t - times[k]) / float(times[k + 1] - times[k])
    for j in range(2):
        out_gaze[j] = (gaze[k + 1, j] - gaze[k, j]) * u + gaze[k, j]
    return 0


@njit(cache=True, _nrt=False)
def sample_body_kernel(t_ns, offset_ns, times, n, bones, mask, hips, root, expr, flags, weight, cursor,
                       out_bones, out_mask, out_hips, out_root, out_expr, out_flags, out_weight):
    """The body pose at track time ``t_ns − offset_ns`` from records ``[:n]``: ``bones``
    (N, 55, 4), ``mask`` (N, 55), ``hips`` (N, 3), ``root`` (N, 7), ``expr`` (N, 18),
    ``flags`` (N, 5), ``weight`` (N,) (module doc). At a record's time, before the first and
    after the last: that record exactly."""
    t = t_ns - offset_ns
    k = _locate(t, times, n, cursor)
    nb = bones.shape[1]
    if t <= times[0] or k == n - 1 or t == times[k]:
        i = 0 if t <= times[0] else k
        for b in range(nb):
            for j in range(4):
                out_bones[b, j] = bones[i, b, j]
            out_mask[b] = mask[i, b]
        for j in range(3):
            out_hips[j] = hips[i, j]
        for j in range(7):
            out_root[j] = root[i, j]
        for j in range(expr.shape[1]):
            out_expr[j] = expr[i, j]
        for j in range(flags.shape[1]):
            out_flags[j] = flags[i, j]
        out_weight[0] = weight[i]
        return 0
    u = float(t - times[k]) / float(times[k + 1] - times[k])
    for b in range(nb):
        _slerp_row(bones[k, b], bones[k + 1, b], u, out_bones[b])
        out_mask[b] = min(mask[k, b], mask[k + 1, b])
    for j in range(3):
        out_hips[j] = (hips[k + 1, j] - hips[k, j]) * u + hips[k, j]
        out_root[j] = (root[k + 1, j] - root[k, j]) * u + root[k, j]
    _slerp_row(root[k, 3:7], root[k + 1, 3:7], u, out_root[3:7])
    for j in range(expr.shape[1]):
        out_expr[j] = (expr[k + 1, j] - expr[k, j]) * u + expr[k, j]
    for j in range(flags.shape[1]):
        out_flags[j] = min(flags[k, j], flags[k + 1, j])
    out_weight[0] = (weight[k + 1] - weight[k]) * u + weight[k]
    return 0


# the kernels of this folder (here and tracking.track_sampling) inline the shared math only
refresh(sample_body_kernel)
