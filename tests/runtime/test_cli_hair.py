"""``swaycam hair``: fit with --json (the documented keys), write a VRM that loads, refuse a
broken hair file with a message naming it and exit code 1."""

from __future__ import annotations

import json

from avatars import load_avatar
from runtime.cli import main


def test_hair_fit_json_and_export(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "short.vrm"
    rc = main(["hair", "fit", "short02", "--out", str(out), "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["guides"]) == {"candidates", "attached", "joined", "rejected"}
    for key in ("chains", "joints", "hair_vertices", "seconds"):
        assert key in d
    assert d["hair_vertices"] == 2061 and d["guides"]["candidates"] > 0 and not d["cached"]
    assert load_avatar(out).warnings == ()
    assert main(["hair", "fit", "short02", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cached"] is True


def test_hair_fit_rebuilds_a_spring_of_the_avatar_itself(tmp_path, capsys):
    from avatars.generate import default_avatar_path

    path = str(default_avatar_path())
    rc = main(["hair", "fit", path, "--spring", "Ponytail", "--avatar", path, "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["placement"] == "kept" and d["chains"] == 1


def test_hair_fit_refuses_a_broken_file(tmp_path, capsys):
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n")
    assert main(["hair", "fit", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.obj: line 4: face vertex index 7 does not exist" in err
    assert main(["hair", "fit", "no-such-style"]) == 1
    assert "no hair style named 'no-such-style'" in capsys.readouterr().err


def test_hair_list(capsys):
    assert main(["hair", "list"]) == 0
    names = {line.split("\t")[0] for line in capsys.readouterr().out.splitlines()}
    assert {"ponytail01", "long01", "bob01", "short02"} <= names
