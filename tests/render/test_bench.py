"""Render benchmarks (pytest-benchmark; skipped by default through --benchmark-skip).

Run: ``.venv/bin/python -m pytest tests/render/test_bench.py -o addopts=""`` (addopts skips them)
or ``python -m render.bench`` for the full table (draw and readback at three sizes).
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
    from render.bench import format_table, run_render_bench
    from tests.conftest import asset

    res = run_render_bench([asset("vrm", "Godette_vrm_v4.vrm")], sizes=[(64, 36)], frames=2, warmup=1)
    (case,) = res["results"]
    assert case["size"] == [64, 36] and case["fps"] > 0 and case["draw_ms"]["mean"] > 0
    assert "Godette" in format_table(res)


def test_bench_render_cli_json_and_out(tmp_path, capsys):
    import json

    from render.bench import main
    from tests.conftest import asset

    out = tmp_path / "r.json"
    assert main(["--avatar", str(asset("vrm", "Godette_vrm_v4.vrm")), "--size", "64x36", "--frames", "2", "--json",
                 "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert [r["size"] for r in printed["results"]] == [[64, 36]]
    for bad in ("64by36", "10x10"):
        with pytest.raises(SystemExit):
            main(["--size", bad])
        assert "--size: expected WxH between 16x16 and 7680x4320" in capsys.readouterr().err
