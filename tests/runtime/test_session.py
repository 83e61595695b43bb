"""The session: what reads pixels when, every frame reaching the files, and opening/closing
through one exit stack."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from runtime.config import RunConfig
from runtime.session import Session
from tests.conftest import REPO
from tests.render.test_window import display  # noqa: F401 - the Xvfb fixture
from tests.runtime.test_run_e2e import read_video
from tests.runtime.test_session_live import avatar_columns

SIZE = (320, 180)
H264_LEVELS = 3        # mean |difference| of a frame through H.264 yuv420p and back


def test_files_get_every_frame_through_the_readback_thread(tmp_path):
    """Offline, 1 s at 10 fps to a PNG sequence and a video: each frame is read back once,
    on the readback thread while the next one is drawn (headless EGL), and the last one is
    flushed at close with the right content."""
    cfg = RunConfig(source="turn-test", duration=1.0, fps=10, size=SIZE,
                    output=(f"png:{tmp_path}/png", f"video:{tmp_path}/v.mp4"))
    with Session(cfg, say=lambda s: None) as session:
        result = session.run()
        assert session.outputs.needs_pixels
        assert session.renderer.reader is not None and session.renderer.reader.frames == 9   # + the last at close
        assert session.renderer.pixel_reads == result.frames == 10    # one read per frame, no other
        last = session.drawer.read()                                  # the last drawn frame, read now
    pngs = sorted((tmp_path / "png").glob("frame_*.png"))
    assert len(pngs) == 10
    assert np.array_equal(np.asarray(Image.open(pngs[-1])), last)    # the flushed last frame, exactly
    assert not np.array_equal(np.asarray(Image.open(pngs[-2])), last)
    meta, frames = read_video(tmp_path / "v.mp4")
    assert len(frames) == 10 and meta["size"] == SIZE
    assert np.abs(frames[-1].astype(int) - last[..., :3].astype(int)).mean() < H264_LEVELS


def test_a_window_only_run_reads_no_pixels(display, tmp_path):  # noqa: F811 - the fixture
    """Under Xvfb: the window presents from the framebuffer, in compare mode too; only the
    screenshot ('p') reads pixels, once, and it shows the two panes."""
    env = {**os.environ, "DISPLAY": display, "PYTHONPATH": str(REPO)}
    for var in ("PYOPENGL_PLATFORM", "SDL_VIDEO_X11_FORCE_EGL", "SWAYCAM_GL"):
        env.pop(var, None)
    res = subprocess.run([sys.executable, "-m", "tests.runtime.session_window_probe"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["frames"] == out["presented"] == 10 and out["needs_pixels"] is False
    assert out["reads_per_frame"] == [0] * 6 + [1] * 4   # nothing but the screenshot before frame 6
    assert out["pixel_reads"] == 1
    (shot,) = out["screenshots"]
    img = np.asarray(Image.open(tmp_path / shot))
    assert img.shape == (180, 320, 4)
    cols = avatar_columns(img[..., :3])
    assert cols.min() < 80 and cols.max() > 240 and not np.isin(np.arange(150, 170), cols).all()   # two panes


def test_a_failure_while_opening_closes_what_was_opened_in_reverse(tmp_path, monkeypatch):
    from render.egl import EglContext
    from render.renderer import Renderer
    from runtime import session as session_module
    from runtime.pose_inputs import TrackInput
    from runtime.service import ControlService

    closed = []
    for cls, method, name in ((ControlService, "close", "service"), (Renderer, "release", "renderer"),
                              (EglContext, "release", "context"), (TrackInput, "close", "pose input")):
        original = getattr(cls, method)

        def spy(self, *a, _original=original, _name=name, **kw):
            closed.append(_name)
            return _original(self, *a, **kw)

        monkeypatch.setattr(cls, method, spy)

    def failing_outputs(*a, **kw):
        raise OSError(28, "No space left on device", str(tmp_path / "v.mp4"))

    monkeypatch.setattr(session_module, "open_outputs", failing_outputs)
    cfg = RunConfig(source="turn-test", duration=1.0, size=SIZE, output=(f"video:{tmp_path}/v.mp4",),
                    service=True, port=0)
    session = Session(cfg, say=lambda s: None)
    with pytest.raises(OSError, match="No space left"):
        session.open()
    assert closed == ["service", "renderer", "context", "pose input"]
    with pytest.raises(RuntimeError, match="open the session first"):
        session.run()


class _Sink:
    needs_pixels = False

    def __init__(self, fail: str | None = None):
        self.fail, self.closed = fail, False

    def send(self, rgba, t_ns):
        pass

    def close(self):
        self.closed = True
        if self.fail:
            raise OSError(self.fail)


class _Renderer:
    size = (16, 9)


def test_a_sink_failing_at_close_is_an_error_naming_it_and_the_others_still_close():
    """A video writer that cannot finish its file must not pass silently: the output is not complete."""
    from runtime.outputs import Outputs
    from runtime.results import RunError

    a, b, c = _Sink(), _Sink("ffmpeg: broken pipe\nmore"), _Sink()
    out = Outputs([a, b, c], ["window", "video:x.mp4", "png:f"], _Renderer())
    with pytest.raises(RunError, match=r"^output video:x.mp4 failed while closing: ffmpeg: broken pipe$"):
        out.close()
    assert a.closed and b.closed and c.closed
    out.close()                                    # idempotent: nothing raised twice


def test_a_close_during_an_error_logs_the_failure_instead(caplog):
    from runtime.outputs import Outputs

    b = _Sink("disk full")
    with pytest.raises(KeyError):
        with Outputs([b], ["video:y.mp4"], _Renderer()):
            raise KeyError("the run's own error")
    assert b.closed and "output video:y.mp4 failed while closing: disk full" in caplog.text


def test_live_outputs_get_each_frame_as_it_is_drawn(tmp_path):
    """Live (immediate readback): the sinks get the frame just drawn, read once, straight into
    the outputs' buffer; nothing waits in a PBO for the next frame."""
    from render import create_context, Renderer
    from runtime.outputs import OutputSpec, open_outputs
    from tests.render.conftest import head_yaw_world
    from avatars import load_avatar
    from avatars.generate import default_avatar_path

    class Keep:
        needs_pixels = True

        def __init__(self):
            self.frames = []

        def send(self, rgba, t_ns):
            self.frames.append((t_ns, rgba.copy()))

        def close(self):
            pass

    avatar = load_avatar(default_avatar_path())
    with create_context("egl", size=(64, 64)) as ctx, Renderer(ctx, SIZE) as r:
        r.set_avatar(avatar)
        outs = open_outputs([OutputSpec("png", str(tmp_path / "p"))], context=ctx, renderer=r, fps=30, live=True)
        keep = Keep()
        outs.add(keep, "keep")
        assert outs.immediate and r.reader is None
        for k in range(3):
            r.draw(head_yaw_world(avatar, 0.3 * k))
            drawn = r.read_rgba().copy()
            before = r.pixel_reads
            outs.send(wall_ns=k)
            assert r.pixel_reads == before + 1
            assert keep.frames[-1][0] == k and np.array_equal(keep.frames[-1][1], drawn)
        outs.close()
    assert len(keep.frames) == 3 and len(list((tmp_path / "p").glob("frame_*.png"))) == 3
