"""The fitter process: fits outside the render process, answers a style it cannot fit with the
core's message, survives its own crash (the next fit starts it again), ends when closed."""

from __future__ import annotations

import threading
import time

import pytest

from avatars import load_avatar
from avatars.generate import default_avatar_path
from avatars.tryon import TryOnSettings
from avatars.tryon.cache import TryOnCache
from runtime.tryon import BaseAvatar, Fitter, StyleError
from tests.conftest import asset


@pytest.fixture(scope="module")
def base():
    path = default_avatar_path()
    return BaseAvatar(path, load_avatar(path))


def test_fits_in_a_child_that_survives_a_crash(tmp_path, base):
    fitter = Fitter()
    style = asset("hair", "short02", "short02.obj")
    cache = TryOnCache(tmp_path / "cache")
    try:
        result, hit = fitter.fit(base, style, TryOnSettings(), cache.folder)
        assert not hit and result.avatar is not None and result.guide_report.candidates > 0
        assert result.guides == ()                                     # slim, like a cache entry
        assert cache.load(base.path, style) is not None                # stored by the child
        bad = tmp_path / "bad.obj"
        bad.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n")
        with pytest.raises(StyleError, match="bad.obj"):
            fitter.fit(base, bad, TryOnSettings(), cache.folder)
        first = fitter._proc
        assert first.poll() is None                                   # an answer, not a dead child
        # the child dies mid-fit: the fit fails with a message, the next one starts a new child
        killer = threading.Timer(0.3, first.kill)
        killer.start()
        with pytest.raises(StyleError, match="the fitting process ended"):
            fitter.fit(base, asset("hair", "bob01", "bob01.obj"), TryOnSettings(), tmp_path / "other-cache")
        killer.join()
        _, hit = fitter.fit(base, style, TryOnSettings(), cache.folder)
        assert hit and fitter._proc is not first
    finally:
        fitter.close()
    assert first.poll() is not None
    with pytest.raises(StyleError, match="closing"):
        fitter.fit(base, style, TryOnSettings(), cache.folder)


def test_close_ends_a_fit_in_flight_at_once(tmp_path, base):
    fitter = Fitter()
    errors = []

    def fit():
        try:
            fitter.fit(base, asset("hair", "bob01", "bob01.obj"), TryOnSettings(), tmp_path / "cache")
        except StyleError as exc:
            errors.append(str(exc))

    t = threading.Thread(target=fit)
    t.start()
    deadline = time.monotonic() + 30
    while fitter._proc is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc = fitter._proc
    t0 = time.monotonic()
    fitter.close()
    t.join(timeout=5)
    assert time.monotonic() - t0 < 3.0 and not t.is_alive()
    assert errors and "closing" in errors[0] and proc.poll() is not None
