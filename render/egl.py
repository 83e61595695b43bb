"""Headless OpenGL 3.3 core context through EGL (no window, no display server).

Display, in order of preference:

1. A hardware EGL device (``EGL_EXT_platform_device`` + ``EGL_EXT_device_enumeration``, a
   device without ``EGL_MESA_device_software``): the usual path on NVIDIA GPU servers, tried
   first so that a machine with both NVIDIA's and Mesa's EGL vendors (glvnd) draws on the
   GPU, not on llvmpipe through Mesa's surfaceless platform; ``device`` picks one.
2. Mesa's surfaceless platform (``EGL_MESA_platform_surfaceless``): llvmpipe or a Mesa GPU
   driver without any display server. Plain ``eglGetDisplay`` fails on such machines.
3. The other (software) EGL devices, then ``eglGetDisplay(EGL_DEFAULT_DISPLAY)``.

The context is made current without a surface (``EGL_KHR_surfaceless_context``), or with a
1x1 pbuffer where that extension is missing; the renderer draws into FBOs anyway.

EGL displays are process-wide (``eglTerminate`` would kill every context on one), so the
displays opened here are reference counted and terminated when the last context goes.
"""

from __future__ import annotations

import ctypes
import logging
import threading

from ._gl import GL
from OpenGL import EGL  # noqa: I001  (after ._gl decided the platform)

from .context import ContextError, Event

log = logging.getLogger(__name__)

EGL_PLATFORM_SURFACELESS_MESA = 0x31DD
EGL_PLATFORM_DEVICE_EXT = 0x313F

_lock = threading.Lock()
_displays: dict[tuple, list] = {}  # key -> [display, refcount]


def _client_extensions() -> set[str]:
    try:
        s = EGL.eglQueryString(EGL.EGL_NO_DISPLAY, EGL.EGL_EXTENSIONS)
    except Exception:  # noqa: BLE001 - EGL 1.4 without client extensions raises EGL_BAD_DISPLAY
        return set()
    return set((s or b"").decode().split())


def _initialize(display) -> bool:
    major, minor = EGL.EGLint(), EGL.EGLint()
    try:
        return bool(EGL.eglInitialize(display, ctypes.pointer(major), ctypes.pointer(minor)))
    except Exception as exc:  # noqa: BLE001 - PyOpenGL raises EGLError on failure
        log.debug("eglInitialize failed: %s", exc)
        return False


def _is_software_device(dev) -> bool:
    """Mesa marks its software rasteriser's EGL device with ``EGL_MESA_device_software``;
    a device that cannot be queried counts as software (tried after surfaceless)."""
    try:
        from OpenGL.EGL.EXT.device_query import eglQueryDeviceStringEXT

        ext = eglQueryDeviceStringEXT(dev, EGL.EGL_EXTENSIONS)
    except Exception as exc:  # noqa: BLE001
        log.debug("eglQueryDeviceStringEXT failed: %s", exc)
        return True
    return ext is None or b"EGL_MESA_device_software" in ext


def _candidate_displays(device: int | None):
    """Yield (key, description, display) for each display worth trying (module doc's order)."""
    ext = _client_extensions()
    from OpenGL.EGL.EXT.platform_base import eglGetPlatformDisplayEXT

    devices = []
    if "EGL_EXT_platform_device" in ext and "EGL_EXT_device_enumeration" in ext:
        from OpenGL.EGL.EXT.device_enumeration import eglQueryDevicesEXT

        found = (EGL.EGLDeviceEXT * 16)()
        count = EGL.EGLint()
        try:
            eglQueryDevicesEXT(16, found, ctypes.pointer(count))
        except Exception as exc:  # noqa: BLE001
            log.debug("eglQueryDevicesEXT failed: %s", exc)
            count.value = 0
        order = range(count.value) if device is None else [device] if device < count.value else []
        devices = [(i, found[i], _is_software_device(found[i])) for i in order]

    def from_device(i, dev):
        return ("device", i), f"EGL device {i}", lambda: eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, dev, None)

    for i, dev, software in devices:
        if not software or device is not None:
            yield from_device(i, dev)
    if device is None and "EGL_MESA_platform_surfaceless" in ext:
        yield ("surfaceless",), "Mesa surfaceless", lambda: eglGetPlatformDisplayEXT(
            EGL_PLATFORM_SURFACELESS_MESA, EGL.EGL_DEFAULT_DISPLAY, None)
    if device is None:
        for i, dev, software in devices:
            if software:
                yield from_device(i, dev)
        yield ("default",), "default display", lambda: EGL.eglGetDisplay(EGL.EGL_DEFAULT_DISPLAY)


def _acquire_display(device: int | None):
    tried = []
    with _lock:
        for key, desc, get in _candidate_displays(device):
            if key in _displays:
                _displays[key][1] += 1
                return key, desc, _displays[key][0]
            try:
                d = get()
            except Exception as exc:  # noqa: BLE001
                tried.append(f"{desc}: {exc}")
                continue
            if not d or not _initialize(d):
                tried.append(f"{desc}: eglInitialize failed")
                continue
            _displays[key] = [d, 1]
            return key, desc, d
    detail = "; ".join(tried) or "no EGL platform available"
    raise ContextError(f"no EGL display could be initialised ({detail}). Install Mesa's EGL "
                       "(libegl1 + libgl1-mesa-dri) or the GPU vendor's EGL driver")


def _release_display(key) -> None:
    with _lock:
        entry = _displays.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del _displays[key]
            EGL.eglTerminate(entry[0])


