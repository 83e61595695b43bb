"""The 2-minute soak in CI (issue 16): a headless live run reloading the avatar, switching
solvers, toggling compare mode and an extra video output; after the 30 s warm-up, GL
objects, file descriptors and threads are the same at every sample of an avatar and RSS
(after a full collection) grows by at most RSS_GROWTH_LIMIT_MB per avatar, visit to visit
(runtime/eval/soak_report.py). The hour-long
run's figures are in docs/history/runtime-notes.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from runtime.eval.soak import RSS_GROWTH_LIMIT_MB, Sample, SoakOptions, SoakReport, rss_growth, visit_floors
from tests.conftest import REPO

CI_DURATION_S = 120


@pytest.mark.slow
def test_two_minute_soak_is_flat(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(var, None)
    res = subprocess.run([sys.executable, "-m", "runtime.cli", "soak", "--duration", str(CI_DURATION_S), "--json"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=CI_DURATION_S + 240)
    out = json.loads(res.stdout)
    assert res.returncode == 0 and out["problems"] == [], (out["problems"], res.stderr[-2000:])
    f = out["figures"]
    assert set(f["by_avatar"]) == {"default", "godette"}
    for name, d in f["by_avatar"].items():
        assert d["samples"] >= 4, name
        for key in ("gl_objects", "fds", "threads"):
            assert d[key]["min"] == d[key]["max"], (name, key, d[key])
        assert d["rss_growth_mb"] <= RSS_GROWTH_LIMIT_MB, (name, d["rss_mb"])
    ev = f["events"]
    assert ev["reloads"] >= 7 and ev["solver_switches"] >= 20 and ev["compare_toggles"] >= 10 \
        and ev["outputs_opened"] >= 8, ev
    assert out["gl_by_kind"] and not list(tmp_path.iterdir())        # its temporary files are gone


def _report(values, duration_s=60, warmup_s=10, avatars=("a", "b")):
    """A report of samples (t, avatar, visit = reloads so far, RSS MB, GL objects[, compare on])."""
    r = SoakReport(SoakOptions(duration_s=duration_s, warmup_s=warmup_s, avatars=avatars))
    for t, avatar, visit, rss, gl, *compare in values:
        r.samples.append(Sample(t_s=t, frames=int(t * 30), avatar=avatar, rss_mb=rss, gl_objects=gl, fds=9, threads=8,
                                reloads=visit, compare=bool(compare and compare[0])))
    return r


def test_the_check_judges_each_avatar_apart():
    # a's first visit (0) and b's (1) are left out; a's floors 120 (visit 2) and 121 (visit 4): +1 MB
    ok = _report([(0, "a", 0, 100, 50), (15, "a", 2, 120, 50), (16, "a", 2, 125, 50), (20, "b", 3, 130, 90),
                  (30, "a", 4, 121, 50), (40, "b", 5, 131, 90)])
    assert visit_floors(ok.samples, 10, ("a", "b")) == {"a": [(2, 120), (4, 121)], "b": [(3, 130), (5, 131)]}
    assert ok.check() == [] and ok.figures()["rss_growth_mb"] == 1.0
    leak = _report([(0, "a", 0, 100, 50), (15, "a", 1, 120, 50), (30, "a", 2, 126, 51)], avatars=("a",))
    assert leak.check() == ["gl_objects with a: 50 -> 51 (range 50..51)",
                            "RSS with a grew 6.0 MB from visit 1 to visit 2 (floors 120.0 -> 126.0 MB, compare off; "
                            "limit 5 MB)"]
    assert _report([(15, "a", 1, 1, 1)]).check() == ["no avatar was sampled twice after the warm-up (run longer)"]
    assert _report([(15, "a", 2, 1, 1), (20, "a", 2, 9, 1)]).check() == [
        "no avatar was visited twice after its first visit and the warm-up (run longer)"]


# ``soak --duration 75 --json`` on main (10:15 UTC, issue 34 finding 9): (t, avatar, visit, RSS MB)
# after the 30 s warm-up, as the issue reported it: the default's 70 s sample, 10 s into its
# visit with compare mode on, against its 30 s one taken right after a load (+5.4 MB in the
# issue, +5.4 here) was "NOT FLAT"; the visits' floors are flat.
SOAK_75 = [(30.03, "default", 2, 584.56), (36.04, "default", 2, 585.78), (40.0, "default", 2, 586.76),
           (47.03, "godette", 3, 599.73), (50.02, "godette", 3, 599.82), (58.04, "godette", 3, 598.03),
           (60.02, "default", 4, 584.64), (65.01, "default", 4, 589.31), (70.02, "default", 4, 589.96),
           (75.02, "godette", 5, 597.02)]


def _soak75(leak_per_s=0.0, leak_per_load=0.0):
    return _report([(t, a, v, rss + leak_per_s * t + leak_per_load * v, 120) for t, a, v, rss in SOAK_75],
                   duration_s=75, warmup_s=30, avatars=("default", "godette"))


def test_a_75_s_soak_without_a_leak_is_flat():
    r = _soak75()
    assert r.samples[8].rss_mb - r.samples[0].rss_mb > RSS_GROWTH_LIMIT_MB     # what the old rule compared
    assert visit_floors(r.samples, 30, ("default", "godette")) == {"default": [(2, 584.56), (4, 584.64)],
                                           "godette": [(3, 598.03), (5, 597.02)]}
    assert r.check() == [] and r.figures()["rss_growth_mb"] == 0.08


#: a leak the 75 s soak must see: 0.2 MB/s (12 MB a minute; 6 MB between the default's two
#: judged visits 30 s apart), or 3 MB kept per load (6 MB over the two reloads between them)
LEAK_MB_PER_S = 0.2
LEAK_MB_PER_LOAD = 3.0


@pytest.mark.parametrize("per_s,per_load", [(LEAK_MB_PER_S, 0.0), (0.0, LEAK_MB_PER_LOAD)])
def test_a_leak_per_frame_or_per_load_raises_every_floor_and_is_caught(per_s, per_load):
    problems = _soak75(per_s, per_load).check()
    assert len(problems) == 1 and problems[0].startswith("RSS with default grew 6.1 MB from visit 2 to visit 4"), \
        problems


#: The live leak check, scaled down: 10 s, a reload every 2 s (each avatar's judged visits are
#: 4 s apart, two loads between them: the default's 2 and 4, Godette's 3 and 5), samples every
#: 0.5 s. The injected leak is a cache that keeps every avatar loaded and LEAK_BYTES_PER_LOAD
#: with it: >= 2 x 8 MB between two judged visits, whatever the frame rate (a leak per frame
#: measured 39 frames in 10 s at load 8 here: too few to size it reliably).
LEAK_BYTES_PER_LOAD = 8 * 1024 * 1024
_LIVE_LEAK = """
import json
from avatars import load_avatar
from runtime.eval import soak as s
kept = []
def leaky_load(path, *a, **k):
    avatar = load_avatar(path, *a, **k)
    kept.append((avatar, b"\\1" * %d))     # touched pages, never freed: a leak per load
    return avatar
