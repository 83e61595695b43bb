"""Issue 34 item 10: ``swaycam inspect`` tells a model from a clip file. A glTF with
animations that uses an avatar's extension (VRMC_node_constraint, VRMC_springBone, MToon,
VRM 0.x/1.0) is a model; a glTF library of animations and a VRMA stay clips."""

from __future__ import annotations

import json

import pytest

from avatars.clips.load import is_clip_document, model_extensions
from runtime.cli import main
from tests.avatars.clip_files import gltf_clip, humanoid_skeleton, write_gltf
from tests.conftest import asset


def _animated_gltf() -> dict:
    bones = ["hips", "spine", "chest", "neck", "head"] + [f"{s}{b}" for s in ("left", "right") for b in (
        "UpperLeg", "LowerLeg", "Foot", "UpperArm", "LowerArm", "Hand")]
    names, parents, tr = humanoid_skeleton({b: b for b in bones})
    return gltf_clip(names, parents, tr)


def test_a_gltf_with_node_constraints_and_animations_is_inspected_as_a_model(tmp_path, capsys):
    doc = _animated_gltf()
    doc["nodes"][4]["extensions"] = {"VRMC_node_constraint": {"specVersion": "1.0", "constraint": {
        "rotation": {"source": 3, "weight": 0.5}}}}
    doc["extensionsUsed"] = ["VRMC_node_constraint"]
    path = write_gltf(tmp_path / "constrained.gltf", doc)
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["format"] == "glTF" and info["nodes"] == 17 and "clips" not in info
    assert main(["inspect", str(path), "--json", "--clips"]) == 0       # its clips when asked for
    assert [c["name"] for c in json.loads(capsys.readouterr().out)["clips"]] == ["Swing"]


@pytest.mark.parametrize("where", ["used", "node", "material", "root"])
def test_any_model_extension_anywhere_makes_a_model(where):
    doc = _animated_gltf()
    assert is_clip_document(doc)
    if where == "used":                       # listed only
        doc["extensionsUsed"] = ["VRMC_springBone"]
    elif where == "node":                     # present but not listed (exporters forget)
        doc["nodes"][0]["extensions"] = {"VRMC_node_constraint": {}}
    elif where == "material":
        doc["materials"] = [{"extensions": {"VRMC_materials_mtoon": {}}}]
    else:
        doc["extensions"] = {"VRM": {}}
    assert not is_clip_document(doc)
    assert len(model_extensions(doc)) == 1


def test_clip_libraries_and_vrma_stay_clips(capsys):
    from avatars.gltf_io import read_document

    lib = asset("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")
    assert is_clip_document(read_document(lib).json)
    assert is_clip_document(read_document(asset("anim", "Clapping.vrma")).json)
    assert main(["inspect", str(lib), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["clips"]) == 46
