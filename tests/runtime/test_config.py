"""Run configuration: TOML file, command-line merge, validation messages."""

from __future__ import annotations

import pytest

from runtime.config import ConfigError, RunConfig, load_toml, merge, parse_background, parse_size
from runtime.config_sections import TryOnSection


def test_toml_then_cli_override(tmp_path):
    p = tmp_path / "swaycam.toml"
    p.write_text('fps = 24\nsize = "640x360"\noutput = ["video:out/a.mp4", "window"]\nsolver = "legacy"\n'
                 '[hair]\nk = 60.0\n[hair.springs."bang*"]\nc = 3\n')
    cfg = load_toml(p)
    assert cfg.fps == 24 and cfg.size == (640, 360) and cfg.output == ("video:out/a.mp4", "window")
    assert cfg.hair == {"k": 60.0, "springs": {"bang*": {"c": 3}}}
    cfg2 = merge(cfg, {"fps": 60.0, "solver": None, "mirror": False})
    assert cfg2.fps == 60.0 and cfg2.solver == "legacy" and cfg2.mirror is False


@pytest.mark.parametrize("text,fragment", [
    ('fps = 0\n', "fps: 0 is outside"),
    ('solver = "magic"\n', "solver: 'magic' is not one of"),
    ('colour = "red"\n', "unknown setting 'colour'"),
    ('size = "huge"\n', "size: 'huge' is not WIDTHxHEIGHT"),
    ('output = ["ftp:x"]\n', "output: 'ftp:x' is not"),
    ('fps = \n', "swaycam.toml"),
    ('fps = "fast"\n', "fps: 'fast' is not a number"),
    ('[drive]\nneck_shar = 0.3\n', "drive.neck_shar: unknown setting"),
    ('[drive]\nneck_share = "x"\n', "drive.neck_share: 'x' is not a finite number"),
    ('[drive]\nneck_share = 5\n', "drive.neck_share: 5 is outside 0..1"),
    ('duration = inf\n', "duration: inf is not a finite number"),
    ('duration = nan\n', "duration: nan is not a finite number"),
    ('duration = 1e12\n', "duration: must be > 0 seconds and at most a year"),
    ('avatar_dir = "no/such/folder"\n', "avatar_dir: "),
    ('[hair]\nstiffness = 2\n', "unknown hair setting 'stiffness'"),
    ('[hair]\nk = -1\n', "hair.k: -1 is below 0"),
    ('[hair.springs."*"]\ngravity = [0, -1]\n', "hair.springs.*.gravity"),
    ('output = ["video:x.webm"]\n', "video files are H.264"),
    ('size = "641x361"\noutput = ["video:x.mp4"]\n', "needs an even width and height"),
    ('kiosk = "yes"\n', "kiosk: 'yes' is not true/false"),
    ('[tryon]\nstyl = "bob01"\n', "tryon.styl: unknown setting (known: hide_own_hair, prewarm, style)"),
    ('[tryon]\nhide_own_hair = "no"\n', "tryon.hide_own_hair: 'no' is not true/false"),
    ('[tryon]\nstyle = 3\n', "tryon.style: 3 is not a string"),
    ('tryon = "bob01"\n', "[tryon] must be a table"),
    ('hair_dir = "no/such/folder"\n', "hair_dir: "),
    ('detail = "low"\n', "detail: 'low' is not one of auto, full, reduced"),
    ('outlines = true\n', 'outlines: true is not a string (one of "auto", "on", "off")'),
    ('detail = 1\n', 'detail: 1 is not a string (one of "auto", "full", "reduced")'),
    ('antialias = false\n', 'antialias: false is not a string (one of "auto", "msaa", "fxaa", "off")'),
    ('video_preset = "turbo"\n', "video_preset: 'turbo' is not one of auto, ultrafast, superfast, veryfast"),
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


def test_config_directory_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="not a regular file"):
        load_toml(tmp_path)
    with pytest.raises(ConfigError, match="/dev/zero: not a regular file"):
        load_toml("/dev/zero")          # would read forever


def test_relative_input_paths_are_read_from_the_config_folder(tmp_path, monkeypatch):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "avatars").mkdir()
    p = tmp_path / "cfg" / "run.toml"
    p.write_text('avatar = "me.vrm"\navatar_dir = "avatars"\nsource = "0"\noutput = ["video:out.mp4"]\n')
    monkeypatch.chdir(tmp_path)
    cfg = load_toml(p)
    assert cfg.avatar == str(tmp_path / "cfg" / "me.vrm")
    assert cfg.avatar_dir == str(tmp_path / "cfg" / "avatars")
    assert cfg.source == "0" and cfg.output == ("video:out.mp4",)


