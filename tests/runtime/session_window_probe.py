"""Run in a subprocess by test_session.py with DISPLAY set: a session whose only output is a
window, with compare mode switched on and one screenshot taken; prints what was read back
as JSON on the last stdout line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime.config import RunConfig
from runtime.session import Session


class Scripted(Session):
    """Presses 'c' before frame 3 and 'p' before frame 6."""

    script = {3: "c", 6: "p"}

    pressed: set = set()

    def handle_events(self) -> None:
        # events are polled several times per frame while a window run waits for real time:
        # each scripted key is pressed once
        n = self.drawer.frames
        key = self.script.get(n)
        if key and n not in self.pressed:
            self.pressed.add(n)
            self.keys.press(key)
        super().handle_events()


def main() -> None:
    reads = []
    cfg = RunConfig(source="turn-test", output=("window",), size=(320, 180), fps=10, duration=1.0)
    session = Scripted(cfg, say=lambda s: None, on_frame=lambda info, rig: reads.append(session.renderer.pixel_reads))
    with session:
        result = session.run()
        window = session.outputs.sinks[0]
        out = {"frames": result.frames, "presented": window.frames, "needs_pixels": session.outputs.needs_pixels,
               "reads_per_frame": reads, "pixel_reads": session.renderer.pixel_reads,
               "screenshots": [str(p) for p in sorted(Path("out").glob("screenshot-*.png"))]}
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
