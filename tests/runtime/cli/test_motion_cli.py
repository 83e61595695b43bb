"""``--motion`` on the commands and ``swaycam inspect CLIP`` (issue 15 item 5)."""

from __future__ import annotations

import json

from runtime.cli import main
from tests.avatars.clip_files import bvh_text
from tests.conftest import asset

UAL = ("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")


def test_inspect_a_clip_file(capsys):
    assert main(["inspect", str(asset("anim", "Jump.vrma")), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    (c,) = info["clips"]
    assert c["name"] == "Jump" and c["keys"] == 119 and c["missing_required_bones"] == []
    assert any("specVersion" in n for n in c["notes"]) and len(c["bones"]) == 51
    assert main(["inspect", f"{asset(*UAL)}#Roll+Walk_Loop"]) == 0
    out = capsys.readouterr().out
    assert "Roll: 1.458 s, 36 keys (24/s), 52 bones, missing required: none" in out and "Walk_Loop" in out
    assert main(["inspect", str(asset(*UAL)), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["clips"]) == 46


def test_inspect_names_the_line_of_a_broken_bvh(tmp_path, capsys):
    text = bvh_text(frames=3).splitlines()
    k = text.index("MOTION")
    text[k + 4] += " 7"
    p = tmp_path / "bad.bvh"
    p.write_text("\n".join(text) + "\n")
    assert main(["inspect", str(p)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"swaycam inspect: {p}: line {k + 5}: frame 1 has ")


def test_check_fps_with_a_clip(capsys):
    assert main(["check-fps", "turn-test", "--motion", f"{asset(*UAL)}#Jog_Fwd_Loop", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["identical"] is True


def test_metrics_with_clips_reports_a_row_per_clip(tmp_path, capsys):
    out = tmp_path / "m"
    assert main(["metrics", "--avatar", "default", "--solver", "rest-shape", "--no-fps-check",
                 "--motion", f"{asset(*UAL)}#Dance_Loop,Jump_Start+Jump_Loop", "--out", str(out)]) == 0
    rows = json.loads((out / "hair_metrics.json").read_text())
    assert [r["avatar"] for r in rows] == ["swaycam default · Dance_Loop", "swaycam default · Jump_Start+Jump_Loop"]
    assert all(r["link_max_depth_mm"] < 1.0 for r in rows)
    assert "body motion Dance_Loop, Jump_Start+Jump_Loop" in capsys.readouterr().out


def test_motion_usage_errors(capsys):
    assert main(["replay", "turn-test", "--fps", "30", "--motion-speed", "0"]) == 2
    assert "--motion-speed: 0 is outside" in capsys.readouterr().err
    assert main(["replay", "turn-test", "--fps", "30", "--motion", f"{asset(*UAL)}#Moonwalk"]) == 1
    assert "no animation named 'Moonwalk'" in capsys.readouterr().err
    assert main(["metrics", "--track", str(asset("anim", "Jump.vrma")), "--motion", "idle"]) == 2
    assert "--track and --motion" in capsys.readouterr().err
