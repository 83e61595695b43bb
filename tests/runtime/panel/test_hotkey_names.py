"""Hotkeys and names validated when set, and a config writer that never leaves a temporary
file behind (issue 34 finding 8): a key with DEL or a lone surrogate was accepted (200), then
"save to config" failed with 422 — the surrogate leaving a 0-byte ``sw.toml.tmp`` — and a
60,000-character hotkey name for an expression the avatar does not have was written into
the config."""

from __future__ import annotations

import tomllib

import pytest

from runtime.errors import ConfigError, SettingsError
from runtime.panel.config_file import save_tables
from runtime.panel.settings import check_expressions

from .test_panel_routes import call, panel  # noqa: F401 (the fixture)


@pytest.mark.parametrize("key", ["a\x7f", "\udcff", "\x00", "f1\n", " f1", "x" * 21, ""])
def test_bad_key_names_are_refused_when_set(key):
    with pytest.raises(SettingsError, match="is not a key name"):
        check_expressions({"keys": {"happy": key}})


@pytest.mark.parametrize("name", ["x" * 60_000, "a\x7fb", "\udcff", ""])
def test_bad_expression_names_are_refused_when_set(name):
    with pytest.raises(SettingsError, match="is not an expression name"):
        check_expressions({"keys": {name: "f1"}})


def test_the_panel_refuses_them_with_400_and_keeps_the_old_keys(panel):  # noqa: F811
    svc, ctl, _ = panel
    before = ctl.settings.expressions
    for body in ({"keys": {"happy": "a\x7f"}}, {"keys": {"happy": "\udcff"}}, {"keys": {"x" * 60_000: "f1"}},
                 {"keys": {"nosuch": "f1"}}, {"keys": {"happy": 5}}):
        status, answer = call(svc, "POST", "/hotkeys", body)
        assert status == 400, (body, answer)
    assert ctl.settings.expressions == before           # nothing was set
    assert call(svc, "POST", "/hotkeys", {"keys": {"happy": "j"}})[0] == 200


def test_the_writer_escapes_control_characters_and_leaves_no_temporary_file(tmp_path):
    cfg = tmp_path / "sw.toml"
    cfg.write_text("fps = 30\n")
    save_tables(cfg, {"hair": {"springs": {"a\x7fb\"c\\": {"k": 50.0}}}})
    assert tomllib.loads(cfg.read_text())["hair"]["springs"] == {"a\x7fb\"c\\": {"k": 50.0}}
    with pytest.raises(ConfigError, match="lone surrogate"):
        save_tables(cfg, {"expressions": {"keys": {"happy": "\udcff"}}})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sw.toml"]
    assert tomllib.loads(cfg.read_text())["fps"] == 30
