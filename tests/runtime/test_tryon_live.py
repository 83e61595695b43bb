"""The hairstyle try-on in a running session (issue 14, the live part): ``--hair`` draws the
fitted hair from the first frame; ``POST /hairstyle`` switches styles while the run goes on and
``GET /hairstyles`` reports them; a style that cannot be fitted answers 422 and the previous
one stays drawn; outside the hair folder 403, unknown 404; ``{"name": null}`` and the ``0`` key
bring the avatar's own hair back; closing while a fit runs neither hangs nor crashes."""

from __future__ import annotations

import http.client
import io
import json
import shutil
import threading
import time

import numpy as np
import pytest

from avatars.tryon.cache import TryOnCache
from runtime.config import RunConfig
from runtime.config_sections import MotionSection, TryOnSection
from runtime.session import Session
from tests.conftest import asset
from tests.runtime.test_run_e2e import read_video

SIZE = (160, 90)
#: Least share of the region above the face the fitted hair covers (bust framing at SIZE).
HAIR_SHARE = 0.01
#: A swap moves the body no more than this multiple of the neighbouring frames' largest move.
JUMP_RATIO = 2.5
#: the longest frame gap allowed, as a share of the switch's own duration (a stall would be ~1)
STALL_SHARE = 0.5
NEIGHBOURS = 4
#: Seconds a test waits for a switch (a fit in the fitter process, its start-up included).
SWITCH_TIMEOUT_S = 120.0


def brown_pixels(rgb: np.ndarray) -> np.ndarray:
    """(H, W) mask of the try-on hair's brown (MakeHuman styles without their texture): red >
    green > blue, darker than skin, and warm. The default avatar's own hair is teal, its skin
    light, its uniform navy, the background blue-grey: none of them passes."""
    r, g, b = (rgb[..., k].astype(int) for k in range(3))
    return (r > g) & (g > b) & (r >= 30) & (r <= 170) & (r - b >= 20)


def teal_pixels(rgb: np.ndarray) -> np.ndarray:
    """(H, W) mask of the default avatar's own teal hair."""
    r, g, b = (rgb[..., k].astype(int) for k in range(3))
    return (g > r + 60) & (b > r + 60)


