"""Decide the OpenGL platform (EGL or a windowing system) before PyOpenGL is imported.

PyOpenGL binds its function loader (``PYOPENGL_PLATFORM``: ``egl``, ``glx``, ...) the first
time ``OpenGL.platform`` is imported and cannot change it afterwards. A pygame window
needs the windowing system's loader (GLX on X11, EGL on Wayland, WGL/CGL elsewhere);
headless rendering needs ``egl``. Every render module imports OpenGL through
:mod:`render._gl`, which calls :func:`decide` first, and ``import render`` itself loads
nothing from OpenGL (its names are imported lazily), so the choice is made as late as
possible: when the first GL-using name (``Renderer``, ``create_context``...) is imported.
Exception: when the answer can only be EGL (no display, or ``SWAYCAM_GL=egl`` already set),
``import render`` decides at once, so code importing OpenGL itself afterwards gets EGL too.

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


_decided: Backend | None = None


def decide() -> Backend:
    """Choose the backend "auto" stands for (once per process) and, for EGL, set
    ``PYOPENGL_PLATFORM=egl`` unless OpenGL is already loaded or the variable is set."""
    global _decided
    if _decided is None:
        backend = choose_backend()
        if "OpenGL.platform" in sys.modules:
            log.debug("OpenGL already imported; PYOPENGL_PLATFORM=%s kept", os.environ.get("PYOPENGL_PLATFORM"))
        elif "PYOPENGL_PLATFORM" not in os.environ and backend == "egl":
            os.environ["PYOPENGL_PLATFORM"] = "egl"
        _decided = backend
    return _decided


def decide_if_headless() -> None:
    """Decide right away when the answer can only be EGL (``SWAYCAM_GL=egl``, or no display):
    called by ``import render`` so that code importing OpenGL itself afterwards still gets
    the EGL loader. With a display and no override the decision waits (see module doc)."""
    if _decided is None and choose_backend() == "egl":
        decide()


def __getattr__(name: str):
    if name == "DEFAULT_BACKEND":  # the backend "auto" resolves to (decided on first use)
        return decide()
    raise AttributeError(name)


def pyopengl_platform() -> str:
    """The loader PyOpenGL uses (or will use): ``egl``, ``glx``, ``wayland``... ('' = its default)."""
    return os.environ.get("PYOPENGL_PLATFORM", "")


def is_egl_platform() -> bool:
    """True when PyOpenGL loads functions through EGL (needed by the headless backend)."""
    if "OpenGL.platform" in sys.modules:
        from OpenGL import platform as _p

        return type(_p.PLATFORM).__name__.lower().startswith("egl")
    return pyopengl_platform().lower() in ("egl", "wayland")