import avatars
avatars.load_avatar = leaky_load           # what _SoakSession._reload calls
o = s.SoakOptions(duration_s=10, sample_s=0.5, warmup_s=2, reload_s=2, settle_s=0.5, solver_s=1, compare_s=1.5,
                  output_s=3, output_open_s=0.5)
r = s.soak(o)
print(json.dumps({"problems": r.check(), "figures": r.figures(), "frames": r.samples[-1].frames}))
""" % LEAK_BYTES_PER_LOAD


@pytest.mark.slow
def test_a_live_leak_per_load_is_not_flat(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(var, None)
    res = subprocess.run([sys.executable, "-c", _LIVE_LEAK], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.splitlines()[-1])
    grew = [p for p in out["problems"] if p.startswith("RSS with ") and " grew " in p]
    assert grew, (out["problems"], out["figures"])
    assert out["figures"]["rss_growth_mb"] > RSS_GROWTH_LIMIT_MB, out["figures"]


# ``soak --duration 120 --json`` on this branch (13:00 UTC, load 9-10): (t, avatar, visit, RSS
# MB, compare on) after the warm-up. The default's floors alternate with compare mode (377.4
# off, 381.2 on, 378.4 off, 381.3 on: the last visit's one sample is in compare mode).
SOAK_120 = [(36.06, "default", 2, 377.41, 0), (40.0, "default", 2, 378.5, 0), (48.61, "godette", 3, 390.85, 1),
            (50.13, "godette", 3, 390.89, 1), (58.05, "godette", 3, 390.01, 0), (63.41, "default", 4, 381.28, 1),
            (65.02, "default", 4, 381.34, 1), (70.03, "default", 4, 381.21, 1), (80.03, "godette", 5, 390.09, 0),
            (85.03, "godette", 5, 390.84, 1), (93.45, "default", 6, 378.4, 0), (95.03, "default", 6, 379.38, 0),
            (102.02, "default", 6, 381.27, 1), (108.39, "godette", 7, 389.09, 0), (113.03, "godette", 7, 390.02, 0),
            (115.02, "godette", 7, 390.08, 0), (124.03, "default", 8, 381.29, 1)]


def _soak120(leak_per_load=0.0):
    return _report([(t, a, v, rss + leak_per_load * v, 120, c) for t, a, v, rss, c in SOAK_120], duration_s=120,
                   warmup_s=30, avatars=("default", "godette"))


def test_growth_is_judged_with_compare_mode_off_and_on_apart():
    r = _soak120()
    assert [v for _, v in visit_floors(r.samples, 30, r.options.avatars)["default"]] == [377.41, 381.21, 378.4, 381.29]
    g = rss_growth(r.samples, 30, r.options.avatars, "default")
    assert g.pop("mb") == pytest.approx(378.4 - 377.41, abs=1e-9)
    assert g == {"visits": [2, 6], "floors": [377.41, 378.4], "compare": "off"}
    g = r.figures()["by_avatar"]
    assert g["default"]["rss_growth_mb"] == 0.99        # off: visit 2 -> 6 (on: 4 -> 8, +0.08)
    assert g["godette"]["rss_growth_mb"] == -0.01       # on: 3 -> 5 (off: 3 -> 7, -0.92)
    assert r.check() == []
    assert _soak120(LEAK_MB_PER_LOAD).check() == [      # 3 MB kept per load
        "RSS with default grew 13.0 MB from visit 2 to visit 6 (floors 383.4 -> 396.4 MB, compare off; limit 5 MB)",
        "RSS with godette grew 11.1 MB from visit 3 to visit 7 (floors 399.0 -> 410.1 MB, compare off; limit 5 MB)"]
