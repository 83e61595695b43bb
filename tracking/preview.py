"""Drawing tracking results onto frames, and writing them to a window or a video file.

Head axes are MediaPipe's facial transformation applied to 8 cm axes at the canonical
face origin (x red, y green, z blue; camera frame, not mirrored), projected with the
perspective camera of MediaPipe's face geometry pipeline (vertical FOV 63°, principal
point at the image centre): ``x_ndc = f/aspect · X/−Z``, ``y_ndc = f · Y/−Z``,
``f = 1/tan(fov/2)``. Frames are drawn as captured (unmirrored), like the camera sees them.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import numpy as np

from .errors import TrackingError
from .observation import FaceObservation

log = logging.getLogger(__name__)

MEDIAPIPE_VERTICAL_FOV_DEG = 63.0
AXIS_LENGTH_CM = 8.0
AXIS_COLORS_RGB = ((230, 40, 40), (40, 200, 40), (50, 90, 255))
LANDMARK_RGB = (255, 220, 0)
BOX_RGB = (0, 200, 255)


def project_points(transform: np.ndarray, points_cm: np.ndarray, size: tuple[int, int],
                   fov_deg: float = MEDIAPIPE_VERTICAL_FOV_DEG) -> np.ndarray:  # fmt: skip
    """Pixel coordinates (N, 2) of canonical-face points (N, 3) cm under ``transform``."""
    w, h = size
    p = np.c_[np.asarray(points_cm, np.float64), np.ones(len(points_cm))] @ np.asarray(transform).T
    z = np.minimum(p[:, 2], -1e-6)  # in front of the camera
    f = 1.0 / math.tan(math.radians(fov_deg) / 2.0)
    x_ndc = f / (w / h) * p[:, 0] / -z
    y_ndc = f * p[:, 1] / -z
    return np.c_[(x_ndc + 1.0) * 0.5 * w, (1.0 - y_ndc) * 0.5 * h]


def draw_observation(image: np.ndarray, obs: FaceObservation, *, landmarks: bool = True, axes: bool = True,
                     box: bool = True, label: str | None = None) -> np.ndarray:  # fmt: skip
    """A copy of ``image`` (H, W, 3) uint8 RGB with the face drawn on it (nothing if not found)."""
    import cv2

    out = np.ascontiguousarray(image).copy()
    h, w = out.shape[:2]
    if obs.found:
        if landmarks:
            for x, y in (obs.landmarks[:, :2] * (w, h)).astype(int):
                cv2.circle(out, (int(x), int(y)), 1, LANDMARK_RGB, -1, cv2.LINE_AA)
        if box:
            x0, y0, x1, y1 = (obs.face_box * (w, h, w, h)).astype(int)
            cv2.rectangle(out, (int(x0), int(y0)), (int(x1), int(y1)), BOX_RGB, 1, cv2.LINE_AA)
        if axes:
            pts = project_points(obs.transform, np.vstack([np.zeros(3), np.eye(3) * AXIS_LENGTH_CM]), (w, h))
            o = tuple(int(v) for v in pts[0])
            for p, color in zip(pts[1:], AXIS_COLORS_RGB):
                cv2.line(out, o, (int(p[0]), int(p[1])), color, 2, cv2.LINE_AA)
    if label:
        cv2.putText(out, label, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
    return out


#: File types a preview can be written to.
PREVIEW_SUFFIXES = (".mp4", ".webm", ".avi", ".gif", ".mkv", ".mov")


class PreviewWriter:
    """Shows or writes preview frames; a context manager.

    Args:
        target: ``"window"`` for an OpenCV window, else a video file path (written with
            imageio-ffmpeg: .mp4 H.264, .webm VP9, .avi MJPEG, .gif with a palette computed
            from the whole clip, .mkv/.mov as ffmpeg chooses).
        fps: frame rate of the video file.

    Raises:
        TrackingError: no display for a window, or the video file cannot be written.
    """

    def __init__(self, target: str | os.PathLike, *, fps: float = 25.0) -> None:
        self.target = str(target)
        self.fps = fps if fps > 0 else 25.0
        self._writer = None
        self._size: tuple[int, int] | None = None
        self.frames = 0
        self.window = self.target == "window"
        if self.window and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            raise TrackingError("preview window: no display (DISPLAY is not set); give a video file path instead")
        self._created = False
        if not self.window:
            suffix = Path(self.target).suffix.lower()
            if suffix not in PREVIEW_SUFFIXES:
                raise TrackingError(f"preview {self.target}: not a video file name (use 'window' or "
                                    f"{'/'.join(PREVIEW_SUFFIXES)})")
            existed = os.path.exists(self.target)
            try:
                Path(self.target).parent.mkdir(parents=True, exist_ok=True)
                open(self.target, "ab").close()      # can it be written? (before tracking a whole clip)
            except OSError as exc:
                raise TrackingError(f"preview {self.target}: cannot write ({exc.strerror or exc})") from None
            self._created = not existed

    def write(self, image_rgb: np.ndarray) -> None:
        """Add one (H, W, 3) uint8 RGB frame; all frames must have the first one's size."""
        h, w = image_rgb.shape[:2]
        if self.window:
            import cv2

            try:
                cv2.imshow("swaycam track", cv2.cvtColor(image_rgb, cv2.COLOR_RGB2BGR))
                cv2.waitKey(1)
            except cv2.error as exc:
                raise TrackingError(f"preview window: OpenCV cannot show a window ({exc})") from None
            self.frames += 1
            return
        if self._writer is None:
            self._open((w, h))
        elif (w, h) != self._size:
            raise TrackingError(f"preview {self.target}: frame size {w}x{h} differs from {self._size[0]}x{self._size[1]}")
        try:
            self._writer.send(np.ascontiguousarray(image_rgb))
        except (OSError, RuntimeError, StopIteration) as exc:
            raise TrackingError(f"preview {self.target}: ffmpeg failed while writing ({exc})") from None
        self.frames += 1

    def _open(self, size: tuple[int, int]) -> None:
        import imageio_ffmpeg

        suffix = Path(self.target).suffix.lower()
        codec = {".mp4": "libx264", ".webm": "libvpx-vp9", ".avi": "mjpeg", ".gif": "gif"}.get(suffix)
        w, h = size
        if suffix == ".gif":
            # GIF holds 256 colours: one palette generated from all frames (ffmpeg palettegen/paletteuse)
            kw = dict(pix_fmt_out="pal8", macro_block_size=1, quality=None,
                      output_params=["-filter:v", "split[a][b];[a]palettegen[p];[b][p]paletteuse"])
        else:
            # H.264 / yuv420p need even sizes: pad by one pixel if needed (macro_block_size=2)
            kw = dict(macro_block_size=2, quality=7)
        try:
            self._writer = imageio_ffmpeg.write_frames(self.target, size, fps=self.fps, codec=codec, **kw)
            self._writer.send(None)
        except Exception as exc:  # noqa: BLE001 - reported with the path
            raise TrackingError(f"preview {self.target}: cannot write a video file ({exc})") from None
        self._size = (w, h)

    def close(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            finally:
                self._writer = None
        elif self._created and not self.frames:
            Path(self.target).unlink(missing_ok=True)   # nothing was written: leave no empty file
        if self.window and self.frames:
            import cv2

            cv2.destroyAllWindows()

    def __enter__(self) -> "PreviewWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
