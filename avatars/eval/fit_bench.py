"""The try-on benchmark: seconds to fit + rig a style on an avatar (:func:`avatars.tryon.try_on`)
and to load the result back from the disk cache (:class:`avatars.tryon.cache.TryOnCache`).

``swaycam hair bench`` prints it; it is a measurement, never a test (the live switch of a
running session is :mod:`runtime.eval.tryon_bench`).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from ..hair import find_style, load_hair
from ..loader import load_avatar
from ..tryon.cache import TryOnCache
from ..tryon.pipeline import TryOnSettings, try_on


def bench_tryon(avatar_path, styles, *, repeats: int = 3, cache_dir=None) -> list[dict]:
    """Seconds to fit + rig each style on the avatar (median of ``repeats`` fresh runs) and
    to load it back from the disk cache (median of ``repeats``); a style that cannot be fitted
    is a row of its ``style`` and ``problems`` only. A benchmark: run it from
    ``swaycam hair bench``, never from a test (its refusal path excepted)."""
    avatar = load_avatar(avatar_path)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = TryOnCache(Path(cache_dir) if cache_dir else Path(tmp))
        for style in styles:
            path = Path(style) if Path(style).exists() else find_style(style)
            fresh = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                res = try_on(avatar, load_hair(path), TryOnSettings())
                fresh.append(time.perf_counter() - t0)
            if res.avatar is None:     # nothing fitted: no timing to report
                rows.append({"style": path.stem, "problems": list(res.fit.problems)})
                continue
            cache.store(avatar_path, path, TryOnSettings(), res)
            cached = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                hit = cache.load(avatar_path, path, TryOnSettings())
                cached.append(time.perf_counter() - t0)
                assert hit is not None
            rows.append({"style": path.stem, "fit_rig_s": float(np.median(fresh)), "fit_rig_s_max": float(max(fresh)),
                         "cached_s": float(np.median(cached)), "cached_s_max": float(max(cached)),
                         "chains": len(res.chains), "hair_vertices": res.hair_vertices})
    return rows
