"""Keep MediaPipe's and TensorFlow Lite's native log lines off the console.

MediaPipe's C++ code writes absl/glog lines straight to file descriptor 2 (``W0000 …
inference_feedback_manager.cc:121] …``, ``INFO: Created TensorFlow Lite XNNPACK delegate``,
``WARNING: Logging before InitGoogle() …``) for every tracker, and ignores
``GLOG_minloglevel``. :func:`filter_native_stderr` puts a pipe on descriptor 2 and forwards
every line except those to the real stderr; Python's own ``sys.stderr`` writes straight to
the real stderr (never delayed). Only the console script installs it (``swaycam -v`` keeps
everything); tests and library users see stderr untouched.
"""

from __future__ import annotations

import atexit
import os
import re
import sys
import threading

#: Native log lines dropped: absl/glog info and warning lines (I/W + date 0000 or MMDD),
#: TensorFlow Lite's INFO lines, and absl's "before InitGoogle" notice. Errors (E…/F…) pass.
NOISE = re.compile(rb"^(?:[IW]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [\w.]+:\d+\] |INFO: |"
                   rb"WARNING: Logging before InitGoogle\(\))")


def is_noise(line: bytes) -> bool:
    """True for a native log line the console does not need (see :data:`NOISE`)."""
    return NOISE.match(line) is not None


def filter_native_stderr() -> None:
    """Install the filter on descriptor 2 for the rest of the process (idempotent).

    At exit descriptor 2 is restored and the pipe drained, so no forwarded line is lost.
    Does nothing when descriptor 2 cannot be duplicated (no stderr)."""
    if getattr(filter_native_stderr, "_installed", False):
        return
    try:
        real = os.dup(2)
    except OSError:
        return
    filter_native_stderr._installed = True
    sys.stderr.flush()
    sys.stderr = open(real, "w", buffering=1, encoding=sys.stderr.encoding or "utf-8",
                      errors="backslashreplace", closefd=False)
    r, w = os.pipe()
    os.dup2(w, 2)
    os.close(w)

    def pump() -> None:
        with open(r, "rb", buffering=0) as src:
            pending = b""
            while chunk := src.read(65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                out = b"".join(line + b"\n" for line in lines if not is_noise(line))
                if out:
                    os.write(real, out)
            if pending and not is_noise(pending):
                os.write(real, pending)

    t = threading.Thread(target=pump, name="swaycam-stderr-filter", daemon=True)
    t.start()

    def restore() -> None:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(real, 2)          # closes the pipe's last writer (child processes aside)
        t.join(timeout=1.0)

    atexit.register(restore)
