"""Morph targets (blend shapes) blended in the vertex shader from a delta texture.

A primitive with T targets and V vertices stores its position deltas at texel ``t*V + v``
and, when it has normal deltas, its normal deltas at ``T*V + t*V + v`` of an RGBA32F
texture :data:`render.shaders.MORPH_WIDTH` texels wide. Each draw blends at most
:data:`render.shaders.MAX_MORPHS` targets: the ones with the largest non-zero weights.
"""

from __future__ import annotations

import logging

import numpy as np

from avatars import Primitive

from .gpu import Ledger, Texture, float_texture
from .shaders import MAX_MORPHS, MORPH_WIDTH

log = logging.getLogger(__name__)

WEIGHT_EPSILON = 1e-4  #: weights with a smaller magnitude are skipped


class MorphTexture:
    """The deltas of one primitive (only made when it has targets)."""

    def __init__(self, ledger: Ledger, prim: Primitive):
        t, v = int(prim.morph_positions.shape[0]), prim.vertex_count
        parts = [prim.morph_positions.reshape(t * v, 3)]
        self.normal_base = -1
        if prim.morph_normals is not None and np.any(prim.morph_normals):
            parts.append(prim.morph_normals.reshape(t * v, 3))
            self.normal_base = t * v
        deltas = np.concatenate(parts).astype(np.float32)
        n = deltas.shape[0]
        rows = (n + MORPH_WIDTH - 1) // MORPH_WIDTH
        data = np.zeros((rows * MORPH_WIDTH, 4), np.float32)
        data[:n, :3] = deltas
        self.targets, self.vertices = t, v
        self.texture: Texture = float_texture(ledger, data.reshape(rows, MORPH_WIDTH, 4))

    def release(self) -> None:
        self.texture.release()


def active_targets(weights: np.ndarray | None, out_index: np.ndarray, out_weight: np.ndarray) -> int:
    """Pick the targets to blend: non-zero weights, the largest ``MAX_MORPHS`` by magnitude.

    Args:
        weights: (T,) morph weights (0..1 for VRM expressions), or None.
        out_index: (MAX_MORPHS,) int32, filled with target indices.
        out_weight: (MAX_MORPHS,) float32, filled with their weights.

    Returns:
        The number of active targets written.
    """
    if weights is None or len(weights) == 0:
        return 0
    w = np.asarray(weights)
    idx = np.flatnonzero(np.abs(w) > WEIGHT_EPSILON)
    if idx.size > MAX_MORPHS:
        idx = idx[np.argsort(-np.abs(w[idx]), kind="stable")[:MAX_MORPHS]]
        log.debug("%d active morph targets; the %d largest are drawn", np.count_nonzero(np.abs(w) > WEIGHT_EPSILON),
                  MAX_MORPHS)
    k = idx.size
    out_index[:k] = idx
    out_weight[:k] = w[idx]
    return k
