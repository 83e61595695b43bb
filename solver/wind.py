"""Global wind and impulses on a chain set: :func:`set_wind`, :func:`impulse`, :func:`wind_of`.

The wind acts on every segment's tail as the acceleration r W(t) (r the segment's wind response,
1/s, :mod:`solver.limits`; W the wind, m/s, world frame: +Y up, the avatar faces +Z), with the
gusts and the sway of :mod:`solver.kernels.forces`. Its clock is the substep count times h, so it
is the same at every render rate and in every replay. A change is never a jump: the mean wind
and the gust share ease (smoothstep) from where they are to the new values over ``ramp_s``
seconds of substeps. A chain set is changed between substeps (the render thread: the runtime's
command queue), never during one.

Equilibrium of one link under a steady wind (no gusts, no gravity): the rest-shape spring's
force k (r − x) + r W has no part across the link exactly when tan θ = r |W| / (k L) (θ the
deflection from the rest direction, L the link length, W across the rest direction), which is
what the solver settles to (tests/solver/test_wind.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import layout as L
from .errors import HairParamsError
from .kernels.forces import wind_at

#: Largest wind speed accepted, m/s (a storm; 40 m/s is Beaufort 13).
MAX_WIND = 40.0
#: Largest impulse accepted, m/s.
MAX_IMPULSE = 10.0
#: Longest ramp accepted, seconds.
MAX_RAMP_S = 60.0
#: Default ramp of a change, seconds.
DEFAULT_RAMP_S = 0.5
#: Gust periods are drawn from this range, seconds; the sway's from SWAY_PERIOD_S.
GUST_PERIOD_S = (1.5, 7.0)
SWAY_PERIOD_S = (3.0, 6.0)


@dataclass(frozen=True)
class Wind:
    """A wind setting.

    Attributes:
        direction: (3,) where the wind blows to, world frame (normalised; +Z blows toward the
            viewer of an avatar facing +Z).
        strength: mean speed, m/s, in [0, :data:`MAX_WIND`].
        gusts: gust share of the mean, in [0, 1] (0: a steady wind).
        seed: the gusts' seed (an int >= 0): the same seed gives the same gusts.
        ramp_s: seconds over which a change eases in, [0, :data:`MAX_RAMP_S`].

    Raises:
        HairParamsError (a ValueError): a value out of range or not finite, a zero direction
            with a non-zero strength; the message names the field.
    """

    direction: tuple[float, float, float] = (1.0, 0.0, 0.0)
    strength: float = 0.0
    gusts: float = 0.0
    seed: int = 0
    ramp_s: float = DEFAULT_RAMP_S

    def __post_init__(self) -> None:
        d = _finite_vector(self.direction, "wind.direction")
        n = float(np.linalg.norm(d))
        s = _number(self.strength, "wind.strength", 0.0, MAX_WIND, "m/s")
        if n < 1e-9 and s > 0.0:
            raise HairParamsError("wind.direction: [0, 0, 0] has no direction")
        object.__setattr__(self, "direction", tuple(float(x) for x in (d / n if n >= 1e-9 else (1.0, 0.0, 0.0))))
        object.__setattr__(self, "strength", s)
        object.__setattr__(self, "gusts", _number(self.gusts, "wind.gusts", 0.0, 1.0, ""))
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or not 0 <= self.seed < 2 ** 63:
            raise HairParamsError(f"wind.seed: {self.seed!r} is not an integer >= 0")
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "ramp_s", _number(self.ramp_s, "wind.ramp_s", 0.0, MAX_RAMP_S, "s"))

    @property
    def mean(self) -> np.ndarray:
        """(3,) the mean wind vector, m/s."""
        return np.asarray(self.direction) * self.strength

    def as_dict(self) -> dict:
        return {"direction": list(self.direction), "strength": self.strength, "gusts": self.gusts,
                "seed": self.seed, "ramp_s": self.ramp_s}


def _number(v, name: str, lo: float, hi: float, unit: str) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise HairParamsError(f"{name}: {v!r} is not a number")
    v = float(v)
    if not math.isfinite(v) or not lo <= v <= hi:
        raise HairParamsError(f"{name}: {v!r} is outside [{lo:g}, {hi:g}]{' ' + unit if unit else ''}")
    return v


def _finite_vector(v, name: str) -> np.ndarray:
    bad = HairParamsError(f"{name}: {v!r} is not three finite numbers [x, y, z]")
    if isinstance(v, (str, bytes)):
        raise bad
    try:
        items = list(v)
    except TypeError:
        raise bad from None
    if len(items) != 3 or any(isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer,
                                                                                      np.floating)) for x in items):
        raise bad
    a = np.array([float(x) for x in items])
    if not np.all(np.isfinite(a)):
        raise bad
    return a


def _row(chains):
    return L.views(L.FORCES, chains._F, chains._I)


def wind_of(chains) -> np.ndarray:
    """(3,) the wind (m/s, world) of the chain set's last substep (zeros without wind)."""
    return np.array(_row(chains).wind)


