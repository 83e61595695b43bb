"""An interrupt (Ctrl-C, SIGTERM, SIGHUP) ends a run between frames: every output holds the
same frames, as many as the run reports (runtime/schedule.sigterm_as_interrupt.deferred)."""

from __future__ import annotations

import os
import signal

import pytest

from runtime.config import RunConfig
from runtime.schedule import sigterm_as_interrupt
from runtime.session import Session
from tests.runtime.test_run_e2e import read_video

SIZE = (160, 90)
#: the frame during which the signal arrives (after the sinks got it, before it is counted)
SIGNAL_AT = 7


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_mid_frame_ends_every_output_on_the_same_frame(tmp_path, signum):
    png_dir = tmp_path / "png"
    cfg = RunConfig(source="turn-test", size=SIZE, fps=20, output=(f"video:{tmp_path}/v.mp4", f"png:{png_dir}"))
    drawn = []

    def on_frame(info, rig):            # runs inside the frame, after the outputs got it
        drawn.append(info.t_ns)
        if len(drawn) == SIGNAL_AT:
            os.kill(os.getpid(), signum)
            drawn.append("after the signal")     # the frame goes on to its end

    old = signal.signal(signal.SIGINT, signal.default_int_handler)   # as an interactive shell starts us
    try:
        with Session(cfg, say=lambda s: None, on_frame=on_frame) as session:
            result = session.run()
    finally:
        signal.signal(signal.SIGINT, old)
    assert result.interrupted and result.signal == signum
    assert drawn[SIGNAL_AT] == "after the signal" and len(drawn) == SIGNAL_AT + 1
    assert result.frames == SIGNAL_AT
    assert len(list(png_dir.glob("frame_*.png"))) == SIGNAL_AT
    _, frames = read_video(tmp_path / "v.mp4")
    assert len(frames) == SIGNAL_AT


def test_a_second_signal_interrupts_at_once():
    sig = sigterm_as_interrupt()
    reached = []
    with sig:
        with pytest.raises(KeyboardInterrupt):
            with sig.deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                reached.append(1)                    # deferred
                os.kill(os.getpid(), signal.SIGTERM)  # a frame that hangs: the second one goes through
                reached.append(2)
    assert reached == [1] and sig.received == signal.SIGTERM


def test_an_ignored_sigint_stays_ignored():
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with sigterm_as_interrupt():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        with_default = signal.signal(signal.SIGINT, signal.default_int_handler)
        with sigterm_as_interrupt() as sig:
            assert signal.getsignal(signal.SIGINT) == sig._handler
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        del with_default
    finally:
        signal.signal(signal.SIGINT, old)


def test_a_signal_during_a_render_thread_command_ends_the_run(tmp_path):
    """A command (POST /avatar's swap, ...) runs between frames: the signal waits for its end,
    then the run stops; the command's caller gets its result."""
    cfg = RunConfig(source="turn-test", size=SIZE, fps=20, output=(f"video:{tmp_path}/v.mp4",))
    done = []

    def command():
        os.kill(os.getpid(), signal.SIGTERM)
        done.append("after the signal")
        return 42

    def on_frame(info, rig):
        if not done and session.metrics.frames == SIGNAL_AT - 1:     # this frame is counted after it
            done.append(session.commands.submit(command))

    with Session(cfg, say=lambda s: None, on_frame=on_frame) as session:
        result = session.run()
    assert result.interrupted and result.signal == signal.SIGTERM
    assert done[1] == "after the signal" and done[0].result(timeout=0) == 42
    assert result.frames == SIGNAL_AT
    _, frames = read_video(tmp_path / "v.mp4")
    assert len(frames) == SIGNAL_AT


def test_a_command_whose_caller_gave_up_does_not_run():
    from runtime.commands import CommandQueue, wait_for

    q, ran = CommandQueue(), []
    with pytest.raises(TimeoutError):
        wait_for(q.submit(lambda: ran.append(1)), 0.01)
    q.drain()
    assert ran == []
