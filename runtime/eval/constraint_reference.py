"""three-vrm's ``@pixiv/three-vrm-node-constraint`` 3.5.5, run in Node, as the reference for
the rig's node constraints (:mod:`runtime.rig.constraints`).

:func:`run_threevrm_constraints` loads an avatar file with three.js's GLTFLoader and three-vrm's
``VRMNodeConstraintLoaderPlugin`` (three-vrm parses the constraints itself and captures the rest
pose), sets the local rotations (and translations) of chosen nodes frame by frame, calls
``VRMNodeConstraintManager.update()`` and returns the destinations' local rotations.
:func:`run_ours` evaluates the same frames with the rig's compiled constraint plan.

The packages (``@pixiv/three-vrm-node-constraint`` at the references' three-vrm version
and ``three`` at its three.js version, :mod:`avatars.eval.node`) are installed with npm on
first use into ``$SWAYCAM_THREEVRM_CONSTRAINT_DIR``, else
``$XDG_CACHE_HOME/swaycam/threevrm-node-constraint-3.5.5``; Node.js and npm must be on PATH.
The script is ``runtime/eval/threevrm_constraints.mjs``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np

from avatars import Avatar
from avatars.eval.node import THREE_VERSION, THREE_VRM_VERSION, NpmFolder, run_node

from ..rig.constraints import ConstraintPlan, constrained_nodes
from ..rig.kernels import TRS_Q, TRS_T
from ..rig.posing import DrivenPose

PACKAGE = "@pixiv/three-vrm-node-constraint"
PACKAGES = (f"{PACKAGE}@{THREE_VRM_VERSION}", f"three@{THREE_VERSION}")
SCRIPT = Path(__file__).with_name("threevrm_constraints.mjs")
NPM = NpmFolder(f"threevrm-node-constraint-{THREE_VRM_VERSION}", "SWAYCAM_THREEVRM_CONSTRAINT_DIR", PACKAGES,
                "the three-vrm node-constraint reference")


def ensure_installed(directory: Path | None = None) -> Path:
    """Install the node-constraint package and three.js with npm unless present; returns the
    folder. Raises :class:`avatars.eval.node.ReferenceUnavailable` (with npm's message) when npm is
    missing or the install fails."""
    return NPM.ensure(directory)


def run_threevrm_constraints(path: str | Path, posed: np.ndarray, rotations: np.ndarray,
                             translations: np.ndarray | None = None, *, directory: Path | None = None) -> dict:
    """three-vrm's constraint update on the avatar file ``path`` over a sequence of poses.

    Args:
        path: a VRM 1.0 file with VRMC_node_constraint (listed in ``extensionsUsed``, which
            three-vrm requires).
        posed: (M,) node indices set every frame.
        rotations: (F, M, 4) their local rotations (xyzw) per frame.
        translations: (F, M, 3) their local translations (metres), or None (rest).

    Returns:
        {"nodes": (C,) int64 destination nodes (sorted), "rotations": (F, C, 4) their local
        rotations after each frame's ``update()``}.

    Raises:
        avatars.eval.node.ReferenceUnavailable: no Node.js/npm, or the install failed.
        RuntimeError: the script failed (its stderr is in the message).
    """
    d = ensure_installed(directory)
    frames = {"posed": [int(n) for n in posed], "rotations": np.asarray(rotations, float).tolist(),
              "translations": None if translations is None else np.asarray(translations, float).tolist()}
    with tempfile.TemporaryDirectory() as tmp:
        fp = Path(tmp) / "frames.json"
        fp.write_text(json.dumps(frames))
        out = json.loads(run_node(SCRIPT, d, path, fp, what=f"three-vrm node constraints on {path}"))
    nodes = np.asarray(out["nodes"], np.int64)
    return {"nodes": nodes, "rotations": np.asarray(out["rotations"], float).reshape(len(rotations), len(nodes), 4)}


def run_ours(avatar: Avatar, posed: np.ndarray, rotations: np.ndarray,
             translations: np.ndarray | None = None) -> dict:
    """The same frames through the rig's constraint plan (every constraint, as the drawn frame
    runs it): the posed nodes and the destinations form the driven set, each frame writes the
    posed rows, then one compiled call evaluates the plan. Same return as
    :func:`run_threevrm_constraints`."""
    sk = avatar.skeleton
    posed = [int(n) for n in posed]
    driven = posed + [n for n in constrained_nodes(avatar.constraints) if n not in posed]
    pose = DrivenPose(sk, driven)
    plan = ConstraintPlan.build(pose, avatar.constraints)
    world = np.ascontiguousarray(pose.base_world.copy())
    nodes = np.array(sorted(constrained_nodes(avatar.constraints)), np.int64)
    slots = pose.slot_of[nodes]
    out = np.empty((len(rotations), len(nodes), 4))
    for f in range(len(rotations)):
        pose.trs[:len(posed), TRS_Q:TRS_Q + 4] = rotations[f]
        if translations is not None:
            pose.trs[:len(posed), TRS_T:TRS_T + 3] = translations[f]
        plan.run(world, pose)
        out[f] = pose.trs[slots, TRS_Q:TRS_Q + 4]
    return {"nodes": nodes, "rotations": out}


def rotation_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(...,) the angle (radians) of the rotation from unit quaternion a to b (..., 4); q and
    −q are the same rotation. With α the angle between the 4-vectors (b flipped to a's
    side), the rotation angle is 2α = 4·atan2(|a − b|, |a + b|), accurate near 0 (unlike
    2·acos(a·b))."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    b = np.where(np.sum(a * b, axis=-1, keepdims=True) < 0, -b, b)
    return 4.0 * np.arctan2(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))
