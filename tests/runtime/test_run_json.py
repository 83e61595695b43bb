"""`swaycam run --json`: stdout is exactly one JSON document (the run's notes go to stderr),
and a config file may name the generated avatars."""

from __future__ import annotations

import json

from runtime.cli import main

SMALL = ["--size", "160x90", "--duration", "0.2", "--fps", "10", "--source", "turn-test"]


def test_json_stdout_is_one_document(tmp_path, capsys):
    rc = main(["run", *SMALL, "--output", f"png:{tmp_path / 'frames'}", "--json"])
    out, err = capsys.readouterr()
    assert rc == 0
    doc = json.loads(out)                       # the whole of stdout, nothing else
    assert doc["frames"] == 2 and doc["outputs"] == [f"png:{tmp_path / 'frames'}"]
    assert f"writing png to {tmp_path / 'frames'}" in err


def test_a_config_file_may_name_the_layered_avatar(tmp_path, capsys):
    cfg = tmp_path / "run.toml"
    cfg.write_text('avatar = "layered"\n')
    rc = main(["run", *SMALL, "--config", str(cfg), "--output", f"png:{tmp_path / 'f'}", "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert json.loads(out)["frames"] == 2
    assert len(list((tmp_path / "f").glob("frame_*.png"))) == 2
