"""Output sinks: video file, PNG sequence and snapshot, virtual camera, window (no GL needed
except where noted)."""

from __future__ import annotations

import platform

import numpy as np
import pytest
from PIL import Image

import render
from render.sinks import BackgroundWriter, install_hint

W, H = 64, 48
#: mean channel difference (0..255) of a decoded H.264 frame from the frame sent (flat colours)
VIDEO_MEAN_DIFF = 2.0
#: chroma levels our I420 may be off the BT.601 formula of a block's mean (integer rounding twice)
CHROMA_LEVELS = 1.5


def frames(n, w=W, h=H):
    """Frames whose colour encodes their index (red ramps), alpha half transparent on the left."""
    out = []
    for k in range(n):
        f = np.zeros((h, w, 4), np.uint8)
        f[..., 0] = (k * 8) % 256
        f[..., 1] = 100
        f[..., 3] = 255
        f[:, : w // 2, 3] = 128
        out.append(f)
    return out


def read_video(path):
    import imageio_ffmpeg

    gen = imageio_ffmpeg.read_frames(str(path))
    meta = gen.__next__()
    imgs = [np.frombuffer(b, np.uint8).reshape(meta["size"][1], meta["size"][0], 3) for b in gen]
    return meta, imgs


def test_mp4_reads_back_with_frame_count_size_and_fps(tmp_path):
    path = tmp_path / "out.mp4"
    with render.VideoFileSink(path, 24, (W, H)) as sink:
        for k, f in enumerate(frames(30)):
            sink.send(f, k * 41_666_667)
    meta, imgs = read_video(path)
    assert meta["size"] == (W, H)
    assert meta["fps"] == pytest.approx(24.0)
    assert len(imgs) == 30 == sink.frames
    assert abs(int(imgs[10][H // 2, W - 4, 0]) - 80) <= 6  # colour survives H.264 + yuv420p


def test_mp4_timestamp_pacing_fills_gaps_and_drops_duplicates(tmp_path):
    path = tmp_path / "paced.mp4"
    fs = frames(4)
    fps = 10
    ns = 1_000_000_000 // fps
    with render.VideoFileSink(path, fps, (W, H), pace="timestamps") as sink:
        sink.send(fs[0], 5 * ns)
        sink.send(fs[1], 5 * ns + ns // 4)   # slot 0 taken, less than a slot early: slot 1
        sink.send(fs[2], 5 * ns + ns // 2)   # slot 0 taken, slot 1 too: dropped
        sink.send(fs[3], 8 * ns)            # slot 2 repeats frame 1
    meta, imgs = read_video(path)
    assert len(imgs) == sink.frames == 4
    means = [float(im.mean()) for im in imgs]
    want = [float(fs[k][..., :3].mean()) for k in (0, 1, 1, 3)]
    assert np.allclose(means, want, atol=3.0)


def test_mp4_timestamp_pacing_keeps_every_frame_of_a_jittery_live_run(tmp_path):
    """Frames at the rate with their times jittered by up to 0.6 slot (live frames phase-
    locked to a camera start up to half a period early): each one is written once, in
    order, none repeated or dropped (rounding alone dropped the early ones and repeated
    their neighbours)."""
    path = tmp_path / "jitter.mp4"
    fps, n = 10, 12
    ns = 1_000_000_000 // fps
    jitter = [0.0, -0.6, 0.3, -0.55, 0.0, 0.45, -0.6, 0.1, -0.3, 0.4, -0.6, 0.0]
    with render.VideoFileSink(path, fps, (W, H), pace="timestamps") as sink:
        for k in range(n):
            sink.send(frames(n)[k], int((k + jitter[k]) * ns))
    assert sink.frames == n


def test_video_sink_rejects_odd_sizes_and_wrong_frames(tmp_path):
    with pytest.raises(ValueError, match="even"):
        render.VideoFileSink(tmp_path / "odd.mp4", 30, (65, 48))
    with render.VideoFileSink(tmp_path / "x.mp4", 30, (W, H)) as sink:
        with pytest.raises(ValueError):
            sink.send(np.zeros((H, W + 2, 4), np.uint8), 0)
    with pytest.raises(ValueError, match="x264 preset 'turbo' is not one of ultrafast, superfast"):
        render.VideoFileSink(tmp_path / "p.mp4", 30, (W, H), preset="turbo")


@pytest.mark.parametrize("preset", ["ultrafast", "veryfast"])
def test_video_frames_go_to_ffmpeg_as_yuv420p_in_the_file_colours(tmp_path, preset):
    """Frames are converted here (BT.601 limited range, as ffmpeg's own rgba input was) and
    decode back to the sent colours, whatever the preset."""
    import cv2

    fs = frames(6)
    path = tmp_path / f"{preset}.mp4"
    with render.VideoFileSink(path, 30, (W, H), preset=preset) as sink:
        for f in fs:
            sink.send(f, 0)
    cap = cv2.VideoCapture(str(path))
    got = []
    while True:
        ok, img = cap.read()
        if not ok:
            break
        got.append(img[..., ::-1])
    assert len(got) == len(fs)
    for a, b in zip(got, fs):
        assert np.abs(a.astype(int) - b[..., :3]).mean() < VIDEO_MEAN_DIFF


def test_png_sequence_keeps_alpha_and_snapshot_round_trips(tmp_path):
    fs = frames(3)
    with render.PngSequenceSink(tmp_path / "seq") as sink:
        for k, f in enumerate(fs):
            sink.send(f, k)
    files = sorted((tmp_path / "seq").glob("*.png"))
    assert [p.name for p in files] == ["frame_000000.png", "frame_000001.png", "frame_000002.png"]
    for p, f in zip(files, fs):
        assert np.array_equal(np.asarray(Image.open(p)), f)
    p = render.snapshot(tmp_path / "snap" / "a.png", fs[1])
    assert np.array_equal(np.asarray(Image.open(p)), fs[1])


def test_background_writer_reports_worker_errors():
    def boom(item):
        raise OSError("disk full")

    w = BackgroundWriter(boom, name="test-writer")
    w.put(1)
    with pytest.raises(RuntimeError, match="disk full"):
        w.close()


class RecordingBackend:
    """A pyvirtualcam backend that keeps what it receives."""

    instances: list["RecordingBackend"] = []

    def __init__(self, *, width, height, fps, fourcc, device, **kw):
        self.width, self.height, self.fps, self.fourcc = width, height, fps, fourcc
        self._device = device or "test-cam"
        self.frames: list[np.ndarray] = []
        self.closed = False
        RecordingBackend.instances.append(self)

    def send(self, frame):
        self.frames.append(frame.copy())

    def close(self):
        self.closed = True

    def device(self):
        return self._device

    def native_fourcc(self):
        return None


@pytest.fixture()
def test_backend():
    import pyvirtualcam
    from pyvirtualcam.camera import BACKENDS

    RecordingBackend.instances.clear()
    pyvirtualcam.register_backend("swaycam-test", RecordingBackend)
    yield RecordingBackend
    BACKENDS.pop("swaycam-test", None)


def test_virtual_camera_delivers_frames_of_the_right_size_and_rate(test_backend):
    fs = frames(10)
    with render.VirtualCameraSink(backend="swaycam-test", fps=30) as sink:
        for k, f in enumerate(fs):
            sink.send(f, k * 33_333_333)
        assert sink.device_name == "test-cam"
    cam = test_backend.instances[-1]
    assert (cam.width, cam.height, cam.fps) == (W, H, 30)
    assert cam.closed and len(cam.frames) == 10
    got = cam.frames[3].reshape(H, W, 3)
    assert np.array_equal(got, fs[3][..., :3])


def test_virtual_camera_opened_eagerly_with_a_size(test_backend):
    sink = render.VirtualCameraSink(device="/dev/video7", backend="swaycam-test", fps=60, size=(W, H))
    cam = test_backend.instances[-1]
    assert (cam.width, cam.height, cam.fps) == (W, H, 60) and sink.device_name == "/dev/video7"
    with pytest.raises(ValueError):
        sink.send(np.zeros((H + 2, W, 4), np.uint8), 0)
    sink.close()
    sink.close()


def test_no_virtual_camera_device_says_what_to_install():
    import pyvirtualcam

    try:
        pyvirtualcam.Camera(W, H, 30).close()
        pytest.skip("a real virtual camera exists on this machine")
    except RuntimeError:
        pass
    with pytest.raises(render.VirtualCameraUnavailable) as info:
        render.VirtualCameraSink(fps=30, size=(W, H))
    msg = str(info.value)
    if platform.system() == "Linux":
        assert "v4l2loopback" in msg and "modprobe" in msg
    with pytest.raises(render.VirtualCameraUnavailable, match="not available"):
        render.VirtualCameraSink(backend="no-such-backend", size=(W, H))
    assert "OBS" in install_hint("Windows") and "OBS" in install_hint("Darwin")
    assert "v4l2loopback" in install_hint("Linux")


def test_window_sink_presents_the_renderer_output_then_swaps():
    calls = []

    class Ctx:                                 # the GLContext protocol's part the sink uses
        size = (800, 600)
        framebuffer_size = (1600, 1200)        # a HiDPI window: present at framebuffer pixels

        def swap(self):
            calls.append("swap")

    class R:
        def present(self, size):
            calls.append(("present", size))

    with render.WindowSink(Ctx(), R()) as sink:
        assert sink.needs_pixels is False      # presented from the renderer: no readback
        sink.send(None, 0)
    assert calls == [("present", (1600, 1200)), "swap"]
    assert render.WindowSink(Ctx()).needs_pixels is True   # uploads the frames it is sent


def test_sinks_satisfy_the_protocol(tmp_path, test_backend):
    sinks = [render.VideoFileSink(tmp_path / "a.mp4", 30, (W, H)), render.PngSequenceSink(tmp_path / "p"),
             render.VirtualCameraSink(backend="swaycam-test")]
    f = frames(1)[0]
    for s in sinks:
        assert isinstance(s, render.Sink) and s.needs_pixels is True
        s.send(f, 0)   # several sinks fed with the same frame
    for s in sinks:
        s.close()


def test_i420_chroma_is_the_mean_of_each_2x2_block():
    """A one-pixel colour edge (a silhouette): U and V are the block's mean colour's (BT.601
    limited range), not its top-left pixel's; Y is OpenCV's per pixel."""
    import cv2

    from render.sinks.video import rgba_to_i420

    img = np.zeros((8, 8, 4), np.uint8)
    img[..., 3] = 255
    img[:, ::2] = (255, 0, 0, 255)                  # red in every even column: each block half red
    img[4:, :] = (20, 200, 60, 255)
    out = rgba_to_i420(img)
    assert np.array_equal(out[:8], cv2.cvtColor(img, cv2.COLOR_RGBA2YUV_I420)[:8])
    u, v = out[8:10].reshape(-1)[:16].reshape(4, 4), out[10:12].reshape(-1).reshape(4, 4)
    for (r, g, b), row in (((127.5, 0, 0), 0), ((20, 200, 60), 3)):
        assert abs(u[row, 1] - (-0.148 * r - 0.291 * g + 0.439 * b + 128)) <= CHROMA_LEVELS
        assert abs(v[row, 1] - (0.439 * r - 0.368 * g - 0.071 * b + 128)) <= CHROMA_LEVELS
