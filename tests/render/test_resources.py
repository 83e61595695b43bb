"""GL objects and process memory stay bounded over 1,000 frames with avatar reloads."""

from __future__ import annotations

import gc
import os
import sys

import pytest
import render
from render._gl import GL

pytestmark = pytest.mark.gl

FRAMES = 1000
RELOAD_EVERY = 100
SIZE = (64, 36)
#: Allowed growth of the process's resident memory between the end of the first load cycle
#: of both avatars and the end of the run (measured here: < 2 MB; llvmpipe caches shaders).
RSS_GROWTH_BOUND_MB = 32.0


def _rss_mb() -> float | None:
    if not sys.platform.startswith("linux"):
        return None
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _live_gl_objects(max_name: int) -> dict[str, int]:
    """Objects the GL itself reports alive among names 1..max_name (independent of our ledger)."""
    checks = {"buffer": GL.glIsBuffer, "texture": GL.glIsTexture, "vertex_array": GL.glIsVertexArray,
              "framebuffer": GL.glIsFramebuffer, "renderbuffer": GL.glIsRenderbuffer, "sampler": GL.glIsSampler,
              "program": GL.glIsProgram}
    return {k: sum(bool(f(i)) for i in range(1, max_name + 1)) for k, f in checks.items()}


def _max_name() -> int:
    b = GL.glGenBuffers(1)
    t = GL.glGenTextures(1)
    GL.glDeleteBuffers(1, [b])
    GL.glDeleteTextures(1, [t])
    return int(max(b, t)) + 64


def test_thousand_frames_with_reloads_do_not_grow_gl_objects_or_memory(make_renderer, godette, default_avatar):
    r = make_renderer(SIZE)
    avatars = [godette, default_avatar]
    ledger_at: dict[int, dict] = {}
    rss_start = None
    for k in range(FRAMES):
        which = (k // RELOAD_EVERY) % 2
        if k % RELOAD_EVERY == 0:
            r.set_avatar(avatars[which])
        r.draw(None, {"blink": (k % 10) / 10}, overlays=render.Overlays(head_axes=None),
               hud=render.HudInfo(fps=float(k % 7)))
        r.read_rgba_async(k)
        # After the first frame of a load (the HUD texture and PBOs exist), from the second load
        # cycle on: mesh programs are cached per material feature set and shared between avatars
        # (render.shaders.Programs), so the cache is complete once both avatars were drawn.
        if k % RELOAD_EVERY == 0 and k >= 2 * RELOAD_EVERY:
            ledger_at.setdefault(which, r.ledger.snapshot())
            assert r.ledger.snapshot() == ledger_at[which], f"frame {k}: GL objects grew"
            if k == 3 * RELOAD_EVERY:  # both avatars loaded twice; the run ends on the same avatar
                gc.collect()
                rss_start = _rss_mb()
                gl_start = _live_gl_objects(_max_name())
    assert r.ledger.snapshot() == ledger_at[1]
    assert _live_gl_objects(_max_name()) == gl_start
    gc.collect()
    rss_end = _rss_mb()
    if rss_start is not None:
        assert rss_end - rss_start < RSS_GROWTH_BOUND_MB, f"RSS grew {rss_end - rss_start:.1f} MB"
    r.release()
    assert r.ledger.snapshot() == {}
