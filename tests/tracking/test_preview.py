"""Head-axis projection (MediaPipe's 63 degree perspective camera) and preview errors."""

import math

import numpy as np
import pytest

from tracking.errors import TrackingError
from tracking.preview import PreviewWriter, draw_observation, project_points


def test_projection_centre_and_field_of_view():
    m = np.eye(4)
    size = (640, 360)
    # on the optical axis -> the image centre
    assert np.allclose(project_points(m, np.array([[0, 0, -50.0]]), size), [[320, 180]])
    # a point at the top edge of the 63 degree vertical field of view -> y = 0
    y_top = 50.0 * math.tan(math.radians(31.5))
    assert np.allclose(project_points(m, np.array([[0, y_top, -50.0]]), size), [[320, 0]], atol=1e-9)
    # x right in the camera frame -> right in the image
    assert project_points(m, np.array([[5.0, 0, -50.0]]), size)[0, 0] > 320


def test_astronaut_head_origin_projects_onto_the_face(astronaut_tracked):
    o = astronaut_tracked.chosen[0]
    p = project_points(o.transform, np.zeros((1, 3)), o.image_size)[0] / o.image_size
    x0, y0, x1, y1 = o.face_box
    assert x0 < p[0] < x1 and y0 < p[1] < y1
    img = np.zeros((512, 512, 3), np.uint8)
    drawn = draw_observation(img, o)
    assert drawn.any() and not img.any()  # a copy is drawn on
    assert not draw_observation(img, type(o).empty(0)).any()


def test_preview_frame_size_must_not_change(tmp_path):
    with PreviewWriter(tmp_path / "p.mp4", fps=10) as w:
        w.write(np.zeros((40, 60, 3), np.uint8))
        with pytest.raises(TrackingError, match="frame size 62x40 differs from 60x40"):
            w.write(np.zeros((40, 62, 3), np.uint8))


def test_preview_writes_an_animated_gif(tmp_path):
    from PIL import Image

    frames = [np.full((40, 61, 3), (40 * i, 255 - 40 * i, 90), np.uint8) for i in range(5)]
    with PreviewWriter(tmp_path / "p.gif", fps=10) as w:
        for f in frames:
            w.write(f)
    with Image.open(tmp_path / "p.gif") as im:
        assert (im.n_frames, im.size, im.info["duration"]) == (5, (61, 40), 100)
        im.seek(3)
        assert np.abs(np.asarray(im.convert("RGB"), np.int16)[20, 30] - frames[3][20, 30]).max() <= 8


def test_preview_checks_its_file_before_tracking(tmp_path):
    with pytest.raises(TrackingError, match=r"p\.txt: not a video file name"):
        PreviewWriter(tmp_path / "p.txt")
    with pytest.raises(TrackingError, match="/proc/p.mp4: cannot write"):
        PreviewWriter("/proc/p.mp4")
    with PreviewWriter(tmp_path / "none.mp4"):
        pass                                    # no frame came: no empty file is left behind
    assert not (tmp_path / "none.mp4").exists()


def test_pose_track_writer_names_an_unwritable_file():
    from tracking.errors import TrackingError as TE
    from tracking.track_io import PoseTrackWriter

    with pytest.raises(TE, match=r"pose track /proc/t\.jsonl: cannot write"):
        PoseTrackWriter("/proc/t.jsonl")
