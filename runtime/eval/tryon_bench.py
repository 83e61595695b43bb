"""The live try-on benchmark (``swaycam bench tryon``; a measurement, never a test).

- per style: seconds to fit + rig (:func:`avatars.tryon.try_on` on the loaded avatar, hair
  file loading included, then the runtime's rig: ``AvatarRig`` with the run's options, its
  numba warm-up and the camera framing — what the switch's worker does), median and p95 of
  ``repeats`` fresh runs; and the cached reload (:meth:`TryOnCache.load`, both files hashed,
  plus the same rig), median and p95;
- a live switch: ``swaycam run --realtime`` at ``fps`` into a video file, the styles asked
  for one after the other through :class:`runtime.tryon.StyleSwitcher` (as the keys and
  ``POST /hairstyle`` do) — first with an empty fit cache (the fits run in the fitter
  process), then again from the cache — and every frame period recorded: before any switch
  (the baseline), while a fit or reload is in flight, and the frame that swaps the new avatar
  in (with the render thread's swap time: motion hand-over, rig swap, GPU upload).
  Target: no frame period longer than two frame periods.
- the per-vertex contact of the try-on hair (:mod:`avatars.contact`): per style, a headless
  render (llvmpipe here) of frames with the head turning, the same fitted avatar drawn with
  and without the hair's contact, interleaved ``repeats`` times; process CPU ms per frame
  (llvmpipe's threads included: steadier than wall time on a shared machine) and wall ms,
  medians, and the CPU side alone (:func:`avatars.contact.contact_frame`, µs per frame).
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from avatars import load_avatar
from avatars.hair import find_style, load_hair

from ..config import RunConfig
from ..rig import AvatarRig
from ..rig.motion_options import MotionOptions

#: Seconds of the live run before the first switch (the baseline, without its first
#: :data:`WARMUP_S`: encoder start-up) and between switches.
BASELINE_S = 4.0
WARMUP_S = 1.0
GAP_S = 1.0


def _stats(xs) -> dict:
    a = np.asarray(xs, float)
    if a.size == 0:
        return {"median": None, "p95": None, "max": None, "n": 0}
    return {"median": round(float(np.median(a)), 4), "p95": round(float(np.percentile(a, 95)), 4),
            "max": round(float(a.max()), 4), "n": int(a.size)}


def bench_fits(avatar_path, styles: list[str], *, repeats: int = 5) -> list[dict]:
    """Seconds per style: fit + rig (fresh) and cached reload + rig (module doc)."""
    from avatars.tryon import TryOnSettings, try_on
    from avatars.tryon.cache import TryOnCache

    avatar = load_avatar(avatar_path)
    settings = TryOnSettings()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = TryOnCache(Path(tmp))
        for style in styles:
            path = Path(style) if Path(style).is_file() else find_style(style)
            fit, rig_s, reload = [], [], []
            res = None
            for _ in range(repeats):
                t0 = time.perf_counter()
                res = try_on(avatar, load_hair(path), settings)
                t1 = time.perf_counter()
                if res.avatar is None:
                    break
                rig = AvatarRig(res.avatar, motion=MotionOptions())
                rig.warm_up()
                fit.append(t1 - t0)
                rig_s.append(time.perf_counter() - t1)
            if res is None or res.avatar is None:
                rows.append({"style": path.stem, "error": "; ".join(res.fit.problems) if res else "no run"})
                continue
            cache.store(avatar_path, path, settings, res)
            for _ in range(repeats):
                t0 = time.perf_counter()
                hit = cache.load(avatar_path, path, settings)
                rig = AvatarRig(hit.avatar, motion=MotionOptions())
                rig.warm_up()
                reload.append(time.perf_counter() - t0)
            rows.append({"style": path.stem, "chains": len(res.chains), "hair_vertices": res.hair_vertices,
                         "fit_s": _stats(fit), "rig_s": _stats(rig_s),
                         "fit_rig_s": _stats(np.add(fit, rig_s)), "cached_rig_s": _stats(reload)})
    return rows


def bench_live_switch(styles: list[str], *, avatar: str | None = None, source: str = "turn-test",
                      fps: float = 30.0, size=(640, 360), paced: bool = True) -> dict:
    """Frame periods of a live-paced run while the styles are switched (module doc).
    ``paced`` false: the worker's steps do not wait for the render thread's idle time
    (:meth:`runtime.tryon.StyleSwitcher.frame_drawn`; to measure what that wait buys)."""
    from avatars.tryon.cache import TryOnCache

    from ..session import Session

    frames: list[tuple[float, int, bool]] = []      # (perf_counter, swaps so far, a switch in flight)
    events: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        cfg = RunConfig(avatar=avatar, source=source, realtime=True, fps=fps, size=size, duration=3600.0,
                        output=(f"video:{tmp}/switch.mp4",))

        def on_frame(info, rig):
            sw = session.tryon
            frames.append((time.perf_counter(), sw.swaps, sw.switching))

        def drive():
            try:
                time.sleep(BASELINE_S)
                for phase in ("fit", "cached"):
                    for name in [*styles, None]:
                        sw = session.tryon
                        t0 = time.perf_counter()
                        fut = sw.request(None if name is None else sw.styles.resolve(name), name)
                        try:
                            info = fut.result(timeout=300)
                            err = None
                        except Exception as exc:  # noqa: BLE001 - reported in the table
                            info, err = {}, str(exc)
                        events.append({"phase": phase, "style": name, "t0": t0, "t1": time.perf_counter(),
                                       "error": err, "cached": info.get("cached"),
                                       "fit_seconds": info.get("fit_seconds"), "rig_seconds": info.get("rig_seconds"),
                                       "swap_ms": info.get("swap_ms")})
                        time.sleep(GAP_S)
            finally:
                session.stop()

        session = Session(cfg, say=lambda s: None, on_frame=on_frame)
        with session:
            session.tryon.cache = TryOnCache(Path(tmp) / "cache")
            session.tryon.paced = paced
            th = threading.Thread(target=drive, name="bench-tryon", daemon=True)
            th.start()
            session.run()
        th.join(timeout=10)
    t = np.array([f[0] for f in frames])
    swaps = np.array([f[1] for f in frames])
    busy = np.array([f[2] for f in frames])
    period = np.diff(t) * 1e3                       # period k ends with frame k + 1
    first = events[0]["t0"] if events else t[-1]
    base = period[(t[1:] < first) & (t[1:] > t[0] + WARMUP_S)]
    swap_frames = np.nonzero(np.diff(swaps) > 0)[0]         # frame k+1 swapped (its period: period[k])
    in_flight = period[busy[1:] & (np.diff(swaps) == 0)]
    rows = []
    for e in events:
        sel = (t[1:] >= e["t0"]) & (t[1:] <= e["t1"] + 0.05)
        k = int(np.argmax(np.where(sel, period, -1.0))) if sel.any() else None
        rows.append({**{k: v for k, v in e.items() if k not in ("t0", "t1")},
                     "seconds": round(e["t1"] - e["t0"], 3),
                     "longest_period_ms": round(float(period[k]), 1) if k is not None else None,
                     "longest_at_s": round(float(t[k + 1] - e["t0"]), 3) if k is not None else None})
    limit = 2e3 / fps
    longest = float(period[busy[1:] | (np.diff(swaps) > 0)].max(initial=0.0))
    return {"source": source, "avatar": avatar or "default", "fps": fps, "paced": paced, "size": f"{size[0]}x{size[1]}",
            "frame_period_ms": round(1e3 / fps, 2), "limit_ms": round(limit, 2),
            "baseline_ms": _stats(base), "in_flight_ms": _stats(in_flight),
            "swap_frame_ms": _stats(period[swap_frames]),
            "longest_during_switches_ms": round(longest, 1), "within_limit": bool(longest <= limit),
            "switches": rows}


def bench_contact(avatar_path, styles: list[str], *, frames: int = 60, repeats: int = 6,
                  size: tuple[int, int] = (640, 360)) -> list[dict]:
    """Cost of the try-on hair's per-vertex contact per drawn frame (module doc)."""
    import math
    from dataclasses import replace

    import render
    from avatars.contact import contact_frame
    from avatars.math3d import quat_from_axis_angle
    from avatars.tryon import TryOnSettings, try_on
    from render._gl import GL
    from solver.eval.posing import SubtreePoser

    avatar = load_avatar(avatar_path)
    ctx = render.create_context("auto", size=(64, 64), visible=False, vsync=False)
    rows = []
    try:
        with render.Renderer(ctx, size, samples=0) as r:
            for style in styles:
                res = try_on(avatar, load_hair(find_style(style) if not Path(style).exists() else Path(style)),
                             TryOnSettings())
                if res.avatar is None:
                    continue
                on = res.avatar
                mi = list(on.mesh_instances)
                mi[res.hair_instance] = replace(mi[res.hair_instance], contact=None)
                off = replace(on, mesh_instances=tuple(mi))
                poser = SubtreePoser(on.skeleton, on.head_node())
                worlds = [poser.world(quat_from_axis_angle(np.array([0.0, 1.0, 0.0]),
                                                           math.radians(40.0 * math.sin(i / 10.0)))).copy()
                          for i in range(frames)]
                cpu: dict[str, list] = {"off": [], "on": []}
                wall: dict[str, list] = {"off": [], "on": []}
                for _ in range(repeats):
                    for name, av in (("off", off), ("on", on)):
                        r.set_avatar(av)
                        for w in worlds[:5]:
                            r.draw(w)
                        GL.glFinish()
                        c0, t0 = time.process_time(), time.perf_counter()
                        for w in worlds:
                            r.draw(w)
                            GL.glFinish()
                        cpu[name].append((time.process_time() - c0) / frames * 1e3)
                        wall[name].append((time.perf_counter() - t0) / frames * 1e3)
                c = on.mesh_instances[res.hair_instance].contact
                t0 = time.perf_counter()
                for w in worlds:
                    contact_frame(on, c, w)
                prim = on.meshes[on.mesh_instances[res.hair_instance].mesh].primitives[0]
                rows.append({"style": Path(style).stem, "hair_vertices": prim.vertex_count, "size": f"{size[0]}x{size[1]}",
                             "cpu_ms_off": round(float(np.median(cpu["off"])), 3),
                             "cpu_ms_on": round(float(np.median(cpu["on"])), 3),
                             "wall_ms_off": round(float(np.median(wall["off"])), 3),
                             "wall_ms_on": round(float(np.median(wall["on"])), 3),
                             "contact_frame_us": round((time.perf_counter() - t0) / frames * 1e6, 1)})
    finally:
        ctx.release()
    return rows
