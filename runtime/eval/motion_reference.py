"""three-vrm-animation 3.5.5 beside our retargeting: the same .vrma on the same avatar.

:func:`run_reference` loads the clip with three.js's GLTFLoader and
``VRMAnimationLoaderPlugin``, builds the clip for the avatar with ``createVRMAnimationClip``
and plays it with an ``AnimationMixer`` (``runtime/eval/threevrm_animation.mjs``), reading
the normalized humanoid bones (three-vrm's ``VRMHumanoidRig``) at the times asked.
:func:`compare` samples our playback (:class:`runtime.rig.AvatarRig` with the clip, all rows
at each time) at the same times and compares the normalized rotations bone by bone
(n_b = R0_parent · L_b · R0_b⁻¹, our frame; a VRM 0.x avatar is handed to three-vrm in its
file's frame, facing −Z, and the reference's rotations are turned back: (x, y, z, w) ->
(−x, y, −z, w)).

Where the two differ by design (reported, not hidden):

- rest alignment: we turn limbs from the clip's rest pose to the avatar's; three-vrm plays
  the clip's normalized rotations on the avatar's rest as they are. ``rest_align=False``
  compares the rest of the pipeline;
- bones only one side has: we carry a bone the avatar lacks (a clip's upperChest on an
  avatar without one) into its child in world space; three-vrm drops its track. Such
  children are listed in ``folded``;
- nodes between humanoid bones that a clip animates (pixiv's ``idle_loop.vrma`` moves
  ``torso_1`` between hips and spine, ``neck_2`` and ``head`` between neck and its head
  bone): their motion is part of the bones' world pose, which we play; three-vrm reads
  humanoid tracks only. ``animate_helpers=False`` holds them at rest to compare the rest;
- three-vrm stores the converted keys as float32 (~6e-8 relative) and does not normalize
  key or rest quaternions (``test.vrma``'s are 7-digit: a few 1e-6 rad between its keys).

The packages (``@pixiv/three-vrm-animation``, ``@pixiv/three-vrm-core`` 3.5.5 and three
0.180.0) are installed with npm on first use into ``$SWAYCAM_THREEVRM_ANIMATION_DIR``, else
``$XDG_CACHE_HOME/swaycam/threevrm-animation-3.5.5``; without Node.js / npm,
:class:`avatars.eval.node.ReferenceUnavailable` is raised (tests skip).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from avatars import Avatar
from avatars.clips import load_file
from avatars.eval.node import THREE_VERSION, THREE_VRM_VERSION, NpmFolder, run_node
from avatars.math3d import quat_angle
from tracking.pose_track import PoseSample

PACKAGES = (f"@pixiv/three-vrm-animation@{THREE_VRM_VERSION}", f"@pixiv/three-vrm-core@{THREE_VRM_VERSION}",
            f"three@{THREE_VERSION}")
SCRIPT = Path(__file__).with_name("threevrm_animation.mjs")
NPM = NpmFolder(f"threevrm-animation-{THREE_VRM_VERSION}", "SWAYCAM_THREEVRM_ANIMATION_DIR", PACKAGES,
                "the three-vrm-animation reference")


def ensure_installed(directory: Path | None = None) -> Path:
    """Install the packages with npm unless present; returns the folder. Raises
    avatars.eval.node.ReferenceUnavailable without npm or when the install fails."""
    return NPM.ensure(directory)


def _file_frame(avatar: Avatar) -> tuple[np.ndarray, np.ndarray]:
    """Rest translations and rotations in the file's frame (VRM 0.x: turned back to −Z)."""
    sk = avatar.skeleton
    if avatar.vrm_version == "0.x":
        return sk.rest_translation * [-1.0, 1.0, -1.0], sk.rest_rotation * [-1.0, 1.0, -1.0, 1.0]
    return np.asarray(sk.rest_translation), np.asarray(sk.rest_rotation)


