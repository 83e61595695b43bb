"""The smaller items of issue 34 (finding 9) that a client or the command line meets: a
Content-Length of 10^12 is 413 (the README's status), not 400; ``--output
video:/nonexistent_dir/x.mp4`` is refused naming the folder instead of creating it."""

from __future__ import annotations

import pytest

from runtime.config import RunConfig
from runtime.results import RunError
from runtime.service import ControlService

from .conftest import RecordingController, connect


@pytest.mark.parametrize("length", ["1000000000000", "99999999999999999999", "65537"])
def test_a_huge_content_length_is_413(length):
    ctl = RecordingController()
    with ControlService(ctl, port=0) as s:
        c = connect(s.address[1])
        c.sendall(f"POST /recenter HTTP/1.1\r\nHost: 127.0.0.1:{s.address[1]}\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {length}\r\n\r\n{{}}".encode())
        line = c.recv(4096).split(b"\r\n")[0]
        c.close()
    assert b" 413 " in line, line
    assert ctl.calls == []


def test_an_output_into_a_missing_folder_is_refused(tmp_path):
    from runtime.outputs import plan_outputs

    with pytest.raises(RunError, match="does not exist"):
        plan_outputs([f"video:{tmp_path}/nonexistent_dir/x.mp4"], background="green", display=False, say=print)
    assert not (tmp_path / "nonexistent_dir").exists()
    plan_outputs([f"video:{tmp_path}/x.mp4"], background="green", display=False, say=print)
    assert RunConfig is not None