def test_hair_settings_become_solver_overrides():
    from runtime.rig.hair_params import parse_hair
    ov = parse_hair({"k": 60.0, "gravity": [0, -2, 0], "springs": {"bang*": {"c": 3}}})
    assert list(ov) == ["bang*", "*"]
    assert ov["bang*"].c == 3.0 and ov["bang*"].k == 60.0 and ov["bang*"].g == (0.0, -2.0, 0.0)
    assert ov["*"].c is None and ov["*"].k == 60.0
    assert parse_hair({}) is None


def test_readme_config_example_loads(tmp_path):
    """The [drive]/[hair] example in README.md is valid as written."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    lines = []
    for ln in ("    [drive]" + readme.split("    [drive]", 1)[1]).splitlines():
        if ln and not ln.startswith("    "):
            break                                   # the end of the indented block
        lines.append(ln[4:])
    p = tmp_path / "readme.toml"
    p.write_text("\n".join(lines) + "\n")
    cfg = load_toml(p)
    assert cfg.drive["neck_share"] == 0.35
    assert cfg.hair["springs"] == {"Bang*": {"k": 90.0, "limit": {"kind": "cone", "angle": 25}, "speed_limit": 1.0}}
    assert (cfg.hair["speed_limit"], cfg.hair["rotation_speed_limit"], cfg.hair["cover_mesh"]) == (0.25, 200.0, True)
    assert cfg.hair["wind"]["strength"] == 6.0
    # and it runs on the avatar a new user starts with: stable, every pattern matches
    from avatars import load_avatar
    from avatars.generate import default_avatar_path
    from runtime.rig import AvatarRig

    rig = AvatarRig(load_avatar(default_avatar_path()), hair=cfg.hair)
    assert rig.hair_warnings() == [] and set(rig.hair_springs()["Bang2"]["k"]) == {90.0}


@pytest.mark.parametrize("outputs, message", [
    (("video:a.mp4", "video:./a.mp4"), "is given twice"),
    (("png:f", "png:f/"), "is given twice"),
    (("window", "window"), "window is given twice"),
])
def test_an_output_given_twice_is_refused(outputs, message):
    from runtime.config import validate

    with pytest.raises(ConfigError, match=message):
        validate(RunConfig(output=outputs), "--output")


def test_tryon_table_and_hair_dir(tmp_path):
    """[tryon] style: a name stays a name, a file is read from the config file's folder (like
    every input path); hair_dir too; --hair / --keep-own-hair land in the same table."""
    import argparse

    from runtime.cli.run import add_parser, config_from_args

    (tmp_path / "styles").mkdir()
    p = tmp_path / "swaycam.toml"
    p.write_text('hair_dir = "styles"\n[tryon]\nstyle = "styles/mine.obj"\nhide_own_hair = false\n')
    cfg = load_toml(p)
    assert cfg.hair_dir == str(tmp_path / "styles") and cfg.tryon.style == str(tmp_path / "styles" / "mine.obj")
    assert cfg.hair_style == str(tmp_path / "styles" / "mine.obj") and cfg.tryon.hide_own_hair is False
    p.write_text('[tryon]\nstyle = "bob01"\n')
    assert load_toml(p).hair_style == "bob01"
    assert RunConfig().hair_style is None and RunConfig(tryon=TryOnSection(style="none")).hair_style is None
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["run", "--config", str(p), "--hair", "long01", "--keep-own-hair",
                              "--hair-dir", str(tmp_path / "styles")])
    cfg = config_from_args(args)
    assert cfg.tryon == TryOnSection(style="long01", hide_own_hair=False) and cfg.hair_dir == str(tmp_path / "styles")
    from runtime.config import tryon_settings

    assert tryon_settings(cfg.tryon).hide_own_hair is False and tryon_settings(TryOnSection()).hide_own_hair is True


def test_quality_keys_reach_the_run(tmp_path):
    from render.sinks.video import PRESETS
    from runtime.config import X264_PRESETS

    assert X264_PRESETS == PRESETS         # the config edge's copy of the renderer's list
    p = tmp_path / "q.toml"
    p.write_text('detail = "full"\nvideo_preset = "ultrafast"\noutlines = "on"\n')
    cfg = load_toml(p)
    assert (cfg.detail, cfg.video_preset, cfg.outlines) == ("full", "ultrafast", "on")
    assert (RunConfig().detail, RunConfig().video_preset) == ("auto", "auto")
    from runtime.config import video_preset

    assert (video_preset("auto", live=True), video_preset("auto", live=False)) == ("ultrafast", "superfast")
    assert video_preset("medium", live=True) == "medium"