def above_face(rgb: np.ndarray) -> np.ndarray:
    """The top 40 % of a bust-framed frame: the top of the head and the hair above the face."""
    return rgb[: int(0.4 * rgb.shape[0])]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One fit cache for the module (each style is fitted once, in the fitter process or at open)."""
    return TryOnCache(tmp_path_factory.mktemp("tryon-cache"))


@pytest.fixture()
def hair_dir(tmp_path):
    """A hair folder: ponytail01 and short02 (copies with their MakeHuman sidecars), a style
    too big for any head ("huge") and a broken OBJ; a style outside it."""
    d = tmp_path / "hair"
    for style in ("ponytail01", "short02"):
        (d / style).mkdir(parents=True)
        for suffix in (".obj", ".mhmat", ".mhclo"):
            shutil.copy(asset("hair", style, f"{style}{suffix}"), d / style / f"{style}{suffix}")
    src = asset("hair", "short02", "short02.obj").read_text().splitlines()
    (d / "huge.obj").write_text("\n".join(
        f"v {' '.join(str(100 * float(x)) for x in ln.split()[1:4])}" if ln.startswith("v ") else ln
        for ln in src) + "\n")
    (d / "broken.obj").write_text("v 0 0 0\nv 1 0\nf 1 2 3\n")
    (tmp_path / "outside").mkdir()
    shutil.copy(asset("hair", "short02", "short02.obj"), tmp_path / "outside" / "short02.obj")
    return d


def _session(cfg, cache, **kw) -> Session:
    s = Session(cfg, **{"say": lambda line: None, **kw})
    s.tryon.cache = cache
    return s


def test_hair_run_writes_a_video_that_shows_the_fitted_hair(tmp_path, cache):
    frames = {}
    for name, tryon in (("own", TryOnSection()), ("ponytail", TryOnSection(style="ponytail01"))):
        out = tmp_path / f"{name}.mp4"
        cfg = RunConfig(source="turn-test", duration=0.5, size=SIZE, output=(f"video:{out}",), tryon=tryon,
                        motion=MotionSection(clip="none"))
        with _session(cfg, cache) as s:
            if tryon.style:
                assert s.tryon.current == "ponytail01" and s.stage.rig.avatar is not s.stage.base.avatar
                assert any(m.name.startswith("TryOnHair") for m in s.stage.rig.avatar.meshes)
            s.run()
        _, video = read_video(out)
        frames[name] = video[-1]
    own, pony = (above_face(frames[k]) for k in ("own", "ponytail"))
    # the fitted brown hair covers the top of the head; the avatar's own teal hair is hidden under it
    # (at 160x90 the head is ~30 px wide: observed 107 brown pixels with the style, 8 without)
    assert brown_pixels(pony).sum() > max(HAIR_SHARE * pony[..., 0].size, 5 * brown_pixels(own).sum())
    assert teal_pixels(own).sum() > 10 * max(teal_pixels(pony).sum(), 1)


def _call(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=SWITCH_TIMEOUT_S)
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    if r.getheader("Content-Type") == "image/png":
        from PIL import Image

        return r.status, np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    return r.status, json.loads(data)


def test_post_hairstyle_switches_live_and_a_bad_style_keeps_the_previous(tmp_path, hair_dir, cache):
    cfg = RunConfig(source="turn-test", realtime=True, fps=30, duration=600.0, size=SIZE,
                    output=(f"video:{tmp_path / 'live.mp4'}",), service=True, port=0, hair_dir=str(hair_dir))
    answers = {}
    frames = []

    def requests():
        try:
            port = session.service.address[1]
            answers["list"] = _call(port, "GET", "/hairstyles")
            answers["pony"] = _call(port, "POST", "/hairstyle", {"name": "ponytail01"})
            answers["after_pony"] = _call(port, "GET", "/hairstyles")
            answers["huge"] = _call(port, "POST", "/hairstyle", {"name": "huge"})
            answers["broken"] = _call(port, "POST", "/hairstyle", {"name": "broken"})
            answers["after_bad"] = _call(port, "GET", "/hairstyles")
            answers["frame_pony"] = _call(port, "GET", "/frame.png")
            answers["outside"] = _call(port, "POST", "/hairstyle", {"name": "../outside/short02.obj"})
            answers["unknown"] = _call(port, "POST", "/hairstyle", {"name": "bob99"})
            answers["own"] = _call(port, "POST", "/hairstyle", {"name": None})
            answers["frame_own"] = _call(port, "GET", "/frame.png")
            answers["status"] = _call(port, "GET", "/status")
        finally:
            session.stop()

    def on_frame(info, rig):
        hips = rig.avatar.humanoid["hips"]
        frames.append((time.monotonic(), rig.avatar, info.world[hips, :3, 3].copy()))
        if len(frames) == 3:
            threading.Thread(target=requests, daemon=True).start()

    session = _session(cfg, cache, on_frame=on_frame)
    with session:
        base = session.stage.base.avatar
        result = session.run()
    assert not result.interrupted
    status, body = answers["list"]
    assert status == 200 and body["styles"] == ["broken", "huge", "ponytail01", "short02"]
    assert body["current"] is None and body["pending"] is None
    status, body = answers["pony"]
    assert status == 200 and body["current"] == "ponytail01", body
    assert body["guides"]["candidates"] == body["guides"]["attached"] + body["guides"]["joined"] + \
        body["guides"]["rejected"] and body["chains"] > 0
    assert answers["after_pony"][1]["current"] == "ponytail01"
    status, body = answers["huge"]
    assert status == 422 and "too big for the head" in body["error"]
    status, body = answers["broken"]
    assert status == 422 and "broken.obj" in body["error"] and "line 2" in body["error"]
    status, body = answers["after_bad"]
    assert body["current"] == "ponytail01" and body["pending"] is None and "line 2" in body["error"]
    pony = above_face(answers["frame_pony"][1])          # the fitted hair is still drawn
    assert brown_pixels(pony).sum() > HAIR_SHARE * pony[..., 0].size
    assert answers["outside"][0] == 403
    assert answers["unknown"][0] == 404
    status, body = answers["own"]
    assert status == 200 and body["current"] is None
    own = above_face(answers["frame_own"][1])              # the avatar's own hair is back
    assert 5 * brown_pixels(own).sum() < brown_pixels(pony).sum()
    assert teal_pixels(own).sum() > 10 * max(teal_pixels(pony).sum(), 1)
    assert answers["status"][1]["hairstyle"] is None
    # the run never stopped: frames kept coming while the fits ran, and the avatar changed twice
    avatars = [a for _, a, _ in frames]
    changes = [k for k in range(1, len(avatars)) if avatars[k] is not avatars[k - 1]]
    assert len(changes) == 2 and avatars[0] is base and avatars[-1] is base
    # no stall anywhere near a fit's length: a render thread that waited for the fit would show one
    # gap as long as the switch itself (its own 'seconds'); a loaded machine stretches both alike
    gaps = np.diff([t for t, _, _ in frames])
    switch_s = answers["pony"][1]["seconds"]
    assert gaps.max() < max(1.0, STALL_SHARE * switch_s), (gaps.max(), switch_s)
    # the body motion (the idle's sway) carries on across each swap: no restart, no jump of the hips
    hips = np.array([h for _, _, h in frames])
    moves = np.linalg.norm(np.diff(hips, axis=0), axis=1)   # moves[k - 1]: frame k - 1 -> k
    for k in changes:
        around = np.r_[moves[max(k - 1 - NEIGHBOURS, 0):k - 1], moves[k:k + NEIGHBOURS]]
        assert moves[k - 1] <= JUMP_RATIO * around.max() + 1e-5, (k, moves[k - 1], around)


def test_window_keys_cycle_styles_and_0_brings_the_own_hair_back(tmp_path, hair_dir, cache, monkeypatch):
    """The keys as the window sends them (scripted events): ']' the next style of the folder
    (broken and huge fail and are said, ponytail01 is drawn), '0' the avatar's own hair; each
    switch lands frames later while the run goes on, and the next key waits for it."""
    cfg = RunConfig(source="turn-test", realtime=True, fps=30, duration=600.0, size=SIZE,
                    output=(f"video:{tmp_path / 'k.mp4'}",), hair_dir=str(hair_dir), motion=MotionSection(clip="none"))
    keys = ["]", "]", "]", "0", "q"]
    said, currents = [], []
    deadline = time.monotonic() + SWITCH_TIMEOUT_S

    def scripted(self):
        if keys and (not self.tryon.switching or time.monotonic() > deadline):
            self.keys.press(keys.pop(0) if time.monotonic() <= deadline else "q")
        original(self)

    original = Session.handle_events
    monkeypatch.setattr(Session, "handle_events", scripted)
    session = _session(cfg, cache, on_frame=lambda info, rig: currents.append(session.tryon.current), say=said.append)
    with session:
        session.run()
    assert not keys
    lines = [line for line in said if line.startswith("hairstyle:")]
    assert any("broken.obj" in line and "keeping the avatar's own hair" in line for line in lines), lines
    assert any("too big for the head" in line for line in lines), lines
    assert "ponytail01" in currents and session.tryon.current is None and session.stage.rig.avatar is session.stage.base.avatar
    assert session.tryon.swaps == 2


def test_closing_while_a_fit_runs_neither_hangs_nor_crashes(tmp_path, hair_dir):
    from runtime.tryon import SessionClosed

    cfg = RunConfig(source="turn-test", duration=0.2, size=SIZE, output=(f"video:{tmp_path / 'c.mp4'}",),
                    hair_dir=str(hair_dir), motion=MotionSection(clip="none"))
    session = _session(cfg, TryOnCache(tmp_path / "empty-cache"))      # nothing cached: a real fit
    with session:
        session.run()
        fut = session.tryon.request(hair_dir / "ponytail01" / "ponytail01.obj")
        deadline = time.monotonic() + 30
        while session.tryon.fitter._proc is None and time.monotonic() < deadline:    # the fit has started
            time.sleep(0.01)
        proc = session.tryon.fitter._proc
        t0 = time.monotonic()
    closed_in = time.monotonic() - t0
    assert closed_in < 3.0
    with pytest.raises(SessionClosed):
        fut.result(timeout=1)
    assert proc is not None and proc.poll() is not None       # the fitter process is gone
    session.tryon._thread.join(timeout=5)
    assert not session.tryon._thread.is_alive()
    assert not list((tmp_path / "empty-cache").glob("*.pickle"))   # the dropped fit left nothing behind


def test_run_refuses_a_style_it_cannot_find_or_fit(tmp_path, hair_dir, capsys):
    from runtime.cli import main

    out = f"video:{tmp_path / 'x.mp4'}"
    base = ["run", "--source", "turn-test", "--duration", "0.1", "--size", "64x36", "--output", out,
            "--hair-dir", str(hair_dir)]
    assert main([*base, "--hair", "bob99"]) == 1
    err = capsys.readouterr().err
    assert "no hair style named 'bob99'" in err and "broken, huge, ponytail01, short02" in err
    assert main([*base, "--hair", "huge"]) == 1
    assert "too big for the head" in capsys.readouterr().err
    assert main([*base, "--hair", str(tmp_path / "none.obj")]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "x.mp4").exists()           # refused before any output was opened


def _pump(session, until, timeout_s=SWITCH_TIMEOUT_S):
    """Play the render thread's part between frames (commands, swaps) until ``until()``."""
    deadline = time.monotonic() + timeout_s
    while not until():
        assert time.monotonic() < deadline, "timed out"
        session.commands.drain()
        session.tryon.poll()
        time.sleep(0.005)


