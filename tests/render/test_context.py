"""Context backends: selection rules, the headless EGL context, errors without a display."""

from __future__ import annotations

import pytest

import render
from render import platform as plat


def test_backend_selection_rules():
    assert plat.choose_backend({}) in ("egl", "window")
    assert plat.choose_backend({"SWAYCAM_GL": "egl", "DISPLAY": ":0"}) == "egl"
    assert plat.choose_backend({"SWAYCAM_GL": "window"}) == "window"
    if plat.sys.platform.startswith("linux"):
        assert plat.choose_backend({}) == "egl"
        assert plat.choose_backend({"DISPLAY": ":0"}) == "window"
        assert plat.choose_backend({"WAYLAND_DISPLAY": "wayland-0", "SWAYCAM_GL": "auto"}) == "window"
    with pytest.raises(ValueError, match="SWAYCAM_GL"):
        plat.choose_backend({"SWAYCAM_GL": "vulkan"})


def test_context_reports_gl_33_core_or_newer(gl_context):
    info = gl_context.info
    major, minor = (int(x) for x in info["gl_version"].split()[0].split(".")[:2])
    assert (major, minor) >= (3, 3)
    assert gl_context.backend in ("egl", "window")
    if gl_context.backend == "egl":
        assert gl_context.poll_events() == []
        gl_context.swap()  # no-op headless


def test_second_egl_context_shares_the_display(gl_context):
    if gl_context.backend != "egl":
        pytest.skip("the session context is a window")
    with render.create_context("egl") as second:
        assert second.info["egl_display"] == gl_context.info["egl_display"]
    gl_context.make_current()  # the first context survives the second one's release
    from render._gl import GL

    assert GL.glGetString(GL.GL_VERSION)


def test_window_without_display_is_a_context_error(monkeypatch):
    if plat.has_display():
        pytest.skip("a display exists here")
    monkeypatch.setenv("SDL_VIDEODRIVER", "x11")
    with pytest.raises(render.ContextError):
        render.create_context("window", size=(64, 64))


def test_unknown_backend_is_rejected():
    with pytest.raises(ValueError):
        render.create_context("vulkan")


def test_egl_device_platform_as_used_on_gpu_servers(gl_context):
    """EGL_EXT_device_enumeration (NVIDIA's headless path; Mesa lists a software device too)."""
    if gl_context.backend != "egl":
        pytest.skip("the session context is a window")
    try:
        ctx = render.create_context("egl", device=0)
    except render.ContextError as exc:
        pytest.skip(f"no EGL device here: {exc}")
    with ctx:
        assert ctx.info["egl_display"] == "EGL device 0"
    gl_context.make_current()
    with pytest.raises(render.ContextError, match="no EGL display"):
        render.create_context("egl", device=99)
    gl_context.make_current()


def test_platform_is_decided_late_by_the_first_gl_import():
    """``import render`` / ``render.platform`` / ``render.camera`` load no OpenGL, so a
    SWAYCAM_GL set afterwards (as the runtime does once it knows its outputs) still counts."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import os, sys\n"
        "import render, render.camera, render.expressions\n"
        "from render.platform import has_display\n"
        "assert not any(m.startswith('OpenGL') for m in sys.modules), 'OpenGL imported too early'\n"
        "os.environ['SWAYCAM_GL'] = 'egl'\n"
        "from render import create_context\n"
        "try:\n"
        "    ctx = create_context('auto')\n"
        "except render.ContextError as exc:\n"
        "    print('nocontext', exc); raise SystemExit(0)\n"
        "print(ctx.backend, os.environ.get('PYOPENGL_PLATFORM'))\n"
        "ctx.release()\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("SWAYCAM_GL", "PYOPENGL_PLATFORM")}
    env["DISPLAY"] = ":12345"  # a display "exists" at import time: auto would have meant a window
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout.strip().splitlines()[-1]
    if out.startswith("nocontext"):
        pytest.skip(out)
    assert out == "egl egl"


def test_egl_prefers_a_hardware_device_to_mesa_surfaceless(monkeypatch):
    """With NVIDIA's and Mesa's EGL vendors both installed, a GPU device comes before Mesa's
    surfaceless platform (llvmpipe); software devices come after it (this machine: one Mesa
    software device, so surfaceless stays first)."""
    pytest.importorskip("OpenGL.EGL")
    import OpenGL.EGL.EXT.device_enumeration as enum
    import render.egl as egl

    def query(n, out, count):                 # two devices: 0 software (Mesa), 1 a GPU
        count.contents.value = 2
        return True

    seen = iter([True, False])

    monkeypatch.setattr(egl, "_client_extensions", lambda: {"EGL_EXT_platform_device", "EGL_EXT_device_enumeration",
                                                             "EGL_MESA_platform_surfaceless"})
    monkeypatch.setattr(enum, "eglQueryDevicesEXT", query)
    monkeypatch.setattr(egl, "_is_software_device", lambda dev: next(seen))
    keys = [k for k, _, _ in egl._candidate_displays(None)]
    assert keys == [("device", 1), ("surfaceless",), ("device", 0), ("default",)]
    seen = iter([True])
    assert [k for k, _, _ in egl._candidate_displays(0)] == [("device", 0)]    # asked for: as asked
