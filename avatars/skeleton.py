"""The node hierarchy: parents, rest pose, vectorized forward kinematics.

Every glTF node is a skeleton node (bones, mesh nodes and helpers alike), so node indices
of the file index every array here. Rest local transforms are the file's TRS; matrices
are 4x4 column-vector float64 (docs/design.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .math3d import mat_compose


@dataclass(frozen=True, eq=False)
class Skeleton:
    """Node hierarchy and rest pose.

    Attributes:
        names: (N,) node names ("" where unnamed).
        parents: (N,) int64 parent node index, -1 for roots.
        rest_translation: (N, 3) float64 metres, parent space.
        rest_rotation: (N, 4) float64 unit xyzw quaternions, parent space.
        rest_scale: (N, 3) float64.
        levels: node indices grouped by depth (roots first); used for vectorized FK.
    """

    names: tuple[str, ...]
    parents: np.ndarray
    rest_translation: np.ndarray
    rest_rotation: np.ndarray
    rest_scale: np.ndarray
    levels: tuple[np.ndarray, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.levels:
            object.__setattr__(self, "levels", _depth_levels(self.parents))
        object.__setattr__(self, "_rest_local", self.local_matrices())
        object.__setattr__(self, "_rest_world", self.world_matrices(self._rest_local))
        for arr in (self.parents, self.rest_translation, self.rest_rotation, self.rest_scale):
            arr.setflags(write=False)
        self._rest_local.setflags(write=False)
        self._rest_world.setflags(write=False)

    # ------------------------------------------------------------------ structure
    @property
    def node_count(self) -> int:
        return len(self.names)

    def children(self, node: int) -> list[int]:
        """Direct children of ``node`` in file order."""
        return [int(i) for i in np.nonzero(self.parents == node)[0]]

    def is_ancestor(self, ancestor: int, node: int) -> bool:
        """True when ``ancestor`` is a strict ancestor of ``node``."""
        p = int(self.parents[node])
        while p >= 0:
            if p == ancestor:
                return True
            p = int(self.parents[p])
        return False

    def descendants(self, node: int) -> list[int]:
        """``node`` and all its descendants, depth first, children in file order."""
        out, stack = [], [node]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(reversed(self.children(n)))
        return out

    def find(self, name: str) -> int:
        """Node index by exact name; raises KeyError when absent."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no node named {name!r}") from None

    # ------------------------------------------------------------------ rest pose
    @property
    def rest_local(self) -> np.ndarray:
        """(N, 4, 4) rest local matrices (read-only)."""
        return self._rest_local

    @property
    def rest_world(self) -> np.ndarray:
        """(N, 4, 4) rest world matrices (read-only)."""
        return self._rest_world

    # ------------------------------------------------------------------ kinematics
    def local_matrices(
        self,
        rotation: np.ndarray | None = None,
        translation: np.ndarray | None = None,
        scale: np.ndarray | None = None,
    ) -> np.ndarray:
        """Local matrices (N, 4, 4) from per-node TRS, the rest values where None.

        Args:
            rotation: (N, 4) xyzw local rotations.
            translation: (N, 3) metres.
            scale: (N, 3).
        """
        return mat_compose(
            self.rest_translation if translation is None else translation,
            self.rest_rotation if rotation is None else rotation,
            self.rest_scale if scale is None else scale,
        )

    def world_matrices(self, local: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Forward kinematics: world (N, 4, 4) = world[parent] @ local, level by level.

        Args:
            local: (N, 4, 4) local matrices.
            out: optional (N, 4, 4) array to write into.
        """
        world = np.empty_like(local) if out is None else out
        for depth, level in enumerate(self.levels):
            if depth == 0:
                world[level] = local[level]
            else:
                world[level] = world[self.parents[level]] @ local[level]
        return world

    def forward_kinematics(
        self, rotation: np.ndarray | None = None, translation: np.ndarray | None = None
    ) -> np.ndarray:
        """World matrices (N, 4, 4) for local rotations (N, 4) / translations (N, 3)."""
        return self.world_matrices(self.local_matrices(rotation, translation))


def _depth_levels(parents: np.ndarray) -> tuple[np.ndarray, ...]:
    n = len(parents)
    depth = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        chain = []
        j = i
        while j >= 0 and depth[j] < 0:
            chain.append(j)
            j = int(parents[j])
        d = 0 if j < 0 else depth[j] + 1
        for k in reversed(chain):
            depth[k] = d
            d += 1
    if n == 0:
        return ()
    return tuple(np.nonzero(depth == d)[0] for d in range(int(depth.max()) + 1))
