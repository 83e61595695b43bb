"""Analysed audio windows on a timeline: filled live by a capture callback or offline from a
decoded signal, sampled by time.

A window covering samples ``[s − window, s)`` is stamped with the time its last sample was
captured: offline ``t = s·10⁹ // sample_rate`` ns of media time (integer arithmetic, so a
file replays to the same stamps bit for bit); live the capture clock's time of that sample.
:meth:`VoiceTimeline.sample` gives the newest value stamped at or before ``t`` (no
interpolation delay: the mouth follows the newest window; zeros before the first).
"""

from __future__ import annotations

import numpy as np

from . import VOICE_W
from ..timeline import Timeline
from .classifier import LipSyncAnalyzer

NS = 1_000_000_000


class WindowFeeder:
    """Cuts a stream of sample blocks into analysis windows every ``hop`` samples.

    :meth:`feed` takes a block (M,) and returns the windows it completed as
    ``[(end_index, window), ...]``, ``end_index`` counting samples from the stream's start.
    """

    def __init__(self, window: int, hop: int) -> None:
        self.window, self.hop = window, hop
        self._ring = np.zeros(window)
        self._filled = 0          # samples of the ring that hold audio (< window at the start)
        self._since = 0           # samples since the last window
        self.count = 0            # samples fed so far

    def feed(self, block: np.ndarray) -> list[tuple[int, np.ndarray]]:
        out = []
        block = np.asarray(block, np.float64).reshape(-1)
        i = 0
        while i < len(block):
            take = min(len(block) - i, self.hop - self._since)
            self._ring = np.concatenate([self._ring[take:], block[i:i + take]])
            i += take
            self._since += take
            self.count += take
            self._filled = min(self.window, self._filled + take)
            if self._since == self.hop:
                self._since = 0
                if self._filled == self.window:
                    out.append((self.count, self._ring.copy()))
        return out


class VoiceTimeline(Timeline):
    """A :class:`tracking.timeline.Timeline` of voice values (VOICE_W,)."""

    def __init__(self, capacity: int = 1024) -> None:
        super().__init__(VOICE_W, capacity)


def analyze_signal(signal: np.ndarray, analyzer: LipSyncAnalyzer, *, block: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Offline: every window of ``signal`` (N,) float64 at the analyzer's sample rate, fed in
    blocks of ``block`` samples (the result does not depend on it).

    Returns:
        (times (W,) int64 media ns, values (W, VOICE_W)) (module doc).
    """
    o = analyzer.mfcc.options
    feeder = WindowFeeder(o.window, o.hop)
    ts, vs = [], []
    for i in range(0, len(signal), block):
        for end, w in feeder.feed(signal[i:i + block]):
            ts.append(end * NS // o.sample_rate)
            vs.append(analyzer.step(w))
    return np.array(ts, np.int64), (np.array(vs) if vs else np.zeros((0, VOICE_W)))


def timeline_of(times: np.ndarray, values: np.ndarray, *, offset_ns: int = 0) -> VoiceTimeline:
    """A timeline holding a whole offline analysis, shifted by ``offset_ns``."""
    tl = VoiceTimeline(capacity=max(1, len(times)))
    for t, v in zip(times.tolist(), values):
        tl.append(int(t) + offset_ns, v)
    return tl
