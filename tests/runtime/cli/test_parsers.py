"""Every ``swaycam`` command follows the one convention of runtime/cli/args.py: each module is
registered (none skipped), ``--help`` works, usage errors are one line ``swaycam COMMAND: ...``
with exit code 2, runtime failures exit 1 the same way, and the shared option types check
their ranges."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from runtime import cli
from runtime.cli import args as cli_args
from runtime.cli import main

CLI_DIR = Path(cli.__file__).parent
COMMANDS = ("run", "track", "replay", "check-fps", "inspect", "metrics", "matrix", "generate", "bench", "hair",
            "compare-render", "calibrate", "fuzz", "soak")
BENCH_TARGETS = ("solver", "render", "tracker", "loop", "tryon", "vmc", "panel", "all")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_command_module_is_listed_and_registered():
    modules = {f"runtime.cli.{p.stem}" for p in CLI_DIR.glob("*.py")} - {
        "runtime.cli.__init__", "runtime.cli.__main__", "runtime.cli.args"}
    assert set(cli.COMMAND_MODULES) == modules
    ap = cli.build_parser()
    assert tuple(_subparsers(ap)) == COMMANDS
    assert tuple(_subparsers(_subparsers(ap)["bench"])) == BENCH_TARGETS


def test_a_listed_module_that_fails_to_import_is_an_error(monkeypatch):
    monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, "runtime.cli.no_such_command"))
    with pytest.raises(ModuleNotFoundError, match="runtime.cli.no_such_command"):
        cli.build_parser()


def _all_parsers():
    ap = cli.build_parser()
    out = [("", ap)]
    for name, p in _subparsers(ap).items():
        out.append((name, p))
        if name == "bench":
            out += [(f"bench {t}", q) for t, q in _subparsers(p).items()]
    return out


@pytest.mark.parametrize("command", ["", *COMMANDS, *(f"bench {t}" for t in BENCH_TARGETS)])
def test_help_of_every_command(command, capsys):
    assert main([*command.split(), "--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"usage: swaycam {command}".rstrip()) and err == ""


def _sentence_case(text: str) -> bool:
    """Starts like a phrase in lower case (acronyms and names such as TOML or MediaPipe allowed)."""
    first = text.split()[0]
    return not (first[0].isupper() and first[1:].islower())


def test_help_style_is_the_same_everywhere():
    """Every command has a one-line summary (lower case, no final period) and a description;
    every option says what it does, in lower case."""
    for name, p in _all_parsers():
        assert p.description, name
        assert isinstance(p.formatter_class(prog="x"), cli_args.HelpFormatter), name
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for choice in a._choices_actions:
                    assert choice.help and _sentence_case(choice.help), (name, choice.dest, choice.help)
                    assert "\n" not in choice.help and not choice.help.endswith("."), (name, choice.help)
            else:
                assert a.help and _sentence_case(a.help), (name, a.dest, a.help)


def test_no_command_prints_the_command_list_and_exits_2(capsys):
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "COMMAND" in err and "generate" in err


@pytest.mark.parametrize("argv, prog, message", [
    (["nope"], "swaycam", "argument COMMAND: invalid choice: 'nope'"),
    (["run", "--fps", "0"], "swaycam run", "argument --fps: 0 is outside [1, 1000]"),
    (["run", "--fps", "fast"], "swaycam run", "argument --fps: 'fast' is not a number"),
    (["run", "--size", "10x10"], "swaycam run", "argument --size: expected WxH between 16x16 and 7680x4320"),
    (["run", "--port", "70000"], "swaycam run", "argument --port: 70000 is outside [0, 65535]"),
    (["run", "--port", "80.5"], "swaycam run", "argument --port: '80.5' is not a whole number"),
    (["run", "--duration", "-1"], "swaycam run", "argument --duration: -1 is outside (0, 31536000]"),
    (["run", "--avatar", "/no/such.vrm"], "swaycam run", "argument --avatar: '/no/such.vrm' does not exist"),
    (["run", "--config", "/no/such.toml"], "swaycam run", "argument --config: '/no/such.toml' does not exist"),
    (["run", "--face-model", "/"], "swaycam run", "argument --face-model: '/' is not a file"),
    (["run", "--solver", "magic"], "swaycam run", "argument --solver: invalid choice: 'magic'"),
    (["run", "--background", "plaid"], "swaycam run", "'plaid' is not 'transparent', 'green' or '#rrggbb'"),
    (["run", "--output", "video:{tmp}/a.webm"], "swaycam run", "video files are H.264"),
    (["track"], "swaycam track", "the following arguments are required: SOURCE"),
    (["track", "0", "--max-frames", "0"], "swaycam track", "argument --max-frames: 0 is outside >= 1"),
    (["track", "0", "--model", "/no/model.task"], "swaycam track", "'/no/model.task' does not exist"),
    (["track", "{tmp}/a.png"], "swaycam track", "give --out POSES.jsonl and/or --preview OUT"),
    (["replay", "turn-test"], "swaycam replay", "the following arguments are required: --fps"),
    (["replay", "turn-test", "--fps", "30", "--jitter", "1"], "swaycam replay", "argument --jitter: 1 is outside [0, 1)"),
    (["replay", "{tmp}/none.jsonl", "--fps", "30"], "swaycam replay", "argument track: '{tmp}/none.jsonl' does not exist"),
    (["check-fps"], "swaycam check-fps", "the following arguments are required: track"),
    (["check-fps", "turn-test", "--avatar", "medium"], "swaycam check-fps", "argument --avatar: 'medium' does not exist"),
    (["inspect", "/no/such.vrm"], "swaycam inspect", "argument AVATAR: '/no/such.vrm' does not exist"),
    (["metrics", "--gravity", "inf"], "swaycam metrics", "argument --gravity: inf is not a finite number"),
    (["metrics", "--gravity", "-5"], "swaycam metrics", "argument --gravity: -5 is outside >= 0"),
    (["metrics", "--track", "{tmp}"], "swaycam metrics", "is not a file"),
    (["generate", "extra"], "swaycam generate", "unrecognized arguments: extra"),
    (["bench"], "swaycam bench", "the following arguments are required: TARGET"),
    (["bench", "gpu"], "swaycam bench", "argument TARGET: invalid choice: 'gpu'"),
    (["bench", "solver", "--samples", "1"], "swaycam bench solver", "argument --samples: 1 is outside >= 2"),
    (["bench", "render", "--size", "64by36"], "swaycam bench render", "argument --size: expected WxH"),
    (["bench", "render", "--frames", "0"], "swaycam bench render", "argument --frames: 0 is outside >= 1"),
    (["bench", "tracker", "--frames", "5"], "swaycam bench tracker", "argument --frames: 5 is outside >= 6"),
    (["bench", "tracker", "--clip", "{tmp}/none.mp4"], "swaycam bench tracker", "does not exist"),
    (["bench", "loop", "--size", "8x8"], "swaycam bench loop", "argument --size: expected WxH"),
    (["bench", "all", "--frames", "3"], "swaycam bench all", "unrecognized arguments: --frames 3"),
])
def test_usage_errors_are_one_line_and_exit_2(argv, prog, message, tmp_path, capsys):
    (tmp_path / "a.png").write_bytes(b"")
    argv = [a.format(tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith(f"{prog}: ") and message.format(tmp=tmp_path) in err, err


@pytest.mark.parametrize("argv, prog, message", [
    (["inspect", "{tmp}/not.vrm"], "swaycam inspect", "not.vrm"),
    (["replay", "{tmp}/not.jsonl", "--fps", "30"], "swaycam replay", "not.jsonl"),
    (["check-fps", "turn-test", "--avatar", "{tmp}/not.vrm"], "swaycam check-fps", "not.vrm"),
])
def test_runtime_failures_are_one_line_and_exit_1(argv, prog, message, tmp_path, capsys):
    (tmp_path / "not.vrm").write_text("not an avatar")
    (tmp_path / "not.jsonl").write_text("not a pose track\n")
    assert main([a.format(tmp=tmp_path) for a in argv]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith(f"{prog}: ") and message in err, err


def test_metrics_gravity_is_a_magnitude():
    """--gravity G pulls straight down (the rows use (0, -G, 0)): 0 is allowed, a negative G
    is refused above, so a plot name never drops a sign."""
    ap = cli.build_parser()
    assert ap.parse_args(["metrics", "--gravity", "0"]).gravity == 0.0
    assert ap.parse_args(["metrics", "--gravity", "9.81"]).gravity == 9.81


def test_inspect_json_is_one_document(capsys):
    assert main(["inspect", "default", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["meta"]["name"] == "swaycam default"


# ---------------------------------------------------------------------------- option types

def _rejects(convert, text: str) -> str:
    with pytest.raises(argparse.ArgumentTypeError) as info:
        convert(text)
    return str(info.value)


def test_number_types_state_their_range():
    assert cli_args.positive(1000)("1000") == 1000.0 and cli_args.fraction("0") == 0.0
    assert _rejects(cli_args.positive(1000), "0") == "0 is outside (0, 1000]"
    assert _rejects(cli_args.positive(), "-2") == "-2 is outside > 0"
    assert _rejects(cli_args.fraction, "1") == "1 is outside [0, 1)"
    assert _rejects(cli_args.number(), "nan") == "nan is not a finite number"
    assert _rejects(cli_args.count(), "2.5") == "'2.5' is not a whole number"
    assert cli_args.count(0, 10)("0") == 0 and isinstance(cli_args.count()("3"), int)


def test_size_and_path_types(tmp_path):
    assert cli_args.size("640x360") == (640, 360) and cli_args.size(" 16 X 16 ") == (16, 16)
    assert "between 16x16 and 7680x4320" in _rejects(cli_args.size, "7681x100")
    f = tmp_path / "a.vrm"
    f.write_text("x")
    assert cli_args.existing_file(str(f)) == str(f) and cli_args.existing_dir(str(tmp_path)) == str(tmp_path)
    assert _rejects(cli_args.existing_dir, str(f)) == f"{str(f)!r} is not a folder"
    assert cli_args.avatar_spec("layered") == "layered" and cli_args.avatar_spec(str(f)) == str(f)
    assert cli_args.track_spec("turn-test") == "turn-test"
    assert _rejects(cli_args.track_spec, "turn") == "'turn' does not exist (did you mean 'turn-test'?)"
    assert _rejects(cli_args.track_spec, "poses.jsonl") == "'poses.jsonl' does not exist"


def test_json_text_handles_dataclasses_paths_and_numpy():
    from dataclasses import dataclass

    import numpy as np

    @dataclass
    class Row:
        label: str
        value: float

    text = cli_args.json_text({"rows": [Row("a", np.float64(0.5))], "path": Path("/x"), "a": np.arange(2)})
    assert json.loads(text) == {"rows": [{"label": "a", "value": 0.5}], "path": "/x", "a": [0, 1]}
    assert text.endswith("}\n")


def test_the_console_script_freezes_what_is_left_for_the_exit():
    """console_main leaves the interpreter's last collections nothing to walk (its comment);
    main, which tests and other callers use in-process, freezes nothing."""
    import subprocess
    import sys

    from tests.conftest import REPO

    probe = ("import gc, sys\nfrom runtime.cli import console_main, main\n"
             "main(['--help']); before = gc.get_freeze_count()\n"
             "sys.argv = ['swaycam', 'inspect', '--help']; code = console_main()\n"
             "print(before, gc.get_freeze_count() > 1000, code)")
    r = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "0 True 0"