def run_reference(avatar: Avatar, vrma: str | Path, times: np.ndarray, *, animation: int = 0,
                  directory: Path | None = None) -> dict:
    """three-vrm's normalized bone rotations {bone: (T, 4)} (our +Z frame) and hips positions
    (T, 3) at ``times`` (s). Raises avatars.eval.node.ReferenceUnavailable, or RuntimeError with
    the script's error."""
    d = ensure_installed(directory)
    sk = avatar.skeleton
    t, r = _file_frame(avatar)
    sc = {"nodes": [{"parent": int(sk.parents[n]), "t": t[n].tolist(), "r": r[n].tolist(),
                     "s": sk.rest_scale[n].tolist()} for n in range(sk.node_count)],
          "humanoid": {b: int(n) for b, n in avatar.humanoid.items()},
          "meta_version": "0" if avatar.vrm_version == "0.x" else "1",
          "vrma": str(Path(vrma).resolve()), "animation": animation, "times": [float(x) for x in times]}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scene.json"
        path.write_text(json.dumps(sc))
        out = json.loads(run_node(SCRIPT, d, path, what=f"three-vrm-animation reference on {avatar.path}"))
    rot = np.asarray(out["rotations"], np.float64)          # (T, B, 4)
    hips = np.asarray(out["hips"], np.float64)
    if avatar.vrm_version == "0.x":
        rot = rot * [-1.0, 1.0, -1.0, 1.0]
        hips = hips * [-1.0, 1.0, -1.0]
    return {"rotations": {b: rot[:, i] for i, b in enumerate(out["bones"])}, "hips": hips,
            "duration": float(out["duration"])}


@dataclass
class Agreement:
    """Our normalized rotations against three-vrm's, radians.

    Attributes:
        max_rad: the largest angle over every compared bone and time.
        per_bone: {bone: largest angle}.
        folded: bones whose parent the avatar lacks while the clip has it (excluded from
            ``max_rad``; see the module doc).
        times: how many times were sampled.
    """

    max_rad: float
    per_bone: dict[str, float] = field(default_factory=dict)
    folded: dict[str, float] = field(default_factory=dict)
    times: int = 0


def ours(avatar: Avatar, vrma: str | Path, times: np.ndarray, *, rest_align: bool = False,
         animation: int = 0, animate_helpers: bool = True) -> dict[str, np.ndarray]:
    """Our normalized rotations {bone: (T, 4)} of the clip at ``times`` (s): an
    :class:`runtime.rig.AvatarRig` with the clip, every driven row sampled at each time
    (the drawn frame's path), head tracking at rest."""
    from avatars.clips.vrma import load_vrma

    from ..rig import AvatarRig
    from ..rig import motion_kernels as MK
    from ..rig.motion_options import MotionOptions
    from ..rig.retarget import normalized_rotations

    clip = load_vrma(vrma, animate_helpers=animate_helpers)[animation]
    rig = AvatarRig(avatar, motion=MotionOptions(rest_align=rest_align, fade_s=0.0, after="hold"))
    (rc,) = rig.play_motion([clip], loop=False)
    m = rig.motion
    s = PoseSample()
    rig.reset(s)
    slot = rig.pose.slot_of[rc.nodes]
    rows = np.empty((len(times), len(rc.nodes), 4))
    trs = np.zeros_like(rig.pose.trs)
    for i, t in enumerate(times):
        t_ns = int(round(float(t) * 1e9))
        if t_ns >= m.next_event_ns:
            m.event(t_ns)
        MK.motion_rows_kernel(t_ns, m.tl, m.tf, m.a.cf, m.a.ci, (m.b or m.a).cf, (m.b or m.a).ci, m.buf, trs, True)
        rows[i] = trs[slot, 3:7]
    return normalized_rotations(rc, avatar, rows)


def compare(avatar: Avatar, vrma: str | Path, *, samples: int = 97, rest_align: bool = False,
            animate_helpers: bool = True, directory: Path | None = None) -> Agreement:
    """Sample both at ``samples`` times over the clip (keys and between keys) and compare.
    ``animate_helpers=False`` holds non-humanoid nodes between bones at rest as three-vrm
    does (see :func:`avatars.clips.vrma.load_vrma`)."""
    clip = load_file(vrma)[0]
    times = np.linspace(0.0, clip.duration_s, samples)
    ref = run_reference(avatar, vrma, times, directory=directory)
    mine = ours(avatar, vrma, times, rest_align=rest_align, animate_helpers=animate_helpers)
    from ..rig.retarget import HUMAN_PARENT

    per, folded = {}, {}
    for b, q in ref["rotations"].items():
        if b not in mine:
            continue
        err = float(np.max(quat_angle(q, mine[b])))
        p = HUMAN_PARENT.get(b)
        missing_parent = p is not None and p not in avatar.humanoid and p in clip.rotations
        (folded if missing_parent else per)[b] = err
    return Agreement(max_rad=max(per.values()) if per else 0.0, per_bone=per, folded=folded, times=len(times))
