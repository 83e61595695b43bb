"""A matrix run killed mid-way resumes where it stopped; a failing cell is a row, not a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runtime.cli import main
from runtime.eval.matrix.store import read_rows

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
#: 4 cells of the generated default avatar, one worker: the kill lands between cells.
MATRIX = ["matrix", "--avatar", "default", "--clip", "turn-test", "--clip", "idle", "--solver", "rest-shape",
          "--solver", "legacy", "--workers", "1", "--no-report"]
CELLS = 4


def _json_run(args, capsys) -> tuple[int, dict]:
    rc = main([*args, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_a_killed_run_restarts_and_runs_only_the_unfinished_cells(tmp_path, capsys):
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.Popen([sys.executable, "-m", "runtime.cli", *MATRIX, "--out", str(out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 600
    try:
        while not list((out / "cells").glob("*.json")):
            assert proc.poll() is None, "the run ended before a cell finished"
            assert time.monotonic() < deadline, "no cell finished in 10 min"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)          # the driver, the fork server and the pool worker
        proc.wait()
    first = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (out / "cells").glob("*.json")}
    assert 1 <= len(first) < CELLS
    rc, summary = _json_run([*MATRIX, "--out", str(out)], capsys)
    assert rc == 0 and summary["cached"] == len(first) and summary["computed"] == CELLS - len(first)
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (out / "cells").glob("*.json")}
    assert len(after) == CELLS and all(after[name] == first[name] for name in first)   # finished cells untouched
    rc, ref = _json_run([*MATRIX, "--out", str(tmp_path / "whole")], capsys)
    assert rc == 0 and ref["computed"] == CELLS
    assert (out / "results.parquet").read_bytes() == (tmp_path / "whole" / "results.parquet").read_bytes()
    assert all(r["status"] == "ok" and r["fps_identity"] == 0.0 for r in read_rows(out / "results.parquet"))


def test_a_broken_avatar_is_an_error_row(tmp_path, capsys):
    broken = tmp_path / "broken.vrm"
    broken.write_bytes(b"glTF this is not")
    args = ["matrix", "--avatar", str(broken), "--avatar", "default", "--solver", "legacy", "--workers", "2",
            "--no-report", "--out", str(tmp_path / "out")]
    rc, summary = _json_run(args, capsys)
    assert rc == 1 and summary["total"] == 2 and summary["failed"] == 1 and summary["failed_rows"] == 1
    bad, good = read_rows(tmp_path / "out" / "results.parquet")
    assert bad["status"] == "error" and "broken.vrm" in bad["error"] and bad["stretch_p99_pct"] is None
    assert good["status"] == "ok" and good["error"] is None and good["fps_identity"] == 0.0
    rc, again = _json_run(args, capsys)                      # the error is the cell's row: not run again
    assert rc == 1 and again["cached"] == 2 and again["computed"] == 0
    rc, retry = _json_run([*args, "--retry-failed"], capsys)
    assert rc == 1 and retry["cached"] == 1 and retry["computed"] == 1


def test_an_unknown_style_is_a_usage_error_before_anything_runs(tmp_path, capsys):
    assert main(["matrix", "--hair", "no-such-style", "--out", str(tmp_path)]) == 2
    assert "no-such-style" in capsys.readouterr().err
    assert not (tmp_path / "cells").exists()


def test_sigterm_ends_the_run_with_the_tables_of_the_finished_cells(tmp_path):
    out = tmp_path / "termed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.Popen([sys.executable, "-m", "runtime.cli", *MATRIX, "--out", str(out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 600
    while not list((out / "cells").glob("*.json")):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.terminate()
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM          # interrupted: 128 + signal, as every command
    done = len(list((out / "cells").glob("*.json")))
    assert 1 <= len(read_rows(out / "results.parquet")) == done < CELLS
