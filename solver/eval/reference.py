"""three-vrm 3.5.5 as a reference, run in Node on the same avatar and head motion.

Issue 7 sets the solver's speed goals against three-vrm's spring update on this machine
("about 8 µs per frame for Godette's 16 joints"). This machine is shared: the same code
runs ~1.3x slower in some minutes than in others, so an absolute number alone cannot say
whether a change helped. :func:`run_threevrm` times three-vrm's own
``VRMSpringBoneManager.update`` on the same avatar and motion, so that the solver bench can
report our frame next to three-vrm's, measured seconds apart (``swaycam bench solver
--reference``). It also returns three-vrm's tails, which the tests compare with our
``vrm`` mode (the three-vrm/UniVRM Verlet) stepped at the same rate.

The packages (``@pixiv/three-vrm-springbone`` 3.5.5 and ``three``) are installed with npm on
first use into a cache folder (``$SWAYCAM_THREEVRM_DIR``, else
``$XDG_CACHE_HOME/swaycam/threevrm-3.5.5``); Node.js and npm must be on PATH. The script that
builds the scene in three.js is ``solver/eval/threevrm_reference.mjs``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from avatars import Avatar

from avatars.eval.node import THREE_VERSION, THREE_VRM_VERSION, NpmFolder, run_node
from .posing import SubtreePoser

PACKAGES = (f"@pixiv/three-vrm-springbone@{THREE_VRM_VERSION}", f"three@{THREE_VERSION}")
SCRIPT = Path(__file__).with_name("threevrm_reference.mjs")
NPM = NpmFolder(f"threevrm-{THREE_VRM_VERSION}", "SWAYCAM_THREEVRM_DIR", PACKAGES, "the three-vrm reference")


def ensure_installed(directory: Path | None = None) -> Path:
    """Install three-vrm's spring-bone package and three.js with npm unless present
    (:meth:`avatars.eval.node.NpmFolder.ensure`); returns the folder. Raises
    :class:`avatars.eval.node.ReferenceUnavailable`."""
    return NPM.ensure(directory)


def scene(avatar: Avatar, head_local: np.ndarray, *, delta: float, keep_tails: int = 0) -> dict:
    """The JSON scene :data:`SCRIPT` builds: rest skeleton, joints, colliders, head motion.

    Args:
        avatar: the avatar (its springs become three-vrm joints: joint i's child is joint
            i + 1, a VRM 0.x leaf gets an explicit child at the spring's ``tail_offset``).
        head_local: (F, 4, 4) the head node's local matrix per frame.
        delta: seconds passed to ``update`` each frame.
        keep_tails: frames whose joint tails are returned.
    """
    sk = avatar.skeleton
    nodes = [{"parent": int(sk.parents[n]), "t": sk.rest_translation[n].tolist(),
              "r": sk.rest_rotation[n].tolist(), "s": sk.rest_scale[n].tolist()} for n in range(sk.node_count)]
    virtual, joints = [], []
    for spring in avatar.springs:
        for i, j in enumerate(spring.joints):
            if i + 1 < len(spring.joints):
                child = spring.joints[i + 1].node
            elif spring.tail_offset is not None:
                virtual.append({"parent": j.node, "t": np.asarray(spring.tail_offset, float).tolist()})
                child = sk.node_count + len(virtual) - 1
            else:
                continue      # VRM 1.0: the last joint only marks the previous link's tail
            joints.append({"node": j.node, "child": child, "hit_radius": j.hit_radius, "stiffness": j.stiffness,
                           "gravity_power": j.gravity_power, "gravity_dir": np.asarray(j.gravity_dir, float).tolist(),
                           "drag_force": j.drag_force, "groups": list(spring.collider_groups),
                           "center": spring.center})
    colliders = []
    for c in avatar.colliders:
        colliders.append({"node": c.node, "shape": c.shape, "offset": np.asarray(c.offset, float).tolist(),
                          "tail": np.asarray(c.tail if c.tail is not None else c.offset, float).tolist(),
                          "radius": c.radius,
                          "normal": np.asarray(c.normal if c.normal is not None else (0, 0, 1), float).tolist()})
    groups = [{"name": g.name, "colliders": list(g.colliders)} for g in avatar.collider_groups]
    return {"nodes": nodes, "virtual_tails": virtual, "joints": joints, "colliders": colliders,
            "collider_groups": groups, "head": avatar.head_node(), "delta": delta, "keep_tails": keep_tails,
            # three.js matrices are column-major
            "head_local": [m.T.reshape(16).tolist() for m in head_local]}


def head_local_matrices(avatar: Avatar, motion: Callable[[float], np.ndarray], times: np.ndarray) -> np.ndarray:
    """(F, 4, 4) the head's local matrix at each time (s) for ``motion`` (xyzw head rotation
    relative to rest, world frame), exactly as :class:`solver.eval.posing.SubtreePoser` turns it."""
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    head = avatar.head_node()
    parent = int(avatar.skeleton.parents[head])
    out = np.empty((len(times), 4, 4))
    for f, t in enumerate(times):
        w = poser.world(motion(float(t)))
        out[f] = w[head] if parent < 0 else np.linalg.solve(w[parent], w[head])
    return out


def run_threevrm(avatar: Avatar, motion: Callable[[float], np.ndarray], *, frames: int, rate_hz: float = 60.0,
                 keep_tails: int = 0, directory: Path | None = None) -> dict:
    """Run three-vrm's spring update on ``avatar`` for ``frames`` frames of ``motion``.

    Frame f poses the head at t = (f + 1) / rate_hz, then calls
    ``VRMSpringBoneManager.update(1 / rate_hz)``.

    Returns:
        {"frame_ns": (frames,) int64 time of each update (ns), "tails": (keep_tails, J, 3)
        world tails of the joints after each kept frame (metres), "nodes": (J,) the joints'
        nodes in that order}.

    Raises:
        avatars.eval.node.ReferenceUnavailable: no Node.js/npm, or the install failed.
        RuntimeError: the script failed (its stderr is in the message).
    """
    d = ensure_installed(directory)
    times = (np.arange(frames) + 1.0) / rate_hz
    sc = scene(avatar, head_local_matrices(avatar, motion, times), delta=1.0 / rate_hz, keep_tails=keep_tails)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scene.json"
        path.write_text(json.dumps(sc))
        out = json.loads(run_node(SCRIPT, d, path, what=f"three-vrm reference on {avatar.path}"))
    return {"frame_ns": np.asarray(out["frame_ns"], np.int64),
            "tails": np.asarray(out["tails"], np.float64).reshape(len(out["tails"]), len(sc["joints"]), 3),
            "nodes": np.array([j["node"] for j in sc["joints"]], np.int64)}
