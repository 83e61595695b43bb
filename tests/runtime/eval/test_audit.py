"""``swaycam hair audit`` on a small audit: two styles (a procedural crop with a stray strip
and a speck added, from a hair folder of the test's own, and the corpus' braid) on the default
avatar with short motions. Its counts against ``swaycam hair fit --json`` of the same style,
its stretch against the matrix's own rows, a second run taken whole from the folder (and a lost
cell and thumbnail made again alone), the
thumbnails (real PNGs, the hair visible front and back), the page's sort, filter and search
in a real headless Chromium, and the row's command opening the style live."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
from pathlib import Path

import numpy as np
import pytest

from runtime.cli import main

pytestmark = pytest.mark.slow

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
STRAY = "crop_stray"
STYLES = (STRAY, "proc_braid")
#: Pixels a thumbnail must differ by from the same view drawn without the style (200 x 240
#: image; the crop covers the top of the head, about 2 000 pixels front and back).
HAIR_PIXELS_MIN = 500
#: A pixel differs when a channel differs by more than this (0..255).
PIXEL_TOLERANCE = 8


def stray_style(folder: Path, scratch: Path) -> Path:
    """The corpus' crop plus a strip hanging 10 cm beside the head (its guide is too far from
    the scalp: rejected) and a 3 mm speck above it (too short for a guide: 3 vertices missed),
    as ``folder/crop_stray/crop_stray.obj``."""
    from avatars.hair.procedural import write_corpus

    src = write_corpus(scratch, ["proc_crop"])[0]
    lines = src.read_text().splitlines()
    nv = sum(1 for ln in lines if ln.startswith("v "))
    k = 6
    for i in range(k):
        y = 1.72 - 0.04 * i
        lines += [f"v 0.22 {y:.3f} 0.0", f"v 0.23 {y:.3f} 0.01"]
    for i in range(k - 1):
        a = nv + 2 * i + 1
        lines += [f"f {a} {a + 2} {a + 3}", f"f {a} {a + 3} {a + 1}"]
    b = nv + 2 * k + 1
    lines += ["v 0.0 1.93 0.0", "v 0.003 1.93 0.0", "v 0.0 1.933 0.0", f"f {b} {b + 1} {b + 2}"]
    out = folder / STRAY / f"{STRAY}.obj"
    out.parent.mkdir(parents=True)
    out.write_text("\n".join(lines) + "\n")
    out.with_suffix(".mhmat").write_text(src.with_suffix(".mhmat").read_text().replace("proc_crop", STRAY))
    return out


def _json(argv) -> tuple[int, dict]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(argv)
    return rc, json.loads(buf.getvalue()) if buf.getvalue().strip() else {}


def _audit_argv(hair: Path, out: Path) -> list[str]:
    return ["hair", "audit", "--avatar", "default", "--hair-dir", str(hair), *sum((["--style", s] for s in STYLES), []),
            "--duration", "0.5", "--settle", "2", "--workers", "2", "--out", str(out), "--json"]


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit")
    hair = root / "hair"
    stray_style(hair, root / "scratch")
    out = root / "out"
    rc, summary = _json(_audit_argv(hair, out))
    return hair, out, rc, summary


def test_the_audit_has_a_row_per_style_and_the_counts_of_hair_fit(audit):
    hair, out, rc, summary = audit
    assert rc == 0
    rows = {r["style"]: r for r in summary["rows"]}
    assert set(rows) == set(STYLES) and all(r["avatar"] == "default" for r in rows.values())
    assert rows[STRAY]["source"] == "hair" and rows["proc_braid"]["source"] == "corpus"
    totals = {k: 0 for k in ("candidates", "attached", "joined", "rejected", "vertices_missed")}
    for style, row in rows.items():
        path = hair / STRAY / f"{STRAY}.obj" if style == STRAY else out / "corpus" / style / f"{style}.obj"
        rc, fit = _json(["hair", "fit", str(path), "--json"])
        assert rc == 0
        g = fit["guides"]
        assert (row["candidates"], row["attached"], row["joined"], row["rejected"]) == \
            (g["candidates"], g["attached"], g["joined"], g["rejected"])
        assert (row["vertices_missed"], row["chains"], row["joints"], row["hair_vertices"]) == \
            (fit["vertices_missed"], fit["chains"], fit["joints"], fit["hair_vertices"])
        assert row["fit_s"] == pytest.approx(fit["fit_seconds"], abs=1e-4)   # the same cache entry
        assert row["attached_pct"] == pytest.approx(100.0 * (g["attached"] + g["joined"]) / g["candidates"])
        assert row["status"] == "ok" and row["chains"] > 0
        for k in totals:
            totals[k] += row[k]
        assert row["fit_command"] == shlex.join(["swaycam", "hair", "fit", str(path.resolve()), "--json"])
    # the stray strip is rejected, the speck missed; the braid's pieces are joined
    assert rows[STRAY]["rejected"] >= 1 and rows[STRAY]["vertices_missed"] == 3
    assert rows["proc_braid"]["joined"] > 0 and rows["proc_braid"]["rejected"] == 0
    t = summary["totals"]
    assert {k: t[k] for k in totals} == totals
    assert (t["entries"], t["fitted"], t["measured"], t["with_rejected"]) == (2, 2, 2, 1)
    page = (out / "index.html").read_text()
    assert "2 of 2 style × avatar fits · saved audit" in page and f"{t['candidates']} candidate guides" in page


def test_the_stretch_columns_are_the_matrix_rows(audit):
    from runtime.eval.matrix.store import read_rows

    _, out, _, summary = audit
    cells = {r["key"]: r for r in read_rows(out / "matrix" / "results.parquet")}
    assert len(cells) == 2 * len(STYLES)
    for row in summary["rows"]:
        turn, clip = cells[row["turn_key"]], cells[row["clip_key"]]
        assert turn["clip"] == "turn-test" and clip["clip"].endswith("#Sprint_Loop")
        assert row["turn_edges"] == turn["hair_edges"]
        for name, cell in (("turn", turn), ("clip", clip)):      # no edge on a chain: no stretch measure
            want = (cell["stretch_p99_pct"], cell["stretch_worst_pct"]) if cell["hair_edges"] else (None, None)
            assert (row[f"{name}_p99_pct"], row[f"{name}_worst_pct"]) == want
        assert row["turn_swing_mm"] == turn["tip_swing_mm"] and row["turn_swing_mm"] > 0
        assert row["head_depth_mm"] == turn["head_depth_mm"] and row["head_inside"] == turn["head_inside"]
        assert row["collider_depth_mm"] == max(turn["vertex_max_depth_beyond_rest_mm"],
                                               clip["vertex_max_depth_beyond_rest_mm"])
        assert turn["fps_labels"] == ["30 fps", "120 fps"] and row["fps_identity"] == 0.0
        assert turn["motion_s"] == 0.5 and turn["settle_s"] == 2.0
        assert (turn["guides"], turn["rejected"]) == (row["candidates"], row["rejected"])


def test_a_second_run_takes_everything_from_the_folder(audit):
    hair, out, _, first = audit
    before = (out / "matrix" / "results.parquet").read_bytes()
    thumbs = {p.name: p.stat().st_mtime_ns for p in (out / "thumbs").glob("*.png")}
    rc, again = _json(_audit_argv(hair, out))
    assert rc == 0
    assert again["matrix"]["cached"] == 2 * len(STYLES) and again["matrix"]["computed"] == 0
    assert again["thumbs_drawn"] == 0 and again["rows"] == first["rows"]
    assert (out / "matrix" / "results.parquet").read_bytes() == before
    assert {p.name: p.stat().st_mtime_ns for p in (out / "thumbs").glob("*.png")} == thumbs


def test_a_lost_cell_and_thumbnail_are_made_again_alone(audit):
    hair, out, _, first = audit
    row = first["rows"][0]
    (out / "matrix" / "cells" / f"{row['clip_key']}.json").unlink()
    (out / row["thumbs"]["back"]).unlink()
    rc, again = _json(_audit_argv(hair, out))
    assert rc == 0
    assert (again["matrix"]["cached"], again["matrix"]["computed"]) == (2 * len(STYLES) - 1, 1)
    assert again["thumbs_drawn"] == 1 and (out / row["thumbs"]["back"]).is_file()
    assert again["rows"] == first["rows"]                  # the same numbers measured again


def test_thumbnails_are_pngs_with_the_hair_visible_front_and_back(audit):
    from PIL import Image

    from runtime.eval.audit.fits import fit_result
    from runtime.eval.audit.plan import AuditSpec, plan
    from runtime.eval.audit.thumbs import SIZE, thumb_renderer

    hair, out, _, summary = audit
    entries = {e.style: e for e in plan(AuditSpec(avatars=("default",), hair_dirs=(str(hair),), styles=STYLES,
                                                  clip=None), out)}
    with thumb_renderer() as tr:
        for row in summary["rows"]:
            result, hit = fit_result(entries[row["style"]])
            assert hit
            bare = tr.views(result.avatar, hide=(result.hair_instance,))
            pngs = {}
            for view in ("front", "back"):
                path = out / row["thumbs"][view]
                assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
                img = Image.open(path)
                assert img.size == SIZE and img.mode == "RGBA"
                pngs[view] = np.asarray(img).astype(int)
                changed = (np.abs(pngs[view] - bare[view].astype(int)) > PIXEL_TOLERANCE).any(axis=2).sum()
                assert changed >= HAIR_PIXELS_MIN, f"{row['style']} {view}: only {changed} hair pixels"
            assert (np.abs(pngs["front"] - pngs["back"]) > PIXEL_TOLERANCE).any(axis=2).sum() >= HAIR_PIXELS_MIN


def test_the_row_command_opens_the_style_live(audit, tmp_path):
    hair, _, _, summary = audit
    row = next(r for r in summary["rows"] if r["style"] == STRAY)
    args = shlex.split(row["command"])
    assert args == ["swaycam", "run", "--avatar", "default", "--hair-dir", str(hair.resolve()), "--hair", STRAY]
    rc = main(args[1:] + ["--source", "turn-test", "--duration", "0.2", "--size", "160x120",
                          "--output", f"png:{tmp_path}"])
    assert rc == 0 and len(list(tmp_path.glob("frame_*.png"))) >= 3


def test_an_unknown_style_is_a_usage_error(tmp_path, capsys):
    assert main(["hair", "audit", "--avatar", "default", "--no-corpus", "--style", "nope", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "swaycam hair audit: no style 'nope' in the hair folders (styles: bob01" in err


@pytest.mark.skipif(not (os.path.exists(CHROMIUM) and os.path.exists(DRIVER)),
                    reason="needs Debian's chromium and chromium-driver (installed by .ci/system-deps.sh)")
def test_the_page_sorts_and_filters_in_headless_chromium(audit, tmp_path):
    pytest.importorskip("selenium", reason="needs selenium (pyproject dev extra)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    _, out, _, summary = audit
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,900"):
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(DRIVER), options=opts)

    def visible(key: str) -> list[str]:
        return [tr.get_attribute(f"data-{key}") for tr in d.find_elements(By.CSS_SELECTOR, "#audit tbody tr")
                if tr.is_displayed()]

    def head(key: str):
        return d.find_element(By.CSS_SELECTOR, f"#audit th[data-key='{key}']")

    try:
        d.get((out / "index.html").as_uri())
        assert d.find_element(By.ID, "shown").text == "2 of 2 rows shown"
        by_style = {r["style"]: r for r in summary["rows"]}
        assert visible("style") == [r["style"] for r in summary["rows"]]
        for key in ("candidates", "turn_p99_pct"):
            known = sorted((s for s in by_style if by_style[s][key] is not None), key=lambda s: by_style[s][key])
            empty = [s for s in by_style if by_style[s][key] is None]           # empty values last both ways
            head(key).click()
            assert visible("style") == known + empty and head(key).get_attribute("aria-sort") == "ascending"
            head(key).click()
            assert visible("style") == known[::-1] + empty and head(key).get_attribute("aria-sort") == "descending"
        head("style").click()
        assert visible("style") == sorted(STYLES)
        d.find_element(By.ID, "only-rejected").click()
        assert visible("style") == [STRAY] and d.find_element(By.ID, "shown").text == "1 of 2 rows shown"
        d.find_element(By.ID, "only-rejected").click()
        d.find_element(By.ID, "search").send_keys("braid")
        assert visible("style") == ["proc_braid"]
        images = d.find_elements(By.CSS_SELECTOR, "#audit img")
        assert len(images) == 2 * len(STYLES)
        assert all(d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", i) == 200
                   for i in images)
        codes = [c.get_attribute("textContent") for c in d.find_elements(By.CSS_SELECTOR, "code.live")]
        assert sorted(codes) == sorted(r["command"] for r in summary["rows"])
        assert [e for e in d.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        d.quit()
