"""``swaycam matrix --preset quick`` (what CI runs): its rows, the same rows on a local Ray,
and its HTML report in headless Chromium.

"Identical rows" compares ``results.parquet``, the measured columns only: wall-clock numbers
(the cell's seconds, the solver's µs per substep) live in ``timings.parquet`` and differ
between any two runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from runtime.cli import main
from runtime.eval.matrix.store import read_rows

pytestmark = pytest.mark.slow

QUICK_CELLS = 8
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
#: Columns that are not measurements: compared separately (they name the cell).
IDENTITY = ("key", "avatar", "hairstyle", "clip", "solver")
#: The quick matrix's cells the Ray test computes again: the default avatar's own hair (2 cells).
RAY_CELLS = ("--avatar", "default", "--hair", "none")
RAY_CELL_COUNT = 2                 # x the preset's two clips


def _run(args, capsys) -> tuple[int, dict]:
    rc = main(["matrix", *args, "--json"])
    out = capsys.readouterr().out
    return rc, json.loads(out)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    import contextlib
    import io

    out = tmp_path_factory.mktemp("quick")
    buf = io.StringIO()          # capsys is function-scoped: the module's one run reads its stdout here
    with contextlib.redirect_stdout(buf):
        rc = main(["matrix", "--preset", "quick", "--workers", "2", "--thumbnails", "3", "--out", str(out), "--json"])
    return out, rc, json.loads(buf.getvalue())


def test_quick_preset_rows(quick):
    out, rc, summary = quick
    assert rc == 0 and summary["failed_rows"] == 0
    assert summary["total"] == QUICK_CELLS and summary["computed"] + summary["cached"] == QUICK_CELLS
    rows = read_rows(out / "results.parquet")
    assert len(rows) == QUICK_CELLS and len({r["key"] for r in rows}) == QUICK_CELLS
    assert all(r["status"] == "ok" and r["error"] is None for r in rows)
    assert all(r["fps_identity"] == 0.0 and len(r["fps_labels"]) == 8 for r in rows)
    assert all(r["settle_mm"] < 1e-3 and r["root_drift_mm"] < 1e-9 for r in rows)
    styled = [r for r in rows if r["hairstyle"] == "bob01"]
    assert len(styled) == 4 and all(r["guides"] > 0 for r in styled)
    assert all(r["scalp_drift_mm"] is not None for r in styled if r["clip"] == "turn-test")
    timings = read_rows(out / "timings.parquet")
    assert [t["key"] for t in timings] == [r["key"] for r in rows] and all(t["seconds"] > 0 for t in timings)
    assert len(list((out / "cells").glob("*.json"))) == QUICK_CELLS


def test_a_second_run_takes_every_cell_from_the_folder(quick, capsys):
    out, _, _ = quick
    before = (out / "results.parquet").read_bytes()
    rc, summary = _run(["--preset", "quick", "--out", str(out), "--no-report"], capsys)
    assert rc == 0 and summary["cached"] == QUICK_CELLS and summary["computed"] == 0
    assert (out / "results.parquet").read_bytes() == before


def test_local_ray_gives_byte_identical_rows(quick, tmp_path, capsys):
    """Two cells of the quick matrix (the default avatar's own hair: its two cheapest) computed
    on a local Ray with 2 workers against the same two cells of the pool's run: the tables the
    pool writes for them from its folder and the ones Ray writes are the same bytes. (All eight
    on Ray took 374 s of a loaded suite run's 6388 test-seconds; Ray's per-cell path is the same
    for every cell, and the pool's eight rows are asserted above.)"""
    import shutil

    pytest.importorskip("ray", reason="needs the cluster extra (pip install '.[cluster]')")
    out, _, _ = quick
    pool, ray_out = tmp_path / "pool", tmp_path / "ray"
    shutil.copytree(out, pool)
    rc, summary = _run(["--preset", "quick", *RAY_CELLS, "--no-report", "--out", str(pool)], capsys)
    assert rc == 0 and summary["total"] == RAY_CELL_COUNT and summary["cached"] == summary["total"]
    rc, summary = _run(["--preset", "quick", *RAY_CELLS, "--ray", "--workers", "2", "--no-report",
                        "--out", str(ray_out)], capsys)
    assert rc == 0 and summary["computed"] == RAY_CELL_COUNT
    assert (ray_out / "results.parquet").read_bytes() == (pool / "results.parquet").read_bytes()
    ray_rows = read_rows(ray_out / "results.parquet")
    assert ray_rows == read_rows(pool / "results.parquet")
    assert {r["key"] for r in ray_rows} <= {r["key"] for r in read_rows(out / "results.parquet")}
    assert {t["executor"] for t in read_rows(ray_out / "timings.parquet")} == {"ray"}


@pytest.mark.skipif(not (os.path.exists(CHROMIUM) and os.path.exists(DRIVER)),
                    reason="needs Debian's chromium and chromium-driver (installed by .ci/system-deps.sh)")
def test_report_in_headless_chromium(quick, tmp_path):
    pytest.importorskip("selenium", reason="needs selenium (pyproject dev extra)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    out, _, _ = quick
    index = out / "report" / "index.html"
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1500,1100"):
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        d.get(Path(index).as_uri())
        rows = d.find_elements(By.CSS_SELECTOR, "table:first-of-type tr")
        assert len(rows) == 1 + QUICK_CELLS
        assert d.find_elements(By.CSS_SELECTOR, "td.met")                   # goals coloured
        images = d.find_elements(By.TAG_NAME, "img")
        assert len(images) == 4 + 3                                         # 4 plots, 3 thumbnails
        assert all(d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", i) for i in images)
        assert d.find_element(By.TAG_NAME, "code").get_attribute("textContent").startswith("swaycam matrix ")
        d.save_screenshot(str(tmp_path / "report.png"))
        assert (tmp_path / "report.png").stat().st_size > 10_000
    finally:
        d.quit()
