"""The one clip model every source becomes (docs/design.md §10): humanoid bone rotation tracks in
world space, hips translation, optional expression, lookAt and node (hair) tracks.

A :class:`Clip` is what :mod:`avatars.clips.vrma`, :mod:`avatars.clips.gltf_anim` and
:mod:`avatars.clips.bvh` produce, and what the runtime's retargeter
(:mod:`runtime.rig.retarget`) reads. Everything is expressed after loading in the avatar
convention (docs/design.md §3): metres, +Y up, the character facing +Z (its left side at +X).

Rotation tracks are *world deltas*: for humanoid bone b at key time t_k,

    D_b(t_k) = W_b(t_k) · C_b⁻¹

where W_b is the bone's animated world rotation and C_b its world rotation in the clip's
rest pose (:class:`ClipRest`), both from forward kinematics of the clip's own skeleton.
D_b is the rotation the bone made from its rest in world space: the quantity world-space
retargeting carries from one skeleton to another, whatever their local axes. The normalized
local rotation of the VRM humanoid (three-vrm's "normalized bones") follows as
n_b = D_parent⁻¹ · D_b (parent: the nearest humanoid ancestor the clip has).

A clip shorter than one 120 Hz substep, a key time or value that is not finite, or key
times that go backwards are refused at construction (:class:`ClipError`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import AvatarError

#: The shortest clip that can be played: one substep of the 120 Hz solver (seconds).
MIN_DURATION_S = 1.0 / 120.0


class ClipError(AvatarError):
    """A clip file cannot be loaded or played. The message names the file and the element
    (``animations[0].channels[3]``, ``line 245``, a bone); ``path``, ``element`` and
    ``reason`` as :class:`avatars.AvatarError` (a ValueError)."""


@dataclass(frozen=True, eq=False)
class ClipRest:
    """The clip skeleton's rest pose for its humanoid bones (world, metres, facing +Z).

    Attributes:
        rotation: {bone: (4,) xyzw world rotation C_b}.
        position: {bone: (3,) world position, metres}.
        ground_y: the height of the lowest joint of the rest pose (metres): where the feet
            stand; hips heights are measured from it.
    """

    rotation: dict[str, np.ndarray]
    position: dict[str, np.ndarray]
    ground_y: float = 0.0


@dataclass(frozen=True, eq=False)
class Clip:
    """One playable motion (module doc for the frames and the rotation convention).

    Attributes:
        name: the clip's name (the animation's name, or the file's stem).
        source: the file it came from ("" for generated clips).
        times: (K,) float64 key times in seconds, strictly increasing, starting at 0.
        rotations: {VRM 1.0 humanoid bone name: (K, 4) xyzw world delta D_b}.
        hips_position: (K, 3) world position of the hips (metres), or None (no translation).
        rest: the rest pose D_b is relative to; None for a clip authored directly as deltas
            on the avatar's own rest pose (the generated idle), which is never rest-aligned.
        expressions: {VRM expression name: (K,) weight in [0, 1]}.
        look_at: (K, 4) xyzw rotation of the lookAt proxy (VRMC_vrm_animation), or None.
        node_tracks: {node name: (K, 4) xyzw local rotation} of animated nodes that are not
            humanoid bones nor their ancestors (hair, skirts...): played on an avatar node
            of the same name (authored motion).
        node_rest: {node name: (4,) xyzw rest local rotation} of every ``node_tracks`` node.
        loop: the clip is made to loop.
        frame_rate: the source's key rate (keys per second; 0 when unknown).
        notes: what was assumed or skipped while loading (no specVersion, units, STEP keys...).
        bone_nodes: {bone: the source's node or joint name} (for ``swaycam inspect``).

    Raises:
        ClipError: shapes disagree, a value is not finite, times do not increase, or the
            clip is shorter than :data:`MIN_DURATION_S`.
    """

    name: str
    source: str
    times: np.ndarray
    rotations: dict[str, np.ndarray]
    hips_position: np.ndarray | None
    rest: ClipRest | None
    expressions: dict[str, np.ndarray] = field(default_factory=dict)
    look_at: np.ndarray | None = None
    node_tracks: dict[str, np.ndarray] = field(default_factory=dict)
    node_rest: dict[str, np.ndarray] = field(default_factory=dict)
    loop: bool = False
    frame_rate: float = 0.0
    notes: tuple[str, ...] = ()
    bone_nodes: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = self.source or "<generated>"
        t = np.asarray(self.times, np.float64)
        k = len(t)

        def bad(element: str, reason: str) -> ClipError:
            return ClipError(where, f"clip {self.name!r}: {element}", reason)

        if k == 0:
            raise bad("times", "no keys")
        if not np.all(np.isfinite(t)):
            raise bad("times", f"key time {_first_bad(t)} is not finite")
        if k > 1 and np.any(np.diff(t) <= 0):
            i = int(np.nonzero(np.diff(t) <= 0)[0][0])
            raise bad("times", f"key {i + 1} at {t[i + 1]:.6g} s does not come after key {i} at {t[i]:.6g} s")
        if t[-1] - t[0] < MIN_DURATION_S:
            raise bad("times", f"lasts {t[-1] - t[0]:.6g} s, shorter than one frame (1/120 s): nothing to play")
        object.__setattr__(self, "times", t - t[0])
        for name, arr in self.rotations.items():
            self._check(arr, (k, 4), f"bone {name} rotation", bad)
        if self.hips_position is not None:
            self._check(self.hips_position, (k, 3), "hips translation", bad)
        for name, arr in self.expressions.items():
            self._check(arr, (k,), f"expression {name}", bad)
        if self.look_at is not None:
            self._check(self.look_at, (k, 4), "lookAt rotation", bad)
        for name, arr in self.node_tracks.items():
            self._check(arr, (k, 4), f"node {name} rotation", bad)
            if name not in self.node_rest:
                raise bad(f"node {name}", "has a track but no rest rotation")

    @staticmethod
    def _check(arr, shape, element, bad) -> None:
        a = np.asarray(arr)
        if a.shape != shape:
            raise bad(element, f"has shape {a.shape}, expected {shape}")
        if not np.all(np.isfinite(a)):
            raise bad(element, f"value {_first_bad(a)} is not finite")

    @property
    def duration_s(self) -> float:
        """Seconds from the first key to the last."""
        return float(self.times[-1])

    @property
    def bones(self) -> tuple[str, ...]:
        """The humanoid bones the clip drives, in VRM order."""
        from ..humanoid import HUMAN_BONES

        return tuple(b for b in HUMAN_BONES if b in self.rotations)


def _first_bad(a: np.ndarray) -> str:
    """'NaN at key 12' style text for the first non-finite entry of ``a`` (keys on axis 0)."""
    idx = np.argwhere(~np.isfinite(np.asarray(a, np.float64)))[0]
    v = np.asarray(a, np.float64)[tuple(idx)]
    return f"{v} at key {int(idx[0])}"
