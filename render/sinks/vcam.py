"""Virtual camera output through pyvirtualcam (v4l2loopback on Linux, OBS on Windows/macOS).

When no virtual camera device exists, :class:`VirtualCameraUnavailable` carries a message
saying what to install, for the CLI to show instead of a traceback.
"""

from __future__ import annotations

import logging
import platform

import numpy as np

from .base import check_frame

log = logging.getLogger(__name__)


class VirtualCameraUnavailable(RuntimeError):
    """No virtual camera could be opened; ``str(exc)`` says why and what to install."""


def install_hint(system: str | None = None) -> str:
    """What the user has to install for a virtual camera on ``system`` (platform.system())."""
    system = system or platform.system()
    if system == "Linux":
        return ("install v4l2loopback and load it, e.g.\n"
                "  sudo apt install v4l2loopback-dkms\n"
                "  sudo modprobe v4l2loopback devices=1 exclusive_caps=1 card_label=swaycam\n"
                "then pass the device (/dev/videoN) if there are several")
    if system in ("Windows", "Darwin"):
        return ("install OBS Studio (28 or newer) and start its virtual camera once "
                "(Controls > Start Virtual Camera), then close OBS and try again")
    return f"virtual cameras are not supported on {system}"


class VirtualCameraSink:
    """Send frames to a virtual camera (alpha dropped: use a solid or chroma background).

    Args:
        device: device name (/dev/videoN on Linux, "OBS Virtual Camera"...), None = first free.
        backend: pyvirtualcam backend name ("v4l2loopback", "obs", "unitycapture", or one
            registered with ``pyvirtualcam.register_backend``), None = try all.
        fps: the frame rate announced to the device (frames are not paced here: the
            runtime's loop sets the rate).
        size: (width, height); when None the camera opens on the first frame.

    Raises:
        VirtualCameraUnavailable: no device (at construction when ``size`` is given, else on
            the first ``send``).
    """

    needs_pixels = True

    def __init__(self, device: str | None = None, backend: str | None = None, fps: float = 30.0,
                 size: tuple[int, int] | None = None):
        self.device, self.backend, self.fps = device, backend, float(fps)
        self.size: tuple[int, int] | None = None
        self.frames = 0
        self._cam = None
        self._rgb: np.ndarray | None = None
        self._closed = False
        if size is not None:
            self._open((int(size[0]), int(size[1])))

    def _open(self, size: tuple[int, int]) -> None:
        import pyvirtualcam

        if self.backend is not None and self.backend not in pyvirtualcam.camera.BACKENDS:
            raise VirtualCameraUnavailable(
                f"virtual camera backend {self.backend!r} is not available here "
                f"(available: {', '.join(pyvirtualcam.camera.BACKENDS) or 'none'}); {install_hint()}")
        try:
            self._cam = pyvirtualcam.Camera(size[0], size[1], self.fps, fmt=pyvirtualcam.PixelFormat.RGB,
                                            device=self.device, backend=self.backend)
        except Exception as exc:  # noqa: BLE001 - pyvirtualcam raises RuntimeError with per-backend reasons
            raise VirtualCameraUnavailable(f"no virtual camera could be opened ({exc}).\n{install_hint()}") from exc
        self.size = size
        self._rgb = np.empty((size[1], size[0], 3), np.uint8)
        log.info("virtual camera %s (%s): %dx%d at %g fps", self._cam.device, self._cam.backend, *size, self.fps)

    @property
    def device_name(self) -> str | None:
        """The device in use, once open."""
        return None if self._cam is None else self._cam.device

    def send(self, rgba: np.ndarray, t_ns: int = 0) -> None:
        """Send one frame (RGB; alpha dropped). Frames must keep the size of the first one."""
        import cv2

        if self._closed:
            raise RuntimeError("sink is closed")
        a = check_frame(rgba, self.size)
        if self._cam is None:
            self._open((a.shape[1], a.shape[0]))
        # OpenCV: 0.2 ms at 1280x720 (numpy's strided a[..., :3] copy took 9.5 ms of the live frame)
        cv2.cvtColor(np.ascontiguousarray(a), cv2.COLOR_RGBA2RGB, dst=self._rgb)
        self._cam.send(self._rgb)
        self.frames += 1

    def close(self) -> None:
        """Release the device. Idempotent."""
        if not self._closed:
            self._closed = True
            if self._cam is not None:
                self._cam.close()
                self._cam = None

    def __enter__(self) -> "VirtualCameraSink":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
