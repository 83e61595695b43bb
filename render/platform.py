"""Decide the OpenGL platform (EGL or a windowing system) before PyOpenGL is imported.

PyOpenGL binds its function loader (``PYOPENGL_PLATFORM``: ``egl``, ``glx``, ...) the first
time ``OpenGL.platform`` is imported and cannot change it afterwards. A pygame window
needs the windowing system's loader (GLX on X11, EGL on Wayland, WGL/CGL elsewhere);
headless rendering needs ``egl``. This module is imported first by ``render/__init__.py``,
so the choice is made before any ``OpenGL`` import in the package:

- ``SWAYCAM_GL=egl`` forces headless EGL; ``SWAYCAM_GL=window`` forces a window;
  ``SWAYCAM_GL=auto`` (or unset) picks a window when a display exists
  (``DISPLAY`` / ``WAYLAND_DISPLAY`` on Linux, always on Windows and macOS), EGL otherwise.
- An explicit ``PYOPENGL_PLATFORM`` set by the user is respected and never overwritten.

When the platform is EGL and a window is requested anyway (a display exists but
``SWAYCAM_GL=egl``), :mod:`render.window` asks SDL for an EGL context
(``SDL_VIDEO_X11_FORCE_EGL``) so both sides use the same loader.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Literal, Mapping

log = logging.getLogger(__name__)

Backend = Literal["egl", "window"]
ENV_VAR = "SWAYCAM_GL"


def has_display(env: Mapping[str, str] | None = None) -> bool:
    """True when a window can be opened: always on Windows/macOS, DISPLAY/WAYLAND_DISPLAY on Linux."""
    env = os.environ if env is None else env
    if sys.platform.startswith(("win", "darwin")):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def choose_backend(env: Mapping[str, str] | None = None) -> Backend:
    """The backend ``auto`` stands for, from ``SWAYCAM_GL`` and the display (see module doc).

    Raises:
        ValueError: ``SWAYCAM_GL`` is set to something other than egl / window / auto.
    """
    env = os.environ if env is None else env
    value = (env.get(ENV_VAR) or "auto").strip().lower()
    if value in ("egl", "headless"):
        return "egl"
    if value in ("window", "pygame"):
        return "window"
    if value != "auto":
        raise ValueError(f"{ENV_VAR}={value!r}: expected egl, window or auto")
    return "window" if has_display(env) else "egl"


def _decide() -> Backend:
    backend = choose_backend()
    if "OpenGL.platform" in sys.modules:
        log.debug("OpenGL already imported; PYOPENGL_PLATFORM=%s kept", os.environ.get("PYOPENGL_PLATFORM"))
        return backend
    if "PYOPENGL_PLATFORM" not in os.environ and backend == "egl":
        os.environ["PYOPENGL_PLATFORM"] = "egl"
    return backend


#: The backend chosen when the package was imported ("auto" resolves to this).
DEFAULT_BACKEND: Backend = _decide()


def pyopengl_platform() -> str:
    """The loader PyOpenGL uses (or will use): ``egl``, ``glx``, ``wayland``... ('' = its default)."""
    return os.environ.get("PYOPENGL_PLATFORM", "")


def is_egl_platform() -> bool:
    """True when PyOpenGL loads functions through EGL (needed by the headless backend)."""
    if "OpenGL.platform" in sys.modules:
        from OpenGL import platform as _p

        return type(_p.PLATFORM).__name__.lower().startswith("egl")
    return pyopengl_platform().lower() in ("egl", "wayland")
