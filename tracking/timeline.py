"""A thread-safe timeline of fixed-width values: appended by a producer thread (a microphone
callback, a tracker), sampled by time from another (the loop). :meth:`Timeline.sample`
gives the newest value stamped at or before a time (no interpolation delay), zeros before
the first; binary search over the kept values.
"""

from __future__ import annotations

import threading

import numpy as np


class Timeline:
    """Timestamped values (width,), appended in time order; thread-safe.

    Args:
        width: floats per value.
        capacity: values kept (the oldest are dropped; a live stream keeps a few seconds).
    """

    def __init__(self, width: int, capacity: int = 1024) -> None:
        self._t = np.zeros(capacity, np.int64)
        self._v = np.zeros((capacity, width))
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
        """The newest value stamped at or before ``t_ns`` into ``out`` (width,); zeros
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
        """Copies of the kept (times (N,), values (N, width)), oldest first."""
        with self._lock:
            cap, n = len(self._t), self._n
            idx = [(k % cap) for k in range(max(0, n - cap), n)]
            return self._t[idx].copy(), self._v[idx].copy()
