"""Issue 34 item 10, the command-line findings: ``hair metrics`` / ``hair bench`` errors are
one line naming the command (no traceback), a style that cannot be fitted is exit code 1
(never ``[]`` and 0), ``hair fit --avatar default`` is the generated avatar like every other
command's ``--avatar``, and ``metrics`` keeps one row per file when two files share a name."""

from __future__ import annotations

import json
import shutil

from avatars.generate import default_avatar_path
from runtime.cli import main
from runtime.cli.metrics import _avatars
from tests.conftest import asset


def test_hair_metrics_with_a_missing_avatar_is_one_line_naming_the_command(tmp_path, capsys):
    missing = tmp_path / "nope.vrm"
    assert main(["hair", "metrics", "short02", "--avatar", str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("swaycam hair metrics: ") and "nope.vrm" in err and "Traceback" not in err
    assert main(["hair", "bench", "no-such-style"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("swaycam hair bench: ") and "no hair style named 'no-such-style'" in err


def test_hair_metrics_of_a_style_that_cannot_be_fitted_exits_1_without_an_empty_table(capsys):
    robot = str(asset("vrm", "debug_robot.vrm"))        # no mesh skinned to the head: the fit fails
    assert main(["hair", "metrics", "short02", "--avatar", robot, "--json"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and "short02: " in out.err and "debug_robot.vrm: no drawn mesh is skinned to the head" in out.err


def test_hair_fit_accepts_default_as_every_command_does(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path / "cache"))
    assert main(["hair", "fit", "short02", "--avatar", "default", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["hair_vertices"] == 2061


def test_two_files_with_one_avatar_name_are_two_rows(tmp_path):
    a, b = tmp_path / "a" / "take.vrm", tmp_path / "b.vrm"
    a.parent.mkdir()
    shutil.copy(default_avatar_path(), a)
    shutil.copy(default_avatar_path(), b)
    rows, _ = _avatars([str(a), str(b), "default"])
    assert sorted(rows) == ["swaycam default", "swaycam default (b.vrm)", "swaycam default (take.vrm)"]
    from runtime.cli.metrics import _row_names

    c = tmp_path / "c" / "take.vrm"        # the same file name in two folders: the whole path
    assert _row_names({str(a): "x", str(c): "x", "layered": None}) == {
        str(a): f"x ({a})", str(c): f"x ({c})", "layered": "swaycam layered"}
    assert _row_names({str(b): None, str(a): "solo"}) == {str(b): "b", str(a): "solo"}


def test_every_command_and_subcommand_names_itself_in_its_errors():
    """The sibling of the hair traceback: each parser in the tree sets ``command_prog``
    (main() prints errors under it), so no command's error path can raise AttributeError."""
    import argparse

    from runtime.cli import build_parser

    def walk(parser):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    yield child
                    yield from walk(child)

    parsers = list(walk(build_parser()))
    assert len(parsers) > 20
    missing = [p.prog for p in parsers if p.get_default("command_prog") != p.prog]
    assert missing == []


def test_hair_bench_of_a_style_that_cannot_be_fitted_exits_1_without_a_timing_row(capsys):
    """The sibling of hair metrics': it printed a row of 0 chains and exited 0."""
    robot = str(asset("vrm", "debug_robot.vrm"))
    assert main(["hair", "bench", "short02", "--avatar", robot, "--repeats", "1", "--json"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and "swaycam hair bench: short02: " in out.err and "no drawn mesh is skinned" in out.err
