"""Camera, framing from the humanoid head, and backgrounds.

World frame (docs/design.md §3): metres, +Y up, the avatar faces +Z. The default camera stands on
the +Z side looking toward -Z, so the avatar's left hand (+X) is on the screen's right, as
when facing a person; mirroring for a selfie view is the runtime's business.

Framing is computed from the rest pose (or any world matrices given) once, not per frame:
the head moves inside a still frame, as a webcam shot does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from avatars import Avatar
from avatars.math3d import mat_look_at, mat_perspective

Framing = Literal["bust", "full", "hair", "back"]
#: The framings :func:`frame_camera` knows (the command line's and the config's choices).
FRAMINGS = ("bust", "full", "hair", "back")


@dataclass(frozen=True, eq=False)
class Camera:
    """A perspective camera.

    Attributes:
        position: (3,) eye position, world metres.
        target: (3,) point looked at, world metres.
        up: (3,) world up hint.
        fov_y: vertical field of view, radians.
        near, far: clip distances, metres.
    """

    position: np.ndarray
    target: np.ndarray
    up: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0, 0.0]))
    fov_y: float = math.radians(30.0)
    near: float = 0.05
    far: float = 50.0

    def view_matrix(self) -> np.ndarray:
        """World -> view (4, 4) (right-handed look-at; the camera looks down its -Z)."""
        return mat_look_at(self.position, self.target, self.up)

    def projection_matrix(self, aspect: float) -> np.ndarray:
        """View -> clip (4, 4), OpenGL conventions (NDC z in [-1, 1]); ``aspect`` = width / height."""
        return mat_perspective(self.fov_y, aspect, self.near, self.far)

    def project(self, points: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        """World points (..., 3) -> pixel coordinates (..., 2) of a ``size`` = (w, h) image
        whose row 0 is the top (as :meth:`render.Renderer.read_rgba` returns it); x right, y down."""
        w, h = size
        p = np.asarray(points, np.float64)
        ph = np.concatenate([p, np.ones(p.shape[:-1] + (1,))], axis=-1)
        clip = ph @ (self.projection_matrix(w / h) @ self.view_matrix()).T
        ndc = clip[..., :2] / clip[..., 3:4]
        return np.stack([(ndc[..., 0] + 1) * 0.5 * w, (1 - ndc[..., 1]) * 0.5 * h], axis=-1)


@dataclass(frozen=True)
class CameraOptions:
    """How to frame the avatar.

    Attributes:
        framing: "bust" (head and shoulders, the default), "full" (whole body), "hair" (a
            close-up of the hair's bounds: :func:`hair_bounds`) or "back" (the bust seen
            from behind, -Z side).
        fov_deg: vertical field of view, degrees (config edge).
        offset: (x, y, z) metres added to the eye and target (x right, y up, z toward the camera).
        zoom: > 1 moves closer (distance divided by zoom).
        margin: extra space around the framed region, a fraction of its height.
    """

    framing: Framing = "bust"
    fov_deg: float = 30.0
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    zoom: float = 1.0
    margin: float = 0.08


def _skinned_points(avatar: Avatar, world: np.ndarray, node_filter) -> np.ndarray:
    """World positions of mesh vertices whose dominant influence passes ``node_filter``."""
    pts = []
    for mi in avatar.mesh_instances:
        mesh = avatar.meshes[mi.mesh]
        if mi.skin >= 0:
            skin = avatar.skins[mi.skin]
            mats = world[skin.joints] @ skin.inverse_bind
            keep = np.array([node_filter(int(j)) for j in skin.joints], bool)
            for p in mesh.primitives:
                if p.joints is None or p.weights is None or p.vertex_count == 0:
                    continue
                dom = p.joints[np.arange(p.vertex_count), np.argmax(p.weights, axis=1)].astype(np.int64)
                sel = keep[np.clip(dom, 0, len(keep) - 1)]
                if not np.any(sel):
                    continue
                v = p.positions[sel].astype(np.float64)
                m = mats[dom[sel]]
                pts.append(np.einsum("nij,nj->ni", m[:, :3, :3], v) + m[:, :3, 3])
        elif node_filter(mi.node):
            m = world[mi.node]
            for p in mesh.primitives:
                pts.append(p.positions.astype(np.float64) @ m[:3, :3].T + m[:3, 3])
    return np.concatenate(pts) if pts else np.zeros((0, 3))


def head_bounds(avatar: Avatar, world: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(min (3,), max (3,)) world box of the head: vertices moved mostly by the head bone or
    its descendants that are not spring (hair) joints, so long hair hanging to the chest
    does not stretch the box down; its top also covers the hair. Falls back to a 25 cm box
    above the head bone, or the top quarter of the body."""
    world = avatar.skeleton.rest_world if world is None else world
    head = avatar.head_node()
    if head < 0:
        lo, hi = body_bounds(avatar, world)
        return np.array([lo[0], hi[1] - 0.25 * (hi[1] - lo[1]), lo[2]]), hi
    sk = avatar.skeleton
    under = set(sk.descendants(head))
    springy: set[int] = set()
    for spring in avatar.springs:
        for j in spring.joints:
            if j.node in under and j.node != head:
                springy.update(sk.descendants(j.node))
    pts = _skinned_points(avatar, world, lambda n: n in under and n not in springy)
    if len(pts) >= 8:
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        hair = _skinned_points(avatar, world, lambda n: n in springy)
        if len(hair):
            hi = np.maximum(hi, [hi[0], hair[:, 1].max(), hi[2]])
        return lo, hi
    c = world[head][:3, 3]
    return c + [-0.1, -0.02, -0.1], c + [0.1, 0.23, 0.1]