def mean_now(chains) -> tuple[np.ndarray, float]:
    """(the mean wind (3,) m/s, the gust share) the ramp has reached at the chain set's current
    substep count."""
    f = _row(chains)
    n = float(chains._I[L.H_N_STEPS])
    nr = float(f.ramp_steps)
    u = 1.0 if nr <= 0.0 else min(1.0, max(0.0, (n - float(f.ramp_start)) / nr))
    e = u * u * (3.0 - 2.0 * u)
    return (np.array(f.mean_from) + (np.array(f.mean_to) - np.array(f.mean_from)) * e,
            float(f.gusts_from) + (float(f.gusts_to) - float(f.gusts_from)) * e)


def set_wind(chains, wind: Wind) -> None:
    """Ease the chain set's wind to ``wind`` from where it is now (module doc): the mean and
    the gust share over ``wind.ramp_s``; a new seed's gusts start at once (the wind is a force:
    the tails stay continuous). Between substeps only; allocation happens here, not in the
    substep."""
    f = _row(chains)
    m0, g0 = mean_now(chains)
    rng = np.random.default_rng(wind.seed)
    f.gust_freq[:] = 2.0 * math.pi / rng.uniform(*GUST_PERIOD_S, size=4)
    f.gust_phase[:] = rng.uniform(0.0, 2.0 * math.pi, size=4)
    f.sway_freq[()] = 2.0 * math.pi / rng.uniform(*SWAY_PERIOD_S)
    f.sway_phase[()] = rng.uniform(0.0, 2.0 * math.pi)
    f.mean_from[:] = m0
    f.gusts_from[()] = g0
    f.mean_to[:] = wind.mean
    f.gusts_to[()] = wind.gusts
    f.ramp_start[()] = float(chains._I[L.H_N_STEPS])
    f.ramp_steps[()] = round(wind.ramp_s / chains.h)
    if np.any(m0 != 0.0) or np.any(wind.mean != 0.0):
        f.active[()] = 1.0


def impulse(chains, velocity) -> None:
    """Add ``velocity`` (3,) m/s, world, to every simulated tail at the next substep (a "hair
    flip"); impulses before one substep add up (each within :data:`MAX_IMPULSE`).

    Raises:
        HairParamsError (a ValueError): not three finite numbers, or longer than
            :data:`MAX_IMPULSE` m/s.
    """
    v = _finite_vector(velocity, "impulse")
    if float(np.linalg.norm(v)) > MAX_IMPULSE:
        raise HairParamsError(f"impulse: |{v.tolist()}| = {np.linalg.norm(v):.3g} m/s is above {MAX_IMPULSE:g} m/s")
    f = _row(chains)
    f.impulse[:] += v
    f.active[()] = 1.0


def wind_series(chains, steps: int) -> np.ndarray:
    """(steps, 3) the wind the next ``steps`` substeps will see (m/s), without stepping (from
    the compiled :func:`solver.kernels.forces.wind_at`); for tests and the panel's preview."""
    frc = L.block_array(L.FORCES, chains._F, chains._I)[0]
    n0 = int(chains._I[L.H_N_STEPS])
    return np.array([wind_at(frc, n0 + 1 + k, chains.h) for k in range(steps)])
