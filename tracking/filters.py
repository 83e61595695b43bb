"""The One Euro filter, for vectors and for rotations.

Source: G. Casiez, N. Roussel, D. Vogel, "1€ Filter: A Simple Speed-based Low-pass Filter
for Noisy Input in Interactive Systems", CHI 2012. For a sample ``x`` at time ``t``:

    dt      = t − t_prev                       (seconds)
    α(fc)   = 1 / (1 + τ/dt),   τ = 1 / (2π fc)
    dx̂      = α(d_cutoff) · (x − x_prev)/dt + (1 − α(d_cutoff)) · dx̂_prev
    fc      = min_cutoff + beta · |dx̂|
    x̂       = α(fc) · x + (1 − α(fc)) · x̂_prev

All parameters are per second (Hz, and Hz per unit/s for ``beta``), never per frame. The speed is estimated from the previous RAW sample, as in the
authors' reference code (differencing against the previous *filtered* value, as some ports
do, inflates the speed by τ/dt and makes the filter depend on the frame rate). With
these choices a ramp of slope v lags by exactly v·τ(fc) in steady state, at any rate. Timestamps are integer nanoseconds passed in by
the caller; nothing here reads a clock.

:class:`QuaternionOneEuro` runs the same recursion on the rotation group: the derivative
is the angular velocity (rad/s) from the shortest-arc difference of consecutive samples, and the low-pass step is
a slerp from the previous estimate toward the new sample by α, which keeps the output a
unit quaternion in one hemisphere (``w >= 0`` is not forced; continuity is).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from avatars.math3d import quat_conj, quat_mul, quat_slerp_scalar, rotvec_from_quat


@dataclass(frozen=True)
class OneEuroParams:
    """One Euro settings.

    Attributes:
        min_cutoff_hz: cutoff at rest, Hz; lower = less jitter, more lag when slow.
        beta: cutoff increase per unit of speed (Hz per unit/s; for rotation per rad/s);
            higher = less lag when fast.
        d_cutoff_hz: cutoff of the speed estimate, Hz.
    """

    min_cutoff_hz: float = 1.0
    beta: float = 0.0
    d_cutoff_hz: float = 1.0

    def __post_init__(self) -> None:
        if not (self.min_cutoff_hz > 0 and self.d_cutoff_hz > 0 and self.beta >= 0):
            raise ValueError(f"One Euro parameters must be positive (beta >= 0): {self}")


def _alpha(cutoff_hz, dt_s: float):
    tau = 1.0 / (2.0 * math.pi * cutoff_hz)
    return 1.0 / (1.0 + tau / dt_s)


class OneEuroFilter:
    """One Euro filter over a vector of ``n`` independent channels.

    Each channel has its own speed and cutoff (as in the paper, applied per coordinate).

    Args:
        n: number of channels.
        params: :class:`OneEuroParams`.

    Call ``f(x, t_ns)`` with ``x`` of shape ``(n,)``; returns the filtered ``(n,)`` (a view of
    the internal state: copy it, or pass ``out=``). A sample whose time is not later than
    the previous one returns the previous estimate unchanged.
    """

    def __init__(self, n: int, params: OneEuroParams = OneEuroParams()) -> None:
        self.params = params
        self._x = np.zeros(n)
        self._raw = np.zeros(n)
        self._dx = np.zeros(n)
        self._t: int | None = None

    @property
    def initialized(self) -> bool:
        return self._t is not None

    @property
    def value(self) -> np.ndarray:
        """The current estimate (n,)."""
        return self._x

    def reset(self, x: np.ndarray | None = None, t_ns: int | None = None) -> None:
        """Forget the history; optionally restart from ``x`` at ``t_ns`` with zero speed."""
        self._dx[:] = 0.0
        if x is None:
            self._t = None
        else:
            self._x[:] = x
            self._raw[:] = x
            self._t = int(t_ns) if t_ns is not None else None

    def __call__(self, x: np.ndarray, t_ns: int, out: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if self._t is None:
            self._x[:] = x
            self._raw[:] = x
            self._dx[:] = 0.0
            self._t = int(t_ns)
        elif t_ns > self._t:
            p = self.params
            dt = (int(t_ns) - self._t) * 1e-9
            a_d = _alpha(p.d_cutoff_hz, dt)
            self._dx += a_d * ((x - self._raw) / dt - self._dx)
            cutoff = p.min_cutoff_hz + p.beta * np.abs(self._dx)
            a = _alpha(cutoff, dt)
            self._x += a * (x - self._x)
            self._raw[:] = x
            self._t = int(t_ns)
        if out is None:
            return self._x
        out[:] = self._x
        return out


class QuaternionOneEuro:
    """One Euro filter on unit quaternions (x, y, z, w), geodesic form (module doc).

    The speed is the magnitude of the filtered angular velocity (rad/s), so ``beta`` is in
    Hz per rad/s. Input quaternions on either hemisphere are accepted; the output stays
    continuous (no sign flips).
    """

    def __init__(self, params: OneEuroParams = OneEuroParams()) -> None:
        self.params = params
        self._q = np.array([0.0, 0.0, 0.0, 1.0])
        self._raw = np.array([0.0, 0.0, 0.0, 1.0])
        self._w = np.zeros(3)  # filtered angular velocity, rad/s (world frame)
        self._t: int | None = None

    @property
    def initialized(self) -> bool:
        return self._t is not None

    @property
    def value(self) -> np.ndarray:
        return self._q

    @property
    def angular_speed(self) -> float:
        """Filtered angular speed, rad/s."""
        return float(np.linalg.norm(self._w))

    def reset(self, q: np.ndarray | None = None, t_ns: int | None = None) -> None:
        self._w[:] = 0.0
        if q is None:
            self._t = None
        else:
            self._q[:] = q
            self._raw[:] = q
            self._t = int(t_ns) if t_ns is not None else None

    def __call__(self, q: np.ndarray, t_ns: int, out: np.ndarray | None = None) -> np.ndarray:
        q = np.asarray(q, dtype=np.float64)
        if self._t is None:
            self._q[:] = q
            self._raw[:] = q
            self._w[:] = 0.0
            self._t = int(t_ns)
        elif t_ns > self._t:
            p = self.params
            dt = (int(t_ns) - self._t) * 1e-9
            # world-frame angular velocity between consecutive raw samples (shortest arc)
            omega = rotvec_from_quat(quat_mul(q, quat_conj(self._raw))) / dt
            a_d = _alpha(p.d_cutoff_hz, dt)
            self._w += a_d * (omega - self._w)
            cutoff = p.min_cutoff_hz + p.beta * float(np.linalg.norm(self._w))
            quat_slerp_scalar(self._q, q, _alpha(cutoff, dt), out=self._q)
            self._raw[:] = q
            self._t = int(t_ns)
        if out is None:
            return self._q
        out[:] = self._q
        return out
