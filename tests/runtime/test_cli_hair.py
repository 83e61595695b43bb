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


def test_hair_fit_json_says_how_it_was_placed_and_what_of_the_own_hair_was_hidden(tmp_path, capsys, monkeypatch):
    from tests.conftest import asset

    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path / "cache"))
    godette = str(asset("vrm", "Godette_vrm_v4.vrm"))
    assert main(["hair", "fit", "short02", "--avatar", godette, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["fit"]["method"] == "head reference" and d["fit"]["inner_median_mm"] > 0
    own = d["own_hair"]
    assert own["hidden"] and own["triangles"] == 379 and own["methods"] == ["spring weights"]
    assert own["cut_from"] == ["BodyMesh", "FaceMesh"]
    assert set(d["checks"]) == {"across_flow", "reversed", "ambiguous_roots", "ambiguous_joins"}


def test_hair_fit_own_rerigs_the_avatars_own_hair(tmp_path, capsys):
    from tests.conftest import asset

    godette = str(asset("vrm", "Godette_vrm_v4.vrm"))
    out = tmp_path / "own.vrm"
    assert main(["hair", "fit", "--own", "--avatar", godette, "--out", str(out), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["placement"] == "kept" and d["chains"] >= 3 and d["own_hair"]["replaced"]
    assert load_avatar(out).warnings == ()
    assert main(["hair", "fit", "short02", "--own", "--avatar", godette]) == 1
    assert "not both" in capsys.readouterr().err


def test_hair_corpus_writes_the_procedural_styles(tmp_path, capsys):
    assert main(["hair", "corpus", "--out", str(tmp_path), "proc_crop", "proc_cap"]) == 0
    printed = capsys.readouterr().out.split()
    assert [p.rsplit("/", 1)[-1] for p in printed] == ["proc_crop.obj", "proc_cap.obj"]
    assert (tmp_path / "proc_cap" / "proc_cap.mhmat").is_file()
    assert main(["hair", "corpus", "--out", str(tmp_path), "nope"]) == 1


def test_hair_guides_writes_the_fit_counts(tmp_path, capsys, monkeypatch):
    from avatars.tryon.guide_export import from_json

    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "g.json"
    assert main(["hair", "guides", "short02", "--out", str(out)]) == 0
    assert "short02: 18 guides (18 attached, 0 joined, 0 rejected)" in capsys.readouterr().out
    assert main(["hair", "fit", "short02", "--json"]) == 0
    fit = json.loads(capsys.readouterr().out)
    assert fit["cached"] is True and from_json(out).counts() == fit["guides"]
    assert json.loads(out.read_text())["style"] == "short02"
    assert main(["hair", "guides", "short02", "--out", str(out / "g.json")]) == 1   # under a file
    assert "cannot write" in capsys.readouterr().err
