"""Skin weights of the visible hair mesh over the head and the try-on chains (DESIGN §9).

Computed per welded graph node (vertices split by UV seams get the same weights, so seams
never open) and copied to the render vertices:

- *Attachment band*: hair within ``band`` of the head envelope is rigid on the head; the
  head's share falls smoothly (smoothstep) to 0 over the next ``band_blend``.
- *Along a strand*: a node's position along a chain is the arc parameter u of its closest
  point on the chain's rest polyline (u = i + f on segment i). Segment i moves with joint i,
  so joint i's weight peaks at the segment's middle and blends linearly into its
  neighbours (as the generated avatars' strands are skinned); beyond the ends the first /
  last segment joint takes it all. The tip joint carries no weight.
- *Across chains*: every chain within ``blend`` of the nearest one shares the node, with
  weights falling linearly with the extra distance (continuous where two chains are equally
  near). A chain that does not run through the node's piece of the mesh (skin ownership)
  counts as ``ownership_penalty`` farther away.
- Pieces with no attached or joined guide (rejected or missed) stay bound to the head.

At most four influences per vertex (the largest), renormalised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .graph import HairGraph
from .head import HeadModel
from .rig import Chain


@dataclass(frozen=True)
class WeightOptions:
    """Weighting distances, in head heights of the target."""

    band: float = 0.1
    band_blend: float = 0.1
    blend: float = 0.08
    ownership_penalty: float = 0.15


def _smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def closest_on_polyline(p: np.ndarray, joints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distance (P,), u (P,)) of points ``p`` (P, 3) to the polyline ``joints`` (n, 3);
    u = i + f on segment i (0 ≤ u ≤ n − 1)."""
    a = joints[:-1]
    e = joints[1:] - a
    ee = np.maximum(np.sum(e * e, axis=1), 1e-30)
    t = np.clip(np.einsum("psk,sk->ps", p[:, None] - a[None], e) / ee, 0.0, 1.0)
    q = a[None] + t[..., None] * e[None]
    d = np.linalg.norm(p[:, None] - q, axis=2)
    k = np.argmin(d, axis=1)
    rows = np.arange(len(p))
    return d[rows, k], k + t[rows, k]


def chain_joint_weights(u: np.ndarray, n: int) -> np.ndarray:
    """(P, n) weights of the n joints of a chain at arc parameters ``u`` (module doc)."""
    m = np.arange(n - 1) + 0.5
    uc = np.clip(u, m[0], m[-1])
    w = np.maximum(0.0, 1.0 - np.abs(uc[:, None] - m[None]))
    w = np.concatenate([w, np.zeros((len(u), 1))], axis=1)
    return w / w.sum(axis=1, keepdims=True)


def hair_weights(graph: HairGraph, head: HeadModel, chains: list[Chain], bound_pieces: np.ndarray,
                 options: WeightOptions = WeightOptions()) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """Skin weights of the render vertices (module doc).

    Args:
        bound_pieces: (component_count,) bool, pieces held by an attached or joined guide.

    Returns:
        (skin_nodes [head, chain joints...], joints (V, 4) int indices into skin_nodes,
        weights (V, 4) float64, rigid share (N,) per graph node).
    """
    o = options
    H = float(head.size[1])
    pts = graph.points
    n = len(pts)
    skin_nodes = [head.node] + [int(x) for c in chains for x in c.nodes]
    cols = len(skin_nodes)
    dense = np.zeros((n, cols))
    out_dist = -head.envelope.depth(pts)
    rigid = 1.0 - _smoothstep((out_dist - o.band * H) / (o.band_blend * H))
    rigid[~bound_pieces[graph.component]] = 1.0
    if chains:
        dist = np.empty((n, len(chains)))
        us = np.empty((n, len(chains)))
        for k, c in enumerate(chains):
            d, u = closest_on_polyline(pts, c.joints)
            own = np.isin(graph.component, c.piece_ids)
            dist[:, k] = d + np.where(own, 0.0, o.ownership_penalty * H)
            us[:, k] = u
        extra = dist - dist.min(axis=1, keepdims=True)
        alpha = np.maximum(0.0, 1.0 - extra / (o.blend * H))
        alpha /= alpha.sum(axis=1, keepdims=True)
        col = 1
        for k, c in enumerate(chains):
            m = len(c.nodes)
            dense[:, col:col + m] = alpha[:, k:k + 1] * chain_joint_weights(us[:, k], m)
            col += m
        dense *= (1.0 - rigid)[:, None]
    else:
        rigid[:] = 1.0
    dense[:, 0] += rigid
    top = np.argsort(-dense, axis=1)[:, :4]
    w = np.take_along_axis(dense, top, axis=1)
    w[w < 1e-6] = 0.0
    w /= w.sum(axis=1, keepdims=True)
    top = np.where(w > 0, top, top[:, :1])
    return skin_nodes, top[graph.node], w[graph.node], rigid
