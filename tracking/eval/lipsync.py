"""Measuring lip sync: classification accuracy per vowel and the sound-to-mouth latency by stage.

- :func:`accuracy`: the share of voiced windows (level > 0) classified as the spoken vowel.
- :func:`latency_stages`: for takes of silence, then a vowel, then silence, on the audio
  clock: *window* — from the vowel's onset (the first sample above 1 % of its peak) to the
  first analysed window whose spoken viseme reaches half its held value (the time the window
  needs to fill with the vowel, plus the smoothing's attack); *analysis* — compute time per
  window (median, this machine); *frame* — the draw samples the newest value at its own
  time, so a value waits at most one frame (``1000 / fps``); *close* — from the vowel's end
  to the first window with every viseme ≤ 0.05. The device's own input latency (PortAudio's
  ``inputBufferAdcTime`` to the callback) adds to these live: one block (= hop) at the
  stream's default latency, measured by :class:`tracking.audio.source.MicrophoneStream`.
"""

from __future__ import annotations

import time

import numpy as np

from ..audio import CLASSES, LETTERS, VISEMES
from ..audio.classifier import LipSyncAnalyzer
from ..audio.stream import NS, WindowFeeder, analyze_signal


def accuracy(analyzer: LipSyncAnalyzer, signals: dict[str, list[np.ndarray]]) -> dict[str, tuple[float, int]]:
    """letter -> (share of voiced windows classified as that vowel, voiced windows)."""
    o = analyzer.mfcc.options
    out = {}
    for letter, sigs in signals.items():
        ok = n = 0
        for s in sigs:
            for _, w in WindowFeeder(o.window, o.hop).feed(s):
                c, lvl, _ = analyzer.classify(w)
                if lvl > 0:
                    n += 1
                    ok += CLASSES[c] == LETTERS[letter]
        out[letter] = (ok / n if n else float("nan"), n)
    return out


def latency_stages(analyzer: LipSyncAnalyzer, takes: dict[str, np.ndarray], *, fps: float = 60.0,
                   pad_s: float = 0.3) -> dict[str, dict[str, float]]:  # fmt: skip
    """letter -> {"window_ms", "analysis_ms", "frame_ms", "total_ms", "close_ms", "bound_ms"}
    (module doc); ``bound_ms`` = one window + one frame."""
    o = analyzer.mfcc.options
    sr = o.sample_rate
    out = {}
    for letter, sig in takes.items():
        sig = np.asarray(sig, np.float64)
        peak = np.max(np.abs(sig))
        idx = np.nonzero(np.abs(sig) > 0.01 * peak)[0]
        vowel = sig[idx[0]:idx[-1] + 1]
        pad = np.zeros(int(pad_s * sr))
        signal = np.concatenate([pad, vowel, pad])
        analyzer.reset()
        t0 = time.perf_counter()
        t, v = analyze_signal(signal, analyzer)
        per_window = (time.perf_counter() - t0) * 1e3 / max(1, len(t))
        k = VISEMES.index(LETTERS[letter])
        onset_ns = len(pad) * NS // sr
        end_ns = (len(pad) + len(vowel)) * NS // sr
        held = np.median(v[(t > onset_ns + 200_000_000) & (t < end_ns), k])
        first = np.nonzero((t >= onset_ns) & (v[:, k] >= 0.5 * held))[0]
        window_ms = (t[first[0]] - onset_ns) * 1e-6 if len(first) else float("nan")
        closed = np.nonzero((t >= end_ns) & (v[:, :len(VISEMES)].max(axis=1) <= 0.05))[0]
        close_ms = (t[closed[0]] - end_ns) * 1e-6 if len(closed) else float("nan")
        frame_ms = 1000.0 / fps
        out[letter] = {"window_ms": window_ms, "analysis_ms": per_window, "frame_ms": frame_ms,
                       "total_ms": window_ms + per_window + frame_ms, "close_ms": close_ms,
                       "bound_ms": o.window_s * 1000.0 + frame_ms}
    return out
