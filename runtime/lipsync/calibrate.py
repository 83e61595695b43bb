"""Recording vowel takes from the microphone for a voice profile (``swaycam calibrate --audio``
and the panel's voice card).

:class:`TakeRecorder` hooks a :class:`tracking.audio.source.MicrophoneStream`'s windows: while
a take runs, every analysis window goes into that take. :func:`guided_takes` prompts for each
vowel and silence in turn and records ``seconds`` of each.
"""

from __future__ import annotations

import threading
import time

import numpy as np

PROMPTS = {"a": "say a long 'aaa' (as in 'father')", "i": "say a long 'iii' (as in 'see')",
           "u": "say a long 'uuu' (as in 'blue')", "e": "say a long 'eee' (as in 'bed')",
           "o": "say a long 'ooo' (as in 'more')", "silence": "stay quiet"}
ORDER = ("silence", "a", "i", "u", "e", "o")


class TakeRecorder:
    """Collects a microphone stream's windows into named takes; thread-safe (the stream's
    callback thread adds, the caller starts and ends takes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: str | None = None
        self.takes: dict[str, list[np.ndarray]] = {}

    def __call__(self, window: np.ndarray) -> None:
        with self._lock:
            if self._current is not None:
                self.takes[self._current].append(window.copy())

    def begin(self, name: str) -> None:
        with self._lock:
            self.takes[name] = []
            self._current = name

    def end(self) -> np.ndarray:
        """The current take's windows (W, window); the take ends."""
        with self._lock:
            name, self._current = self._current, None
            rows = self.takes.get(name, []) if name is not None else []
        return np.array(rows) if rows else np.zeros((0, 1))

    def record(self, name: str, seconds: float, sleep=time.sleep) -> np.ndarray:
        """Record take ``name`` for ``seconds``; its windows."""
        self.begin(name)
        sleep(seconds)
        return self.end()


def guided_takes(mic, recorder: TakeRecorder, *, seconds: float = 2.0, get_ready_s: float = 1.0,
                 say=print, sleep=time.sleep, order=ORDER) -> dict[str, np.ndarray]:  # fmt: skip
    """Prompt for each class of ``order`` and record ``seconds`` of it from ``mic`` (a
    started stream whose ``on_window`` is ``recorder``); returns letter -> windows."""
    out = {}
    for letter in order:
        say(f"{letter}: {PROMPTS[letter]} for {seconds:g} s, starting in {get_ready_s:g} s")
        sleep(get_ready_s)
        out[letter] = recorder.record(letter, seconds, sleep)
    return out
