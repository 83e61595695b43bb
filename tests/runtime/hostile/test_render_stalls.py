"""Requests within the rate limit must not stall the render loop (issue 34 finding 6): on main,
``POST /hair`` with 3,000 spring patterns dropped 69 frames and 50 substeps in 5 s, and
alternating ``POST /avatar`` 9-48 frames, measured by the run's own telemetry (``GET /status``
``dropped_frames``, ``dropped_substeps``). Now the costly work runs off the render thread in
its idle time (runtime/commands.py RenderIdle: the spring patterns are resolved and the
avatar is loaded, rigged and framed step by step while the render thread sleeps; its GPU
upload runs about 4 ms a frame, render/staged.py, swapped in at once when complete) and is
bounded (at most 256 spring patterns: 400 above).

The machine running the tests is shared: a quiet window of the same length, measured just
before, is the baseline — the attack must drop no more than it (0 when it dropped 0)."""

from __future__ import annotations

import json
import time

import pytest

from .conftest import call

WINDOW_S = 4.0


def _drops(port):
    s = call(port, "GET", "/status")[1]
    return s["dropped_frames"], s["dropped_substeps"], s["frames"]


def _window(port, attack=None):
    f0, s0, n0 = _drops(port)
    t0 = time.monotonic()
    codes = {}
    k = 0
    while time.monotonic() - t0 < WINDOW_S:
        if attack is not None:
            st = attack(k)
            codes[st] = codes.get(st, 0) + 1
            k += 1
        time.sleep(0.1)                         # 10 requests/s: the state-change rate limit
    time.sleep(0.5)
    f1, s1, n1 = _drops(port)
    return f1 - f0, s1 - s0, n1 - n0, codes


def _check(port, attack, what, tries=3):
    """The attack's window against a quiet one just before; measured again (up to ``tries``
    windows) when the attack dropped more: another process on this shared machine, or the
    suite's other pytest-xdist worker, may have taken the CPU (a 2-frame drop in both of two
    windows was seen with a worker running beside it). A stall the request causes drops
    frames in every window."""
    for _ in range(tries):
        quiet = _window(port)
        loud = _window(port, attack)
        print(f"\n{what}: dropped {loud[0]} frames / {loud[1]} substeps of {loud[2]} (quiet window: {quiet[0]} / "
              f"{quiet[1]} of {quiet[2]}); answers {loud[3]}")
        if loud[0] <= quiet[0] and loud[1] <= quiet[1]:
            return loud
    raise AssertionError((what, loud, quiet))


@pytest.mark.slow
def test_many_spring_patterns_drop_no_frame(live_run):
    port, _ = live_run
    # encoded once: the client's own CPU is not the server's cost (the machine is shared)
    at_bound = json.dumps({"params": {"springs": {f"p{i}*": {"k": 50} for i in range(256)}}}).encode()
    over = json.dumps({"params": {"springs": {f"p{i}*": {"k": 50} for i in range(3000)}}},
                      separators=(",", ":")).encode()
    loud = _check(port, lambda k: call(port, "POST", "/hair", at_bound)[0], "256 spring patterns")
    assert set(loud[3]) == {200}
    loud = _check(port, lambda k: call(port, "POST", "/hair", over)[0], "3,000 spring patterns")
    assert set(loud[3]) == {400}
    call(port, "POST", "/hair", {"params": {}})


def test_alternating_avatar_loads_drop_no_frame(live_run):
    port, _ = live_run
    names = ("godette.vrm", "robot.vrm")
    loud = _check(port, lambda k: call(port, "POST", "/avatar", {"path": names[k % 2]}, timeout=120)[0],
                  "alternating POST /avatar")
    assert set(loud[3]) <= {200, 429}
