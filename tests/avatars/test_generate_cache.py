"""Generate-on-first-use paths of the built-in avatars: cache folder, fingerprint, reuse, speed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import avatars.generate as gen
from avatars import load_avatar
from avatars.generate import cache

GENERATION_BUDGET_S = 2.0  # each avatar builds in well under this (about 0.5 s on one core)


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "b"))
    assert cache.cache_dir() == tmp_path / "a"
    monkeypatch.delenv("SWAYCAM_CACHE")
    assert cache.cache_dir() == tmp_path / "b" / "swaycam"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "swaycam"


@pytest.mark.parametrize("get,name", [(gen.default_avatar_path, "swaycam default"),
                                      (gen.layered_avatar_path, "swaycam layered")])
def test_paths_generate_once_and_load(monkeypatch, tmp_path, get, name):
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path))
    path = get()
    assert path.is_file() and path.parent == tmp_path / "avatars"
    assert gen.generator_fingerprint()[:16] in path.name and path.suffix == ".vrm"
    a = load_avatar(path)
    assert a.vrm_version == "1.0" and a.warnings == () and a.meta.name == name
    assert list(path.parent.iterdir()) == [path]  # no temporary files left behind
    # the second call reuses the file without building
    def fail() -> bytes:
        raise AssertionError("rebuilt")

    monkeypatch.setattr(gen, "build_default_avatar", fail)
    monkeypatch.setattr(gen, "build_layered_avatar", fail)
    stamp = path.stat().st_mtime_ns
    assert get() == path and path.stat().st_mtime_ns == stamp


def test_fingerprint_follows_the_generator_source(monkeypatch, tmp_path):
    fp = gen.generator_fingerprint()
    assert len(fp) == 64 and fp == gen.generator_fingerprint()
    monkeypatch.setattr(cache, "GENERATOR_VERSION", cache.GENERATOR_VERSION + "-changed")
    assert gen.generator_fingerprint() != fp


def test_cached_file_does_not_leave_partial_files(monkeypatch, tmp_path):
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path))

    def broken() -> bytes:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cache.cached_file("broken", broken)
    assert not any(Path(tmp_path, "avatars").iterdir())


@pytest.mark.parametrize("build", [gen.build_default_avatar, gen.build_layered_avatar])
def test_generation_is_fast(build):
    t0 = time.perf_counter()
    build()
    assert time.perf_counter() - t0 < GENERATION_BUDGET_S


def test_write_avatars_writes_both_files(tmp_path):
    """What ``swaycam generate --out DIR`` writes (tests/runtime/cli/test_generate.py runs the command)."""
    out = gen.write_avatars(tmp_path / "new")
    assert out == [tmp_path / "new" / "swaycam-default.vrm", tmp_path / "new" / "swaycam-layered.vrm"]
    assert load_avatar(out[0]).meta.name == "swaycam default"
