"""Run in a subprocess by test_window_mouse.py with DISPLAY set (Xvfb): a run whose output is a
window, driven by synthetic mouse events (pygame events posted to the window's queue, as SDL
posts the X server's): a left drag, a wheel notch, a right drag; prints on the last stdout
line, as JSON, the viewer's orbit, its camera's view matrix and the window's pixels after each.

    python -m tests.runtime.window_mouse_probe
"""

from __future__ import annotations

import json
import sys

import numpy as np

from runtime.config import RunConfig
from runtime.config_sections import MotionSection
from runtime.session import Session

#: frame -> the event posted after it is shown.
SCRIPT = {3: ("drag", 1, (40, 0)), 4: ("drag", 1, (60, 10)), 7: ("wheel", 0, (0, 2)), 10: ("drag", 3, (20, -10)),
          13: ("key", 0, "x")}


def main() -> None:
    cfg = RunConfig(output=("window",), size=(320, 180), fps=10, source="turn-test", duration=2.0,
                    motion=MotionSection(clip="none"))
    session = Session(cfg, say=lambda line: None)
    log: dict = {"states": []}

    def pixels():
        from render._gl import GL

        w, h = session.context.framebuffer_size
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, 0)
        GL.glReadBuffer(GL.GL_BACK)
        px = np.frombuffer(GL.glReadPixels(0, 0, w, h, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE), np.uint8).reshape(h, w, 4)
        return px[::-1, :, :3].astype(int)

    def post(kind, button, arg):
        import pygame

        if kind == "drag":
            buttons = (button == 1, button == 2, button == 3)
            pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=(160, 90), rel=arg, buttons=buttons,
                                                 touch=False))
        elif kind == "wheel":
            pygame.event.post(pygame.event.Event(pygame.MOUSEWHEEL, x=arg[0], y=arg[1], flipped=False, touch=False))
        else:
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.key.key_code(arg), mod=0, unicode="",
                                                 scancode=0))

    with session:
        orig_swap = session.context.swap
        first = {}

        def swap():
            n = session.drawer.frames
            px = pixels()
            if "px" not in first:
                first["px"] = px
            orig_swap()
            d = session.drawer
            cam = d.cameras()[0]
            log["states"].append({"frame": n, "orbit": d.view.orbit.to_dict(),
                                  "view": cam.view_matrix().tolist(), "position": list(map(float, cam.position)),
                                  "target": list(map(float, cam.target)),
                                  "base_position": list(map(float, d.renderer.camera.position)),
                                  "changed": float((np.abs(px - first["px"]).max(-1) > 40).mean()),
                                  "window": list(session.context.size), "output": list(d.renderer.size)})
            if n in SCRIPT:
                post(*SCRIPT[n])

        session.context.swap = swap
        session.run()
    sys.stdout.write(json.dumps(log) + "\n")


if __name__ == "__main__":
    main()