def _is_current(context) -> bool:
    """``context`` is the calling thread's current EGL context."""
    def address(c):
        return c if isinstance(c, int) else ctypes.cast(c, ctypes.c_void_p).value

    cur = EGL.eglGetCurrentContext()
    return bool(cur) and address(cur) == address(context)


class EglContext:
    """A headless OpenGL 3.3 core context (see module doc). Use as a context manager."""

    backend = "egl"

    def __init__(self, *, device: int | None = None, _share: "EglContext | None" = None):
        self._surface = EGL.EGL_NO_SURFACE
        self._pbuffer = False
        self._context = None
        if _share is not None:        # a context of the same display sharing objects (see shared())
            self._key, self._display, desc = _share._key, _share._display, _share.info["egl_display"]
            with _lock:
                _displays[self._key][1] += 1
        else:
            self._key, desc, self._display = _acquire_display(device)
        try:
            self._create(desc, _share)
        except BaseException:
            self.release()
            raise

    def shared(self) -> "EglContext":
        """A new context on the same display that shares this one's objects (textures, buffers,
        sync objects; framebuffers and vertex arrays stay per context), current on no thread:
        the thread that uses it calls :meth:`make_current` (a readback thread,
        :mod:`render.frame_reader`). Raises ContextError."""
        if self._context is None:
            raise ContextError("context was released")
        return EglContext(_share=self)

    def _create(self, desc: str, share: "EglContext | None" = None) -> None:
        d = self._display
        if not EGL.eglBindAPI(EGL.EGL_OPENGL_API):
            raise ContextError("eglBindAPI(EGL_OPENGL_API) failed: this EGL has no desktop OpenGL")
        attrs = (EGL.EGLint * 9)(EGL.EGL_SURFACE_TYPE, EGL.EGL_PBUFFER_BIT, EGL.EGL_RENDERABLE_TYPE,
                                 EGL.EGL_OPENGL_BIT, EGL.EGL_NONE, 0, 0, 0, 0)
        config, n = EGL.EGLConfig(), EGL.EGLint()
        if not EGL.eglChooseConfig(d, attrs, ctypes.pointer(config), 1, ctypes.pointer(n)) or n.value < 1:
            raise ContextError(f"{desc}: no EGL config with OpenGL and pbuffer support")
        ctx_attrs = (EGL.EGLint * 7)(EGL.EGL_CONTEXT_MAJOR_VERSION, 3, EGL.EGL_CONTEXT_MINOR_VERSION, 3,
                                     EGL.EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                     EGL.EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL.EGL_NONE)
        try:
            ctx = EGL.eglCreateContext(d, config, share._context if share is not None else EGL.EGL_NO_CONTEXT,
                                       ctx_attrs)
        except Exception as exc:  # noqa: BLE001
            raise ContextError(f"{desc}: cannot create an OpenGL 3.3 core context ({exc})") from exc
        if not ctx:
            raise ContextError(f"{desc}: cannot create an OpenGL 3.3 core context")
        self._context = ctx
        exts = set((EGL.eglQueryString(d, EGL.EGL_EXTENSIONS) or b"").decode().split())
        if "EGL_KHR_surfaceless_context" not in exts:
            pb = (EGL.EGLint * 5)(EGL.EGL_WIDTH, 1, EGL.EGL_HEIGHT, 1, EGL.EGL_NONE)
            self._surface = EGL.eglCreatePbufferSurface(d, config, pb)
            self._pbuffer = True
        if share is not None:
            self.info = dict(share.info)
            return
        self.make_current()
        self.info = {
            "backend": "egl",
            "egl_display": desc,
            "gl_version": GL.glGetString(GL.GL_VERSION).decode(),
            "gl_renderer": GL.glGetString(GL.GL_RENDERER).decode(),
        }
        log.info("EGL context: %s, %s (%s)", self.info["gl_version"], self.info["gl_renderer"], desc)

    @property
    def size(self) -> tuple[int, int]:
        return (0, 0)

    @property
    def framebuffer_size(self) -> tuple[int, int]:
        """No default framebuffer (surfaceless): (0, 0), like :attr:`size`."""
        return self.size

    def make_current(self) -> None:
        """Bind the context to the calling thread."""
        if self._context is None:
            raise ContextError("context was released")
        EGL.eglBindAPI(EGL.EGL_OPENGL_API)      # the current API is per thread (a readback thread's too)
        if not EGL.eglMakeCurrent(self._display, self._surface, self._surface, self._context):
            raise ContextError("eglMakeCurrent failed")

    def swap(self) -> None:
        """Nothing to present headless; flushes the command stream."""
        GL.glFlush()

    def poll_events(self) -> list[Event]:
        """Headless contexts have no events."""
        return []

    def release(self) -> None:
        """Destroy the context (and the display when it was the last one). Idempotent."""
        if self._display is None:
            return
        d = self._display
        try:
            if self._context is not None and _is_current(self._context):   # only this thread's binding
                EGL.eglMakeCurrent(d, EGL.EGL_NO_SURFACE, EGL.EGL_NO_SURFACE, EGL.EGL_NO_CONTEXT)
            if self._pbuffer:
                EGL.eglDestroySurface(d, self._surface)
            if self._context is not None:
                EGL.eglDestroyContext(d, self._context)
        finally:
            self._context = None
            self._display = None
            _release_display(self._key)

    def __enter__(self) -> "EglContext":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
