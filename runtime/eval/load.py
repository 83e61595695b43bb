"""CPU load for benchmarks (issue 32): ``n`` helper processes that each keep one core busy,
started and stopped by the benchmark itself (``swaycam bench loop --load N``).

Each helper is ``python -c`` running a tight arithmetic loop (no memory, no I/O: it competes
for the CPU only, as a game's or an encoder's thread does), at the benchmark's own nice value
(inherited). A helper is bounded three ways, so none outlives the benchmark: it is terminated
(then killed) when the :class:`CpuLoad` block ends, it exits when its parent is gone (it checks
``os.getppid()`` every :data:`CHECK_S`), and it exits after ``max_s`` seconds whatever happens.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time

log = logging.getLogger(__name__)

#: How often a helper checks its parent and its deadline, seconds.
CHECK_S = 0.2
#: Longest a helper runs by default, seconds.
MAX_S = 1800.0
#: Most helpers a benchmark may start.
MAX_HELPERS = 16

_BURN = """
import os, sys, time
parent, end = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
x = 0
while True:
    t = time.monotonic() + {check}
    while time.monotonic() < t:
        for i in range(2000):
            x = (x * 1103515245 + 12345) & 0x7fffffff
    if os.getppid() != parent or time.monotonic() > end:
        break
"""


class CpuLoad:
    """``n`` CPU-burning helpers while the block runs (module doc); ``n`` = 0 starts none.

    Args:
        n: helpers (0..:data:`MAX_HELPERS`).
        max_s: each helper's deadline, seconds.

    Raises:
        ValueError: ``n`` outside 0..MAX_HELPERS or ``max_s`` not positive.
    """

    def __init__(self, n: int, *, max_s: float = MAX_S):
        if int(n) != n or not 0 <= n <= MAX_HELPERS:
            raise ValueError(f"load {n!r}: a whole number of helper processes in 0..{MAX_HELPERS}")
        if not max_s > 0:
            raise ValueError(f"load max_s {max_s!r}: must be > 0 seconds")
        self.n, self.max_s = int(n), float(max_s)
        self.procs: list[subprocess.Popen] = []

    def start(self) -> "CpuLoad":
        code = _BURN.format(check=CHECK_S)
        for _ in range(self.n - len(self.procs)):
            self.procs.append(subprocess.Popen([sys.executable, "-c", code, str(os.getpid()), str(self.max_s)],
                                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        if self.procs:
            log.info("cpu load: %d helpers (pids %s)", len(self.procs), ", ".join(str(p.pid) for p in self.procs))
        return self

    def stop(self) -> None:
        """Terminate the helpers (kill one that does not exit within a second) and reap them."""
        procs, self.procs = self.procs, []
        for p in procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + 1.0
        for p in procs:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    @property
    def running(self) -> int:
        """Helpers alive now."""
        return sum(p.poll() is None for p in self.procs)

    def __enter__(self) -> "CpuLoad":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


__all__ = ["CpuLoad", "MAX_HELPERS"]
