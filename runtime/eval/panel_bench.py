"""What the panel's live preview costs the render loop (``swaycam bench panel``).

One offline ``swaycam run`` of the standard head turn at 1280×720 with the control service,
every frame simulated and drawn as fast as the machine can, in alternating blocks of
``BLOCK_FRAMES`` frames without and with a connected preview client. Interleaving the blocks
in one run spreads the machine's other load over both conditions; the first ``SETTLE_FRAMES``
of each block are left out (the client connecting or leaving).

- The client is a separate process (:mod:`runtime.eval.mjpeg_client`) reading
  ``GET /preview.mjpg``: it never holds the render process's GIL (only the service's own
  stream thread, which a real browser client also costs, runs in the render process).
- The output: by default every frame is read back into a sink that drops it (what a virtual
  camera or video output costs, minus the encoding), so the GPU work of every frame is
  finished inside the loop under both conditions; with ``output=False`` nothing is read back
  and software GL may defer the frames' work to whichever later call waits for it (the
  preview's readback), which makes the conditions incomparable.

Reported per condition: frame time median / p95 / mean, fps = 1000 / mean frame time
(throughput), the render-thread time spent in the preview hook (``Panel.frame_drawn``:
request + take of the readback) median / p95 / total; the fps ratio with / without and the
cost in %, and the preview frames read back, encoded and received by the client.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

import numpy as np

from ..config import RunConfig
from ..outputs import Outputs
from ..session import Session

#: Frames per block, and frames dropped at the start of each block.
BLOCK_FRAMES = 40
SETTLE_FRAMES = 8


class _DropSink:
    """An output that takes every frame's pixels (the renderer's PBO readback) and drops them."""

    needs_pixels = True

    def __init__(self):
        self.frames = 0

    def send(self, rgba, t_ns: int = 0) -> None:
        self.frames += 1

    def close(self) -> None:
        pass


class _ClientProcess:
    """The preview client in its own process (see :mod:`runtime.eval.mjpeg_client`)."""

    def __init__(self, port: int):
        self.proc = subprocess.Popen([sys.executable, "-m", "runtime.eval.mjpeg_client", str(port)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.on = False
        self.bytes = 0
        self.parts = 0

    def set(self, on: bool) -> None:
        if on != self.on:
            self.on = on
            self.proc.stdin.write("on\n" if on else "off\n")
            self.proc.stdin.flush()

    def close(self) -> None:
        self.set(False)
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            for line in self.proc.stdout:
                words = line.split()
                if words and words[0] == "bytes":
                    self.bytes += int(words[1])
                    self.parts += int(words[3])
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def _stats(v) -> dict:
    a = np.array(v, np.float64)
    return {"n": int(len(a)), "median_ms": round(float(np.median(a)), 3),
            "p95_ms": round(float(np.percentile(a, 95)), 3), "mean_ms": round(float(a.mean()), 3)}


def bench_panel(*, size=(1280, 720), seconds: float = 24.0, avatar: str | None = None, output: bool = True) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = RunConfig(source="turn-test", avatar=avatar, size=size, fps=30.0, duration=seconds, service=True,
                        port=0, output=(f"png:{tmp}/unused",))
        rows: list[tuple[bool, bool, int, float]] = []   # (client on, kept, end ns, hook ms)
        state = {"k": 0, "hook_ms": 0.0}
        client: list[_ClientProcess] = []

        def on_frame(info, rig):
            k = state["k"]
            state["k"] += 1
            on = (k // BLOCK_FRAMES) % 2 == 1
            if client:
                client[0].set(on)
            rows.append((on, k % BLOCK_FRAMES >= SETTLE_FRAMES, time.perf_counter_ns(), state["hook_ms"]))
            state["hook_ms"] = 0.0

        session = Session(cfg, say=lambda s: None, on_frame=on_frame)
        with session:
            session.outputs.close(flush=False)
            sink = _DropSink()
            session.outputs = Outputs([sink] if output else [], ["drop"] if output else [], session.renderer)
            panel = session.panel
            hook = panel.frame_drawn

            def timed_hook(*a, **kw):
                t0 = time.perf_counter_ns()
                hook(*a, **kw)
                state["hook_ms"] += (time.perf_counter_ns() - t0) / 1e6

            panel.frame_drawn = timed_hook
            client.append(_ClientProcess(session.service.address[1]))
            try:
                session.run()
            finally:
                client[0].close()
            tap = panel.preview
            read, encoded = tap.frames_read, tap.frames_encoded
    frame = {True: [], False: []}
    hook = {True: [], False: []}
    for (on, keep, t, h), (on2, keep2, t2, h2) in zip(rows, rows[1:]):
        if keep and keep2 and on == on2:
            frame[on].append((t2 - t) / 1e6)      # frame k+1's time: its hook time is h2
            hook[on].append(h2)
    out = {"size": f"{size[0]}x{size[1]}", "frames": len(rows), "block_frames": BLOCK_FRAMES,
           "output_readback": output}
    for on, key in ((False, "without_panel"), (True, "with_panel")):
        s = _stats(frame[on])
        s["fps"] = round(1000.0 / s["mean_ms"], 2)
        hs = _stats(hook[on])
        s["preview_hook"] = {"median_ms": hs["median_ms"], "p95_ms": hs["p95_ms"],
                             "total_ms": round(float(np.sum(hook[on])), 1)}
        out[key] = s
    ratio = out["with_panel"]["fps"] / out["without_panel"]["fps"]
    out.update(fps_ratio=round(ratio, 4), fps_cost_pct=round(100.0 * (1.0 - ratio), 2),
               median_ratio=round(out["without_panel"]["median_ms"] / out["with_panel"]["median_ms"], 4),
               preview_frames_read=read, preview_frames_encoded=encoded,
               preview_frames_received=client[0].parts, preview_bytes_received=client[0].bytes)
    return out
