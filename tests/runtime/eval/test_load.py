"""The benchmarks' CPU load helpers: they burn CPU while the block runs and are gone after it,
after their deadline, and when their parent is gone."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from runtime.eval.load import CpuLoad

#: a helper burns at least this share of a core while it runs (the machine is shared: 2 cores
#: and a load average of 6-8 from other work give each runnable process ~0.25; 0.13 seen)
MIN_BUSY = 0.08


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_helpers_burn_cpu_and_stop_with_the_block():
    with CpuLoad(2) as load:
        pids = [p.pid for p in load.procs]
        assert load.running == 2
        time.sleep(0.5)                       # past the interpreter's start-up
        c0 = [_cpu_s(pid) for pid in pids]
        time.sleep(1.0)
        busy = [_cpu_s(pid) - c for pid, c in zip(pids, c0)]
    assert all(b >= MIN_BUSY for b in busy), busy
    assert all(not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
               for pid in pids)
    assert load.procs == [] and load.running == 0


def test_a_helper_ends_at_its_deadline():
    with CpuLoad(1, max_s=0.3) as load:
        p = load.procs[0]
        assert p.wait(timeout=5.0) == 0


def test_a_helper_ends_when_its_parent_is_gone():
    code = ("import sys, time; sys.path.insert(0, sys.argv[1]); from runtime.eval.load import CpuLoad;"
            "l = CpuLoad(1).start(); print(l.procs[0].pid, flush=True)")      # exits without stopping it
    out = subprocess.run([sys.executable, "-c", code, os.getcwd()], capture_output=True, text=True, timeout=30)
    pid = int(out.stdout.split()[0])
    end = time.monotonic() + 5.0
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < end:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}")


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="load 17: a whole number of helper processes in 0..16"):
        CpuLoad(17)
    with CpuLoad(0) as load:
        assert load.procs == []
