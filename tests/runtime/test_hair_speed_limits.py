"""``[hair] speed_limit`` / ``rotation_speed_limit`` and their per-spring overrides
(runtime/rig/hair_external.py) reach the built solver's chain rows (solver/build.py); bad
values are refused naming the key; left out, the solver's defaults."""

from __future__ import annotations

import math

import pytest

from runtime.config import ConfigError, load_toml
from runtime.rig.hair_external import build_fields, parse_speed_limits

TOML = """
[hair]
speed_limit = 0.5
rotation_speed_limit = 360.0
[hair.springs."{name}"]
speed_limit = inf
"""


@pytest.fixture(scope="module")
def default_avatar():
    from avatars import load_avatar
    from avatars.generate import default_avatar_path

    return load_avatar(default_avatar_path())


def test_parse_speed_limits():
    hair = {"speed_limit": 0.5, "rotation_speed_limit": 360, "springs": {"Bang*": {"speed_limit": 2.0}, "X": {"k": 1.0}}}
    assert parse_speed_limits(hair) == {"speed_limit": {"Bang*": 2.0, "*": 0.5}, "rotation_speed_limit_deg": {"*": 360.0}}
    assert parse_speed_limits({}) == {"speed_limit": None, "rotation_speed_limit_deg": None}
    assert "speed_limit" not in build_fields({"k": 10.0})       # left out: the solver's default


@pytest.mark.parametrize("text, fragment", [
    ("[hair]\nspeed_limit = 0", r"hair.speed_limit: 0 is not a speed limit > 0 m/s"),
    ("[hair]\nrotation_speed_limit = -5.0", r"hair.rotation_speed_limit: -5.0 is not a speed limit > 0 degrees/s"),
    ("[hair]\nspeed_limit = nan", r"hair.speed_limit: nan"),
    ("[hair]\nspeed_limit = true", r"hair.speed_limit: True"),
    ('[hair.springs."Bang*"]\nspeed_limit = "fast"', r"hair.springs.Bang\*.speed_limit: 'fast'"),
])
def test_bad_speed_limit_names_the_key(tmp_path, text, fragment):
    p = tmp_path / "swaycam.toml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=fragment):
        load_toml(p)


def test_config_speed_limits_reach_the_built_solver(tmp_path, default_avatar):
    from runtime.rig import AvatarRig
    from solver.build_options import ROTATION_SPEED_LIMIT_DEG, SPEED_LIMIT

    name = default_avatar.springs[0].name
    p = tmp_path / "swaycam.toml"
    p.write_text(TOML.format(name=name))
    cfg = load_toml(p)
    chains = AvatarRig(default_avatar, hair=cfg.hair).chains
    kv, names = chains.sections["chains"], chains.chain_names
    for k, n in enumerate(names):
        assert kv.speed_limit[k] == (math.inf if n == name else 0.5)       # model scale 1
        assert kv.rotation_speed_limit[k] == math.radians(360.0)
    plain = AvatarRig(default_avatar).chains.sections["chains"]
    assert set(plain.speed_limit) == {SPEED_LIMIT}
    assert set(plain.rotation_speed_limit) == {math.radians(ROTATION_SPEED_LIMIT_DEG)}
