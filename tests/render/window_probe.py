"""Run in a subprocess by test_window.py with DISPLAY set: open a window context, render,
present, post events, and print what happened as JSON on the last stdout line."""

from __future__ import annotations

import json
import sys

import numpy as np


def hidden_fallback() -> None:
    """PyOpenGL already bound to GLX on a desktop: a headless request gets a hidden window."""
    import render
    from avatars import load_avatar
    from tests.conftest import asset

    with render.create_context("egl") as ctx:
        with render.Renderer(ctx, (64, 36), background="chroma") as r:
            r.set_avatar(load_avatar(asset("vrm", "sphere.vrm")))
            r.draw()
            img = r.read_rgba()
        sys.stdout.write(json.dumps({"backend": ctx.backend, "corner": img[0, 0, :3].tolist(),
                                     "center_alpha": int(img[18, 32, 3])}) + "\n")


def main() -> None:
    if sys.argv[1:] == ["hidden"]:
        hidden_fallback()
        return
    import pygame

    import render
    from avatars import load_avatar
    from render._gl import GL
    from tests.conftest import asset

    out: dict = {"default_backend": render.platform.DEFAULT_BACKEND}
    with render.create_context("window", size=(400, 300), vsync=False, resizable=True) as ctx:
        out["backend"] = ctx.backend
        out["size"] = list(ctx.size)
        with render.Renderer(ctx, (320, 180), background="chroma") as r, render.WindowSink(ctx, r, swap=False) as sink:
            r.set_avatar(load_avatar(asset("vrm", "Godette_vrm_v4.vrm")))
            r.draw()
            fbo = r.read_rgba()
            sink.send(None, 0)
            back = np.empty((300, 400, 4), np.uint8)
            GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, 0)
            GL.glReadBuffer(GL.GL_BACK)
            GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)
            GL.glReadPixels(0, 0, 400, 300, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, back)
            back = back[::-1]  # window rows bottom-up
            out["letterbox_top"] = back[5, 200, :3].tolist()       # 400x300 window, 16:9 image: bars
            out["image_corner"] = back[60, 5, :3].tolist()          # inside the image: chroma green
            out["fbo_corner"] = fbo[0, 0, :3].tolist()
            # the window shows the FBO scaled by 400/320 = 1.25: compare a pixel of the avatar
            # (patch means: the window's copy is linearly filtered)
            win_patch = back[37 + 100:37 + 125, 188:213, :3].reshape(-1, 3).mean(axis=0)
            fbo_patch = fbo[80:100, 150:170, :3].reshape(-1, 3).mean(axis=0)
            out["avatar_diff"] = float(np.abs(win_patch - fbo_patch).max())
            ctx.swap()
            upload = render.WindowSink(ctx)
            upload.send(fbo, 0)
            upload.close()
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_f, mod=pygame.KMOD_LCTRL,
                                             unicode="f", scancode=0))
        pygame.event.post(pygame.event.Event(pygame.QUIT))
        events = ctx.poll_events()
        out["events"] = [[e.kind, e.key, list(e.mods)] for e in events if e.kind in ("key", "close")]
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
