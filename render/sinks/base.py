"""The sink protocol and a background writer shared by file sinks.

A sink takes finished frames: ``send(rgba, t_ns)`` with ``rgba`` (H, W, 4) uint8 sRGB,
straight alpha, row 0 = top (what :meth:`render.Renderer.read_rgba` returns) and ``t_ns``
the frame's time in integer nanoseconds (monotonic clock, docs/design.md §3). Sinks never keep a
reference to ``rgba`` past ``send`` unless they copied it, so callers may reuse the array.
The runtime may feed several sinks with the same frame.

Every sink says whether it needs pixels (:attr:`Sink.needs_pixels`): a window presenting
from the renderer's framebuffer does not (it is sent ``None``), so a run whose sinks need
none reads nothing back from the GPU.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Callable, Protocol, runtime_checkable

import numpy as np

log = logging.getLogger(__name__)


@runtime_checkable
class Sink(Protocol):
    """Anything that consumes frames. Sinks are context managers; ``close()`` is idempotent.

    Attributes:
        needs_pixels: ``send`` reads ``rgba`` (True), or ignores it and may be sent None
            (False: the frame is shown straight from the GPU).
    """

    needs_pixels: bool

    def send(self, rgba: np.ndarray, t_ns: int) -> None: ...

    def close(self) -> None: ...


def check_frame(rgba: np.ndarray, size: tuple[int, int] | None = None) -> np.ndarray:
    """Validate an (H, W, 4) uint8 frame (and its (W, H) ``size`` when given)."""
    a = np.asarray(rgba)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 4:
        raise ValueError(f"frame {a.dtype} {a.shape}: expected (H, W, 4) uint8")
    if size is not None and (a.shape[1], a.shape[0]) != tuple(size):
        raise ValueError(f"frame is {a.shape[1]}x{a.shape[0]}, sink expects {size[0]}x{size[1]}")
    return a


class BackgroundWriter:
    """Runs ``write(item)`` on a worker thread, in order; ``put`` blocks when ``depth`` items
    wait (back-pressure, never dropping). An exception in the worker is re-raised by the
    next ``put`` or by ``close``."""

    def __init__(self, write: Callable[[object], None], *, depth: int = 8, name: str = "sink-writer"):
        self._write = write
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self._error is None:
                try:
                    self._write(item)
                except BaseException as exc:  # noqa: BLE001 - handed to the producer thread
                    self._error = exc
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                    log.debug("%s failed: %s", self._thread.name, exc)
                    log.error("%s failed: %s", self._thread.name, first)

    def _raise(self) -> None:
        if self._error is not None:
            err, self._error = self._error, None
            raise RuntimeError(f"{self._thread.name}: {err}") from err

    def put(self, item) -> None:
        self._raise()
        self._queue.put(item)

    def close(self) -> None:
        """Write everything queued, stop the thread, re-raise a worker error."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._raise()
