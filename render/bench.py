"""Render benchmark: ms per frame (draw, readback) and fps per avatar and size.

Per avatar and size, after ``warmup`` frames, each of ``frames`` frames turns the head a
little (new world matrices, computed outside the timings) and blinks, then measures:

- ``draw_ms``: :meth:`Renderer.draw` until the GPU is done (``glFinish``);
- ``readback_ms``: synchronous :meth:`Renderer.read_rgba` of the finished frame;
- ``async_frame_ms``: a whole frame as the runtime runs it: ``draw`` + PBO
  :meth:`Renderer.read_rgba_async` (one frame of latency), no explicit finish;
- ``fps``: 1000 / ``async_frame_ms``;
- ``draw_cpu_ms``: process CPU time per drawn frame (all threads, llvmpipe's included),
  which is less disturbed than wall time when other processes share the machine.

Means are reported with the median and 95th percentile. Run it as ``swaycam bench render``
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
    a = np.asarray(values)
    return {"mean": float(a.mean()), "median": float(np.median(a)), "p95": float(np.percentile(a, 95))}


def run_render_bench(avatars: Sequence[str | Path] = ("default", "layered"), *,
                     sizes: Sequence[tuple[int, int]] = DEFAULT_SIZES, frames: int = 30, warmup: int = 3,
                     samples: int | None = None, antialias: str = "auto", outlines: str = "auto",
                     background: str = "chroma",
                     backend: str = "auto") -> dict:
    """Benchmark the renderer (see module doc).

    Args:
        avatars: avatar files, or "default" / "layered" for the generated ones.
        sizes: framebuffer sizes (width, height) in pixels.
        frames: timed frames per case; warmup: untimed frames first.
        samples: MSAA samples (None: the renderer's default for this GPU).
        antialias: "auto", "msaa", "fxaa" or "off" (:mod:`render.antialias`).
        outlines: MToon outlines "auto" (the runtime's default: off on llvmpipe), "on", "off"
            (:mod:`render.quality`).
        background: background spec.
        backend: context backend ("auto", "egl", "window").

    Returns:
        {"context": {...GL strings}, "samples": n, "results": [{"avatar", "size", "draw_ms",
        "readback_ms", "async_frame_ms" ({mean, median, p95}), "fps"}]}
    """
    from ._gl import GL

    from avatars import load_avatar

    from .context import create_context
    from .renderer import Renderer

    out: dict = {"results": []}
    with create_context(backend, size=(640, 360), vsync=False, visible=False) as ctx:
        out["context"] = dict(ctx.info)
        for spec in avatars:
            path = resolve_avatar(spec)
            avatar = load_avatar(path)
            blink = {"blink": 1.0}
            for size in sizes:
                with Renderer(ctx, tuple(size), samples=samples, antialias=antialias, background=background,
                              outlines=outlines) as r:
                    out["samples"] = r.samples
                    out["antialias"] = r.antialias
                    out["outlines"] = "on" if r.outlines else "off"
                    t0 = time.perf_counter()
                    r.set_avatar(avatar)
                    GL.glFinish()
                    upload_ms = (time.perf_counter() - t0) * 1e3
                    worlds = [_yawed(avatar, math.radians(20.0) * math.sin(k * 0.3)) for k in range(frames)]
                    for k in range(warmup):
                        r.draw(worlds[k % frames], blink if k % 2 else None)
                        r.read_rgba()
                    draw, read, whole = [], [], []
                    cpu0 = time.process_time()
                    for k in range(frames):
                        t0 = time.perf_counter()
                        r.draw(worlds[k], blink if k % 2 else None)
                        GL.glFinish()
                        t1 = time.perf_counter()
                        r.read_rgba()
                        t2 = time.perf_counter()
                        draw.append((t1 - t0) * 1e3)
                        read.append((t2 - t1) * 1e3)
                    draw_cpu_ms = (time.process_time() - cpu0) * 1e3 / frames - float(np.mean(read))
                    for k in range(frames):
                        t0 = time.perf_counter()
                        r.draw(worlds[k], blink if k % 2 else None)
                        r.read_rgba_async(k)
                        whole.append((time.perf_counter() - t0) * 1e3)
                    res = {"avatar": path.stem, "size": list(size), "upload_ms": upload_ms,
                           "draw_ms": _stats(draw), "readback_ms": _stats(read), "async_frame_ms": _stats(whole),
                           "draw_cpu_ms": draw_cpu_ms}
                    res["fps"] = 1000.0 / res["async_frame_ms"]["mean"]
                    out["results"].append(res)
                    log.info("%s %dx%d: draw %.1f ms, readback %.1f ms, %.1f fps", path.stem, *size,
                             res["draw_ms"]["mean"], res["readback_ms"]["mean"], res["fps"])
    return out


def format_table(result: dict) -> str:
    """A plain-text table of :func:`run_render_bench` results."""
    ctx = result.get("context", {})
    lines = [f"{ctx.get('gl_renderer', '?')} ({ctx.get('gl_version', '?')}), anti-aliasing "
             f"{result.get('antialias', '?')}, MSAA {result.get('samples', '?')}x, "
             f"outlines {result.get('outlines', '?')}",
             f"{'avatar':32s} {'size':>10s} {'draw ms':>9s} {'read ms':>9s} {'frame ms':>9s} {'fps':>7s} "
             f"{'draw cpu ms':>11s}"]
    for r in result["results"]:
        lines.append(f"{r['avatar'][:32]:32s} {r['size'][0]:>5d}x{r['size'][1]:<4d} {r['draw_ms']['mean']:9.1f} "
                     f"{r['readback_ms']['mean']:9.2f} {r['async_frame_ms']['mean']:9.1f} {r['fps']:7.1f} "
                     f"{r['draw_cpu_ms']:11.1f}")
    return "\n".join(lines)