#: A primitive is hair (for :func:`hair_bounds`) when at least this share of its vertices is
#: moved by a spring joint under the head (a weight of at least :data:`HAIR_WEIGHT`).
HAIR_SHARE = 0.3
HAIR_WEIGHT = 0.05


def _hair_points(avatar: Avatar, world: np.ndarray, springy: set[int]) -> np.ndarray:
    """World positions (linear blend skinning by ``world``) of every vertex of the primitives
    that are hair (:data:`HAIR_SHARE`)."""
    pts = []
    for mi in avatar.mesh_instances:
        if mi.skin < 0:
            continue
        mesh = avatar.meshes[mi.mesh]
        skin = avatar.skins[mi.skin]
        mats = world[skin.joints] @ skin.inverse_bind
        keep = np.array([int(j) in springy for j in skin.joints], bool)
        for p in mesh.primitives:
            if p.joints is None or p.weights is None or p.vertex_count == 0:
                continue
            jn = np.clip(p.joints.astype(np.int64), 0, len(keep) - 1)
            w = p.weights.astype(np.float64)
            if (keep[jn] & (w >= HAIR_WEIGHT)).any(axis=1).mean() < HAIR_SHARE:
                continue
            m = np.einsum("vk,vkij->vij", w / np.maximum(w.sum(1, keepdims=True), 1e-12), mats[jn])
            pts.append(np.einsum("nij,nj->ni", m[:, :3, :3], p.positions.astype(np.float64)) + m[:, :3, 3])
    return np.concatenate(pts) if pts else np.zeros((0, 3))