def test_a_newer_request_supersedes_and_a_new_avatar_gets_the_style_again(tmp_path, hair_dir, cache, godette_path):
    """Two requests in a row: the first answers StyleSuperseded, the second is drawn. Then
    ``POST /avatar`` (its controller call): the new avatar is drawn with its own hair at once
    and the style drawn before is fitted on it and swapped in."""
    from runtime.tryon import StyleSuperseded

    avatars = tmp_path / "avatars"
    avatars.mkdir()
    shutil.copy(godette_path, avatars / "godette.vrm")
    cfg = RunConfig(source="turn-test", duration=0.1, size=SIZE, output=(f"video:{tmp_path / 's.mp4'}",),
                    hair_dir=str(hair_dir), avatar_dir=str(avatars), motion=MotionSection(clip="none"))
    with _session(cfg, cache) as session:
        sw = session.tryon
        first = sw.request_name("ponytail01")
        second = sw.request_name("short02")
        with pytest.raises(StyleSuperseded):
            first.result(timeout=1)
        _pump(session, second.done)
        assert second.result()["current"] == "short02" and sw.current == "short02"
        assert session.stage.rig.avatar is not session.stage.base.avatar
        answer = []
        t = threading.Thread(target=lambda: answer.append(session.controller.load_avatar(avatars / "godette.vrm")))
        t.start()
        _pump(session, lambda: not t.is_alive())
        assert answer[0]["hairstyle_pending"] == "short02"
        assert session.stage.base.path == avatars / "godette.vrm" and session.stage.rig.avatar is session.stage.base.avatar
        assert sw.current is None and sw.switching
        _pump(session, lambda: not sw.switching)
        assert sw.current == "short02" and sw.last_error is None
        assert session.stage.rig.avatar.meta.name == session.stage.base.avatar.meta.name
        assert any(m.name.startswith("TryOnHair") for m in session.stage.rig.avatar.meshes)
        session.run()


