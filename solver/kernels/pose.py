"""Compiled kernels for drawing (numba, ``cache=True``, no NRT like :mod:`solver.kernels.step`):
solved tails -> joint frames and local rotations for skinning, never touching the simulation
state.

- :func:`pose_kernel` turns tails interpolated between the last two substeps into joint
  world frames (pose scratch) and/or local rotations;
- :func:`apply_kernel` patches a world-matrix array with those frames (descendants follow);
- :func:`interpolate_kernel` writes the interpolated tails.
"""

from __future__ import annotations

from numba import njit

from avatars.math_kernels import inv34, mul34, put34, qmul, row34, world34

from .step import _sections, _solved_frame
from ..layout import (
    A_NODE, A_SEG, H_M, H_OF_POSE, H_OF_ST, H_S, PF, P_D, P_Q, P_RQ, P_W, SF_ST, SI_AUTH, SI_NODE, SI_SPAR, S_REL,
    S_X, S_XP,
)


@njit(cache=True, _nrt=False)
def pose_kernel(world, F, I, alpha, out_q):
    """Joint frames from tails interpolated as x_prev + alpha (x - x_prev), alpha in [0, 1].

    ``world`` (N, 4, 4) is the frame's animated pose (hair at rest local rotations); it is
    only read. The frames go to the pose scratch section (see :func:`apply_kernel`).
    ``out_q`` (N, 4) receives the local rotations (xyzw) of the simulated, non-authored
    joints when it has N rows (pass a (0, 4) array to skip). The simulation state is never
    modified.
    """
    st, par, rst, scr, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    S = I[H_S]
    pose = F[I[H_OF_POSE]:I[H_OF_POSE] + S * PF].reshape((S, PF))
    for i in range(S):
        sp = segi[i, SI_SPAR]
        node = segi[i, SI_NODE]
        win = world34(world, node)
        if sp < 0:
            hm = win
        elif segi[i, SI_AUTH] != 0:
            hm = mul34(row34(pose, sp, P_D), win)
        else:
            hm = mul34(row34(pose, sp, P_W), row34(rst, i, S_REL))
        if segi[i, SI_AUTH] != 0:
            w = hm
            q = (0.0, 0.0, 0.0, 1.0)
        else:
            xx = st[i, S_XP] + alpha * (st[i, S_X] - st[i, S_XP])
            xy = st[i, S_XP + 1] + alpha * (st[i, S_X + 1] - st[i, S_XP + 1])
            xz = st[i, S_XP + 2] + alpha * (st[i, S_X + 2] - st[i, S_XP + 2])
            w, q = _solved_frame(hm, rst, i, hm[3], hm[7], hm[11], xx, xy, xz)
            lq = qmul(pose[i, P_RQ], pose[i, P_RQ + 1], pose[i, P_RQ + 2], pose[i, P_RQ + 3],
                       q[0], q[1], q[2], q[3])
            for j in range(4):
                pose[i, P_Q + j] = lq[j]
            if out_q.shape[0] > node:
                for j in range(4):
                    out_q[node, j] = lq[j]
        put34(pose, i, P_W, w)
        put34(pose, i, P_D, mul34(w, inv34(win)))
    return 0


@njit(cache=True, _nrt=False)
def apply_kernel(world, F, I):
    """Patch ``world`` (N, 4, 4) in place with the frames of the last :func:`pose_kernel`:
    the simulated joints get their frames, every descendant follows."""
    st, par, rst, scr, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    S = I[H_S]
    M = I[H_M]
    pose = F[I[H_OF_POSE]:I[H_OF_POSE] + S * PF].reshape((S, PF))
    for a in range(M):
        n = aff[a, A_NODE]
        sg = aff[a, A_SEG]
        if segi[sg, SI_NODE] == n:
            m = row34(pose, sg, P_W)      # the joint itself: its frame, root exact
        else:
            m = mul34(row34(pose, sg, P_D), world34(world, n))
        for r in range(3):
            for cc in range(4):
                world[n, r, cc] = m[4 * r + cc]
    return 0


@njit(cache=True, _nrt=False)
def interpolate_kernel(F, I, alpha, out):
    """out (S, 3) = x_prev + alpha (x - x_prev)."""
    S = I[H_S]
    st = F[I[H_OF_ST]:I[H_OF_ST] + S * SF_ST].reshape((S, SF_ST))
    for i in range(S):
        for j in range(3):
            out[i, j] = st[i, S_XP + j] + alpha * (st[i, S_X + j] - st[i, S_XP + j])
    return 0
