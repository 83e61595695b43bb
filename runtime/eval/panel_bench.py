"""What the panel's live preview costs the render loop (``swaycam bench panel``).

One offline ``swaycam run`` of the standard head turn at 1280×720 with the control service
(every frame simulated and drawn as fast as the machine can, no output encoding: the run's
outputs are replaced by none, so the render loop alone is timed), in alternating blocks of
frames with and without a connected preview client (an HTTP client reading
``GET /preview.mjpg`` the whole block). Interleaving the blocks spreads the machine's other
load over both conditions. The first ``SETTLE_FRAMES`` frames of each block are left out (the
client connecting or leaving). Reported: frame time median / p95 / mean per condition, fps =
frames / time = 1000 / mean frame time (throughput: software GL defers work, so a frame that
waits for the GPU takes over what earlier frames left, and only the total is the loop's rate),
their ratio, and the preview frames read back and encoded.
"""

from __future__ import annotations

import http.client
import tempfile
import threading
import time

import numpy as np

from ..config import RunConfig
from ..outputs import Outputs
from ..session import Session

#: Frames per block, and frames dropped at the start of each block.
BLOCK_FRAMES = 40
SETTLE_FRAMES = 8


class _Client(threading.Thread):
    """Reads the MJPEG stream until told to stop."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.bytes = 0

    def run(self) -> None:
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            c.request("GET", "/preview.mjpg")
            r = c.getresponse()
            while not self.stop.is_set():
                chunk = r.read1(65536)
                if not chunk:
                    break
                self.bytes += len(chunk)
        except OSError:
            pass
        finally:
            c.close()


def bench_panel(*, size=(1280, 720), seconds: float = 24.0, avatar: str | None = None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = RunConfig(source="turn-test", avatar=avatar, size=size, fps=30.0, duration=seconds, service=True,
                        port=0, output=(f"png:{tmp}/unused",))
        times: list[tuple[bool, int]] = []
        state = {"k": 0, "client": None}

        def on_frame(info, rig):
            k = state["k"]
            state["k"] += 1
            on = (k // BLOCK_FRAMES) % 2 == 1
            if k % BLOCK_FRAMES == 0:
                if state["client"] is not None:
                    state["client"].stop.set()
                    state["client"] = None
                if on:
                    state["client"] = _Client(session.service.address[1])
                    state["client"].start()
            times.append((on and k % BLOCK_FRAMES >= SETTLE_FRAMES, k % BLOCK_FRAMES >= SETTLE_FRAMES,
                          time.perf_counter_ns()))

        session = Session(cfg, say=lambda s: None, on_frame=on_frame)
        with session:
            session.outputs.close(flush=False)            # time the render loop alone: no output
            session.outputs = Outputs([], [], session.renderer)
            session.run()
            if state["client"] is not None:
                state["client"].stop.set()
            tap = session.panel.preview
            read, encoded = tap.frames_read, tap.frames_encoded
    with_ms, without_ms = [], []
    for (on, keep, t), (_, keep2, t2) in zip(times, times[1:]):
        if keep and keep2:
            (with_ms if on else without_ms).append((t2 - t) / 1e6)

    def stats(v):
        a = np.array(v)
        return {"n": len(a), "median_ms": round(float(np.median(a)), 3), "p95_ms": round(float(np.percentile(a, 95)), 3),
                "mean_ms": round(float(a.mean()), 3), "fps": round(1000.0 / float(a.mean()), 2)}

    w, wo = stats(with_ms), stats(without_ms)
    return {"size": f"{size[0]}x{size[1]}", "frames": len(times), "block_frames": BLOCK_FRAMES,
            "without_panel": wo, "with_panel": w, "fps_ratio": round(w["fps"] / wo["fps"], 4),
            "fps_cost_pct": round(100.0 * (1.0 - w["fps"] / wo["fps"]), 2),
            "preview_frames_read": read, "preview_frames_encoded": encoded}
