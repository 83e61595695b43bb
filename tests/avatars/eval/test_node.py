"""The one Node/npm installer of the three-vrm references (avatars/eval/node.py): where each
folder lives (README's environment variables), when a folder counts as installed, and the
one-line ReferenceUnavailable without the tools. No npm is run here."""

from __future__ import annotations

import json

import pytest

from avatars.eval.node import THREE_VERSION, THREE_VRM_VERSION, THREEVRM_FULL, NpmFolder, ReferenceUnavailable


def _fake_package(root, name, version):
    d = root / "node_modules" / name
    d.mkdir(parents=True)
    (d / "package.json").write_text(json.dumps({"name": name, "version": version}))


def test_every_reference_folder_and_its_variable(monkeypatch, tmp_path):
    from render.eval import threevrm
    from runtime.eval import constraint_reference, motion_reference
    from solver.eval import reference

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for var in ("SWAYCAM_THREEVRM_DIR", "SWAYCAM_THREEVRM_RENDER_DIR", "SWAYCAM_THREEVRM_ANIMATION_DIR",
                "SWAYCAM_THREEVRM_CONSTRAINT_DIR"):
        monkeypatch.delenv(var, raising=False)
    cache = tmp_path / "swaycam"
    assert reference.NPM.path() == cache / "threevrm-3.5.5"
    assert THREEVRM_FULL.path() == cache / "threevrm-full-3.5.5"
    assert motion_reference.NPM.path() == cache / "threevrm-animation-3.5.5"
    assert constraint_reference.NPM.path() == cache / "threevrm-node-constraint-3.5.5"
    monkeypatch.setenv("SWAYCAM_THREEVRM_DIR", str(tmp_path / "springs"))
    monkeypatch.setenv("SWAYCAM_THREEVRM_RENDER_DIR", str(tmp_path / "full"))
    assert reference.NPM.path() == tmp_path / "springs"
    assert THREEVRM_FULL.path() == tmp_path / "full"
    # the rendering reference and the try-on export check share the full three-vrm folder
    assert threevrm.THREEVRM_FULL is THREEVRM_FULL
    assert threevrm.ReferenceUnavailable is ReferenceUnavailable


def test_a_folder_is_installed_when_every_package_has_its_version(tmp_path):
    folder = NpmFolder("x", "SWAYCAM_TEST_NPM_DIR", (f"@pixiv/three-vrm@{THREE_VRM_VERSION}",
                                                     f"three@{THREE_VERSION}"), "the test reference")
    assert not folder.installed(tmp_path)
    _fake_package(tmp_path, "@pixiv/three-vrm", THREE_VRM_VERSION)
    assert not folder.installed(tmp_path)                     # three is missing
    _fake_package(tmp_path, "three", "0.179.0")
    assert not folder.installed(tmp_path)                     # three at another version
    (tmp_path / "node_modules" / "three" / "package.json").write_text(json.dumps({"version": THREE_VERSION}))
    assert folder.installed(tmp_path)
    assert folder.ensure(tmp_path) == tmp_path                # nothing to install: no npm needed


def test_without_node_one_line_says_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    folder = NpmFolder("x", "SWAYCAM_TEST_NPM_DIR", ("three@0.180.0",), "the test reference")
    with pytest.raises(ReferenceUnavailable, match=r"^node is not on PATH; the test reference needs Node.js and npm$"):
        folder.ensure(tmp_path / "none")
    from avatars.eval.node import run_node

    with pytest.raises(ReferenceUnavailable, match="node is not on PATH"):
        run_node(tmp_path / "script.mjs", what="the test script")
