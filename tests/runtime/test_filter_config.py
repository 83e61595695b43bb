"""``[filter]`` max_rate_deg_s and confirm_frames: the detection gate's settings (issue 34
item 10) from a config file into the pose filter; bad values name the key."""

from __future__ import annotations

import re

import pytest

from runtime.config import load_toml
from runtime.errors import ConfigError
from runtime.pose_inputs.open import _pose_options


def test_the_gate_settings_reach_the_pose_filter(tmp_path):
    p = tmp_path / "sw.toml"
    p.write_text("[filter]\nmax_rate_deg_s = 600\nconfirm_frames = 3\n")
    opts = _pose_options(load_toml(p))
    assert (opts.max_rate_deg_s, opts.confirm_frames) == (600.0, 3)
    p.write_text("[filter]\nextrapolate = true\n")
    opts = _pose_options(load_toml(p))
    assert (opts.max_rate_deg_s, opts.confirm_frames) == (1000.0, 2)      # the defaults


@pytest.mark.parametrize("line, message", [
    ("max_rate_deg_s = 0", "filter.max_rate_deg_s: 0 is not a number of degrees per second > 0"),
    ("max_rate_deg_s = true", "filter.max_rate_deg_s: True is not a number"),
    ("confirm_frames = 0", "filter.confirm_frames: 0 is not a whole number in [1, 30]"),
    ("confirm_frames = 2.5", "filter.confirm_frames: 2.5 is not a whole number"),
    ("confirm = 2", "filter.confirm: unknown setting (known: extrapolate, max_rate_deg_s, confirm_frames)"),
])
def test_bad_gate_settings_name_the_key(tmp_path, line, message):
    p = tmp_path / "sw.toml"
    p.write_text(f"[filter]\n{line}\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_toml(p)
