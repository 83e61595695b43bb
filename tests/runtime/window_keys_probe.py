"""Run in a subprocess by test_window_answers.py with DISPLAY set (Xvfb): a run whose output
is a window, driven by synthetic key events (pygame events posted to the window's queue, as
SDL posts the X server's); prints on the last stdout line, as JSON, what each key did.

    python -m tests.runtime.window_keys_probe MODE KEYS
MODE: offline | live | kiosk; KEYS: JSON {frame: key name or "close"}.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from runtime.config import RunConfig
from runtime.config_sections import MotionSection
from runtime.session import Session
from tests.conftest import asset


def main() -> None:
    mode, script = sys.argv[1], {int(k): v for k, v in json.loads(sys.argv[2]).items()}
    said: list[str] = []
    log: dict = {"keys": [], "panes": None}
    cfg = dict(output=("window",), size=(320, 180), fps=10, motion=MotionSection(clip="none"))
    if mode == "live":
        cfg.update(source=str(asset("face", "mediapipe_face_mesh_android_gpu.gif")), realtime=True, duration=4.0,
                   face_model=str(asset("models", "face_landmarker_v2_with_blendshapes.task")))
    else:
        cfg.update(source="turn-test", duration=4.0, kiosk=mode == "kiosk")
    session = Session(RunConfig(**cfg), say=said.append)
    recenters = []

    def state():
        s = session
        return {"overlays": s.drawer.overlays, "hud": s.drawer.hud, "solver": s.stage.rig.solver, "compare": s.stage.compare,
                "paused": s.clock.paused, "recenters": len(recenters), "screenshots": s.controls.screenshots,
                "said": len(said)}

    def post(key):
        import pygame

        if key == "close":
            pygame.event.post(pygame.event.Event(pygame.QUIT))
        else:
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.key.key_code(key), mod=0, unicode="",
                                                 scancode=0))

    def grab_panes():
        from render._gl import GL

        w, h = session.context.framebuffer_size
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, 0)
        GL.glReadBuffer(GL.GL_BACK)
        px = np.frombuffer(GL.glReadPixels(0, 0, w, h, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE), np.uint8).reshape(h, w, 4)
        px = px[::-1, :, :3].astype(int)                       # row 0 = top
        bg = px[h // 2, 2]
        fg = np.abs(px - bg).sum(-1) > 30
        white = (px > 200).all(-1)                             # label text
        half = w // 2
        return {"size": [w, h], "left": int(fg[:, :half].sum()), "right": int(fg[:, half:].sum()),
                "left_label": int(white[:40, :half].sum()), "right_label": int(white[:40, half:].sum()),
                "middle": int(fg[:, half - 4:half + 4].sum())}

    with session:
        orig_recenter = session.pose_input.recenter
        session.pose_input.recenter = lambda: (recenters.append(1), orig_recenter())[1]
        orig_swap = session.context.swap
        t0 = time.perf_counter()

        def swap():
            n = session.drawer.frames
            if session.stage.compare and log["panes"] is None:
                log["panes"] = grab_panes()
            orig_swap()
            if n in script:
                before = state()
                post(script[n])
                log["keys"].append({"frame": n, "key": script[n], "before": before})

        session.context.swap = swap

        result = session.run()
        log.update(final=state(), frames=result.frames, seconds=time.perf_counter() - t0, live=session.live,
                   stopped_at=session.drawer.frames, said=said)
    sys.stdout.write(json.dumps(log) + "\n")


if __name__ == "__main__":
    main()
