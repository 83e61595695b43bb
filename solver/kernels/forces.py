"""External forces on the hair (numba): global wind with seeded gusts, and impulses.

The wind at substep n (the step counter ``I[H_N_STEPS]``, so its clock is t = n h: the same at
every render rate, and a replay gives the same bits) is

    W(t) = m(t) (1 + G(t) (2 γ(t) − 1)) + |m(t)| G(t) σ sin(ω_s t + φ_s) p̂(t)

- m(t): the mean wind (m/s, world), eased from ``mean_from`` to ``mean_to`` by a smoothstep over
  ``ramp_steps`` substeps from ``ramp_start``; so a change (config, the service, the panel) never
  jumps; G(t), the gust share (0..1), eases the same way;
- γ(t) = ¼ Σ_k ½ (1 − cos(ω_k t + φ_k)), four seeded gusts (γ ∈ [0, 1], mean ½: W's mean is m);
- the sway: σ = :data:`SWAY` of the gust share across the wind, p̂ the horizontal unit vector
  ŷ × m̂ (none when the wind is vertical).

A segment's tail then accelerates by a = r W (r the joint's wind response, 1/s: drag per unit
mass, ``X_WIND``), added to its velocity before the spring step (rest-shape and legacy: u =
D (v + h a + h f) is the spring step of docs/design.md §4.1 with f + a as its force), or, in
the "vrm" mode whose velocity is its tail history (x − x⁻), as the same displacement h² a
taken out of that history. An impulse (m/s, world) is added to every simulated tail's
velocity once, at the next substep. Both are called, not inlined, from the step kernel (the
inlined version cost ~15 % of a substep with the forces off).
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    MODE_VRM, SI_AUTH, S_V, S_XP, W_G0, W_G1, W_GF, W_GP, W_IMP, W_M0, W_M1, W_N0, W_NR, W_ON, W_SF, W_SP, W_WIND,
    X_WIND,
)

#: Amplitude of the sideways sway, as a share of the gust share times the mean wind speed.
SWAY = 0.3


@njit(inline="always", cache=True)
def _smoothstep(u):
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return 1.0
    return u * u * (3.0 - 2.0 * u)


@njit(cache=True, _nrt=False)
def wind_at(frc, n, h):
    """The wind W (m/s, world) at substep count ``n`` (module doc) from the forces row ``frc``.
    Returns (wx, wy, wz)."""
    nr = frc[W_NR]
    e = _smoothstep((n - frc[W_N0]) / nr) if nr > 0.0 else 1.0
    mx = frc[W_M0] + (frc[W_M1] - frc[W_M0]) * e
    my = frc[W_M0 + 1] + (frc[W_M1 + 1] - frc[W_M0 + 1]) * e
    mz = frc[W_M0 + 2] + (frc[W_M1 + 2] - frc[W_M0 + 2]) * e
    g = frc[W_G0] + (frc[W_G1] - frc[W_G0]) * e
    if g == 0.0:
        return mx, my, mz
    t = n * h
    gamma = 0.0
    for k in range(4):
        gamma += 0.5 - 0.5 * math.cos(frc[W_GF + k] * t + frc[W_GP + k])
    gamma *= 0.25
    f = 1.0 + g * (2.0 * gamma - 1.0)
    wx, wy, wz = mx * f, my * f, mz * f
    # sway across the wind, horizontal: p = y x m / |y x m|
    px, pz = mz, -mx
    pn = math.sqrt(px * px + pz * pz)
    if pn > 1e-12:
        a = math.sqrt(mx * mx + my * my + mz * mz) * g * SWAY * math.sin(frc[W_SF] * t + frc[W_SP])
        wx += a * px / pn
        wz += a * pz / pn
    return wx, wy, wz


@njit(cache=True, _nrt=False)
def forces_now(frc, n, h):
    """The external forces of substep ``n``: the wind (stored in ``frc[W_WIND]``) and the
    impulse waiting for it (taken: cleared in ``frc``). When the ramp is over, the mean and the
    gusts are zero and no impulse waits, the forces switch themselves off (``W_ON`` = 0).
    Returns (wx, wy, wz, ix, iy, iz), m/s."""
    wx, wy, wz = wind_at(frc, n, h)
    frc[W_WIND] = wx
    frc[W_WIND + 1] = wy
    frc[W_WIND + 2] = wz
    ix, iy, iz = frc[W_IMP], frc[W_IMP + 1], frc[W_IMP + 2]
    frc[W_IMP] = 0.0
    frc[W_IMP + 1] = 0.0
    frc[W_IMP + 2] = 0.0
    done = n - frc[W_N0] >= frc[W_NR]
    if done and frc[W_M1] == 0.0 and frc[W_M1 + 1] == 0.0 and frc[W_M1 + 2] == 0.0:
        frc[W_ON] = 0.0
        frc[W_M0] = 0.0
        frc[W_M0 + 1] = 0.0
        frc[W_M0 + 2] = 0.0
    return wx, wy, wz, ix, iy, iz


@njit(cache=True, _nrt=False)
def add_forces(st, ext, segi, s0, s1, h, mode, wx, wy, wz, ix, iy, iz):
    """Wind and impulse into the velocities of the chain's segments [s0, s1) before their
    spring step (module doc); authored joints are left to their animation."""
    vrm = mode == MODE_VRM
    for i in range(s0, s1):
        if segi[i, SI_AUTH] != 0:
            continue
        r = ext[i, X_WIND] * h
        dx, dy, dz = r * wx + ix, r * wy + iy, r * wz + iz
        if vrm:
            st[i, S_XP] -= h * dx
            st[i, S_XP + 1] -= h * dy
            st[i, S_XP + 2] -= h * dz
        else:
            st[i, S_V] += dx
            st[i, S_V + 1] += dy
            st[i, S_V + 2] += dz
    return 0
