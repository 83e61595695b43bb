"""What the viewer looks at: the camera the user moves, the framing, the hair inspection view.

One :class:`View` per session (render thread; the window's mouse and keys, the panel's and
the service's ``POST /view`` change it between frames):

- ``orbit`` (:class:`render.orbit.Orbit`): drags orbit (left button), pan (right or middle
  button, or shift + left), the wheel zooms; ``reset`` goes back to the framing.
- ``framing``: "bust", "full", "hair" (close-up on the hair's bounds) or "back"
  (:data:`render.camera.FRAMINGS`).
- ``follow``: the virtual camera and the video / PNG outputs follow the orbit too. Off by
  default: the window and the panel preview are moved, the stream keeps its framing (a
  streamer moving the preview must not move the stream).
- ``inspect``: "mesh", "mesh+guides", "guides" or "weights" (the skin weights of chain
  ``chain`` as a heat map on the hair's vertices; :data:`render.inspection.INSPECT_MODES`)
  and ``roots`` (show suggested roots), for a fitted style (its guides and hair mesh:
  :func:`runtime.tryon.guides_of`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from render.camera import FRAMINGS
from render.inspection import GuideLines, WeightPoints, check_mode, next_mode
from render.orbit import Orbit, metres_per_pixel


@dataclass
class View:
    """The viewer's state (module doc)."""

    framing: str = "bust"
    orbit: Orbit = field(default_factory=Orbit)
    follow: bool = False
    inspect: str = "mesh"
    roots: bool = False
    chain: int = 0

    def __post_init__(self):
        self.set_framing(self.framing)
        check_mode(self.inspect)

    # ------------------------------------------------------------------ camera
    def drag(self, dx: float, dy: float, *, pan: bool = False, camera=None, height: int = 720) -> None:
        """A drag of (dx, dy) pixels: orbit, or with ``pan`` move the view (by the size of a
        pixel at ``camera``'s target for an image ``height`` pixels high)."""
        if pan:
            mpp = metres_per_pixel(camera, height) if camera is not None else 0.001
            self.orbit = self.orbit.panned(dx, dy, mpp / self.orbit.zoom)
        else:
            self.orbit = self.orbit.dragged(dx, dy)

    def wheel(self, notches: float) -> None:
        self.orbit = self.orbit.wheeled(notches)

    def reset(self) -> None:
        """Back to the framing (no orbit, zoom or pan)."""
        self.orbit = Orbit()

    def set_framing(self, name: str) -> None:
        """Raises ValueError for a framing :func:`render.frame_camera` does not know."""
        if name not in FRAMINGS:
            raise ValueError(f"framing {name!r}: expected one of {', '.join(FRAMINGS)}")
        self.framing = name

    def next_framing(self) -> str:
        self.framing = FRAMINGS[(FRAMINGS.index(self.framing) + 1) % len(FRAMINGS)]
        return self.framing

    # ------------------------------------------------------------------ inspection
    def set_inspect(self, mode: str) -> None:
        self.inspect = check_mode(mode)

    def next_inspect(self) -> str:
        self.inspect = next_mode(self.inspect)
        return self.inspect

    def guides(self, avatar, guides, world: np.ndarray) -> GuideLines | None:
        """The guide lines to draw for the avatar posed by ``world`` (N, 4, 4), from its
        ``guides`` = (GuideSet, hair instance) or None; None in the "mesh" view. Each guide
        point follows the hair vertex nearest to it at rest (CPU skinning as the shader's:
        :class:`GuideSkin`), so the guides swing with the simulated hair; the suggested roots
        move rigidly with the head (they lie on the scalp)."""
        if self.inspect not in ("mesh+guides", "guides") or guides is None:
            return None
        gs, instance = guides
        roots = None
        if self.roots:
            m = head_motion(avatar, world)
            roots = gs.suggested_root if m is None else gs.suggested_root @ m[:3, :3].T + m[:3, 3]
        return GuideLines(GuideSkin.of(avatar, gs, instance).points(world), gs.offsets, gs.state, roots,
                          depth=self.inspect == "guides")

    def weights(self, avatar, guides, world: np.ndarray):
        """The heat map of the "weights" view (:class:`render.inspection.WeightPoints`): every
        hair vertex posed by ``world`` and the summed weight of chain :attr:`chain`'s joints
        on it (the chains are the avatar's springs whose joints skin the hair; the index wraps);
        None in the other views or without a fitted style."""
        if self.inspect != "weights" or guides is None:
            return None
        skin = GuideSkin.of(avatar, guides[0], guides[1])
        w = skin.chain_weights(self.chain)
        return None if w is None else WeightPoints(skin.vertices(world), w)

    def hidden(self, guides) -> tuple[int, ...]:
        """Mesh instances not to draw: the hair's in the "guides" and "weights" views."""
        hide = self.inspect in ("guides", "weights")
        return (int(guides[1]),) if hide and guides is not None and guides[1] >= 0 else ()

    def state(self) -> dict:
        """{"framing", "orbit", "follow", "inspect", "roots", "chain"}: JSON-ready (GET /view)."""
        return {"framing": self.framing, "orbit": self.orbit.to_dict(), "follow": self.follow, "inspect": self.inspect,
                "roots": self.roots, "chain": self.chain}


