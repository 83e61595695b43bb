"""Run configuration: TOML file, command-line merge, validation messages."""

from __future__ import annotations

import pytest

from runtime.config import ConfigError, RunConfig, load_toml, merge, parse_background, parse_size


def test_toml_then_cli_override(tmp_path):
    p = tmp_path / "swaycam.toml"
    p.write_text('fps = 24\nsize = "640x360"\noutput = ["video:out/a.mp4", "window"]\nsolver = "legacy"\n'
                 '[hair]\nstiffness_scale = 1.5\n')
    cfg = load_toml(p)
    assert cfg.fps == 24 and cfg.size == (640, 360) and cfg.output == ("video:out/a.mp4", "window")
    assert cfg.hair == {"stiffness_scale": 1.5}
    cfg2 = merge(cfg, {"fps": 60.0, "solver": None, "mirror": False})
    assert cfg2.fps == 60.0 and cfg2.solver == "legacy" and cfg2.mirror is False


@pytest.mark.parametrize("text,fragment", [
    ('fps = 0\n', "fps: 0 is outside"),
    ('solver = "magic"\n', "solver: 'magic' is not one of"),
    ('colour = "red"\n', "unknown setting 'colour'"),
    ('size = "huge"\n', "size: 'huge' is not WIDTHxHEIGHT"),
    ('output = ["ftp:x"]\n', "output: 'ftp:x' is not"),
    ('fps = \n', "swaycam.toml"),
])
def test_bad_toml_names_file_and_key(tmp_path, text, fragment):
    p = tmp_path / "swaycam.toml"
    p.write_text(text)
    with pytest.raises(ConfigError) as ei:
        load_toml(p)
    assert fragment in str(ei.value) and "swaycam.toml" in str(ei.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="config file does not exist"):
        load_toml(tmp_path / "nope.toml")


def test_parsers():
    assert parse_size("1920x1080") == (1920, 1080)
    assert parse_background("transparent") == (0, 0, 0, 0)
    assert parse_background("#ff8000") == (1.0, 128 / 255, 0.0, 1.0)
    assert parse_background("green")[3] == 1.0
    with pytest.raises(ConfigError):
        parse_background("blue-ish")
    assert RunConfig().solver == "rest-shape"
