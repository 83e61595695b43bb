"""Render benchmarks (pytest-benchmark; skipped by default through --benchmark-skip).

Run: ``.venv/bin/python -m pytest tests/render/test_bench.py -o addopts=""`` (addopts skips them)
or ``swaycam bench render`` for the full table (draw and readback at three sizes; its options
are tested in tests/runtime/cli/test_bench.py).
"""

from __future__ import annotations

import pytest
from render._gl import GL

SIZES = [(640, 360), (1280, 720), (1920, 1080)]


@pytest.fixture(params=["godette", "layered"])
def bench_avatar(request, avatars_by_name):
    return request.param, avatars_by_name[request.param]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_bench_draw(benchmark, make_renderer, bench_avatar, size):
    name, avatar = bench_avatar
    r = make_renderer(size, background="chroma")
    r.set_avatar(avatar)
    blink = {"blink": 1.0}

    def frame():
        r.draw(None, blink)
        GL.glFinish()

    frame()
    benchmark.extra_info.update(avatar=name, size=size, samples=r.samples)
    benchmark.pedantic(frame, rounds=10, warmup_rounds=1)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_bench_readback(benchmark, make_renderer, godette, size):
    r = make_renderer(size, background="chroma")
    r.set_avatar(godette)
    r.draw()
    GL.glFinish()
    benchmark.extra_info.update(size=size)
    benchmark.pedantic(r.read_rgba, rounds=20, warmup_rounds=2)


def test_run_render_bench_reports_every_case():
    from render.eval.bench import format_table, run_render_bench
    from tests.conftest import asset

    res = run_render_bench([asset("vrm", "Godette_vrm_v4.vrm")], sizes=[(64, 36)], frames=2, warmup=1, rounds=2)
    (case,) = res["results"]
    assert case["size"] == [64, 36] and case["fps"] > 0 and case["draw_ms"]["mean"] > 0
    assert case["triangles"] == case["file_triangles"] == 3439 and case["readback"] in ("thread", "pbo")
    assert "Godette" in format_table(res)


def test_run_render_bench_alternates_detail_and_readback_cases(default_avatar):
    from render.eval.bench import format_table, run_render_bench

    res = run_render_bench(["default"], sizes=[(160, 90)], frames=3, warmup=1, rounds=2,
                           details=("full", "reduced"), readbacks=("thread", "pbo"))
    cases = {(r["detail"], r["readback"]): r for r in res["results"]}
    assert set(cases) == {("full", "thread"), ("full", "pbo"), ("reduced", "thread"), ("reduced", "pbo")}
    assert cases["reduced", "pbo"]["triangles"] < cases["full", "pbo"]["triangles"] == 29220
    assert all(r["fps"] > 0 and r["frame_ms"]["p95"] >= r["frame_ms"]["median"] > 0 for r in res["results"])
    table = format_table(res)
    assert "reduced/thread" in table and "full/pbo" in table
    with pytest.raises(ValueError, match="readback 'gpu'"):
        run_render_bench(["default"], sizes=[(64, 36)], readbacks=("gpu",))
