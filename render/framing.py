"""The default camera of an output: an avatar framed for the output's aspect by
:class:`render.camera.CameraOptions` (:func:`render.camera.frame_camera`), kept until the
avatar, its pose, the options or the output size change.

:class:`render.Renderer` draws with the camera it is given, or with its :class:`OutputFraming`'s
camera when it is given none. Pure numpy (no GL): any thread may frame (the try-on worker
frames a new avatar before it is uploaded).
"""

from __future__ import annotations

import numpy as np

from avatars import Avatar

from .camera import Camera, CameraOptions, frame_camera


class OutputFraming:
    """The framing of one output of ``size`` = (width, height) pixels.

    Attributes:
        options: how the avatar is framed (:class:`render.camera.CameraOptions`).
        camera: the current default camera (None before an avatar was framed).
    """

    def __init__(self, options: CameraOptions = CameraOptions()):
        self.options = options
        self.camera: Camera | None = None

    def camera_for(self, avatar: Avatar, size: tuple[int, int], world: np.ndarray | None = None) -> Camera:
        """The camera framing ``avatar`` posed by ``world`` (N, 4, 4; the rest pose when None)
        for an output of ``size`` pixels with :attr:`options`; :attr:`camera` is not changed."""
        w, h = size
        return frame_camera(avatar, w / h, self.options, world)

    def frame(self, avatar: Avatar | None, size: tuple[int, int], *, options: CameraOptions | None = None,
              world: np.ndarray | None = None) -> Camera | None:
        """Reframe: :attr:`options` replaced by ``options`` when given, then :attr:`camera`
        framed on ``avatar`` posed by ``world`` (kept as it is without an avatar). Returns
        :attr:`camera`."""
        if options is not None:
            self.options = options
        if avatar is not None:
            self.camera = self.camera_for(avatar, size, world)
        return self.camera
