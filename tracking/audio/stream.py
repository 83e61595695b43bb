"""Analysed audio windows on a timeline: filled live by a capture callback or offline from a
decoded signal, sampled by time.

A window covering samples ``[s − window, s)`` is stamped with the time its last sample was
captured: offline ``t = s·10⁹ // sample_rate`` ns of media time (integer arithmetic, so a
file replays to the same stamps bit for bit); live the capture clock's time of that sample.
:meth:`VoiceTimeline.sample` gives the newest value stamped at or before ``t`` (no
interpolation delay: the mouth follows the newest window; zeros before the first).
"""

from __future__ import annotations

import threading

import numpy as np

from . import VOICE_W
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


class VoiceTimeline:
    """Timestamped voice values (VOICE_W,), appended in time order; thread-safe.

    Args:
        capacity: values kept (the oldest are dropped; a live stream keeps a few seconds).
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._t = np.zeros(capacity, np.int64)
        self._v = np.zeros((capacity, VOICE_W))
        self._n = 0               # values appended so far
        self._lock = threading.Lock()

    def append(self, t_ns: int, value: np.ndarray) -> None:
        with self._lock:
            k = self._n % len(self._t)
            self._t[k] = t_ns
            self._v[k] = value
            self._n += 1

    def shift(self, offset_ns: int) -> None:
        """Move every kept stamp by ``offset_ns`` (an offline analysis put on a live clock)."""
        with self._lock:
            self._t += int(offset_ns)

    @property
    def count(self) -> int:
        return self._n

    def newest_ns(self) -> int | None:
        with self._lock:
            return None if self._n == 0 else int(self._t[(self._n - 1) % len(self._t)])

    def sample(self, t_ns: int, out: np.ndarray) -> np.ndarray:
        """The newest value stamped at or before ``t_ns`` into ``out`` (VOICE_W,); zeros
        (``on`` 0) when there is none."""
        cap = len(self._t)
        with self._lock:
            n = self._n
            lo, hi = max(0, n - cap), n        # binary search over the logical indices [lo, n)
            if n == 0 or self._t[lo % cap] > t_ns:
                out[:] = 0.0
                return out
            while hi - lo > 1:                 # invariant: t[lo] <= t_ns, t[hi] > t_ns (or hi == n)
                mid = (lo + hi) // 2
                if self._t[mid % cap] <= t_ns:
                    lo = mid
                else:
                    hi = mid
            out[:] = self._v[lo % cap]
        return out

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the kept (times (N,), values (N, VOICE_W)), oldest first."""
        with self._lock:
            cap, n = len(self._t), self._n
            idx = [(k % cap) for k in range(max(0, n - cap), n)]
            return self._t[idx].copy(), self._v[idx].copy()


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
