"""Frame sources on the real clips: frame counts, container timestamps, and errors that
name the file."""

import cv2
import numpy as np
import pytest
from PIL import Image

from tracking.errors import SourceError
from tracking.images import GifSource, ImageFolderSource, ImageSource
from tracking.frame_sources import ArraySource, open_source
from tracking.video import Pacer, VideoFileSource

MS = 1_000_000


def test_selfie_mp4_has_225_frames_40ms_apart(selfie_mp4):
    with open_source(selfie_mp4) as src:
        assert isinstance(src, VideoFileSource)
        assert (src.info.width, src.info.height, src.info.fps, src.info.frame_count) == (640, 360, 25.0, 225)
        frames = [(f.timestamp_ns, f.index, f.image.shape, f.image.dtype) for f in src]
    assert len(frames) == 225
    assert [t for t, *_ in frames] == [k * 40 * MS for k in range(225)]
    assert all(shape == (360, 640, 3) and dt == np.uint8 for _, _, shape, dt in frames)


def test_ffmpeg_fallback_when_opencv_cannot_open(selfie_mp4, monkeypatch):
    class Closed:
        def __init__(self, *a):
            pass

        def isOpened(self):
            return False

        def release(self):
            pass

    monkeypatch.setattr(cv2, "VideoCapture", Closed)
    with VideoFileSource(selfie_mp4) as src:
        assert src._backend == "ffmpeg"
        ts = [f.timestamp_ns for f in src]
    assert ts == [k * 40 * MS for k in range(225)]


def test_avi_written_by_opencv_reads_back(tmp_path):
    p = tmp_path / "clip.avi"
    w = cv2.VideoWriter(str(p), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 48))
    for k in range(6):
        w.write(np.full((48, 64, 3), 40 * k, np.uint8))
    w.release()
    with open_source(p) as src:
        frames = list(src)
    assert [f.timestamp_ns for f in frames] == [k * 100 * MS for k in range(6)]
    assert abs(int(frames[3].image.mean()) - 120) <= 3


def test_gifs_use_their_frame_durations(android_gif, crowd_gif):
    with open_source(android_gif) as src:
        assert isinstance(src, GifSource) and src.info.frame_count == 75
        ts = [f.timestamp_ns for f in src]
    assert ts == [k * 80 * MS for k in range(75)]
    with Image.open(crowd_gif) as im:
        durations = []
        for i in range(im.n_frames):
            im.seek(i)
            durations.append(im.info["duration"])
    with open_source(crowd_gif) as src:
        ts = [f.timestamp_ns for f in src]
    assert set(durations) == {80, 90}  # uneven timing is kept, not rounded to a rate
    assert ts == [sum(durations[:k]) * MS for k in range(len(durations))]


def test_still_image_repeats_and_folder_is_in_natural_order(astronaut_png, tmp_path):
    with open_source(astronaut_png, repeat=3, fps=20) as src:
        assert isinstance(src, ImageSource)
        frames = list(src)
    assert [f.timestamp_ns for f in frames] == [0, 50 * MS, 100 * MS] and frames[0].size == (512, 512)
    for name, value in (("10.png", 30), ("2.png", 20), ("1.png", 10)):
        Image.fromarray(np.full((8, 8, 3), value, np.uint8)).save(tmp_path / name)
    (tmp_path / "notes.txt").write_text("not an image")
    with open_source(tmp_path, fps=10) as src:
        assert isinstance(src, ImageFolderSource)
        frames = list(src)
    assert [int(f.image[0, 0, 0]) for f in frames] == [10, 20, 30]
    assert [f.timestamp_ns for f in frames] == [0, 100 * MS, 200 * MS]


def test_folder_with_a_different_size_image(tmp_path):
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "a.png")
    Image.fromarray(np.zeros((9, 8, 3), np.uint8)).save(tmp_path / "b.png")
    with open_source(tmp_path) as src:
        src.read()
        with pytest.raises(SourceError, match=r"b\.png: size 8x9 differs"):
            src.read()


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("missing.mp4", None, "video file {p} does not exist"),
        ("empty.mp4", b"", "video file {p} is empty (0 bytes)"),
        ("text.mp4", b"this is not a video\n" * 10, "video file {p}: not a readable video"),
        ("text.webm", b"\x00\x01garbage" * 50, "video file {p}: not a readable video"),
        ("empty.gif", b"", "GIF {p} is empty (0 bytes)"),
        ("bad.gif", b"GIF89a-truncated", "GIF {p}: not a readable image"),
        ("bad.png", b"\x89PNG not really", "image {p}: not a readable image"),
        ("missing.png", None, "image {p} does not exist"),
    ],
)
def test_bad_files_give_clear_errors(tmp_path, name, content, message):
    p = tmp_path / name
    if content is not None:
        p.write_bytes(content)
    with pytest.raises(SourceError) as exc:
        open_source(p)
    assert message.format(p=p) in str(exc.value)


def test_empty_and_missing_folders(tmp_path):
    with pytest.raises(SourceError, match="no images"):
        open_source(tmp_path)
    with pytest.raises(SourceError, match="does not exist"):
        ImageFolderSource(tmp_path / "nope")


def test_webcam_index_that_cannot_be_opened():
    with pytest.raises(SourceError, match=r"webcam 97: could not be opened"):
        open_source(97)
    with pytest.raises(SourceError, match=r"webcam '/dev/video97': could not be opened: no such device"):
        open_source("/dev/video97")


def test_realtime_pacing_sleeps_until_media_time():
    now = [1_000 * MS]
    slept = []

    def sleep(s):
        slept.append(s)
        now[0] += int(s * 1e9)

    pacer = Pacer(clock_ns=lambda: now[0], sleep=sleep)
    src = ArraySource([np.zeros((4, 4, 3), np.uint8)] * 4, fps=10)
    src_frames = []
    for f in src:
        pacer.wait(f.timestamp_ns)
        now[0] += 30 * MS  # work per frame
        src_frames.append(now[0])
    # frames are delivered at 100 ms intervals of wall time despite 30 ms of work each
    assert slept == pytest.approx([0.07, 0.07, 0.07])
    assert np.diff(src_frames).tolist() == [100 * MS] * 3


def test_array_source_checks_its_input():
    with pytest.raises(SourceError, match="no frames"):
        ArraySource([])
    with pytest.raises(SourceError, match="2 frames but 1 timestamps"):
        ArraySource([np.zeros((2, 2, 3), np.uint8)] * 2, timestamps_ns=[0])
    with pytest.raises(SourceError, match="frame 0: expected uint8"):
        ArraySource([np.zeros((2, 2, 3))]).read()


def test_webm_written_by_the_preview_writer_reads_back(tmp_path):
    from tracking.preview import PreviewWriter

    p = tmp_path / "clip.webm"
    with PreviewWriter(p, fps=10) as w:
        for k in range(5):
            w.write(np.full((48, 64, 3), 40 * k, np.uint8))
    with open_source(p) as src:
        frames = list(src)
    assert [f.timestamp_ns for f in frames] == [k * 100 * MS for k in range(5)]
    assert [round(f.image.mean() / 40) for f in frames] == [0, 1, 2, 3, 4]
