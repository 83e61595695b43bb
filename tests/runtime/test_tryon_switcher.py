"""The hairstyle switcher (runtime/tryon/switcher.py) on a fake host, fitter and cache: the
worker builds the rig off the calling thread with the host's settings at request time, the
swap happens in ``poll`` (the render thread's turn), failures and newer requests are
reported and the previous style stays. No GL context, no numba, no fitting process (the live
session versions are in test_tryon_live.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from runtime.tryon import BaseAvatar, SessionClosed, StyleError, StyleSuperseded, StyleSwitcher

WAIT_S = 10.0


class FakeRig:
    def __init__(self, avatar, solver, hair):
        self.avatar, self.solver, self.hair_params = avatar, solver, dict(hair)
        self.motion = None
        self.world = "world"
        self.warmed = False
        self.retuned = None

    def warm_up(self):
        self.warmed = True

    def with_solver(self, solver):
        rig = FakeRig(self.avatar, solver, self.hair_params)
        rig.warmed = self.warmed
        return rig

    def set_hair(self, hair):
        self.retuned = dict(hair)
        self.hair_params = dict(hair)


class FakeHost:
    """The stage as the switcher sees it (runtime.tryon.switcher.TryOnHost)."""

    def __init__(self):
        self.base = BaseAvatar(Path("/a/base.vrm"), SimpleNamespace(name="base"))
        self.rig = FakeRig(self.base.avatar, "rest-shape", {"k": 50.0})
        self.motion_setup = None
        self.said, self.log = [], []

    def make_rig(self, avatar, solver, hair=None, *, play=True):
        self.log.append(("make_rig", avatar.name, solver, dict(hair), play, threading.get_ident()))
        return FakeRig(avatar, solver, hair)

    def framing(self, avatar, world):
        self.log.append(("framing", avatar.name, threading.get_ident()))
        return f"cameras of {avatar.name}"

    def swap_rig(self, rig, *, framing=None):
        self.log.append(("swap_rig", rig.avatar.name, rig.solver, framing, threading.get_ident()))
        self.rig = rig

    def say(self, line):
        self.said.append(line)


class FakeResult:
    def __init__(self, name):
        self.avatar = SimpleNamespace(name=f"base+{name}")
        self.hidden, self.seconds = ["OwnHair"], 0.5
        self.guide_set, self.hair_instance = None, -1     # no guides kept (runtime.tryon.keep_guides)

    def summary(self):
        return {"ok": True, "chains": 2, "guides": {"candidates": 3, "attached": 2, "joined": 1, "rejected": 0}}


class FakeFitter:
    """Fits by name: "bad" cannot be fitted; ``hold`` blocks a fit until set."""

    def __init__(self):
        self.fits = []
        self.hold = None
        self.closed = False

    def fit(self, base, style, settings, folder, *, want_result=True, gate=None):
        self.fits.append(style.stem)
        if self.hold is not None and style.stem == "slow":
            self.hold.wait(WAIT_S)
        if style.stem == "bad":
            raise StyleError("bad: the hair is too big for the head")
        return FakeResult(style.stem), False

    def close(self):
        self.closed = True


class FakeCache:
    folder = Path("/cache")

    def __init__(self, hits=()):
        self.hits = set(hits)

    def load(self, base_path, style, settings):
        return FakeResult(style.stem) if style.stem in self.hits else None


@pytest.fixture()
def parts():
    host, fitter = FakeHost(), FakeFitter()
    sw = StyleSwitcher(host, SimpleNamespace(styles=lambda: {}, folders=[]), settings="settings",
                       cache=FakeCache(hits={"cached"}), fitter=fitter)
    yield host, fitter, sw
    sw.close()


def pump(sw, fut):
    """Play the render thread: poll until ``fut`` is answered."""
    deadline = time.monotonic() + WAIT_S
    while not fut.done():
        assert time.monotonic() < deadline, "the switch never came"
        sw.poll()
        time.sleep(0.002)


def test_a_style_is_built_on_the_worker_and_swapped_in_poll(parts):
    host, fitter, sw = parts
    me = threading.get_ident()
    fut = sw.request(Path("/h/bob.obj"), "bob")
    assert sw.switching and sw.state()["pending"] == "bob"
    pump(sw, fut)
    info = fut.result()
    (_, avatar, solver, hair, play, built_on), (_, framed, framed_on), swap = host.log
    assert (avatar, solver, hair, play) == ("base+bob", "rest-shape", {"k": 50.0}, False)   # the program is handed over
    assert built_on == framed_on != me and framed == "base+bob"
    assert swap[:4] == ("swap_rig", "base+bob", "rest-shape", "cameras of base+bob") and swap[4] == me
    assert host.rig.warmed and fitter.fits == ["bob"]
    assert info["current"] == "bob" and info["chains"] == 2 and info["cached"] is False and "ok" not in info
    assert sw.current == "bob" and sw.swaps == 1 and not sw.switching and sw.last_error is None
    assert host.said == ["hairstyle: 'bob' (2 chains, fitted in 0.50 s)"]


def test_a_cached_style_is_not_fitted_and_the_own_hair_comes_back(parts):
    host, fitter, sw = parts
    fut = sw.request(Path("/h/cached.obj"))
    pump(sw, fut)
    assert fut.result()["cached"] is True and fitter.fits == [] and host.said[-1].endswith("(2 chains, cached)")
    fut = sw.request(None)
    pump(sw, fut)
    assert fut.result() == {"current": None, "rig_seconds": fut.result()["rig_seconds"],
                            "seconds": fut.result()["seconds"], "swap_ms": fut.result()["swap_ms"]}
    assert host.rig.avatar is host.base.avatar and sw.current is None and host.said[-1] == "hairstyle: the avatar's own hair"


def test_a_style_that_cannot_be_fitted_keeps_the_previous_one(parts):
    host, _, sw = parts
    fut = sw.request(Path("/h/bad.obj"))
    pump(sw, fut)
    with pytest.raises(StyleError, match="too big for the head"):
        fut.result()
    assert not [e for e in host.log if e[0] == "swap_rig"] and sw.current is None
    assert sw.last_error == "bad: the hair is too big for the head"
    assert host.said == ["hairstyle: bad: the hair is too big for the head (keeping the avatar's own hair)"]


def test_settings_changed_meanwhile_are_carried_over(parts):
    host, _, sw = parts
    fut = sw.request(Path("/h/bob.obj"))
    deadline = time.monotonic() + WAIT_S
    while sw._ready is None:                        # prepared with the old solver and hair
        assert time.monotonic() < deadline
        time.sleep(0.002)
    host.rig = FakeRig(host.base.avatar, "legacy", {"k": 80.0})     # the s key and POST /hair meanwhile
    pump(sw, fut)
    assert (host.rig.solver, host.rig.hair_params, host.rig.retuned) == ("legacy", {"k": 80.0}, {"k": 80.0})


def test_a_newer_request_supersedes_and_a_new_base_drops_the_old_one(parts):
    host, fitter, sw = parts
    fitter.hold = threading.Event()
    slow = sw.request(Path("/h/slow.obj"))
    newer = sw.request(Path("/h/bob.obj"))
    with pytest.raises(StyleSuperseded, match="superseded by a newer request \\('bob'\\)"):
        slow.result(timeout=1)
    fitter.hold.set()
    pump(sw, newer)
    assert newer.result()["current"] == "bob"
    fut = sw.request(Path("/h/short.obj"))
    deadline = time.monotonic() + WAIT_S
    while sw._ready is None:
        assert time.monotonic() < deadline
        time.sleep(0.002)
    host.base = BaseAvatar(Path("/a/other.vrm"), SimpleNamespace(name="other"))   # POST /avatar meanwhile
    pump(sw, fut)
    with pytest.raises(StyleSuperseded, match="the avatar changed"):
        fut.result()
    assert sw.current == "bob" and not sw.switching


def test_closing_drops_what_is_in_flight(parts):
    _, fitter, sw = parts
    fitter.hold = threading.Event()
    fut = sw.request(Path("/h/slow.obj"))
    sw.close()
    fitter.hold.set()
    with pytest.raises(SessionClosed):
        fut.result(timeout=1)
    assert fitter.closed
    with pytest.raises(SessionClosed):
        sw.request(Path("/h/bob.obj"))


def test_the_hud_line_says_fitting_then_on_or_the_error_for_show_s(parts):
    from runtime.tryon.note import SHOW_S, StyleNote

    host, fitter, sw = parts
    note = StyleNote()
    assert note.update(sw, 0.0) is None                      # nothing asked yet
    fitter.hold = threading.Event()
    fut = sw.request(Path("/h/slow.obj"))
    assert note.update(sw, 1.0) == "fitting 'slow'…"
    fitter.hold.set()
    pump(sw, fut)
    assert note.update(sw, 2.0) == "'slow' on" and sw.refused == 0
    assert note.update(sw, 2.0 + SHOW_S - 0.01) == "'slow' on"
    assert note.update(sw, 2.0 + SHOW_S) is None             # gone after SHOW_S
    for _ in range(2):                                       # the same error twice: shown both times
        fut = sw.request(Path("/h/bad.obj"))
        pump(sw, fut)
        assert note.update(sw, 10.0) == "hairstyle: bad: the hair is too big for the head"
        assert note.update(sw, 10.0 + SHOW_S) is None
    assert sw.refused == 2
    fut = sw.request(None)
    assert note.update(sw, 20.0) == "back to the avatar's own hair…"
    pump(sw, fut)
    assert note.update(sw, 20.1) == "the avatar's own hair on"
