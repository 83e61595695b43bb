"""Losing and finding the face again without a jump.

When the face is lost at time t_L (the last time it was seen), the output

- holds the last pose for ``hold_s``;
- then eases to neutral (identity rotation, zero displacement, zero blendshapes) over
  ``ease_s`` with the smoothstep weight w(u) = 3u² − 2u³, u = (t − t_L − hold_s)/ease_s;

and when the face is found again at t_R, the output blends from the lost-face pose F at
t_R to the live pose L(t) over ``reacquire_s``, again with smoothstep weights.

Smoothstep has zero slope at both ends, so the pose is continuous and so is its velocity
at the blend boundaries (apart from the live motion itself). The peak angular speed of the
ease is 1.5·θ/ease_s for a held pose θ away from neutral (max of w' is 1.5/ease_s); the
re-acquire adds at most 1.5·angle(F, L)/reacquire_s to the live motion.
"""

from __future__ import annotations

from dataclasses import dataclass

from avatars.math3d import QUAT_IDENTITY, quat_slerp_scalar


@dataclass(frozen=True)
class LostFaceOptions:
    """Settings of the lost-face behaviour, seconds (module doc).

    Attributes:
        hold_s: keep the last pose this long after the face was last seen.
        ease_s: then ease to neutral over this long.
        reacquire_s: blend back to the live pose over this long when the face returns.
        stale_s: no observation at all for this long also counts as lost (a stalled
            camera), measured from the newest observation.
    """

    hold_s: float = 0.5
    ease_s: float = 1.0
    reacquire_s: float = 0.4
    stale_s: float = 0.25

    def __post_init__(self) -> None:
        if self.hold_s < 0 or self.ease_s <= 0 or self.reacquire_s <= 0 or self.stale_s <= 0:
            raise ValueError(f"lost-face times must be positive: {self}")


def smoothstep(u: float) -> float:
    """3u² − 2u³ clamped to [0, 1]: C¹, zero slope at both ends."""
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return 1.0
    return u * u * (3.0 - 2.0 * u)


def ease_weight(elapsed_s: float, options: LostFaceOptions) -> float:
    """Weight of neutral ``elapsed_s`` after the face was last seen (0 while holding)."""
    return smoothstep((elapsed_s - options.hold_s) / options.ease_s)


def reacquire_weight(since_s: float, options: LostFaceOptions) -> float:
    """Weight of the live pose ``since_s`` after the face was found again."""
    return smoothstep(since_s / options.reacquire_s)


def blend_into(rot_a, tr_a, bs_a, rot_b, tr_b, bs_b, w: float, rot_out, tr_out, bs_out) -> None:
    """(1 − w)·A + w·B per part (slerp for rotations) into preallocated outputs.

    The outputs may alias A (not B).
    """
    quat_slerp_scalar(rot_a, rot_b, w, out=rot_out)
    for a, b, out in ((tr_a, tr_b, tr_out), (bs_a, bs_b, bs_out)):
        if out is not a:
            out[:] = a
        if w:
            out *= 1.0 - w
            out += w * b


def ease_to_neutral(rot, tr, bs, w: float, rot_out, tr_out, bs_out) -> None:
    """The held pose eased toward neutral by weight ``w``, into the outputs (may alias)."""
    quat_slerp_scalar(rot, QUAT_IDENTITY, w, out=rot_out)
    if tr_out is not tr:
        tr_out[:] = tr
    tr_out *= 1.0 - w
    if bs_out is not bs:
        bs_out[:] = bs
    bs_out *= 1.0 - w

