"""A pygame (SDL2) window with an OpenGL 3.3 core context.

Resizable, optional vsync, desktop fullscreen for kiosks, or hidden (offscreen rendering on
a desktop). Events are translated to plain :class:`render.context.Event` values; the
runtime decides what keys do. Only one window per process (an SDL/pygame limit).
"""

from __future__ import annotations

import logging
import os
import sys

from .context import ContextError, Event
from .platform import is_egl_platform

log = logging.getLogger(__name__)


def _import_pygame():
    """pygame, imported without setuptools' ``pkg_resources``: pygame's ``__init__`` imports
    ``pygame.pkgdata``, which imports ``pkg_resources`` when setuptools is installed (a scan of
    every installed distribution, 50-250 ms of a window's start-up here) for resource look-ups
    swaycam never makes; ``pkgdata`` has its own fallback when the import fails."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    if "pygame" in sys.modules or "pkg_resources" in sys.modules:
        import pygame

        return pygame
    sys.modules["pkg_resources"] = None      # makes ``import pkg_resources`` raise ImportError
    try:
        import pygame
    finally:
        if "pkg_resources" in sys.modules and sys.modules["pkg_resources"] is None:
            del sys.modules["pkg_resources"]
    return pygame


class WindowContext:
    """See :func:`render.context.create_context` for the arguments. A context manager."""

    backend = "window"

    def __init__(self, *, size=(1280, 720), vsync=True, fullscreen=False, resizable=True, visible=True,
                 title="swaycam"):
        pygame = _import_pygame()
        self._pg = pygame
        # SDL on X11 must make the same kind of context PyOpenGL loads functions for: EGL when
        # PyOpenGL uses EGL, GLX otherwise. SDL reads the hint when the window is created; the
        # process environment is restored afterwards.
        saved = os.environ.get("SDL_VIDEO_X11_FORCE_EGL")
        if sys.platform.startswith("linux"):
            os.environ["SDL_VIDEO_X11_FORCE_EGL"] = "1" if is_egl_platform() else "0"
        try:
            self._open(pygame, size, vsync, fullscreen, resizable, visible, title)
        finally:
            if saved is None:
                os.environ.pop("SDL_VIDEO_X11_FORCE_EGL", None)
            else:
                os.environ["SDL_VIDEO_X11_FORCE_EGL"] = saved

    def _open(self, pygame, size, vsync, fullscreen, resizable, visible, title) -> None:
        try:
            pygame.display.init()
        except pygame.error as exc:
            raise ContextError(f"pygame cannot open a display ({exc}); use backend='egl' for headless") from exc
        gl = pygame
        pygame.display.gl_set_attribute(gl.GL_CONTEXT_MAJOR_VERSION, 3)
        pygame.display.gl_set_attribute(gl.GL_CONTEXT_MINOR_VERSION, 3)
        pygame.display.gl_set_attribute(gl.GL_CONTEXT_PROFILE_MASK, gl.GL_CONTEXT_PROFILE_CORE)
        if sys.platform == "darwin":
            pygame.display.gl_set_attribute(gl.GL_CONTEXT_FORWARD_COMPATIBLE_FLAG, 1)
        pygame.display.gl_set_attribute(gl.GL_DOUBLEBUFFER, 1)
        pygame.display.gl_set_attribute(gl.GL_DEPTH_SIZE, 0)
        flags = pygame.OPENGL | pygame.DOUBLEBUF
        if resizable:
            flags |= pygame.RESIZABLE
        if fullscreen:
            flags |= pygame.FULLSCREEN
            size = (0, 0)  # desktop resolution
        if not visible:
            flags |= pygame.HIDDEN
        try:
            pygame.display.set_mode(tuple(int(v) for v in size), flags, vsync=1 if vsync else 0)
        except pygame.error as exc:
            if vsync:
                log.warning("vsync unavailable (%s); window opened without it", exc)
                pygame.display.set_mode(tuple(int(v) for v in size), flags, vsync=0)
            else:
                pygame.display.quit()
                raise ContextError(f"cannot open an OpenGL 3.3 core window ({exc})") from exc
        pygame.display.set_caption(title)
        from ._gl import GL

        version = GL.glGetString(GL.GL_VERSION)
        if not version:
            pygame.display.quit()
            raise ContextError("the window has no usable OpenGL context (glGetString returned nothing)")
        self.info = {
            "backend": "window",
            "sdl_driver": pygame.display.get_driver(),
            "gl_version": version.decode(),
            "gl_renderer": GL.glGetString(GL.GL_RENDERER).decode(),
        }
        self._size = tuple(pygame.display.get_window_size())
        # HiDPI: the default framebuffer may have more pixels than the window has points; the
        # initial viewport is the drawable size.
        vp = GL.glGetIntegerv(GL.GL_VIEWPORT)
        self._pixel_scale = (float(vp[2]) / self._size[0]) if self._size[0] else 1.0
        self._open = True
        log.info("window %dx%d: %s, %s", *self._size, self.info["gl_version"], self.info["gl_renderer"])

    @property
    def size(self) -> tuple[int, int]:
        """Current window size (screen coordinates; pixels except on HiDPI displays)."""
        return self._size

    @property
    def framebuffer_size(self) -> tuple[int, int]:
        """Current size of the window's default framebuffer in pixels (HiDPI aware)."""
        return (round(self._size[0] * self._pixel_scale), round(self._size[1] * self._pixel_scale))

    def make_current(self) -> None:
        """SDL keeps the window's context current on the thread that created it."""
        if not self._open:
            raise ContextError("window was closed")

    def swap(self) -> None:
        """Present the back buffer (blocks for vsync when enabled)."""
        self._pg.display.flip()

    def poll_events(self) -> list[Event]:
        """Drain pending window events: close, resize, key, focus, mouse drags and wheel
        notches (see :class:`Event`)."""
        pg = self._pg
        out: list[Event] = []
        for e in pg.event.get():
            if e.type == pg.QUIT:
                out.append(Event("close"))
            elif e.type == pg.WINDOWSIZECHANGED or e.type == pg.VIDEORESIZE:
                size = tuple(pg.display.get_window_size())
                if size != self._size:
                    self._size = size
                    out.append(Event("resize", size=size))
            elif e.type == pg.KEYDOWN:
                mods = tuple(name for bit, name in ((pg.KMOD_CTRL, "ctrl"), (pg.KMOD_SHIFT, "shift"),
                                                     (pg.KMOD_ALT, "alt"), (pg.KMOD_META, "meta"))
                             if e.mod & bit)
                out.append(Event("key", key=pg.key.name(e.key), mods=mods))
            elif e.type == pg.MOUSEMOTION and any(e.buttons):
                button = 1 if e.buttons[0] else 2 if e.buttons[1] else 3
                mods = tuple(name for bit, name in ((pg.KMOD_CTRL, "ctrl"), (pg.KMOD_SHIFT, "shift"))
                             if pg.key.get_mods() & bit)
                out.append(Event("drag", delta=(float(e.rel[0]), float(e.rel[1])), button=button, mods=mods))
            elif e.type == pg.MOUSEWHEEL:
                out.append(Event("wheel", delta=(0.0, float(e.y))))
            elif e.type == pg.WINDOWFOCUSGAINED:
                out.append(Event("focus", focused=True))
            elif e.type == pg.WINDOWFOCUSLOST:
                out.append(Event("focus", focused=False))
        return out

    def set_fullscreen(self, on: bool) -> None:
        """Toggle desktop fullscreen (a resize event follows)."""
        pg = self._pg
        if bool(pg.display.is_fullscreen()) != bool(on):
            pg.display.toggle_fullscreen()

    def release(self) -> None:
        """Close the window and its context. Idempotent."""
        if self._open:
            self._open = False
            self._pg.display.quit()

    def __enter__(self) -> "WindowContext":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
