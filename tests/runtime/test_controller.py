"""The session controller's avatar load (POST /avatar) against a running live session: the
file is read, rigged and framed off the render thread, which keeps drawing; a setting changed
meanwhile is honoured by the swapped-in rig."""

from __future__ import annotations

import threading
import time

import pytest

from runtime import controller as controller_module
from runtime.config import RunConfig
from runtime.session import Session
from tests.conftest import asset

SIZE = (320, 180)
#: the load is held this long after reading the file (s): frames at 20 fps keep coming meanwhile
HOLD_S = 0.5
#: frames the render thread must draw during the hold (20 fps x 0.5 s = 10; a loaded machine
#: still draws more than 3)
MIN_FRAMES_DURING_LOAD = 3


@pytest.fixture
def live_session(tmp_path):
    # the turn-test track lasts 12 s: the duration keeps the run drawing on a slow machine
    cfg = RunConfig(source="turn-test", realtime=True, fps=20, size=SIZE, output=(f"video:{tmp_path}/s.mp4",),
                    duration=120.0)
    frames: list[str] = []        # the avatar file of every drawn frame
    session = Session(cfg, say=lambda s: None, on_frame=lambda info, rig: frames.append(str(rig.avatar.path)))

    def run():
        with session:
            session.run()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    deadline = time.monotonic() + 300          # a cold numba cache compiles the solver first
    while time.monotonic() < deadline and len(frames) < 3:
        time.sleep(0.05)
    assert len(frames) >= 3, "the live session drew no frames"
    yield session, frames
    session.stop()
    th.join(timeout=60)
    assert not th.is_alive()


def _spy(monkeypatch, obj, name, calls):
    real = getattr(obj, name)

    def spy(*a, **k):
        calls.append((name, threading.get_ident()))
        return real(*a, **k)

    monkeypatch.setattr(obj, name, spy)


def test_avatar_loads_off_the_render_thread(live_session, monkeypatch):
    session, frames = live_session
    render_thread = session.commands.call(threading.get_ident)
    calls, seen = [], {}
    real = controller_module.load_avatar

    def slow_load(path, gate=None):
        avatar = real(path)
        calls.append(("load_avatar", threading.get_ident()))
        n0 = len(frames)
        time.sleep(HOLD_S)
        seen["frames_during_load"] = len(frames) - n0
        return avatar

    monkeypatch.setattr(controller_module, "load_avatar", slow_load)
    _spy(monkeypatch, session.stage, "make_rig", calls)
    _spy(monkeypatch, session.drawer, "framing", calls)
    result = session.controller.load_avatar(asset("vrm/Godette_vrm_v4.vrm"))
    assert result["springs"] == 8
    assert session.stage.rig.avatar.path.endswith("Godette_vrm_v4.vrm")
    assert [c[0] for c in calls] == ["load_avatar", "make_rig", "framing"]     # each once: no rebuild
    assert render_thread not in {c[1] for c in calls}
    assert seen["frames_during_load"] >= MIN_FRAMES_DURING_LOAD
    n = len(frames)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(frames) < n + 3:
        time.sleep(0.02)
    assert frames[-1].endswith("Godette_vrm_v4.vrm")        # the new avatar is the one drawn


def test_a_change_make_rig_does_not_read_keeps_the_prepared_rig(live_session, monkeypatch):
    session, _ = live_session
    calls = []
    real = controller_module.load_avatar

    def load_then_change(path, gate=None):
        avatar = real(path)
        session.stage.settings.set_background("#102030")    # the panel's background
        return avatar

    monkeypatch.setattr(controller_module, "load_avatar", load_then_change)
    _spy(monkeypatch, session.stage, "make_rig", calls)
    session.controller.load_avatar(asset("vrm/Godette_vrm_v4.vrm"))
    assert len(calls) == 1


def test_a_calibration_applied_during_the_load_rebuilds_the_rig(live_session, monkeypatch):
    """The calibration (POST /calibrate apply, a live setting make_rig reads) changed while
    the avatar was prepared: the rig is built again on the render thread, with it."""
    session, _ = live_session
    calls = []
    real = controller_module.load_avatar
    render_thread = session.commands.call(threading.get_ident)
    ranges = {"eyeBlinkLeft": [0.1, 0.6]}

    def load_then_change(path, gate=None):
        avatar = real(path)
        session.controller.set_calibration(ranges)      # on the render thread, while this load waits
        return avatar

    monkeypatch.setattr(controller_module, "load_avatar", load_then_change)
    _spy(monkeypatch, session.stage, "make_rig", calls)
    session.controller.load_avatar(asset("vrm/Godette_vrm_v4.vrm"))
    assert len(calls) == 2 and calls[1][1] == render_thread
    assert session.stage.rig.expressions.calibration.ranges["eyeBlinkLeft"] == (0.1, 0.6)


def test_a_solver_switched_during_the_load_is_kept(live_session, monkeypatch):
    session, _ = live_session
    assert session.stage.rig.solver == "rest-shape"
    real = controller_module.load_avatar

    def load_then_switch(path, gate=None):
        avatar = real(path)
        session.controller.set_hair("legacy", None)      # on the render thread, while this load waits
        return avatar

    monkeypatch.setattr(controller_module, "load_avatar", load_then_switch)
    session.controller.load_avatar(asset("vrm/Godette_vrm_v4.vrm"))
    assert session.stage.rig.avatar.path.endswith("Godette_vrm_v4.vrm")
    assert session.stage.rig.solver == "legacy"


def test_a_broken_file_leaves_the_avatar(live_session, tmp_path):
    session, frames = live_session
    before = session.stage.rig.avatar
    bad = tmp_path / "broken.vrm"
    bad.write_bytes(b"not a glTF file at all")
    with pytest.raises(ValueError, match="broken.vrm"):
        session.controller.load_avatar(bad)
    assert session.stage.rig.avatar is before
    n = len(frames)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(frames) < n + 3:
        time.sleep(0.02)
    assert len(frames) >= n + 3                    # still drawing


def test_compare_mode_builds_the_companion_off_the_render_thread(live_session, monkeypatch):
    session, frames = live_session
    session.commands.call(lambda: session.stage.set_compare(True))
    render_thread = session.commands.call(threading.get_ident)
    calls = []
    _spy(monkeypatch, session.stage, "make_rig", calls)
    session.controller.load_avatar(asset("vrm/Godette_vrm_v4.vrm"))
    assert len(calls) == 2 and render_thread not in {c[1] for c in calls}      # the rig and its companion
    rig, companion = session.stage.rig, session.stage.companion
    assert companion is not None and companion.avatar is rig.avatar
    assert (rig.solver, companion.solver) == ("rest-shape", "legacy")
    n = len(frames)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(frames) < n + 3:
        time.sleep(0.02)
    assert frames[-1].endswith("Godette_vrm_v4.vrm")
