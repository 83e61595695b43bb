"""The quick fuzz run (issue 16): 500 seeded mutants of the real input files (VRM 0.x and
1.0, a plain glTF, .vrma, OBJ hair) loaded, rigged, stepped 30 substeps of a fast head
turn, posed and skinned — each a clean load or a clear error (AvatarError, ClipError,
HairError, RigError), never another exception, a NaN/inf or a hang over 10 s. The long run
(10,000 mutants) is ``swaycam fuzz --count 10000`` (docs/history/runtime-notes.md has its counts)."""

from __future__ import annotations

import pytest

from runtime.eval.fuzz import FAILURES, TIMEOUT_S, run_fuzz
from runtime.eval.fuzz_mutators import Mutant, make_mutant, seeds

QUICK_COUNT = 500
KINDS = ("vrm0", "vrm1", "gltf", "vrma", "obj")


def test_mutants_are_a_pure_function_of_seed_and_index():
    s = seeds()
    assert {x.kind for x in s} == set(KINDS)
    a, b = make_mutant(s, 7, 123), make_mutant(s, 7, 123)
    assert (a.data, a.detail) == (b.data, b.detail)
    assert make_mutant(s, 8, 123).data != a.data


@pytest.mark.slow
def test_quick_fuzz_has_no_crash_hang_or_nonfinite():
    assert TIMEOUT_S == 10.0
    report = run_fuzz(QUICK_COUNT, seed=0, workers=2)
    t = report.totals
    assert sum(t.values()) == QUICK_COUNT
    assert report.failures == [], report.table()
    assert all(t[f] == 0 for f in FAILURES)
    # every format is exercised on both paths: some mutants load and run, some are refused
    for kind in KINDS:
        c = report.by_kind[kind]
        assert c["ok"] > 0 and c["refused"] > 0, (kind, dict(c))


def test_a_failure_is_reported_with_its_stage(monkeypatch):
    """The harness itself: an exception other than the clear errors is a crash, named."""
    from runtime.eval import fuzz

    m = Mutant(0, "x.vrm", "vrm1", "none", "", ".vrm", b"glTF")

    def boom(*a, **k):
        raise KeyError("boom")
    monkeypatch.setattr("avatars.load_avatar", boom)
    out = fuzz.exercise(m, None)
    assert (out.outcome, out.stage) == ("crash", "load") and out.error.startswith("KeyError: 'boom'")


def test_a_hang_is_counted_in_the_workers_cpu_time_not_the_wall_clock():
    """A worker spinning past the bound is a hang; one that waited as long (a loaded machine,
    another process on the CPU) is not, until the wall-clock backstop."""
    import subprocess
    import sys
    import time
    from types import SimpleNamespace

    from runtime.eval.fuzz import WALL_TIMEOUT_S, _cpu_seconds, _Worker

    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.3)                                  # both started (interpreter start-up is CPU)
        workers = [SimpleNamespace(proc=p, started=time.perf_counter(), cpu_started=_cpu_seconds(p.pid))
                   for p in (spin, idle)]
        assert all(w.cpu_started is not None for w in workers)
        deadline = time.perf_counter() + 20.0
        while _cpu_seconds(spin.pid) - workers[0].cpu_started <= 0.5 and time.perf_counter() < deadline:
            time.sleep(0.05)
        assert _Worker.over(workers[0], 0.5)
        assert not _Worker.over(workers[1], 0.5)         # the same wall time, no CPU: not a hang
        workers[1].started -= WALL_TIMEOUT_S             # ... until the wall-clock backstop
        assert _Worker.over(workers[1], 0.5)
    finally:
        for p in (spin, idle):
            p.kill()
            p.wait()
