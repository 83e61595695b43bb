"""MFCCs of one short audio window, as uLipSync computes them.

Steps (hecomi/uLipSync ``Runtime/Core/LipSyncJob.cs`` and ``Algorithm.cs``): pre-emphasis
``y[n] = x[n] − 0.97·x[n−1]``, Hamming window, normalisation to a peak of 1 (the shape of
the spectrum, not the loudness, decides the vowel; loudness is the volume gate's), power
spectrum by real FFT, a triangular mel filter bank (mel = 1127·ln(1 + f/700), filters
evenly spaced in mel from 0 to the Nyquist frequency), 10·log10 power, DCT-II
(orthonormal); coefficients 1..n_mfcc are kept (0, the overall level, is dropped).

Every window goes through :meth:`MfccExtractor.window` one at a time, live or offline,
so a file gives the same coefficients bit for bit however it is fed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MfccOptions:
    """Analysis settings.

    Attributes:
        sample_rate: Hz; sources resample to it.
        window: samples per analysis window (512 at 16 kHz: 32 ms).
        hop: samples between window starts (256: a result every 16 ms).
        mel_channels: triangular filters of the mel bank.
        n_mfcc: coefficients kept (1..n_mfcc).
        preemphasis: the pre-emphasis coefficient.
    """

    sample_rate: int = 16000
    window: int = 512
    hop: int = 256
    mel_channels: int = 24
    n_mfcc: int = 12
    preemphasis: float = 0.97

    def __post_init__(self) -> None:
        if not (0 < self.hop <= self.window) or self.window & (self.window - 1):
            raise ValueError(f"mfcc: window must be a power of two >= hop > 0, got {self.window}, {self.hop}")
        if not 0 < self.n_mfcc < self.mel_channels:
            raise ValueError(f"mfcc: need 0 < n_mfcc < mel_channels, got {self.n_mfcc}, {self.mel_channels}")

    @property
    def window_s(self) -> float:
        return self.window / self.sample_rate

    @property
    def hop_s(self) -> float:
        return self.hop / self.sample_rate


def mel_filter_bank(sample_rate: int, n_fft: int, channels: int) -> np.ndarray:
    """(channels, n_fft//2 + 1) triangular filters, evenly spaced on the mel scale
    (1127·ln(1 + f/700)) from 0 Hz to sample_rate/2, peak 1."""
    def mel(f):
        return 1127.0 * np.log1p(np.asarray(f, np.float64) / 700.0)

    def hz(m):
        return 700.0 * np.expm1(np.asarray(m, np.float64) / 1127.0)

    edges = hz(np.linspace(0.0, mel(sample_rate / 2.0), channels + 2))
    freqs = np.arange(n_fft // 2 + 1) * sample_rate / n_fft
    bank = np.zeros((channels, len(freqs)))
    for c in range(channels):
        lo, mid, hi = edges[c], edges[c + 1], edges[c + 2]
        up = (freqs - lo) / (mid - lo)
        down = (hi - freqs) / (hi - mid)
        bank[c] = np.clip(np.minimum(up, down), 0.0, None)
    return bank


class MfccExtractor:
    """MFCCs and RMS volume of windows of ``options.window`` float samples in [-1, 1]."""

    def __init__(self, options: MfccOptions = MfccOptions()) -> None:
        self.options = o = options
        self._hamming = np.hamming(o.window)
        self._bank = mel_filter_bank(o.sample_rate, o.window, o.mel_channels)
        k = np.arange(o.mel_channels)
        # orthonormal DCT-II rows 1..n_mfcc
        dct = np.cos(np.pi / o.mel_channels * (k[None, :] + 0.5) * np.arange(o.mel_channels)[:, None])
        dct *= np.sqrt(2.0 / o.mel_channels)
        dct[0] /= np.sqrt(2.0)
        self._dct = np.ascontiguousarray(dct[1:o.n_mfcc + 1])
        self._buf = np.empty(o.window)

    def window(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """(n_mfcc,) MFCCs and the RMS of window ``x`` (window,) float64.

        A window of digital silence (all zeros) gives zeros and RMS 0."""
        o = self.options
        rms = float(np.sqrt(np.mean(x * x)))
        b = self._buf
        b[0] = x[0]
        np.subtract(x[1:], o.preemphasis * x[:-1], out=b[1:])
        b *= self._hamming
        peak = float(np.max(np.abs(b)))
        if peak <= 0.0:
            return np.zeros(o.n_mfcc), rms
        b /= peak
        spec = np.fft.rfft(b)
        power = spec.real * spec.real + spec.imag * spec.imag
        mel = self._bank @ power
        db = 10.0 * np.log10(np.maximum(mel, 1e-10))
        return self._dct @ db, rms
