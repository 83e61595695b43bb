"""Score a window's MFCCs against the vowel profiles; gate and smooth into viseme weights.

Scores as uLipSync's ``LipSyncJob.CalcScores`` (hecomi/uLipSync): on standardised
coefficients (:class:`~.profiles.VowelProfiles`), ``l2``: ``d = sqrt(mean((x − p)²))``,
score ``10^−d``; ``l1``: ``d = mean(|x − p|)``, score ``10^−d``; ``cosine``:
``max(cos(x, p), 0)^100``. Scores are normalised to sum 1 (the *ratios*).

Viseme weights (:meth:`LipSyncAnalyzer.step`): the level is the window's RMS in dB mapped
from ``[min_db, max_db]`` to [0, 1] (the volume gate: below ``min_db`` the level is 0, the
mouth closes); ratios are sharpened, ``r^k / Σ r^k`` with ``k = sharpness`` (1 is uLipSync's
plain ratio); each vowel's target weight is its ratio × level (silence's ratio opens
nothing); the weights then follow their targets by first-order smoothing, time constant
``attack_ms`` while opening and ``release_ms`` while closing (per window: factor
``1 − exp(−hop/τ)``). ``confidence`` is the winning class's ratio, 0 when gated.
Deterministic: the same windows give the same weights bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import CLASSES, V_CONF, V_LEVEL, V_ON, VISEMES, VOICE_W
from .mfcc import MfccExtractor, MfccOptions
from .profiles import ProfileError, VowelProfiles

COMPARES = ("l2", "l1", "cosine")
SILENCE = CLASSES.index("silence")


@dataclass(frozen=True)
class LipSyncOptions:
    """Settings of :class:`LipSyncAnalyzer`.

    Attributes:
        min_db: the volume gate, dBFS of the window RMS; below it the mouth closes.
        max_db: the level at which the mouth opens fully.
        compare: ``"l2"`` (uLipSync's default), ``"l1"`` or ``"cosine"``.
        sharpness: exponent on the ratios (module doc).
        attack_ms, release_ms: smoothing time constants, opening and closing.
    """

    min_db: float = -50.0
    max_db: float = -30.0
    compare: str = "l2"
    sharpness: float = 4.0
    attack_ms: float = 12.0
    release_ms: float = 15.0

    def __post_init__(self) -> None:
        if self.compare not in COMPARES:
            raise ValueError(f"lip sync: compare must be one of {COMPARES}, got {self.compare!r}")
        if not self.max_db > self.min_db:
            raise ValueError(f"lip sync: max_db ({self.max_db}) must exceed min_db ({self.min_db})")
        if self.sharpness <= 0 or self.attack_ms < 0 or self.release_ms < 0:
            raise ValueError("lip sync: sharpness must be > 0 and the time constants >= 0")


def level_of(rms: float, o: LipSyncOptions) -> float:
    """The gated level (module doc) of a window RMS."""
    if rms <= 0.0:
        return 0.0
    db = 20.0 * math.log10(rms)
    if db < o.min_db:
        return 0.0
    return min(1.0, (db - o.min_db) / (o.max_db - o.min_db))


class LipSyncAnalyzer:
    """Windows -> viseme weights (module doc); one per audio stream (it keeps smoothing state).

    Args:
        profiles: the user's (or the default) :class:`~.profiles.VowelProfiles`.
        options: :class:`LipSyncOptions`.

    Raises:
        ProfileError: the profiles were measured with other MFCC settings than ``mfcc``.
    """

    def __init__(self, profiles: VowelProfiles, options: LipSyncOptions = LipSyncOptions(),
                 mfcc: MfccOptions | None = None) -> None:  # fmt: skip
        mfcc = profiles.mfcc if mfcc is None else mfcc
        if mfcc != profiles.mfcc:
            raise ProfileError(f"voice profile measured with {profiles.mfcc}, analysis uses {mfcc}")
        self.options = options
        self.mfcc = MfccExtractor(mfcc)
        self.set_profiles(profiles)
        self._state = np.zeros(len(VISEMES))
        h = mfcc.hop_s * 1000.0
        self._k_attack = 1.0 if options.attack_ms == 0 else 1.0 - math.exp(-h / options.attack_ms)
        self._k_release = 1.0 if options.release_ms == 0 else 1.0 - math.exp(-h / options.release_ms)

    def set_profiles(self, profiles: VowelProfiles) -> None:
        """Use ``profiles`` from the next window on (a calibration); same MFCC settings."""
        if profiles.mfcc != self.mfcc.options:
            raise ProfileError(f"voice profile measured with {profiles.mfcc}, analysis uses {self.mfcc.options}")
        self.profiles = profiles
        self._norm_means = (profiles.means - profiles.center) / profiles.scale

    def reset(self) -> None:
        """Mouth closed, as at the start."""
        self._state[:] = 0.0

    def ratios(self, mfcc: np.ndarray) -> np.ndarray:
        """(6,) normalised scores of MFCCs (n,) against every class (module doc)."""
        p = self.profiles
        x = (mfcc - p.center) / p.scale
        diff = self._norm_means - x
        c = self.options.compare
        if c == "l2":
            s = 10.0 ** (-np.sqrt(np.mean(diff * diff, axis=1)))
        elif c == "l1":
            s = 10.0 ** (-np.mean(np.abs(diff), axis=1))
        else:
            nx = float(np.sqrt(x @ x))
            nm = np.sqrt(np.sum(self._norm_means * self._norm_means, axis=1))
            cos = (self._norm_means @ x) / np.maximum(nm * nx, 1e-12)
            s = np.maximum(cos, 0.0) ** 100
        total = float(s.sum())
        return s / total if total > 0 else np.full(len(CLASSES), 1.0 / len(CLASSES))

    def classify(self, window: np.ndarray) -> tuple[int, float, np.ndarray]:
        """(winning class index into CLASSES, gated level, ratios (6,)) of one window; the
        level-0 windows count as silence."""
        m, rms = self.mfcc.window(window)
        lvl = level_of(rms, self.options)
        r = self.ratios(m)
        return (int(np.argmax(r)) if lvl > 0.0 else SILENCE), lvl, r

    def step(self, window: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The smoothed voice value (VOICE_W,) after window ``window`` (window,) float64 in
        [-1, 1] (layout: :mod:`tracking.audio`)."""
        if out is None:
            out = np.zeros(VOICE_W)
        m, rms = self.mfcc.window(window)
        lvl = level_of(rms, self.options)
        target = np.zeros(len(VISEMES))
        conf = 0.0
        if lvl > 0.0:
            r = self.ratios(m) ** self.options.sharpness
            r /= r.sum()
            target = r[:len(VISEMES)] * lvl
            conf = float(r.max())
        s = self._state
        k = np.where(target > s, self._k_attack, self._k_release)
        s += (target - s) * k
        out[:len(VISEMES)] = s
        out[V_LEVEL] = lvl
        out[V_CONF] = conf
        out[V_ON] = 1.0
        return out