#: Hair vertices whose motion a guide point takes (the mean of their displacements).
GUIDE_NEIGHBOURS = 6


class GuideSkin:
    """Guide points (rest pose, world metres) carried by the hair mesh: each point moves by
    the mean displacement from rest of its :data:`GUIDE_NEIGHBOURS` nearest hair vertices,
    skinned as the shader does (:func:`avatars.skinning.skin_positions`), so the guides swing
    with the simulated hair. One per (avatar, guide set), kept while the avatar lives
    (:meth:`of`)."""

    _made: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

    def __init__(self, avatar, gs, instance: int):
        from scipy.spatial import cKDTree

        from avatars.skinning import joint_matrices, skin_positions

        self.avatar, self.instance, self._gs = avatar, int(instance), gs
        self._skin = skin_positions
        mi = avatar.mesh_instances[self.instance] if 0 <= self.instance < len(avatar.mesh_instances) else None
        self._prims = [] if mi is None else [p for p in avatar.meshes[mi.mesh].primitives if p.vertex_count]
        self._jm = (lambda w: joint_matrices(avatar, mi.skin, w) if mi is not None and mi.skin >= 0 else None)
        self._node = -1 if mi is None else mi.node
        self._skin_index = -1 if mi is None else int(mi.skin)
        self._chains: list | None = None
        self._weights: dict[int, np.ndarray] = {}
        self._near = None
        if not self._prims or not len(gs.points):
            return
        self._rest = self._all(avatar.skeleton.rest_world)
        k = min(GUIDE_NEIGHBOURS, len(self._rest))
        _, near = cKDTree(self._rest).query(gs.points, k=k)
        self._near = np.asarray(near).reshape(len(gs.points), k)

    def _all(self, world: np.ndarray) -> np.ndarray:
        jm = self._jm(world)
        node = world[self._node] if self._node >= 0 else None
        return np.concatenate([self._skin(p, jm, node) for p in self._prims])

    @classmethod
    def of(cls, avatar, gs, instance: int) -> "GuideSkin":
        got = cls._made.get(avatar)
        if got is None or got._gs is not gs or got.instance != instance:
            got = cls._made[avatar] = cls(avatar, gs, instance)
        return got

    def vertices(self, world: np.ndarray) -> np.ndarray:
        """(V, 3) every hair vertex posed by ``world`` (the instance's primitives in order)."""
        return self._all(world) if self._prims else np.zeros((0, 3))

    def chains(self) -> list[tuple[str, set[int]]]:
        """(name, joint nodes) of the avatar's springs whose joints skin the hair."""
        if self._chains is None:
            skin = self.avatar.skins[self._skin_index] if self._skin_index >= 0 else None
            nodes = set() if skin is None else {int(j) for j in skin.joints}
            self._chains = [(s.name, {int(j.node) for j in s.joints}) for s in self.avatar.springs
                            if nodes & {int(j.node) for j in s.joints}]
        return self._chains

    def chain_weights(self, index: int) -> np.ndarray | None:
        """(V,) the summed skin weight of chain ``index`` (wrapping; :meth:`chains`) on each hair
        vertex, or None without chains."""
        chains = self.chains()
        if not chains or self._skin_index < 0:
            return None
        k = index % len(chains)
        if k not in self._weights:
            joints = np.asarray(self.avatar.skins[self._skin_index].joints)
            on = np.array([int(j) in chains[k][1] for j in joints], bool)
            out = []
            for p in self._prims:
                jn = np.clip(p.joints.astype(np.int64), 0, len(joints) - 1)
                out.append((p.weights.astype(np.float64) * on[jn]).sum(axis=1))
            self._weights[k] = np.clip(np.concatenate(out), 0.0, 1.0)
        return self._weights[k]

    def points(self, world: np.ndarray) -> np.ndarray:
        """(T, 3) guide points of the avatar posed by ``world`` (N, 4, 4); the rest points
        when the hair has no vertices."""
        if self._near is None:
            return self._gs.points
        moved = self._all(world) - self._rest
        return self._gs.points + moved[self._near].mean(axis=1)


def head_motion(avatar, world: np.ndarray) -> np.ndarray | None:
    """(4, 4) the head's motion from rest, ``world[head] @ inv(rest_world[head])`` (None
    without a head)."""
    head = avatar.head_node()
    if head < 0:
        return None
    return world[head] @ np.linalg.inv(avatar.skeleton.rest_world[head])


__all__ = ["GuideSkin", "View", "head_motion"]
