"""The one place render/ imports PyOpenGL from: the platform is decided first (see
:mod:`render.platform`)."""

from .platform import decide

decide()

from OpenGL import GL  # noqa: E402  (must follow the platform decision)

__all__ = ["GL"]
