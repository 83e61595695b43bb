"""Calibrating vowel profiles from takes: a few seconds of the user holding each vowel.

:func:`profiles_from_takes` turns takes (signals, offline files or microphone recordings)
into :class:`~.profiles.VowelProfiles`: a vowel's vectors are its voiced windows without
their onsets and decays (:func:`~.profiles.voiced_vectors`); silence's are the takes'
quiet windows above digital silence (room noise), or the flat-spectrum vector when a take
has none. A take replaces the class it names; classes without a take keep the ``base``
profile's vectors (re-recording one vowel in the panel).
"""

from __future__ import annotations

import numpy as np

from . import CLASSES, LETTERS
from .classifier import LipSyncOptions
from .mfcc import MfccExtractor, MfccOptions
from .profiles import ProfileError, VowelProfiles, silence_vectors, voiced_vectors
from .stream import WindowFeeder


def take_vectors(signal: np.ndarray, mfcc: MfccOptions) -> tuple[np.ndarray, np.ndarray]:
    """(MFCCs (W, n), RMS (W,)) of every window of ``signal``: a signal (N,) float64, or
    windows already cut (W, mfcc.window) (a live take, :class:`~.source.MicrophoneStream`'s
    ``on_window``)."""
    ex = MfccExtractor(mfcc)
    ms, rs = [], []
    signal = np.asarray(signal, np.float64)
    windows = signal if signal.ndim == 2 else (w for _, w in WindowFeeder(mfcc.window, mfcc.hop).feed(signal))
    for w in windows:
        m, r = ex.window(w)
        ms.append(m)
        rs.append(r)
    return np.array(ms).reshape(-1, mfcc.n_mfcc), np.array(rs)


def class_name(key: str) -> str:
    """A take's key as a class: ``a i u e o silence`` or ``aa ih ou ee oh silence``.
    Raises ValueError for another name."""
    k = key.strip().lower()
    if k in LETTERS:
        return LETTERS[k]
    if k in CLASSES:
        return k
    raise ValueError(f"unknown vowel {key!r}: one of a, i, u, e, o, silence")


def profiles_from_takes(takes: dict[str, np.ndarray], *, mfcc: MfccOptions = MfccOptions(),
                        options: LipSyncOptions = LipSyncOptions(),
                        base: VowelProfiles | None = None) -> VowelProfiles:  # fmt: skip
    """Profiles from ``takes`` (class or letter -> signal (N,) float64 at ``mfcc.sample_rate``,
    or its windows (W, window)).

    Raises:
        ProfileError: a vowel take has no window above the volume gate (nothing voiced to
            learn from: speak louder or lower ``min_db``), or a class has neither a take nor
            a ``base`` profile.
    """
    samples: dict[str, np.ndarray] = {} if base is None else dict(base.samples)
    quiet = []
    for key, signal in takes.items():
        c = class_name(key)
        ms, rs = take_vectors(np.asarray(signal, np.float64), mfcc)
        if c == "silence":
            samples[c] = silence_vectors(ms, rs, options.min_db)
            continue
        v = voiced_vectors(ms, rs, options.min_db)
        if len(v) == 0:
            raise ProfileError(f"calibration: the take for {key!r} has no window above {options.min_db:g} dBFS")
        samples[c] = v
        q = rs > 0
        quiet.append(silence_vectors(ms[q], rs[q], options.min_db) if q.any() else np.zeros((1, mfcc.n_mfcc)))
    if "silence" not in samples and quiet:
        samples["silence"] = np.concatenate(quiet)
    missing = [c for c in CLASSES if c not in samples]
    if missing:
        raise ProfileError(f"calibration: no take for {', '.join(missing)}")
    return VowelProfiles(samples, mfcc)
