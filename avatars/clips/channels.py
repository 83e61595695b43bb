"""glTF animations -> node TRS tracks on one time grid, and forward kinematics over a clip
skeleton (shared by :mod:`avatars.clips.vrma` and :mod:`avatars.clips.gltf_anim`).

glTF 2.0 §3.11 (animations): a channel targets a node's ``translation``, ``rotation``,
``scale`` (or ``weights``, not used here) through a sampler (``input`` key times in seconds,
``output`` values, ``interpolation`` LINEAR, STEP or CUBICSPLINE). Every channel of one
animation is evaluated on the union of all its key times, so a clip has one grid:

- LINEAR: rotations by spherical linear interpolation (shortest arc), the rest linearly;
- STEP: the value holds until the next key; where it changes, a key 1 µs before the change
  keeps the hold (the clip stays piecewise linear);
- CUBICSPLINE: the Hermite spline of glTF Appendix C, evaluated on the grid refined to at
  least 60 keys per second.

Errors name the file and the element: ``animations[2].channels[7] (node 12 rotation):
output accessor 31 has NaN at key 4``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..accessors import read_accessor
from ..gltf_io import GltfDocument
from ..math3d import mat_compose, quat_mul, quat_normalize, quat_slerp
from ..skeleton import Skeleton
from .model import ClipError

PATH_WIDTH = {"translation": 3, "rotation": 4, "scale": 3}
#: A STEP change is held until this long before the next key (seconds).
STEP_EPSILON_S = 1e-6
#: CUBICSPLINE channels are evaluated at least this densely (keys per second).
CUBIC_RATE_HZ = 60.0


@dataclass(frozen=True, eq=False)
class NodeAnimation:
    """One glTF animation evaluated on its key grid.

    Attributes:
        name: the animation's name ("" when unnamed).
        index: its index in ``animations``.
        times: (K,) key times, seconds, strictly increasing (as stored: not shifted to 0).
        translation: (K, N, 3) local translations of every node (rest where not animated).
        rotation: (K, N, 4) local rotations, unit xyzw.
        scale: (K, N, 3) local scales.
        animated: {node: set of paths animated} for nodes some channel targets.
        step: True when a STEP channel changed value (keys were added to hold it).
        cubic: True when a CUBICSPLINE channel was evaluated.
    """

    name: str
    index: int
    times: np.ndarray
    translation: np.ndarray
    rotation: np.ndarray
    scale: np.ndarray
    animated: dict[int, set[str]]
    step: bool = False
    cubic: bool = False


@dataclass
class _Channel:
    node: int
    path: str
    times: np.ndarray
    values: np.ndarray        # (n, w), or (n, 3, w) for CUBICSPLINE (in-tangent, value, out-tangent)
    interp: str
    element: str


def _read_channels(doc: GltfDocument, a: int, anim: dict, skeleton: Skeleton) -> list[_Channel]:
    issues = doc.issues
    samplers = anim.get("samplers") or []
    out = []
    for c, ch in enumerate(anim.get("channels") or []):
        elem = f"animations[{a}].channels[{c}]"
        target = ch.get("target") or {}
        node, path = target.get("node"), target.get("path")
        if path == "weights" or path == "pointer":
            continue
        if path not in PATH_WIDTH:
            raise issues.error(elem, f"target.path {path!r} is not translation, rotation, scale or weights")
        if not isinstance(node, int) or isinstance(node, bool) or not 0 <= node < skeleton.node_count:
            raise issues.error(elem, f"target.node {node!r} does not exist ({skeleton.node_count} nodes)")
        what = f"{elem} (node {node} {skeleton.names[node]!r} {path})"
        s = ch.get("sampler")
        if not isinstance(s, int) or not 0 <= s < len(samplers):
            raise issues.error(what, f"sampler {s!r} does not exist ({len(samplers)} samplers)")
        smp = samplers[s]
        interp = smp.get("interpolation", "LINEAR")
        if interp not in ("LINEAR", "STEP", "CUBICSPLINE"):
            raise issues.error(what, f"interpolation {interp!r} is not LINEAR, STEP or CUBICSPLINE")
        t = np.asarray(read_accessor(doc, smp.get("input"), f"{what}: input"), np.float64).reshape(-1)
        v = np.asarray(read_accessor(doc, smp.get("output"), f"{what}: output"), np.float64)
        w = PATH_WIDTH[path]
        n = len(t)
        if n == 0:
            raise issues.error(what, f"input accessor {smp.get('input')} has no keys")
        if not np.all(np.isfinite(t)):
            k = int(np.nonzero(~np.isfinite(t))[0][0])
            raise issues.error(what, f"input accessor {smp.get('input')} has {t[k]} at key {k}")
        if n > 1 and np.any(np.diff(t) < 0):
            k = int(np.nonzero(np.diff(t) < 0)[0][0]) + 1
            raise issues.error(what, f"key times go backwards at key {k} ({t[k - 1]:.6g} s then {t[k]:.6g} s)")
        per_key = 3 if interp == "CUBICSPLINE" else 1
        if v.ndim != 2 or v.shape[1] != w or v.shape[0] != n * per_key:
            raise issues.error(what, f"output accessor {smp.get('output')} has shape {v.shape}, expected "
                               f"({n * per_key}, {w}) for {n} keys")
        if not np.all(np.isfinite(v)):
            k = int(np.nonzero(~np.all(np.isfinite(v), axis=1))[0][0]) // per_key
            raise issues.error(what, f"output accessor {smp.get('output')} has NaN or inf at key {k}")
        if per_key == 3:
            v = v.reshape(n, 3, w)
        if path == "rotation":
            norms = np.linalg.norm(v if per_key == 1 else v[:, 1], axis=-1)
            if np.any(norms < 1e-6):
                k = int(np.nonzero(norms < 1e-6)[0][0])
                raise issues.error(what, f"zero-length rotation quaternion at key {k}")
        out.append(_Channel(node, path, t, v, interp, what))
    return out


def _sample(ch: _Channel, grid: np.ndarray) -> np.ndarray:
    """Values (G, w) of channel ``ch`` at ``grid`` times (held outside its key range)."""
    t, v = ch.times, ch.values
    n = len(t)
    if ch.interp == "CUBICSPLINE":
        return _cubic(t, v, grid, ch.path == "rotation")
    if n == 1:
        return np.repeat(v[:1], len(grid), axis=0)
    k = np.clip(np.searchsorted(t, grid, side="right") - 1, 0, n - 1)
    k1 = np.minimum(k + 1, n - 1)
    dt = t[k1] - t[k]
    u = np.where(dt > 0, (grid - t[k]) / np.where(dt > 0, dt, 1.0), 0.0)
    u = np.clip(u, 0.0, 1.0)
    if ch.interp == "STEP":
        return v[k].copy()
    a, b = v[k], v[k1]
    if ch.path == "rotation":
        return quat_slerp(quat_normalize(a), quat_normalize(b), u)
    return a + (b - a) * u[:, None]


def _cubic(t, v, grid, rotation: bool) -> np.ndarray:
    """glTF Appendix C: p(s) = (2s³−3s²+1)p_k + td(s³−2s²+s)b_k + (−2s³+3s²)p_{k+1} + td(s³−s²)a_{k+1}."""
    n = len(t)
    k = np.clip(np.searchsorted(t, grid, side="right") - 1, 0, n - 1)
    k1 = np.minimum(k + 1, n - 1)
    td = (t[k1] - t[k])[:, None]
    s = np.where(td[:, 0] > 0, (grid - t[k]) / np.where(td[:, 0] > 0, td[:, 0], 1.0), 0.0)
    s = np.clip(s, 0.0, 1.0)[:, None]
    s2, s3 = s * s, s * s * s
    p = ((2 * s3 - 3 * s2 + 1) * v[k, 1] + td * (s3 - 2 * s2 + s) * v[k, 2]
         + (-2 * s3 + 3 * s2) * v[k1, 1] + td * (s3 - s2) * v[k1, 0])
    return quat_normalize(p) if rotation else p


def _grid(channels: list[_Channel]) -> tuple[np.ndarray, bool, bool]:
    """The union of key times, with STEP holds and CUBICSPLINE refinement (module doc)."""
    times = np.unique(np.concatenate([c.times for c in channels]))
    extra = []
    step = cubic = False
    for c in channels:
        if c.interp == "STEP" and len(c.times) > 1:
            change = np.any(np.abs(np.diff(c.values, axis=0)) > 1e-6, axis=1)
            for k in np.nonzero(change)[0]:
                hold = c.times[k + 1] - STEP_EPSILON_S
                if hold > c.times[k]:
                    extra.append(hold)
                    step = True
        elif c.interp == "CUBICSPLINE" and len(c.times) > 1:
            cubic = True
            span = c.times[-1] - c.times[0]
            m = max(int(np.ceil(span * CUBIC_RATE_HZ)), 1)
            extra.extend(np.linspace(c.times[0], c.times[-1], m + 1).tolist())
    if extra:
        times = np.unique(np.concatenate([times, np.asarray(extra)]))
    return times, step, cubic


def read_animation(doc: GltfDocument, index: int, skeleton: Skeleton) -> NodeAnimation:
    """Evaluate ``animations[index]`` of ``doc`` on its key grid (module doc).

    Raises:
        AvatarError (a ClipError where the clip itself is at fault): a channel naming a
            node or sampler that does not exist, an accessor out of range, key times that
            are not finite or go backwards, values with NaN/inf, a count mismatch.
    """
    anims = doc.json.get("animations") or []
    anim = anims[index]
    channels = _read_channels(doc, index, anim, skeleton)
    elem = f"animations[{index}]"
    if not channels:
        raise ClipError(doc.issues.path, elem, "has no translation/rotation/scale channel")
    grid, step, cubic = _grid(channels)
    k, n = len(grid), skeleton.node_count
    tr = np.broadcast_to(skeleton.rest_translation, (k, n, 3)).copy()
    rot = np.broadcast_to(skeleton.rest_rotation, (k, n, 4)).copy()
    sc = np.broadcast_to(skeleton.rest_scale, (k, n, 3)).copy()
    animated: dict[int, set[str]] = {}
    for c in channels:
        vals = _sample(c, grid)
        {"translation": tr, "rotation": rot, "scale": sc}[c.path][:, c.node] = vals
        animated.setdefault(c.node, set()).add(c.path)
    return NodeAnimation(name=str(anim.get("name") or ""), index=index, times=grid, translation=tr,
                         rotation=quat_normalize(rot), scale=sc, animated=animated, step=step, cubic=cubic)


def world_pose(skeleton: Skeleton, translation: np.ndarray, rotation: np.ndarray,
               scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward kinematics of K poses of ``skeleton``.

    Args:
        translation: (K, N, 3), rotation: (K, N, 4) unit xyzw, scale: (K, N, 3) local TRS.

    Returns:
        (world rotations (K, N, 4): the product of local rotations from the root (scale left
        out, as a bone's orientation), world positions (K, N, 3): full affine FK).
    """
    k, n = rotation.shape[:2]
    local = mat_compose(translation, rotation, scale)              # (K, N, 4, 4)
    wm = np.empty_like(local)
    wr = np.empty_like(rotation)
    for depth, level in enumerate(skeleton.levels):
        if depth == 0:
            wm[:, level] = local[:, level]
            wr[:, level] = rotation[:, level]
        else:
            par = skeleton.parents[level]
            wm[:, level] = wm[:, par] @ local[:, level]
            wr[:, level] = quat_mul(wr[:, par], rotation[:, level])
    return quat_normalize(wr), wm[..., :3, 3].copy()
