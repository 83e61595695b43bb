"""Render benchmark: ms per frame (draw, readback) and fps per avatar, size and quality case.

Per avatar and size, one renderer per case (a mesh ``detail`` and a ``readback`` path, see
below) draws the same frames; after ``warmup`` frames the cases take turns in ``rounds``
blocks of ``frames`` frames in one process (the machine's speed drifts between minutes;
ratios are taken within one run). Each frame turns the head a little (new world matrices,
computed outside the timings) and blinks. Per case:

- ``draw_ms``: :meth:`Renderer.draw` until the GPU is done (``glFinish``);
- ``readback_ms``: synchronous :meth:`Renderer.read_rgba` of the finished frame;
- ``frame_ms``: a whole frame as an offline run draws it: ``draw`` + :meth:`Renderer.read_rgba_async`
  (``readback`` "thread": the renderer's readback thread reads a frame while the next one is
  drawn, :mod:`render.frame_reader`, as ``swaycam run`` offline on EGL; "pbo": the PBO double
  buffer, one frame of latency);
- ``fps``: frames per second of those blocks (frames / their wall time, the last frame
  collected);
- ``cpu_ms``: process CPU time per frame of those blocks (all threads, llvmpipe's included),
  less disturbed than wall time when other processes share the machine;
- ``triangles`` drawn per frame and ``file_triangles`` (fewer with reduced detail).

Medians and 95th percentiles over every timed frame. Run it as ``swaycam bench render``
(its options are declared in runtime/cli/bench.py).
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)

DEFAULT_SIZES = ((640, 360), (1280, 720), (1920, 1080))
READBACKS = ("thread", "pbo")


def resolve_avatar(spec: str | Path) -> Path:
    """"default" / "layered" (the generated avatars) or a file path."""
    if str(spec) in ("default", "layered"):
        from avatars import generate

        return generate.default_avatar_path() if str(spec) == "default" else generate.layered_avatar_path()
    return Path(spec)


def _yawed(avatar, yaw: float) -> np.ndarray:
    world = avatar.skeleton.rest_world.copy()
    head = avatar.head_node()
    if head < 0:
        return world
    p = world[head][:3, 3]
    c, s = math.cos(yaw), math.sin(yaw)
    m = np.eye(4)
    m[:3, :3] = [[c, 0, s], [0, 1, 0], [-s, 0, c]]
    m[:3, 3] = p - m[:3, :3] @ p
    nodes = avatar.skeleton.descendants(head)
    world[nodes] = m @ world[nodes]
    return world


def _stats(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, np.float64)
    return {"mean": float(a.mean()), "median": float(np.median(a)), "p95": float(np.percentile(a, 95))}


def _case_name(detail: str, readback: str, cases: list[tuple[str, str]]) -> str:
    details = {d for d, _ in cases}
    readbacks = {r for _, r in cases}
    parts = ([detail] if len(details) > 1 else []) + ([readback] if len(readbacks) > 1 else [])
    return "/".join(parts) or detail


def run_render_bench(avatars: Sequence[str | Path] = ("default", "layered"), *,
                     sizes: Sequence[tuple[int, int]] = DEFAULT_SIZES, frames: int = 30, warmup: int = 3,
                     rounds: int = 3, samples: int | None = None, antialias: str = "auto", outlines: str = "auto",
                     details: Sequence[str] = ("auto",), readbacks: Sequence[str] = ("thread",),
                     background: str = "chroma", backend: str = "auto") -> dict:
    """Benchmark the renderer (see module doc).

    Args:
        avatars: avatar files, or "default" / "layered" for the generated ones.
        sizes: framebuffer sizes (width, height) in pixels.
        frames: timed frames per block; rounds: blocks per case (the cases alternate);
            warmup: untimed frames first.
        samples: MSAA samples (None: the renderer's default for this GPU).
        antialias: "auto", "msaa", "fxaa" or "off" (:mod:`render.antialias`).
        outlines: MToon outlines "auto" (the runtime's default: off on llvmpipe), "on", "off"
            (:mod:`render.quality`).
        details: mesh detail cases, "auto" (the runtime's default: reduced on llvmpipe),
            "full", "reduced" (:mod:`render.detail`).
        readbacks: readback cases, "thread" (frames in flight where the context allows it,
            as offline runs on EGL) and/or "pbo".
        background: background spec.
        backend: context backend ("auto", "egl", "window").

    Returns:
        {"context": {...GL strings}, "samples", "antialias", "outlines", "results": [{"avatar",
        "size", "case", "detail", "reduced", "readback", "upload_ms", "draw_ms",
        "readback_ms", "frame_ms" ({mean, median, p95}), "fps", "cpu_ms", "triangles",
        "file_triangles"}]}

    Raises:
        ValueError: an unknown readback case.
    """
    from .._gl import GL

    from avatars import load_avatar

    from ..context import create_context
    from ..renderer import Renderer

    bad = [r for r in readbacks if r not in READBACKS]
    if bad:
        raise ValueError(f"readback {bad[0]!r}: expected one of {', '.join(READBACKS)}")
    cases = [(d, r) for d in dict.fromkeys(details) for r in dict.fromkeys(readbacks)]
    out: dict = {"results": []}
    with create_context(backend, size=(640, 360), vsync=False, visible=False) as ctx:
        out["context"] = dict(ctx.info)
        for spec in avatars:
            path = resolve_avatar(spec)
            avatar = load_avatar(path)
            blink = {"blink": 1.0}
            n = max(frames, 1)
            worlds = [_yawed(avatar, math.radians(20.0) * math.sin(k * 0.3)) for k in range(n)]
            for size in sizes:
                runs = []
                try:
                    for detail, readback in cases:
                        r = Renderer(ctx, tuple(size), samples=samples, antialias=antialias, background=background,
                                     outlines=outlines, detail=detail)
                        t0 = time.perf_counter()
                        r.set_avatar(avatar)
                        GL.glFinish()
                        upload_ms = (time.perf_counter() - t0) * 1e3
                        threaded = readback == "thread" and r.start_reader()
                        runs.append({"r": r, "detail": detail, "readback": "thread" if threaded else "pbo",
                                     "upload_ms": upload_ms, "draw": [], "read": [], "frame": [], "fps": [],
                                     "cpu": []})
                    for run in runs:
                        r = run["r"]
                        for k in range(warmup):
                            r.draw(worlds[k % n], blink if k % 2 else None)
                            r.read_rgba()
                        for k in range(n):             # draw until done, then a synchronous read
                            t0 = time.perf_counter()
                            r.draw(worlds[k], blink if k % 2 else None)
                            GL.glFinish()
                            t1 = time.perf_counter()
                            r.read_rgba()
                            run["draw"].append((t1 - t0) * 1e3)
                            run["read"].append((time.perf_counter() - t1) * 1e3)
                    for _ in range(max(rounds, 1)):    # the runtime's offline frame, the cases in turn
                        for run in runs:
                            r = run["r"]
                            c0, w0 = time.process_time(), time.perf_counter()
                            for k in range(n):
                                t0 = time.perf_counter()
                                r.draw(worlds[k], blink if k % 2 else None)
                                r.read_rgba_async(k)
                                run["frame"].append((time.perf_counter() - t0) * 1e3)
                            while r.flush_readback() is not None:
                                pass
                            run["fps"].append(n / (time.perf_counter() - w0))
                            run["cpu"].append((time.process_time() - c0) * 1e3 / n)
                    for run in runs:
                        r = run["r"]
                        res = {"avatar": path.stem, "size": list(size),
                               "case": _case_name(run["detail"], run["readback"], cases),
                               "detail": run["detail"], "reduced": r.reduced, "readback": run["readback"],
                               "upload_ms": run["upload_ms"], "draw_ms": _stats(run["draw"]),
                               "readback_ms": _stats(run["read"]), "frame_ms": _stats(run["frame"]),
                               "fps": float(np.median(run["fps"])), "cpu_ms": float(np.median(run["cpu"])),
                               "triangles": int(r.stats.triangles),
                               "file_triangles": int(sum(p.file_triangles for p in r.gpu.primitives))}
                        out["results"].append(res)
                        log.info("%s %dx%d %s: %.1f fps, %.1f ms CPU per frame", path.stem, *size, res["case"],
                                 res["fps"], res["cpu_ms"])
                    out["samples"] = runs[0]["r"].samples
                    out["antialias"] = runs[0]["r"].antialias
                    out["outlines"] = "on" if runs[0]["r"].outlines else "off"
                finally:
                    for run in runs:
                        run["r"].release()
    return out


def format_table(result: dict) -> str:
    """A plain-text table of :func:`run_render_bench` results (medians; p95 of the frame)."""
    ctx = result.get("context", {})
    lines = [f"{ctx.get('gl_renderer', '?')} ({ctx.get('gl_version', '?')}), anti-aliasing "
             f"{result.get('antialias', '?')}, MSAA {result.get('samples', '?')}x, "
             f"outlines {result.get('outlines', '?')}",
             f"{'avatar':24s} {'size':>10s} {'case':>18s} {'triangles':>13s} {'draw ms':>8s} {'read ms':>8s} "
             f"{'frame ms':>8s} {'p95':>6s} {'fps':>6s} {'cpu ms':>7s}"]
    for r in result["results"]:
        case = r["case"] + (f" ({'reduced' if r['reduced'] else 'full'})" if r["detail"] == "auto" else "")
        tri = f"{r['triangles']}/{r['file_triangles']}"
        lines.append(f"{r['avatar'][:24]:24s} {r['size'][0]:>5d}x{r['size'][1]:<4d} {case[:18]:>18s} {tri:>13s} "
                     f"{r['draw_ms']['median']:8.1f} {r['readback_ms']['median']:8.2f} "
                     f"{r['frame_ms']['median']:8.1f} {r['frame_ms']['p95']:6.1f} {r['fps']:6.1f} {r['cpu_ms']:7.1f}")
    return "\n".join(lines)
