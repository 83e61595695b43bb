"""Drawing one frame of a run into the renderer's output: the avatar, overlays, the HUD, and
compare mode's two panes; screenshots read the output on demand.

Compare mode draws both solvers into the one output framebuffer, the rig on the left half
and its companion on the right (a viewport per pane, each framed for the pane's aspect), so
the window presents it with no readback and a screenshot shows what the window shows.
Everything here runs on the render thread (the GL context is current).
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from avatars import Avatar

from .loop import FrameInfo
from .view import View
from .rig import AvatarRig
from .telemetry import Telemetry

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class Framing:
    """The cameras of one avatar: the whole output's and compare mode's pane's
    (:class:`render.Camera`), and its reduced-detail triangles (``detail``:
    :meth:`render.Renderer.detail_for`, None with full detail)."""

    camera: object
    pane_camera: object
    detail: object = None


class FrameDrawer:
    """Draws frames of a run with ``renderer``.

    Args:
        renderer: a :class:`render.Renderer` (its size is the output size).
        metrics: the run's telemetry, shown in the HUD.
        framing: camera framing, "bust", "full", "hair" or "back" (:class:`render.CameraOptions`).
        overlays: draw springs, colliders and head axes.
        hud: draw fps, tracker latency, substeps and the solver top-left.
        pacing: the HUD's rate line (:func:`runtime.schedule.pacing_text`, short).
        view: the viewer's state (orbit, framing, inspection; :class:`runtime.view.View`).

    Attributes:
        overlays, hud: toggled by the window keys.
        frames: frames drawn so far.
    """

    def __init__(self, renderer, metrics: Telemetry, *, framing: str = "bust", overlays: bool = False,
                 hud: bool = False, pacing: str | None = None, view: View | None = None):
        from render import CameraOptions

        self.renderer = renderer
        self.metrics = metrics
        #: the viewer's camera, framing and inspection view (runtime/view.py)
        self.view = view if view is not None else View(framing=framing)
        self.camera_options = CameraOptions(framing=self.view.framing)
        self.overlays = overlays
        self.hud = hud
        self.pacing = pacing
        self.frames = 0
        #: the HUD's settle line ("move then settle": runtime/settle.py), or None
        self.settle: str | None = None
        #: compare mode's note when both sides are at rest (runtime/rest_note.py), or None
        self.rest_note: str | None = None
        #: the hairstyle switch's line, "fitting 'bob01'…" / "'bob01' on" (runtime/tryon/note.py), or None
        self.style_note: str | None = None
        self._pane_camera = None
        #: the quality governor's line for the HUD (``RunQuality.text``), or None
        self.quality = None
        self._frame_world = None            # the pose the cameras were framed on (None: rest)
        self._viewer_key = None             # what the viewer's own framing was computed for
        self._viewer_cams = (None, None)

    # ------------------------------------------------------------------ setup
    def panes(self) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
        """Compare mode's (x, y, width, height) viewports: the left and the right half."""
        w, h = self.renderer.size
        return (0, 0, w // 2, h), (w // 2, 0, w - w // 2, h)

    def set_avatar(self, avatar: Avatar, world: np.ndarray, *, framing: Framing | None = None,
                   upload=None) -> None:
        """Upload ``avatar`` (replacing the drawn one) and frame it posed by ``world`` (N, 4, 4),
        or use ``framing`` (:meth:`framing`, computed beforehand off the render thread);
        ``upload``: its upload stepped over earlier frames (:meth:`begin_upload`)."""
        self._frame_world, self._viewer_key = world, None
        if framing is None:
            self.renderer.set_avatar(avatar, upload=upload)
            self.reframe(world)
        else:
            self.renderer.set_avatar(avatar, camera=framing.camera, detail=framing.detail, upload=upload)
            self._pane_camera = framing.pane_camera

    def begin_upload(self, avatar: Avatar, framing: Framing | None = None):
        """``avatar``'s GPU upload, to step once per frame while the current one is drawn and
        hand to :meth:`set_avatar` (:meth:`render.Renderer.begin_avatar`; render thread)."""
        if framing is None:
            return self.renderer.begin_avatar(avatar)
        return self.renderer.begin_avatar(avatar, camera=framing.camera, detail=framing.detail)

    def framing(self, avatar: Avatar, world: np.ndarray) -> Framing:
        """The cameras :meth:`reframe` would set for ``avatar`` posed by ``world`` (N, 4, 4), and
        its reduced-detail triangles: numpy only (no GL), so any thread may compute them (the
        try-on worker does)."""
        from render import frame_camera

        w, h = self.renderer.size
        _, (_, _, pw, ph) = self.panes()
        camera = frame_camera(avatar, w / h, self.camera_options, world)
        return Framing(camera, frame_camera(avatar, pw / ph, self.camera_options, world),
                       self.renderer.detail_for(avatar, camera))

    def set_framing(self, name: str) -> None:
        """The viewer's framing ("bust", "full", "hair", "back") from now on, the orbit reset;
        the outputs keep the run's framing unless the view follows. Raises ValueError for
        another name."""
        self.view.set_framing(name)
        self.view.reset()

    def _viewer_base(self) -> tuple:
        """(camera, pane camera) of the view's framing before the orbit: the outputs' when it
        is theirs, else framed once per avatar, framing and size (render thread)."""
        if self.view.framing == self.camera_options.framing or self.renderer.avatar is None:
            return self.renderer.camera, self._pane_camera
        key = (self.view.framing, self.renderer.size)
        if self._viewer_key != key:
            from render import frame_camera

            opts = replace(self.camera_options, framing=self.view.framing)
            w, h = self.renderer.size
            _, (_, _, pw, ph) = self.panes()
            av, world = self.renderer.avatar, self._frame_world
            self._viewer_cams = (frame_camera(av, w / h, opts, world), frame_camera(av, pw / ph, opts, world))
            self._viewer_key = key
        return self._viewer_cams

    def cameras(self, *, viewer: bool = True) -> tuple:
        """(whole output camera, compare pane camera) of the viewer (its framing, moved by the
        orbit) or of the outputs (``viewer`` False: the run's framing, unless the view follows)."""
        if viewer or self.view.follow:
            o = self.view.orbit
            cam, pane = self._viewer_base()
            return o.apply(cam), (None if pane is None else o.apply(pane))
        return self.renderer.camera, self._pane_camera

    @property
    def split(self) -> bool:
        """The viewer sees another camera than the outputs (an orbit or a framing they do not follow)."""
        return not self.view.follow and (not self.view.orbit.is_identity
                                         or self.view.framing != self.camera_options.framing)

    def reframe(self, world: np.ndarray) -> None:
        """Frame the cameras (whole output and compare pane) on the avatar posed by ``world``."""
        from render import frame_camera

        self._frame_world, self._viewer_key = world, None
        self.renderer.reframe(self.camera_options, world=world)
        _, (_, _, pw, ph) = self.panes()
        self._pane_camera = frame_camera(self.renderer.avatar, pw / ph, self.camera_options, world)

    # ------------------------------------------------------------------ frame
    def draw(self, info: FrameInfo, rig: AvatarRig, companion: AvatarRig | None = None, *,
             viewer: bool = True) -> None:
        """Draw the frame ``info`` (from :meth:`runtime.loop.Loop.frame`) of ``rig``; with a
        ``companion`` (compare mode, ``info.companion_worlds[0]``), the two side by side. With
        the viewer's camera (the orbit), or the outputs' (``viewer`` False: :meth:`cameras`);
        with the inspection view's guides and hidden hair (:class:`runtime.view.View`)."""
        from render import HudInfo

        r = self.renderer
        cam, pane_cam = self.cameras(viewer=viewer)
        hud = self._hud_info(info, rig) if self.hud else None
        if self.style_note:                      # shown with the HUD off too, for a couple of seconds
            hud = HudInfo(extra=(("hair", self.style_note),)) if hud is None else \
                replace(hud, extra=hud.extra + (("hair", self.style_note),))
        ov, hide = self._overlays(rig.avatar, info.world)
        if companion is None:
            r.draw(info.world, info.expressions, overlays=ov, hud=hud, time_s=info.time_s, camera=cam, hide=hide)
        else:
            left, right = self.panes()
            cw = info.companion_worlds[0]
            ov2, hide2 = self._overlays(companion.avatar, cw)
            # each pane labelled with its solver (on top of the HUD's lines when it is on)
            label_l = (("left", rig.solver),)
            if self.rest_note:                   # why the two halves look the same
                label_l += (("note", self.rest_note),)
            hud_l = replace(hud, extra=label_l + hud.extra) if hud is not None else HudInfo(extra=label_l)
            hud_r = HudInfo(extra=(("right", companion.solver),))
            r.draw(info.world, info.expressions, overlays=ov, hud=hud_l, camera=pane_cam, viewport=left,
                   time_s=info.time_s, hide=hide)
            r.draw(cw, info.expressions, overlays=ov2, hud=hud_r, camera=pane_cam, viewport=right,
                   time_s=info.time_s, hide=hide2)
        self.frames += 1

    def _overlays(self, avatar: Avatar, world: np.ndarray):
        """(overlays or None, hidden mesh instances) of ``avatar`` posed by ``world``: the debug
        lines when on, the inspection view's guides of a fitted style."""
        from render import Overlays, avatar_overlays

        from .tryon import guides_of

        found = guides_of(avatar) if self.view.inspect != "mesh" else None
        lines = self.view.guides(avatar, found, world)
        heat = self.view.weights(avatar, found, world)
        ov = avatar_overlays(avatar, world) if self.overlays else None
        if lines is not None or heat is not None:
            ov = replace(ov if ov is not None else Overlays(), guides=lines, weights=heat)
        return ov, self.view.hidden(found)

    def _hud_info(self, info: FrameInfo, rig: AvatarRig):
        from render import HudInfo

        s = self.metrics
        lat = s.latency_ms.pct(50)
        extra = (("solver", rig.solver),)
        if self.settle:
            extra += (("settle", self.settle),)
        if self.pacing:
            extra = (("rate", self.pacing),) + extra
        if lat is not None:
            extra += (("latency", f"{lat:.0f} ms p50, {s.latency_ms.pct(95):.0f} ms p95"),)
        if self.quality is not None:
            extra += (("quality", self.quality()),)
        vmc = s.watched().get("vmc")
        if vmc is not None:
            extra += (("vmc", f"{vmc['states']} states, {vmc['dropped']} dropped"),)
        return HudInfo(fps=s.fps(), tracker_latency_ms=s.tracker_ms.pct(50), substeps=info.substeps, extra=extra)

    # ------------------------------------------------------------------ on demand
    def read(self) -> np.ndarray | None:
        """The last drawn frame, (H, W, 4) uint8 sRGB straight alpha, row 0 = top, read now
        (synchronously; between frames), or None before the first frame."""
        return self.renderer.read_rgba() if self.frames else None

    def screenshot(self, path: str | Path) -> Path | None:
        """Write the last drawn frame to the PNG ``path`` (alpha kept); None before the first frame."""
        from render import snapshot

        rgba = self.read()
        return None if rgba is None else snapshot(path, rgba)

    def png(self) -> bytes | None:
        """The last drawn frame as PNG bytes (fast compression), or None before the first frame."""
        from PIL import Image

        rgba = self.read()
        if rgba is None:
            return None
        buf = io.BytesIO()
        Image.fromarray(rgba, "RGBA").save(buf, format="PNG", compress_level=1)
        return buf.getvalue()
