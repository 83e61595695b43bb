"""An output path that cannot be written fails before the work starts (issue 16: `replay
--dump /proc/x.npz` replayed everything, then said the path was unwritable): every command
that writes a file checks it first, with one line ``swaycam COMMAND: cannot write PATH: why``
and exit code 1, and the work is never started."""

from __future__ import annotations

import errno

import pytest

from runtime.cli import main
from runtime.writable import check_file, check_folder


def _forbidden(*_args, **_kwargs):
    raise AssertionError("the work started before the output path was checked")


@pytest.fixture
def blocker(tmp_path):
    """A file where an output's folder would have to be."""
    f = tmp_path / "file"
    f.write_text("in the way")
    return f


def _fails_first(argv, capsys) -> str:
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err.rstrip("\n")


def test_replay_dump_is_checked_before_the_replay(monkeypatch, blocker, capsys):
    monkeypatch.setattr("runtime.replay.replay", _forbidden)
    err = _fails_first(["replay", "turn-test", "--fps", "30", "--dump", "/proc/x.npz"], capsys)
    assert err == "swaycam replay: cannot write /proc/x.npz: No such file or directory"
    err = _fails_first(["replay", "turn-test", "--fps", "30", "--dump", f"{blocker}/states.npz"], capsys)
    assert err == f"swaycam replay: cannot write {blocker}/states.npz: {blocker} is a file, not a folder"
    # the suffix numpy adds is the file checked: "states" is written as states.npz
    (blocker.parent / "states.npz").mkdir()
    err = _fails_first(["replay", "turn-test", "--fps", "30", "--dump", str(blocker.parent / "states")], capsys)
    assert err == (f"swaycam replay: cannot write {blocker.parent / 'states.npz'}: is a folder; give a file name "
                   "such as states.npz")


def test_metrics_out_is_checked_before_measuring(monkeypatch, blocker, capsys):
    monkeypatch.setattr("runtime.cli.metrics._avatars", _forbidden)
    err = _fails_first(["metrics", "--out", str(blocker)], capsys)
    assert err == f"swaycam metrics: cannot write {blocker}: exists and is not a folder"
    err = _fails_first(["metrics", "--out", f"{blocker}/report"], capsys)
    assert err == f"swaycam metrics: cannot write {blocker}/report: {blocker} is a file, not a folder"


@pytest.mark.parametrize("target", ["solver", "all"])
def test_bench_out_is_checked_before_the_benchmark(target, monkeypatch, blocker, capsys):
    from runtime.cli import bench

    for name in bench.MEASURE:
        monkeypatch.setitem(bench.MEASURE, name, _forbidden)
    err = _fails_first(["bench", target, "--out", f"{blocker}/bench.json"], capsys)
    assert err == f"swaycam bench {target}: cannot write {blocker}/bench.json: {blocker} is a file, not a folder"


def test_compare_render_out_is_checked_before_drawing(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr("render.eval.compare.compare_cases", _forbidden)
    err = _fails_first(["compare-render", "default", "--out", str(tmp_path)], capsys)
    assert err == f"swaycam compare-render: cannot write {tmp_path}: is a folder, not a file"


def test_calibrate_config_is_checked_before_collecting(monkeypatch, blocker, capsys):
    monkeypatch.setattr("runtime.cli.calibrate.calibrate", _forbidden)
    err = _fails_first(["calibrate", "turn-test", "--config", f"{blocker}/swaycam.toml"], capsys)
    assert err == f"swaycam calibrate: cannot write {blocker}/swaycam.toml: {blocker} is a file, not a folder"


def test_hair_fit_out_is_checked_before_fitting(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr("avatars.tryon.cache.cached_try_on", _forbidden)
    err = _fails_first(["hair", "fit", "short02", "--out", str(tmp_path)], capsys)
    assert err == f"swaycam hair fit: cannot write {tmp_path}: is a folder, not a file"
    err = _fails_first(["hair", "fit", "short02", "--out", "/proc/x.vrm"], capsys)
    assert err == "swaycam hair fit: cannot write /proc/x.vrm: No such file or directory"


def test_run_record_is_checked_before_anything_loads(monkeypatch, blocker, capsys):
    monkeypatch.setattr("runtime.session.Session.open", _forbidden)
    err = _fails_first(["run", "--source", "0", "--record", f"{blocker}/poses.jsonl", "--output",
                        f"png:{blocker.parent / 'frames'}"], capsys)
    assert err == f"swaycam run: cannot write {blocker}/poses.jsonl: {blocker} is a file, not a folder"


# ---------------------------------------------------------------------------- runtime.writable

def test_check_file_creates_its_folder_and_leaves_nothing(tmp_path):
    p = tmp_path / "a" / "b" / "states.npz"
    assert check_file(p) == p
    assert p.parent.is_dir() and list(p.parent.iterdir()) == []     # the probe left no file
    p.write_bytes(b"kept")
    assert check_file(p) == p and p.read_bytes() == b"kept"         # an existing file is not truncated


def test_check_file_and_folder_name_the_path_and_the_reason(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(IsADirectoryError) as e:
        check_file(tmp_path, folder_reason="is a folder; give a file name")
    assert (e.value.filename, e.value.strerror) == (str(tmp_path), "is a folder; give a file name")
    with pytest.raises(NotADirectoryError) as e:
        check_folder(f)
    assert (e.value.errno, e.value.filename, e.value.strerror) == (errno.ENOTDIR, str(f), "exists and is not a folder")
    assert check_folder(tmp_path / "new" / "dir").is_dir()
