"""The queue that hands work to the render thread.

The control service answers HTTP requests on its own threads (runtime/service/); anything
that touches GL, the rig or the pose input must run on the render thread. A service thread
:meth:`~CommandQueue.call` s a function and waits for its result; the session
:meth:`~CommandQueue.drain` s the queue between frames.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Any, Callable

#: Longest wait (s) of a service thread for the render thread's idle time before a step.
IDLE_WAIT_S = 0.1


class CommandQueue:
    """Functions run on the render thread, in order, between frames."""

    def __init__(self):
        self._queue: queue.Queue = queue.Queue()

    def call(self, fn: Callable[[], Any], timeout_s: float = 10.0) -> Any:
        """Run ``fn()`` on the render thread and return its result (from any other thread).

        Raises:
            whatever ``fn`` raised; TimeoutError when the render thread did not get to it in
            ``timeout_s`` seconds (the run is not drawing frames; it is then dropped, unless it
            had started).
        """
        return wait_for(self.submit(fn), timeout_s)

    def submit(self, fn: Callable[[], Any]) -> Future:
        """Queue ``fn()`` for the render thread (any thread); its Future carries the result or
        the exception. Functions run in the order they were submitted."""
        fut: Future = Future()
        self._queue.put((fn, fut))
        return fut

    def drain(self) -> None:
        """Run everything queued (render thread); each result or exception goes to its caller."""
        while True:
            try:
                fn, fut = self._queue.get_nowait()
            except queue.Empty:
                return
            if not fut.set_running_or_notify_cancel():      # its caller gave up waiting (a timeout)
                continue
            try:
                fut.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed back to the service thread
                fut.set_exception(exc)
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise                                    # the run ends as well


class RenderIdle:
    """The render thread's idle time, for work another thread of this process does for a
    request (an avatar load, resolving many spring patterns): the render thread calls
    :meth:`frame_drawn` after each live frame, before it sleeps until the next one; the
    worker calls :meth:`wait` before each step of its work, which then runs while the render
    thread sleeps instead of taking the GIL from it (the same pacing as the try-on worker,
    runtime/tryon/switcher.py). Offline (``paced`` False) nothing waits."""

    def __init__(self):
        self.paced = False
        self._tick = threading.Event()

    def frame_drawn(self) -> None:
        self._tick.set()

    def wait(self) -> None:
        """Wait (at most :data:`IDLE_WAIT_S`) for the render thread to finish a frame."""
        if self.paced:
            self._tick.clear()
            self._tick.wait(IDLE_WAIT_S)


def wait_for(fut: Future, timeout_s: float):
    """``fut``'s result; on a timeout the queued work is cancelled (it will not run later,
    after its caller was told it failed) unless it already started."""
    try:
        return fut.result(timeout=timeout_s)
    except TimeoutError:
        fut.cancel()
        raise


__all__ = ["CommandQueue", "RenderIdle", "wait_for"]