def test_prewarm_fits_the_styles_into_the_cache_without_switching(tmp_path, hair_dir):
    """The kiosk's pre-warming: every style of the folder fitted once into the cache by the idle
    worker (the ones that cannot be fitted are logged and skipped); nothing is swapped."""
    cache = TryOnCache(tmp_path / "warm")
    cfg = RunConfig(source="turn-test", duration=0.1, size=SIZE, output=(f"video:{tmp_path / 'w.mp4'}",),
                    hair_dir=str(hair_dir), tryon=TryOnSection(prewarm=True), motion=MotionSection(clip="none"))
    with _session(cfg, cache) as session:
        assert session.tryon.prewarm
        session.tryon.start_prewarm()
        wanted = {cache.path(session.stage.base.path, hair_dir / s / f"{s}.obj", session.tryon.settings)
                  for s in ("ponytail01", "short02")}
        deadline = time.monotonic() + SWITCH_TIMEOUT_S
        while not all(p.is_file() for p in wanted):
            assert time.monotonic() < deadline, "pre-warming timed out"
            time.sleep(0.05)
        session.tryon.poll()
        assert session.tryon.current is None and session.tryon.swaps == 0 and not session.tryon.switching
        assert session.stage.rig.avatar is session.stage.base.avatar
        session.run()
    assert len(list((tmp_path / "warm").glob("*.pickle"))) == 2
