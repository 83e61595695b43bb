"""The worst frame of a cell, drawn by the real renderer headless (EGL), for the report.

A cell is replayed through the product loop (:class:`runtime.loop.Loop` on a
:class:`runtime.rig.AvatarRig`, the inputs of the cell's fps replays: the head-turn track,
or a still head with the body clip), drawn at 30 fps for the motion seconds plus one. Each
drawn pose (:meth:`runtime.rig.AvatarRig.draw_pose`: the body at the draw time, the hair
interpolated) is scored by the largest edge stretch of the skinned hair mesh
(:func:`solver.eval.hair_mesh.find_hair`, :func:`avatars.skinning.skin_instance`: the
shader's skinning), ties broken by the largest tip distance from the rest arc (hair with
no stretchable edge); the frame with the highest score is drawn by :class:`render.Renderer`
(bust framing around that pose) into a 256 × 256 PNG.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from .axes import Cell
from .cell import STILL
from .inputs import PROCESS_INPUTS

log = logging.getLogger(__name__)

SIZE = (256, 256)
FPS = 30


def worst_frame(cell: Cell, inputs=PROCESS_INPUTS) -> tuple[object, np.ndarray, float, float]:
    """(avatar drawn, (N, 4, 4) world matrices of the worst frame, its time s, its stretch %)."""
    from solver.eval.hair_mesh import find_hair
    from avatars.skinning import skin_instance
    from tracking.pose_track import synthetic_track

    from ...clock import NO_CAP, frame_times
    from ...loop import Loop
    from ...pose_inputs import TrackInput
    from ...pose_inputs.track import head_turn_track
    from ...rig import AvatarRig
    from ..hair_quality import motion_window_s

    avatar = inputs.avatar(cell.avatar_input)
    if cell.hair_input is not None:
        avatar = inputs.fitted(cell.avatar_input, cell.hair_input, cell.hairstyle).result.avatar
    s = cell.settings
    if cell.clip == "turn-test":
        setup, track = None, head_turn_track()
        motion_s = 4.0 if s.duration_s is None else float(s.duration_s)
    else:
        setup = inputs.motion(cell.clip_input, cell.clip, cell.clip_names)
        motion_s = motion_window_s(setup) if s.duration_s is None else float(s.duration_s)
        track = synthetic_track(lambda _t: STILL, duration_s=motion_s + 2.0, source="synthetic:still")
    parts = find_hair(avatar)
    rig = AvatarRig(avatar, solver=cell.solver, motion=setup.options if setup is not None else None)
    if setup is not None:
        setup.apply(rig)
    cs = rig.chains
    tips = cs.tips()
    best = {"score": (-1.0, -1.0), "world": None, "t": 0.0}

    def draw(info) -> None:
        world = info.world
        ratio = 1.0
        for p in parts:
            pts = skin_instance(avatar, p.instance, p.primitive, world, vertices=p.vertices)
            if len(p.edges):
                ratio = max(ratio, float((np.linalg.norm(pts[p.edges[:, 0]] - pts[p.edges[:, 1]], axis=1)
                                          / p.rest_lengths).max()))
        swing = float(np.linalg.norm(cs.tails[tips] - cs.rest_arc_tails(world)[tips], axis=1).max())
        if (ratio, swing) > best["score"]:
            best.update(score=(ratio, swing), world=world.copy(), t=info.time_s)

    inp = TrackInput(track)
    loop = Loop(rig, inp, max_substeps=NO_CAP, draw=draw)
    for t in frame_times(FPS, int(round((motion_s + 1.0) * 1e9)), start_ns=inp.start_ns):
        loop.frame(t)
    return avatar, best["world"], best["t"], 100.0 * (best["score"][0] - 1.0)


def render_worst_frames(cells: list[Cell], folder: str | Path) -> dict[str, tuple[Path, str]]:
    """Draw the worst frame of every cell into ``folder/<key[:16]>.png`` ->
    {key: (png, caption)}. Raises the renderer's errors (no EGL) for the caller to note."""
    from PIL import Image

    from render import Renderer, create_context
    from render.camera import CameraOptions

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    if not cells:
        return out
    ctx = create_context("egl", size=SIZE)
    try:
        ctx.make_current()
        with Renderer(ctx, SIZE, antialias="off", background="#e9ecf2",
                      camera_options=CameraOptions(framing="bust")) as r:
            for cell in cells:
                try:
                    avatar, world, t, stretch = worst_frame(cell)
                except Exception as exc:  # noqa: BLE001 - one cell that cannot be replayed: no picture
                    log.warning("%s: no thumbnail (%s)", cell.label, exc)
                    continue
                r.set_avatar(avatar)
                r.reframe(world=world)
                r.draw(world, time_s=t)
                png = folder / f"{cell.key[:16]}.png"
                Image.fromarray(r.read_rgba().copy(), "RGBA").save(png)
                out[cell.key] = (png, f"t = {t:.2f} s · frame stretch {stretch:.1f} %")
    finally:
        ctx.release()
    return out
