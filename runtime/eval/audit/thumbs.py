"""Front and back thumbnails of a fitted style: the avatar at rest drawn headless (EGL).

The front view is the rest pose (:attr:`avatars.skeleton.Skeleton.rest_world`) framed by the
renderer's bust framing widened (:data:`OPTIONS`: long styles reach below the shoulders); the
back view rotates every world matrix 180° about the vertical axis through the avatar's
origin (:func:`turned`), so the same camera and light see the back of the head. Each view is
a :data:`SIZE` PNG under ``OUT/thumbs/<name>-front.png`` / ``-back.png``; a thumbnail that
exists is not drawn again (its name carries the entry's fit key).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

#: Thumbnail size, pixels (width, height).
SIZE = (200, 240)
BACKGROUND = "#e9ecf2"
VIEWS = ("front", "back")


def _options():
    from render.camera import CameraOptions

    return CameraOptions(framing="bust", zoom=0.62, margin=0.05)


def turned(world: np.ndarray) -> np.ndarray:
    """``world`` (N, 4, 4) rotated 180° about the world +Y axis (x, z negated)."""
    flip = np.diag([-1.0, 1.0, -1.0, 1.0])
    return flip @ world


def thumb_paths(folder: str | Path, name: str) -> dict[str, Path]:
    """{view: png path} of an entry's thumbnails named ``name``."""
    return {v: Path(folder) / f"{name}-{v}.png" for v in VIEWS}


class ThumbRenderer:
    """One headless renderer for many thumbnails (use inside :func:`thumb_renderer`)."""

    def __init__(self, renderer):
        self.r = renderer

    def views(self, avatar, hide=()) -> dict[str, np.ndarray]:
        """{view: (H, W, 4) uint8 RGBA} of ``avatar`` at rest, front and back; ``hide``:
        mesh instances not drawn."""
        rest = np.asarray(avatar.skeleton.rest_world, dtype=np.float64)
        self.r.set_avatar(avatar)
        out = {}
        for view, world in (("front", rest), ("back", turned(rest))):
            self.r.reframe(world=world)
            self.r.draw(world, hide=tuple(hide))
            out[view] = self.r.read_rgba().copy()
        return out

    def write(self, avatar, paths: dict[str, Path]) -> dict[str, Path]:
        """Draw both views of ``avatar`` into ``paths`` (:func:`thumb_paths`); returns them."""
        from PIL import Image

        for view, rgba in self.views(avatar).items():
            paths[view].parent.mkdir(parents=True, exist_ok=True)
            tmp = paths[view].with_suffix(".tmp.png")
            Image.fromarray(rgba, "RGBA").save(tmp)
            tmp.replace(paths[view])
        return paths


@contextmanager
def thumb_renderer():
    """A :class:`ThumbRenderer` on an EGL context of :data:`SIZE`. Raises the renderer's
    errors (no EGL) for the caller to note."""
    from render import Renderer, create_context

    ctx = create_context("egl", size=SIZE)
    try:
        ctx.make_current()
        with Renderer(ctx, SIZE, antialias="off", background=BACKGROUND, camera_options=_options()) as r:
            yield ThumbRenderer(r)
    finally:
        ctx.release()
