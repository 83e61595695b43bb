"""``swaycam generate [--out DIR]``: the built-in avatars as files."""

from __future__ import annotations

from avatars import load_avatar
from avatars.generate import generator_fingerprint
from runtime.cli import main


def test_generate_out_writes_two_loadable_vrm_files(tmp_path, capsys):
    out = tmp_path / "avatars"                      # created when missing
    assert main(["generate", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.split("\n")
    assert printed == [str(out / "swaycam-default.vrm"), str(out / "swaycam-layered.vrm"), ""]
    default, layered = (load_avatar(p) for p in printed[:2])
    assert (default.meta.name, layered.meta.name) == ("swaycam default", "swaycam layered")
    for a in (default, layered):
        assert a.vrm_version == "1.0" and a.warnings == () and a.springs and a.head_node() >= 0
    assert len(layered.springs) > len(default.springs)
    assert sorted(p.name for p in out.iterdir()) == ["swaycam-default.vrm", "swaycam-layered.vrm"]


def test_generate_without_out_fills_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path))
    assert main(["generate"]) == 0
    paths = capsys.readouterr().out.split()
    assert len(paths) == 2
    for p, stem in zip(paths, ("swaycam-default", "swaycam-layered")):
        assert p.startswith(str(tmp_path / "avatars" / stem)) and generator_fingerprint()[:16] in p
        assert load_avatar(p).springs


def test_generate_into_a_file_is_a_one_line_failure(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["generate", "--out", str(blocker)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"swaycam generate: cannot write {blocker}: ") and err.count("\n") == 1
