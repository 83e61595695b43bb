"""Compiled normalized local pose of the humanoid bones for the VMC sender (numba,
``cache=True``): per bone b with parent p, D = R · R0ᵀ (scale divided out), n = D_pᵀ · D_b,
p = D_pᵀ · (x_b − x_p), written in Unity's frame (x mirrored: p -> (−x, y, z),
q -> (x, −y, −z, w)) with w >= 0 (:mod:`runtime.vmc.sender`)."""

from __future__ import annotations

import math

from numba import njit

import avatars.kernel_cache  # noqa: F401  registers the shared kernel cache before the decorators below


@njit(inline="always", cache=True)
def _delta(world, r0, n, d):
    for c in range(3):
        s = math.sqrt(world[n, 0, c] ** 2 + world[n, 1, c] ** 2 + world[n, 2, c] ** 2)
        if s == 0.0:
            s = 1.0
        for r in range(3):
            d[r, c] = world[n, r, c] / s
    out = d.copy()
    for r in range(3):
        for c in range(3):
            out[r, c] = d[r, 0] * r0[n, c, 0] + d[r, 1] * r0[n, c, 1] + d[r, 2] * r0[n, c, 2]
    return out


@njit(cache=True)
def unity_local_pose(world, nodes, parents, r0, out):
    """``out`` (B, 7): Unity-frame (p, q) of every bone (module doc). ``world`` (N, 4, 4),
    ``nodes`` and ``parents`` (B,) int64 (parent −1: none), ``r0`` (N, 3, 3) rest world
    rotations."""
    tmp = world[0, :3, :3].copy()
    for k in range(nodes.shape[0]):
        n = nodes[k]
        p = parents[k]
        db = _delta(world, r0, n, tmp)
        if p >= 0:
            dp = _delta(world, r0, p, tmp)
            vx = world[n, 0, 3] - world[p, 0, 3]
            vy = world[n, 1, 3] - world[p, 1, 3]
            vz = world[n, 2, 3] - world[p, 2, 3]
        else:
            dp = tmp.copy()
            for r in range(3):
                for c in range(3):
                    dp[r, c] = 1.0 if r == c else 0.0
            vx, vy, vz = world[n, 0, 3], world[n, 1, 3], world[n, 2, 3]
        m = tmp.copy()
        for r in range(3):
            for c in range(3):
                m[r, c] = dp[0, r] * db[0, c] + dp[1, r] * db[1, c] + dp[2, r] * db[2, c]
        px = dp[0, 0] * vx + dp[1, 0] * vy + dp[2, 0] * vz
        py = dp[0, 1] * vx + dp[1, 1] * vy + dp[2, 1] * vz
        pz = dp[0, 2] * vx + dp[1, 2] * vy + dp[2, 2] * vz
        # Shepperd's method: the branch of the largest of trace, m00, m11, m22
        tr = m[0, 0] + m[1, 1] + m[2, 2]
        if tr >= m[0, 0] and tr >= m[1, 1] and tr >= m[2, 2]:
            s = math.sqrt(1.0 + tr) * 2.0
            qw, qx, qy, qz = 0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s
        elif m[0, 0] >= m[1, 1] and m[0, 0] >= m[2, 2]:
            s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2.0
            qw, qx, qy, qz = (m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s
        elif m[1, 1] >= m[2, 2]:
            s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2.0
            qw, qx, qy, qz = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s
        else:
            s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2.0
            qw, qx, qy, qz = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s
        nn = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
        if qw < 0.0:
            nn = -nn
        out[k, 0], out[k, 1], out[k, 2] = -px, py, pz
        out[k, 3], out[k, 4], out[k, 5], out[k, 6] = qx / nn, -qy / nn, -qz / nn, qw / nn
    return 0
