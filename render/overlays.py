"""Debug overlays drawn as lines over the avatar: spring chains, colliders, head axes, and a
fitted style's guide curves (:mod:`render.inspection`).

Inputs are plain world-space arrays, so render/ stays independent of solver/: the runtime
passes the solver's chain points and collider shapes (or uses :func:`avatar_overlays` to
read them from the skeleton's world matrices). Lines are drawn without depth test, so they
show through the mesh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from ._gl import GL

from avatars import Avatar
from avatars.math3d import mat3_from_z_axis

from .gpu import Buffer, Ledger, VertexArray
from .inspection import GuideLines, WeightPoints, guide_segments, weight_segments

CHAIN_COLOR = (1.0, 0.85, 0.1, 1.0)
JOINT_COLOR = (1.0, 0.3, 0.1, 1.0)
COLLIDER_COLOR = (0.2, 0.9, 1.0, 1.0)
AXIS_COLORS = ((1.0, 0.15, 0.15, 1.0), (0.2, 1.0, 0.2, 1.0), (0.25, 0.45, 1.0, 1.0))
CIRCLE_SEGMENTS = 24


@dataclass(frozen=True, eq=False)
class ColliderShape:
    """A collider in world space (metres): ``kind`` "sphere" or "capsule" (inside_* variants
    are drawn the same), ``center`` (3,), ``tail`` (3,) capsule end (= center for spheres),
    ``radius``."""

    kind: str
    center: np.ndarray
    tail: np.ndarray
    radius: float


@dataclass(frozen=True, eq=False)
class Overlays:
    """What to draw. All positions are world metres.

    Attributes:
        spring_chains: sequence of (K, 3) point arrays (joint positions down each chain).
        colliders: sequence of :class:`ColliderShape` or (kind, center, tail, radius) tuples.
        head_axes: (4, 4) head world matrix; its x/y/z axes are drawn red/green/blue.
        axes_length: length of the head axes, metres.
        joint_size: half-size of the cross marking each chain point, metres.
        guides: guide curves coloured by state (:class:`render.inspection.GuideLines`), or None.
        weights: hair vertices coloured by one chain's weight (:class:`render.inspection.WeightPoints`),
            drawn depth-tested against the mesh, or None.
    """

    spring_chains: Sequence[np.ndarray] = ()
    colliders: Sequence = ()
    head_axes: np.ndarray | None = None
    axes_length: float = 0.12
    joint_size: float = 0.006
    guides: GuideLines | None = None
    weights: WeightPoints | None = None


def _circle(center, u, v, r, n=CIRCLE_SEGMENTS, start=0.0, stop=2 * np.pi) -> np.ndarray:
    """Segment endpoints (2n, 3) of an arc in the plane (u, v)."""
    a = np.linspace(start, stop, n + 1)
    p = center + r * (np.cos(a)[:, None] * u + np.sin(a)[:, None] * v)
    return np.stack([p[:-1], p[1:]], axis=1).reshape(-1, 3)


def collider_lines(kind: str, center, tail, radius: float) -> np.ndarray:
    """Wireframe segment endpoints (2S, 3): three great circles for a sphere; for a capsule,
    rings at both ends, four side lines and the two end caps' half circles."""
    c = np.asarray(center, np.float64)
    t = np.asarray(tail if tail is not None else center, np.float64)
    r = float(radius)
    if "capsule" not in kind or np.linalg.norm(t - c) < 1e-9:
        ex, ey, ez = np.eye(3)
        return np.concatenate([_circle(c, ex, ey, r), _circle(c, ey, ez, r), _circle(c, ez, ex, r)])
    u, v, w = mat3_from_z_axis(t - c).T
    parts = [_circle(c, u, v, r), _circle(t, u, v, r)]
    for d in (u, -u, v, -v):
        parts.append(np.stack([c + r * d, t + r * d]))
    for end, sign in ((t, 1.0), (c, -1.0)):
        parts.append(_circle(end, u, sign * w, r, CIRCLE_SEGMENTS // 2, 0.0, np.pi))
        parts.append(_circle(end, v, sign * w, r, CIRCLE_SEGMENTS // 2, 0.0, np.pi))
    return np.concatenate(parts)


def build_lines(ov: Overlays) -> tuple[np.ndarray, np.ndarray]:
    """Segment endpoints (P, 3) float32 and colours (P, 4) float32 (P even) for ``ov``."""
    pos, col = [], []

    def add(points, color):
        points = np.asarray(points, np.float64).reshape(-1, 3)
        pos.append(points)
        col.append(np.tile(np.asarray(color, np.float32), (len(points), 1)))

    for chain in ov.spring_chains:
        p = np.asarray(chain, np.float64).reshape(-1, 3)
        if len(p) >= 2:
            add(np.stack([p[:-1], p[1:]], axis=1), CHAIN_COLOR)
        s = ov.joint_size
        for d in np.eye(3) * s:
            add(np.stack([p - d, p + d], axis=1), JOINT_COLOR)
    for c in ov.colliders:
        shape = c if isinstance(c, ColliderShape) else ColliderShape(*c)
        add(collider_lines(shape.kind, shape.center, shape.tail, shape.radius), COLLIDER_COLOR)
    if ov.head_axes is not None:
        m = np.asarray(ov.head_axes, np.float64)
        o = m[:3, 3]
        for k in range(3):
            axis = m[:3, k] / max(np.linalg.norm(m[:3, k]), 1e-12)
            add(np.stack([o, o + ov.axes_length * axis]), AXIS_COLORS[k])
    if ov.guides is not None:
        gp, gc = guide_segments(ov.guides)
        pos.append(gp)
        col.append(gc)
    if not pos:
        return np.zeros((0, 3), np.float32), np.zeros((0, 4), np.float32)
    return np.concatenate(pos).astype(np.float32), np.concatenate(col).astype(np.float32)


def avatar_overlays(avatar: Avatar, world: np.ndarray, *, springs: bool = True, colliders: bool = True,
                    head_axes: bool = True) -> Overlays:
    """Overlays read from the avatar at node world matrices ``world`` (N, 4, 4): spring
    joint positions (plus VRM 0.x virtual tails), colliders moved by their nodes, head axes."""
    chains = []
    if springs:
        for s in avatar.springs:
            pts = [world[j.node][:3, 3] for j in s.joints]
            if s.tail_offset is not None and s.joints:
                m = world[s.joints[-1].node]
                pts.append(m[:3, :3] @ s.tail_offset + m[:3, 3])
            chains.append(np.asarray(pts))
    shapes = []
    if colliders:
        for c in avatar.colliders:
            if c.shape == "plane":
                continue
            m = world[c.node]
            scale = float(np.cbrt(abs(np.linalg.det(m[:3, :3])))) or 1.0
            center = m[:3, :3] @ c.offset + m[:3, 3]
            tail = m[:3, :3] @ (c.tail if c.tail is not None else c.offset) + m[:3, 3]
            shapes.append(ColliderShape(c.shape, center, tail, c.radius * scale))
    head = avatar.head_node()
    return Overlays(spring_chains=chains, colliders=shapes,
                    head_axes=world[head] if head_axes and head >= 0 else None)


class LineRenderer:
    """Streams overlay lines to a dynamic buffer and draws them (Frame block bound by the caller)."""

    def __init__(self, ledger: Ledger):
        self.vao = VertexArray(ledger)
        self.positions = Buffer(ledger, GL.GL_ARRAY_BUFFER, size=4096, usage=GL.GL_STREAM_DRAW)
        self.colors = Buffer(ledger, GL.GL_ARRAY_BUFFER, size=4096, usage=GL.GL_STREAM_DRAW)
        self.vao.attribute(0, self.positions, 3)
        self.vao.attribute(1, self.colors, 4)

    def draw(self, program, overlays: Overlays) -> int:
        """Draw ``overlays``; returns the number of segments."""
        pos, col = build_lines(overlays)
        return self.draw_arrays(program, pos, col)

    def draw_arrays(self, program, pos: np.ndarray, col: np.ndarray) -> int:
        """Draw segments: endpoints ``pos`` (P, 3) and colours ``col`` (P, 4); returns P / 2."""
        pos = np.asarray(pos, np.float32)
        col = np.asarray(col, np.float32)
        if len(pos) == 0:
            return 0
        for buf, data in ((self.positions, pos), (self.colors, col)):
            if data.nbytes > buf.size:
                buf.allocate(size=2 * data.nbytes)
            buf.update(data)
        self.vao.attribute(0, self.positions, 3)
        self.vao.attribute(1, self.colors, 4)
        program.use()
        GL.glDrawArrays(GL.GL_LINES, 0, len(pos))
        return len(pos) // 2

    def release(self) -> None:
        self.vao.release()
        self.positions.release()
        self.colors.release()
