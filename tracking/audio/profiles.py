"""Vowel profiles: per-user MFCC averages of A/I/U/E/O and silence, and their calibration.

As uLipSync's ``Profile`` (hecomi/uLipSync ``Runtime/Core/Profile.cs``): each class keeps up
to :data:`MAX_SAMPLES` MFCC vectors recorded from the user; its profile is their mean, and
every comparison is made on standardised coefficients, ``(c − mean) / std`` with the mean
and standard deviation over all samples of all classes. Stored as JSON (schema
``swaycam.voiceprofile`` 1) with the MFCC settings they were measured with.

A bundled default (``default_profile.json``, measured by ``swaycam calibrate --audio`` on
espeak-ng's Italian voice, whose five vowels are the VRM ones) serves until a user calibrates.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..errors import TrackingError
from . import CLASSES
from .mfcc import MfccOptions

SCHEMA = "swaycam.voiceprofile"
VERSION = 1
#: MFCC vectors kept per class (the newest win)
MAX_SAMPLES = 256
DEFAULT_PATH = Path(__file__).with_name("default_profile.json")


class ProfileError(TrackingError):
    """A voice profile file is malformed, or does not fit the analysis settings."""


class VowelProfiles:
    """MFCC samples per class (:data:`tracking.audio.CLASSES`) and what the classifier reads.

    Args:
        samples: class name -> (M, n_mfcc) MFCC vectors; every class needs at least one.
        mfcc: the settings they were measured with.

    Attributes:
        means: (6, n_mfcc) class means, in CLASSES order.
        center, scale: (n_mfcc,) mean and standard deviation over all samples.

    Raises:
        ProfileError: a class is missing or empty, or a vector has the wrong length.
    """

    def __init__(self, samples: dict[str, np.ndarray], mfcc: MfccOptions = MfccOptions()) -> None:
        self.mfcc = mfcc
        self.samples: dict[str, np.ndarray] = {}
        for c in CLASSES:
            s = np.asarray(samples.get(c, ()), np.float64)
            if s.ndim != 2 or len(s) == 0 or s.shape[1] != mfcc.n_mfcc:
                raise ProfileError(f"voice profile: class {c!r} needs (M >= 1, {mfcc.n_mfcc}) MFCCs, got {s.shape}")
            self.samples[c] = s[-MAX_SAMPLES:]
        allv = np.concatenate([self.samples[c] for c in CLASSES])
        self.center = allv.mean(axis=0)
        self.scale = np.maximum(allv.std(axis=0), 1e-6)
        self.means = np.stack([self.samples[c].mean(axis=0) for c in CLASSES])

    def with_class(self, name: str, vectors: np.ndarray) -> "VowelProfiles":
        """A copy whose class ``name`` is replaced by ``vectors`` (M, n_mfcc): re-recording one vowel."""
        s = dict(self.samples)
        s[name] = np.asarray(vectors, np.float64)
        return VowelProfiles(s, self.mfcc)

    # ------------------------------------------------------------------ files
    def to_json(self) -> dict:
        return {"schema": SCHEMA, "version": VERSION, "mfcc": asdict(self.mfcc),
                "samples": {c: np.round(self.samples[c], 6).tolist() for c in CLASSES}}

    def save(self, path: str | os.PathLike) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(p.suffix + ".part")
        tmp.write_text(json.dumps(self.to_json(), separators=(",", ":")))
        os.replace(tmp, p)

    @classmethod
    def from_json(cls, data: dict, where: str = "voice profile") -> "VowelProfiles":
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ProfileError(f"{where}: not a {SCHEMA} file")
        if data.get("version") != VERSION:
            raise ProfileError(f"{where}: version {data.get('version')!r}, expected {VERSION}")
        try:
            mfcc = MfccOptions(**data["mfcc"])
            samples = {c: np.asarray(data["samples"][c], np.float64) for c in CLASSES}
        except (KeyError, TypeError, ValueError) as exc:
            raise ProfileError(f"{where}: {type(exc).__name__}: {exc}") from None
        for c, s in samples.items():
            if not np.all(np.isfinite(s)):
                raise ProfileError(f"{where}: class {c!r} has non-finite values")
        return cls(samples, mfcc)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "VowelProfiles":
        """Read a profile file. Raises ProfileError (unreadable, malformed)."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise ProfileError(f"{path}: {exc}") from None
        return cls.from_json(data, str(path))

    @classmethod
    def default(cls) -> "VowelProfiles":
        """The bundled default profile (module doc)."""
        return cls.load(DEFAULT_PATH)


def voiced_vectors(mfccs: np.ndarray, rms: np.ndarray, min_db: float, *, drop_edges: int = 2) -> np.ndarray:
    """The MFCC rows (N, n) of a take whose window level ``20·log10(rms)`` is at least
    ``min_db`` dB, without ``drop_edges`` windows at each end of every voiced run (onsets
    and decays mix the vowel with silence)."""
    db = 20.0 * np.log10(np.maximum(np.asarray(rms, np.float64), 1e-12))
    voiced = db >= min_db
    keep = voiced.copy()
    if drop_edges:
        for k in range(1, drop_edges + 1):
            keep[k:] &= voiced[:-k]
            keep[:-k] &= voiced[k:]
        keep[:drop_edges] = False
        keep[len(keep) - drop_edges:] = False
    return np.asarray(mfccs)[keep]


def silence_vectors(mfccs: np.ndarray, rms: np.ndarray, min_db: float) -> np.ndarray:
    """The rows of a take below the gate level but not digital silence (room noise); when a
    take has none (a perfectly silent file), one vector of zeros (what a zero window gives)."""
    db = 20.0 * np.log10(np.maximum(np.asarray(rms, np.float64), 1e-12))
    rows = np.asarray(mfccs)[(db < min_db) & (np.asarray(rms) > 0)]
    return rows if len(rows) else np.zeros((1, np.asarray(mfccs).shape[1]))
