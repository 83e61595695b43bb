"""A mistyped name gets a "did you mean" (issue 16: `--source turn-tset` said only "video file
turn-tset does not exist"): the built-in sources, tracks and avatars, the --motion keywords,
clip names inside a file and hairstyle names."""

from __future__ import annotations

import pytest

from avatars.clips import ClipError, load_clips
from avatars.errors import did_you_mean
from runtime.cli import main
from runtime.rig.motion import load_motion
from tests.conftest import asset

UAL = ("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")


def test_did_you_mean_names_the_closest_choice_or_nothing():
    assert did_you_mean("turn-tset", ["turn-test"]) == " (did you mean 'turn-test'?)"
    assert did_you_mean("defualt", ["default", "layered"]) == " (did you mean 'default'?)"
    assert did_you_mean("clip.mp4", ["turn-test"]) == ""
    assert did_you_mean("x", []) == ""


def test_run_source_turn_tset(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--size", "160x90", "--duration", "0.2", "--output", f"png:{tmp_path / 'f'}"]
    assert main([*argv, "--source", "turn-tset"]) == 1
    assert capsys.readouterr().err == "swaycam run: video file turn-tset does not exist (did you mean 'turn-test'?)\n"
    assert main([*argv, "--source", "clip.mp4"]) == 1                 # nothing close: no guess
    assert capsys.readouterr().err == "swaycam run: video file clip.mp4 does not exist\n"


@pytest.mark.parametrize("argv, message", [
    (["replay", "turn-tset", "--fps", "30"], "argument track: 'turn-tset' does not exist (did you mean 'turn-test'?)"),
    (["check-fps", "turn_test"], "argument track: 'turn_test' does not exist (did you mean 'turn-test'?)"),
    (["run", "--avatar", "defualt"], "argument --avatar: 'defualt' does not exist (did you mean 'default'?)"),
    (["metrics", "--avatar", "layerd"], "argument --avatar: 'layerd' does not exist (did you mean 'layered'?)"),
])
def test_builtin_names_on_the_command_line(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    prog = " ".join(["swaycam", argv[0]])
    assert capsys.readouterr().err == f"{prog}: {message} (see '{prog} --help')\n"


def test_motion_keywords():
    with pytest.raises(ClipError) as e:
        load_motion("idel")
    assert str(e.value) == "idel: not a clip file (known: .vrma, .glb, .gltf, .vrm, .bvh) (did you mean 'idle'?)"
    with pytest.raises(ClipError) as e:
        load_motion("dance.vrma")                                    # a file name: no keyword guessed
    assert str(e.value) == "dance.vrma: file does not exist"


def test_clip_names_inside_a_file():
    jump = asset("anim", "Jump.vrma")
    with pytest.raises(ClipError) as e:
        load_clips(f"{jump}#Jmp")
    assert str(e.value) == f"{jump}: animations: no animation named 'Jmp' (the file has: 'Jump') (did you mean 'Jump'?)"
    with pytest.raises(ClipError) as e:
        load_clips(f"{asset(*UAL)}#Walk_Lop")
    assert str(e.value).endswith("(did you mean 'Walk_Loop'?)")


def test_hairstyle_names(capsys):
    assert main(["hair", "fit", "bobb01"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("swaycam hair fit: bobb01: no hair style named 'bobb01' in ")
    assert err.endswith(" (did you mean 'bob01'?)\n") and err.count("\n") == 1
