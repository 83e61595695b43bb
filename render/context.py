"""OpenGL 3.3 core contexts behind one interface: headless EGL or a pygame window.

``create_context()`` returns a :class:`GLContext`. The renderer always draws into its own
framebuffer object, so it works the same on both; a window context additionally presents
frames (:meth:`GLContext.swap`) and reports window events (:meth:`GLContext.poll_events`).

Backend selection: ``backend="auto"`` uses :func:`render.platform.decide`: a window when a
display exists, EGL otherwise, overridable with ``SWAYCAM_GL=egl|window`` set before the
first GL-using render name is imported. See :mod:`render.platform`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from .platform import decide, has_display, is_egl_platform

log = logging.getLogger(__name__)

EventKind = Literal["close", "resize", "key", "focus", "drag", "wheel"]


class ContextError(RuntimeError):
    """No OpenGL 3.3 core context could be made; the message says why and what to try."""


@dataclass(frozen=True)
class Event:
    """A window event.

    Attributes:
        kind: "close" (window closed / quit), "resize" (``size`` = new window size in
            pixels), "key" (``key`` pressed, pygame key name such as "escape", "f", "space";
            ``mods`` a tuple like ("ctrl",)), "focus" (``focused`` gained or lost), "drag"
            (the mouse moved by ``delta`` = (dx, dy) window pixels, x right, y down, with
            ``button`` 1 left / 2 middle / 3 right held; ``mods`` as for keys), "wheel"
            (``delta`` = (0, notches), > 0 scrolled up / away from the user).
    """

    kind: EventKind
    size: tuple[int, int] | None = None
    key: str = ""
    mods: tuple[str, ...] = ()
    focused: bool = True
    delta: tuple[float, float] = (0.0, 0.0)
    button: int = 0


@runtime_checkable
class GLContext(Protocol):
    """What the renderer and the runtime need from a context.

    Attributes:
        backend: "egl" or "window".
        size: (width, height) pixels of the window (for EGL: the size asked for; the
            renderer's framebuffer size is separate and set on the renderer).
        framebuffer_size: (width, height) pixels of the default framebuffer a window
            presents (HiDPI aware); EGL: ``size``.
        info: GL_VERSION / GL_RENDERER / EGL platform strings, for logs and reports.
    """

    backend: str
    info: dict[str, str]

    @property
    def size(self) -> tuple[int, int]: ...

    @property
    def framebuffer_size(self) -> tuple[int, int]: ...

    def make_current(self) -> None: ...

    def swap(self) -> None: ...

    def poll_events(self) -> list[Event]: ...

    def release(self) -> None: ...

    def __enter__(self) -> "GLContext": ...

    def __exit__(self, *exc) -> None: ...


def create_context(
    backend: Literal["auto", "egl", "window"] = "auto",
    *,
    size: tuple[int, int] = (1280, 720),
    vsync: bool = True,
    fullscreen: bool = False,
    resizable: bool = True,
    visible: bool = True,
    title: str = "swaycam",
    device: int | None = None,
) -> GLContext:
    """Make an OpenGL 3.3 core context and make it current.

    Args:
        backend: "auto" (window when a display exists, else EGL; see module doc),
            "egl" (headless: Mesa surfaceless, then EGL devices such as NVIDIA, then the
            default display; when PyOpenGL was already bound to GLX/WGL on a desktop, a
            hidden window instead), or "window" (pygame/SDL).
        size: window size in pixels (ignored by EGL, which has no default framebuffer).
        vsync: window only: swap synchronised to the display refresh.
        fullscreen: window only: desktop fullscreen (kiosks).
        resizable: window only.
        visible: window only: False makes a hidden window (offscreen rendering on a desktop).
        title: window caption.
        device: EGL only: index of the EGL device to use (EGL_EXT_device_enumeration).

    Raises:
        ContextError: no context can be made; the message names the cause.
    """
    if backend == "auto":
        backend = decide()
    if backend == "egl":
        if not is_egl_platform():
            if has_display():
                # OpenGL was already set up for the window system: render offscreen in a hidden window.
                log.info("PyOpenGL uses the window system's loader; headless rendering uses a hidden window")
                from .window import WindowContext

                return WindowContext(size=size, vsync=False, fullscreen=False, resizable=False, visible=False,
                                     title=title)
            raise ContextError(
                "headless EGL needs PyOpenGL's EGL loader, but OpenGL was set up for a window system "
                "(PYOPENGL_PLATFORM is not 'egl'); set SWAYCAM_GL=egl (or PYOPENGL_PLATFORM=egl) before "
                "OpenGL is first imported"
            )
        from .egl import EglContext

        return EglContext(device=device)
    if backend == "window":
        from .window import WindowContext

        return WindowContext(size=size, vsync=vsync, fullscreen=fullscreen, resizable=resizable,
                             visible=visible, title=title)
    raise ValueError(f"backend {backend!r}: expected 'auto', 'egl' or 'window'")
