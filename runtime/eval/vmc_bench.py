"""``swaycam bench vmc``: the cost of building and sending one frame's VMC bundle, and of
receiving one (parse + validate + coalesce, then the input's take into its record buffer),
in µs, per avatar. Real UDP on 127.0.0.1."""

from __future__ import annotations

import time

import numpy as np


def _percentiles(ts: list[float]) -> dict:
    a = np.array(ts) * 1e6
    return {"median_us": round(float(np.median(a)), 1), "p95_us": round(float(np.percentile(a, 95)), 1)}


def bench_vmc(avatar_path: str, *, frames: int = 2000) -> dict:
    from avatars import load_avatar

    from ..clock import ReplayClock
    from ..rig import AvatarRig
    from ..vmc import VmcInput, VmcReceiver, VmcSender
    from tracking.pose_track import PoseSample

    av = load_avatar(avatar_path)
    rig = AvatarRig(av)
    s = PoseSample()
    s.rotation[:] = (0.0, 0.2588, 0.0, 0.9659)
    world = rig.draw_pose(s, 0.0).copy()
    expr = {e: 0.3 for e in av.expressions}
    rx = VmcReceiver("127.0.0.1", 0)
    build, send = [], []
    with VmcSender(av, [("127.0.0.1", rx.address[1])]) as tx:
        data = tx.build(world, expr, 0.0, found=True)
        for k in range(frames):
            t0 = time.perf_counter()
            tx.build(world, expr, k / 60, found=True)
            t1 = time.perf_counter()
            tx.send_frame(world, expr, k / 60, found=True)
            t2 = time.perf_counter()
            build.append(t1 - t0)
            send.append(t2 - t1)
    rx.close()
    rx = VmcReceiver("127.0.0.1", 0)             # receive path without the socket: handle + take
    inp = VmcInput(rx)
    clock = ReplayClock(0)
    inp.start(clock)
    rx.close()
    inp.sample(0, PoseSample())
    recv, take = [], []
    for k in range(frames):
        clock.advance(16_666_667)
        t0 = time.perf_counter()
        rx.handle(data)
        t1 = time.perf_counter()
        inp.pump(clock.now_ns())
        t2 = time.perf_counter()
        recv.append(t1 - t0)
        take.append(t2 - t1)
    return {"avatar": avatar_path, "bones": len(tx.bones), "expressions": len(tx.expression_names),
            "bundle_bytes": len(data), "frames": frames, "build": _percentiles(build),
            "build_and_send": _percentiles(send), "receive": _percentiles(recv),
            "take_into_buffer": _percentiles(take), "dropped": rx.stats.dropped}