def hair_bounds(avatar: Avatar, world: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(min (3,), max (3,)) world box of the hair: the head box (:func:`head_bounds`) grown by
    every vertex of the primitives that are hair — at least :data:`HAIR_SHARE` of their
    vertices moved by a spring joint under the head — so a long style whose lower part
    follows the chest, or a ponytail behind the head, is inside it. The head box alone
    without such primitives."""
    world = avatar.skeleton.rest_world if world is None else world
    lo, hi = head_bounds(avatar, world)
    head = avatar.head_node()
    if head < 0:
        return lo, hi
    sk = avatar.skeleton
    under = set(sk.descendants(head))
    springy: set[int] = set()
    for spring in avatar.springs:
        for j in spring.joints:
            if j.node in under and j.node != head:
                springy.update(sk.descendants(j.node))
    hair = _hair_points(avatar, world, springy)
    if len(hair) == 0:
        return lo, hi
    return np.minimum(lo, hair.min(axis=0)), np.maximum(hi, hair.max(axis=0))


def body_bounds(avatar: Avatar, world: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(min (3,), max (3,)) world box of every drawn vertex (a unit box when there are none)."""
    world = avatar.skeleton.rest_world if world is None else world
    pts = _skinned_points(avatar, world, lambda n: True)
    if len(pts) == 0:
        return np.array([-0.5, 0.0, -0.5]), np.array([0.5, 1.0, 0.5])
    return pts.min(axis=0), pts.max(axis=0)


def _mid_torso_y(avatar: Avatar, world: np.ndarray | None) -> float:
    """Height (m) halfway between the humanoid spine and chest bones; -inf without them."""
    hb = avatar.humanoid
    if "spine" not in hb or "chest" not in hb:
        return -math.inf
    w = avatar.skeleton.rest_world if world is None else world
    return 0.5 * float(w[hb["spine"]][1, 3] + w[hb["chest"]][1, 3])


def frame_camera(avatar: Avatar, aspect: float, options: CameraOptions = CameraOptions(),
                 world: np.ndarray | None = None) -> Camera:
    """A camera in front of the avatar (+Z side) framing the head (bust), the whole body, the
    hair (close-up) or, behind it (-Z side), the bust seen from the back.

    Bust (and back): the region from the top of the head box (hair included) down to 1.1 head heights
    below its bottom (neck, shoulders, upper chest), centred on the head horizontally, but
    never below the midpoint of the humanoid spine and chest bones (a big-headed, chibi
    avatar would otherwise be framed to the knees). Full: the whole body box, also for bust
    and back when the head box has no width and no height (a head bone scaled to 0). Hair: the
    hair box (:func:`hair_bounds`), its width 1.1 times.
    The distance fits the region's height (and width, for full) in the field of view.

    Args:
        avatar: the avatar.
        aspect: image width / height.
        options: framing options.
        world: (N, 4, 4) node world matrices to frame (the rest pose by default).
    """
    fov = math.radians(options.fov_deg)
    if options.framing not in ("full", "hair"):
        lo, hi = head_bounds(avatar, world)
    if options.framing == "full" or (options.framing != "hair" and not np.any(hi[:2] - lo[:2] > 0.0)):
        # (a head scaled to 0 has no box: the body instead)
        lo, hi = body_bounds(avatar, world)
        region_h = hi[1] - lo[1]
        region_w = hi[0] - lo[0]
        center = (lo + hi) / 2
        front = hi[2]
    elif options.framing == "hair":
        lo, hi = hair_bounds(avatar, world)
        region_h = hi[1] - lo[1]
        region_w = (hi[0] - lo[0]) * 1.1
        center = (lo + hi) / 2
        front = hi[2]
    else:
        head_h = hi[1] - lo[1]
        bottom = max(lo[1] - 1.1 * head_h, _mid_torso_y(avatar, world))
        region_h = hi[1] - bottom
        region_w = (hi[0] - lo[0]) * 1.2
        center = np.array([(lo[0] + hi[0]) / 2, (hi[1] + bottom) / 2, (lo[2] + hi[2]) / 2])
        front = hi[2] if options.framing != "back" else 2 * center[2] - lo[2]   # mirrored below
    region_h *= 1 + 2 * options.margin
    region_w *= 1 + 2 * options.margin
    tan_y = math.tan(fov / 2)
    dist = max(region_h / 2 / tan_y, region_w / 2 / (tan_y * aspect))
    dist = dist / max(options.zoom, 1e-6) + (front - center[2])
    off = np.asarray(options.offset, np.float64)
    target = center + off * [1, 1, 0]
    position = center + [0.0, 0.0, dist] + off
    if options.framing == "back":      # behind the avatar, looking toward +Z (offset x stays screen-right)
        target = center + off * [-1, 1, 0]
        position = center - [0.0, 0.0, dist] + off * [-1, 1, -1]
    extent = max(region_h, region_w, 0.1)
    near = max(0.01, min(dist - extent, dist * 0.1))
    return Camera(position=position, target=target, fov_y=fov, near=near, far=dist + 10 * extent)


# ---------------------------------------------------------------------------- background

CHROMA_GREEN = (0, 255, 0)  #: sRGB chroma key green (OBS's default key colour)
_HEX = re.compile(r"^#?([0-9a-fA-F]{6})$")


@dataclass(frozen=True)
class Background:
    """Output background.

    Attributes:
        mode: "transparent" (alpha 0 outside the silhouette, straight alpha) or "solid".
        color: (r, g, b) sRGB 0..255 for "solid".
    """

    mode: Literal["transparent", "solid"] = "transparent"
    color: tuple[int, int, int] = (0, 0, 0)

    @classmethod
    def parse(cls, spec: "str | Background | tuple") -> "Background":
        """"transparent", "chroma" / "green" (chroma green), "#RRGGBB" / "RRGGBB", an (r, g, b) tuple."""
        if isinstance(spec, Background):
            return spec
        if isinstance(spec, (tuple, list)):
            return cls("solid", tuple(int(c) for c in spec[:3]))
        s = str(spec).strip().lower()
        if s in ("transparent", "none", "alpha"):
            return cls("transparent")
        if s in ("chroma", "green", "chroma-green", "chroma_green"):
            return cls("solid", CHROMA_GREEN)
        m = _HEX.match(s)
        if m:
            v = int(m.group(1), 16)
            return cls("solid", ((v >> 16) & 255, (v >> 8) & 255, v & 255))
        raise ValueError(f"background {spec!r}: expected 'transparent', 'chroma' or a colour '#RRGGBB'")

    def linear(self) -> np.ndarray:
        """The colour as linear RGB (3,)."""
        c = np.asarray(self.color, np.float64) / 255.0
        return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
