"""The fitter process: hairstyle fits of a running session, outside its GIL.

A fit is ~0.2-2 s of numpy/scipy work, much of it in C calls that hold the GIL for tens of
milliseconds at a time (einsum, unique, sparse factorisations). Run on a thread of the render
process it stretched live frames to 120-150 ms at 30 fps (measured: ``swaycam bench tryon``,
docs/history/runtime-notes.md); run here, in a child process, the render thread never waits for it.

:class:`Fitter` (the session side) starts ``python -m runtime.tryon.child`` on its first
fit, with this checkout first on its path, and keeps it for the next ones. Requests and
replies are length-prefixed pickles on the child's stdin / stdout (the child's own prints
and logs go to stderr):

    request  (avatar file, style file, TryOnSettings, cache folder, want the result)
    reply    ("ok", TryOnResult without its intermediate guides | None, cache hit)
             ("error", message)                     the style cannot be fitted

The child runs at niceness 10 (:mod:`runtime.tryon.child`): on a machine with few cores its
start-up and its fits take the CPU time the render thread, the tracker and the video encoder
leave. The child loads the avatar from its file (the last one is kept), fits through
:func:`runtime.tryon.styles.fit_style` (so the result lands in the disk cache as well) and
exits when its stdin closes. Closing the session kills it, even mid-fit. Pickles are only
exchanged with this own child over its pipes, never with anything else.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Callable

from ..errors import StyleError
from .styles import BaseAvatar

if TYPE_CHECKING:  # pragma: no cover
    from avatars.tryon import TryOnResult, TryOnSettings

log = logging.getLogger(__name__)

_HEADER = struct.Struct("<Q")
#: The folder holding the ``runtime`` package this process runs (put first on the child's path).
_ROOT = Path(__file__).resolve().parents[2]


def _send(stream: BinaryIO, obj) -> None:
    data = pickle.dumps(obj, protocol=5)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _recv_bytes(stream: BinaryIO) -> bytes:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError("the other side closed the pipe")
    (n,) = _HEADER.unpack(head)
    data = stream.read(n)
    if len(data) < n:
        raise EOFError("the other side closed the pipe mid-message")
    return data


def _recv(stream: BinaryIO):
    return pickle.loads(_recv_bytes(stream))


class Fitter:
    """The session's side of the fitter process (module doc). Thread-safe: one fit at a time."""

    def __init__(self):
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _ensure(self) -> subprocess.Popen:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(_ROOT), *filter(None, [env.get("PYTHONPATH")])])
        self._proc = subprocess.Popen([sys.executable, "-m", "runtime.tryon.child"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=env)
        log.debug("try-on fitter process %d started", self._proc.pid)
        return self._proc

    def fit(self, base: BaseAvatar, style: Path, settings: TryOnSettings, cache_folder: Path, *,
            want_result: bool = True, gate: Callable[[], None] | None = None) -> tuple[TryOnResult | None, bool]:
        """Fit ``style`` on ``base``'s file in the child (the cache first): (result, cache hit);
        the result is None unless ``want_result``. ``gate()`` is called between receiving the
        reply and unpickling it (the one step here that holds the GIL).

        Raises:
            StyleError: the style cannot be fitted (the core's message), or the child ended
                (it is started again for the next fit).
        """
        with self._lock:
            if self._closed:
                raise StyleError("the session is closing")
            try:
                proc = self._ensure()
                _send(proc.stdin, (str(base.path), str(style), settings, str(cache_folder), want_result))
                data = _recv_bytes(proc.stdout)
                if gate is not None:
                    gate()
                reply = pickle.loads(data)
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                code = self._proc.poll() if self._proc is not None else None
                self._kill()
                if self._closed:
                    raise StyleError("the session is closing") from None
                raise StyleError(f"{style.stem}: the fitting process ended ({exc}; exit code {code})") from None
        if reply[0] == "ok":
            return reply[1], reply[2]
        raise StyleError(reply[1])

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - a kill is not ignored
            log.warning("try-on fitter process %d did not end", proc.pid)
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass

    def close(self) -> None:
        """End the child now (a fit in flight is dropped: its caller gets a StyleError).
        Idempotent."""
        self._closed = True
        self._kill()


def main() -> int:
    """The child: answer fit requests on stdin until it closes (module doc)."""
    from avatars import load_avatar
    from avatars.tryon.cache import TryOnCache

    from .styles import fit_style

    signal.signal(signal.SIGINT, signal.SIG_IGN)        # Ctrl-C in the terminal is the session's to handle
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                                        # stray prints must not corrupt the replies
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="swaycam fitter: %(message)s")
    inp = sys.stdin.buffer
    loaded: tuple[str, object] | None = None
    while True:
        try:
            avatar_path, style, settings, cache_folder, want = _recv(inp)
        except EOFError:
            return 0
        try:
            if loaded is None or loaded[0] != avatar_path:
                loaded = (avatar_path, load_avatar(avatar_path))
            base = BaseAvatar(Path(avatar_path), loaded[1])
            result, hit = fit_style(base, Path(style), settings, TryOnCache(cache_folder))
            reply = ("ok", replace(result, guides=(), attachments=(), join=None) if want else None, hit)
        except StyleError as exc:
            reply = ("error", str(exc))
        except Exception as exc:  # noqa: BLE001 - every failure is an answer, never a dead child
            reply = ("error", f"{Path(style).stem}: {type(exc).__name__}: {exc}")
        _send(out, reply)
