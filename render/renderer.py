"""The renderer: one avatar, drawn per frame from world matrices and morph weights for the
camera it is given.

Frame, in order: skinning matrices -> clear to the background -> opaque and alpha-tested
primitives -> MToon outlines (inverted hull) -> blended primitives back to front -> overlay
lines -> MSAA resolve -> HUD. The output is RGBA8 sRGB with rows top-down (see
:mod:`render.targets`). A frame may be made of panes: each ``draw`` with a ``viewport``
fills its rectangle only and leaves the rest of the output as it was (side-by-side
comparisons in one framebuffer). The renderer never runs physics: hair joints arrive already
moved in ``world``.

Beside the drawing: without a camera, ``draw`` uses the output's default framing
(:mod:`render.framing`); reduced-detail triangles come from a thread-safe cache
(:mod:`render.detail_cache`); the output is read back in straight alpha
(:class:`render.readback.OutputReadback`: :meth:`Renderer.read_rgba`,
:meth:`Renderer.read_rgba_async`, frames in flight) or presented in a window
(:meth:`Renderer.present`, no readback).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Any, Collection, Mapping, Sequence

import numpy as np
from ._gl import GL

from avatars import Avatar

from .camera import Background, Camera, CameraOptions
from .context import GLContext
from .expressions import ExpressionFrame, expression_frame
from .gpu import Buffer, Ledger, VertexArray
from .hud import HudInfo, HudRenderer
from .antialias import FxaaPass, is_software, resolve_mode
from .quality import resolve_outlines
from .detail import PIXEL_ERROR, pixel_size_m, resolve_detail
from .detail_cache import DetailCache, ReducedDetail
from .framing import OutputFraming
from .lighting import Lighting
from .inspection import GuideLines, weight_segments
from .overlays import LineRenderer, Overlays
from .frame_reader import DEFAULT_SLOTS, FrameReader
from .readback import OutputReadback
from .passes import MeshPass
from .shaders import FRAME_BINDING, Programs
from .targets import RenderTargets, unpremultiply_srgb
from .staged import AvatarUpload
from .upload import GpuAvatar

log = logging.getLogger(__name__)

_FLIP_Y = np.diag([1.0, -1.0, 1.0, 1.0])  # framebuffer rows top-down: readback needs no flip
MorphInput = Sequence[np.ndarray | None] | ExpressionFrame | Mapping[str, float] | None


@dataclass
class FrameStats:
    """CPU time of the last :meth:`Renderer.draw` (ms) and what it drew."""

    cpu_ms: float = 0.0
    draws: int = 0
    blended: int = 0
    outlines: int = 0
    overlay_segments: int = 0
    triangles: int = 0


class Renderer:
    """Draws one avatar into an offscreen framebuffer of ``size`` = (width, height) pixels.

    Args:
        context: the current GL context (kept for :meth:`present`).
        size: framebuffer size in pixels.
        samples: MSAA samples (clamped to what the driver supports); with ``antialias``
            "auto", a count > 0 means MSAA and 0 means none (see :mod:`render.antialias`).
        antialias: "auto" (MSAA on GPUs; on software rasterisers
            :data:`render.antialias.SOFTWARE_AUTO`), "msaa", "fxaa" or "off".
        background: "transparent", "chroma", "#RRGGBB" or a :class:`Background`.
        camera_options: framing used when ``draw`` gets no camera.
        lighting: light and ambient (:class:`render.Lighting`).
        force_mipmaps: upgrade LINEAR texture minification to mipmapped (the default, as
            Unity-based VRM apps import textures; see :func:`render.upload.upload_avatar`);
            NEAREST always stays NEAREST. False follows the files' samplers exactly, as
            three.js does.
        joint_storage: "auto" (a uniform block when the skeleton fits, else a texture),
            "ubo" or "texture" (see :mod:`render.skinning`).
        outlines: MToon outlines "on" (as the materials ask), "off", or "auto" (off on
            software rasterisers, see :mod:`render.quality`); :attr:`outlines` says the result.
        detail: mesh detail "full" (the file's triangles), "reduced" (simplified until the
            surface moves by at most :data:`render.detail.PIXEL_ERROR` of a pixel at the
            framed point), or "auto" (reduced on software rasterisers, see
            :mod:`render.detail`); :attr:`reduced` says the result.
        flat_values: the mesh fragment shader gets the material and frame values as flat
            varyings instead of reading uniform blocks (:mod:`render.fragment_values`; the
            same images); None: on software rasterisers only.

    Use as a context manager or call :meth:`release`; the context must be current for every call.
    """

    def __init__(self, context: GLContext | None = None, size: tuple[int, int] = (640, 360), *,
                 samples: int | None = None, antialias: str = "auto", background: str | Background = "transparent",
                 camera_options: CameraOptions = CameraOptions(), lighting: Lighting = Lighting(),
                 force_mipmaps: bool = True, joint_storage: str = "auto", outlines: str = "on",
                 detail: str = "full", flat_values: bool | None = None):
        self.context = context
        self.ledger = Ledger()
        self.background = Background.parse(background)
        #: the default camera of ``draw`` (:mod:`render.framing`)
        self.framing = OutputFraming(camera_options)
        self.lighting = lighting
        self.force_mipmaps = force_mipmaps
        self.joint_storage = joint_storage
        self.stats = FrameStats()
        renderer_name = (GL.glGetString(GL.GL_RENDERER) or b"").decode()
        self.antialias, self._samples = resolve_mode(antialias, samples, is_software(renderer_name))
        #: MToon outlines drawn (the ``outlines`` setting resolved for this backend)
        self.outlines = resolve_outlines(outlines, is_software(renderer_name))
        #: meshes drawn with reduced detail (the ``detail`` setting resolved for this backend)
        self.reduced = resolve_detail(detail, is_software(renderer_name))
        #: the displacement allowed to the reduced meshes of the current avatar, metres (0: full)
        self.detail_tolerance_m = 0.0
        #: the reduced meshes' largest displacement in output pixels (:meth:`set_pixel_error`)
        self.pixel_error = PIXEL_ERROR
        self._details = DetailCache()
        software = is_software(renderer_name)
        self.programs = Programs(self.ledger, flat_values=software if flat_values is None else flat_values)
        self._fxaa = FxaaPass(self.ledger) if self.antialias == "fxaa" else None
        self._frame_ubo = Buffer(self.ledger, GL.GL_UNIFORM_BUFFER, size=208, usage=GL.GL_DYNAMIC_DRAW)
        self._frame_data = np.zeros(52, np.float32)
        self._empty_vao = VertexArray(self.ledger)
        self._lines = LineRenderer(self.ledger)
        self._hud = HudRenderer(self.ledger)
        self._pane_huds: dict[int, HudRenderer] = {}   # one per viewport x (compare panes): no re-rasterising
        self._mesh_pass = MeshPass(self.programs)
        #: reading the output back (straight alpha; frames in flight with :meth:`start_reader`)
        self.readback = OutputReadback(self.ledger, context, self._straight)
        self.targets = RenderTargets(self.ledger, size, self._samples, fxaa=self._fxaa is not None)
        self.readback.attach(self.targets)
        self.gpu: GpuAvatar | None = None
        self.frame_index = 0
        self._released = False

    # ------------------------------------------------------------------ setup
    @property
    def size(self) -> tuple[int, int]:
        return self.targets.size

    @property
    def avatar(self) -> Avatar | None:
        return None if self.gpu is None else self.gpu.avatar

    @property
    def camera(self) -> Camera | None:
        """The default camera of :meth:`draw` (:attr:`framing`'s)."""
        return self.framing.camera

    @camera.setter
    def camera(self, camera: Camera | None) -> None:
        self.framing.camera = camera

    @property
    def camera_options(self) -> CameraOptions:
        """How the default camera frames the avatar (:attr:`framing`'s options)."""
        return self.framing.options

    @property
    def pixel_reads(self) -> int:
        """Framebuffer -> CPU copies started so far (:attr:`readback`'s)."""
        return self.readback.pixel_reads

    def set_avatar(self, avatar: Avatar | None, *, camera: Camera | None = None,
                   detail: "ReducedDetail | None" = None, upload: "AvatarUpload | None" = None) -> None:
        """Upload ``avatar`` (releasing the previous one) and frame the default camera on it
        at rest, or use ``camera`` (framed beforehand, e.g. off the render thread). With
        reduced detail the triangles come from ``detail`` when given (:meth:`detail_for`,
        computed beforehand off the render thread), else they are simplified now.
        ``upload``: ``avatar``'s upload begun beforehand (:meth:`begin_avatar`, stepped over
        earlier frames): what is left of it is done now and it is swapped in at once; one of
        another avatar is cancelled and ``avatar`` uploaded now."""
        if upload is not None and (avatar is None or upload.avatar is not avatar):
            upload.cancel()
            upload = None
        if avatar is not None:
            if camera is None:
                camera = self.framing.camera_for(avatar, self.size)
            if upload is None:
                upload = self.begin_avatar(avatar, camera=camera, detail=detail)
            gpu = upload.finish()
        if self.gpu is not None:
            self.gpu.release()
            self.gpu = None
        self.detail_tolerance_m = 0.0
        if avatar is not None:
            self.gpu = gpu
            self.detail_tolerance_m = upload.detail_tolerance_m
            self.camera = camera

    def begin_avatar(self, avatar: Avatar, *, camera: Camera | None = None,
                     detail: "ReducedDetail | None" = None) -> "AvatarUpload":
        """An upload of ``avatar`` to step over the next frames (:class:`render.staged.AvatarUpload`:
        :meth:`~render.staged.AvatarUpload.step` once per frame) while the current avatar is
        drawn, then to hand to :meth:`set_avatar`; ``camera`` and ``detail`` as there (only
        the reduced-detail triangles depend on them). The caller cancels it if it is not
        swapped in."""
        if self.reduced and (detail is None or detail.avatar is not avatar):
            detail = self.detail_for(avatar, camera or self.framing.camera_for(avatar, self.size))
        upload = AvatarUpload(self.ledger, avatar, force_mipmaps=self.force_mipmaps, joint_storage=self.joint_storage,
                              detail=detail.indices if self.reduced else None,
                              link=lambda gpu: [*self._mesh_pass.link_steps(gpu), *self._warm_steps(gpu)])
        upload.detail_tolerance_m = detail.tolerance_m if self.reduced else 0.0
        return upload

    def _warm_steps(self, gpu: GpuAvatar) -> list:
        """Steps of :meth:`begin_avatar` each drawing one of ``gpu``'s draw calls at rest into
        one pixel of the scene target: a software rasteriser compiles its shader variants at
        a first draw (llvmpipe: 20-40 ms for Godette's), which then is not in the first frame
        after the swap, and is spread over steps. The next frame clears that pixel
        (:meth:`draw` clears its viewport first); the output target is not touched. None
        without a drawn avatar (no camera: no frame to protect)."""
        if self.gpu is None or self.camera is None:
            return []
        return [lambda p=p, o=o: self._warm_draw(gpu, p, o) for p, o in self._mesh_pass.draw_calls(gpu, outlines=self.outlines)]

    def _warm_draw(self, gpu: GpuAvatar, prim, outline: bool) -> None:
        cam = self.camera
        if cam is None:
            return
        rest = gpu.avatar.skeleton.rest_world
        gpu.materials.set_overrides({})
        gpu.joints.update(rest)
        gpu.contacts.update(rest)
        view = cam.view_matrix()
        self._upload_frame(cam, view, self.size)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.targets.scene.id)
        GL.glViewport(0, 0, *self.size)
        GL.glEnable(GL.GL_FRAMEBUFFER_SRGB)
        GL.glEnable(GL.GL_SCISSOR_TEST)
        GL.glScissor(0, 0, 1, 1)
        GL.glDepthMask(GL.GL_TRUE)
        GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glDepthFunc(GL.GL_LEQUAL)
        GL.glDisable(GL.GL_BLEND)
        GL.glFrontFace(GL.GL_CW)
        self._mesh_pass.draw_one(gpu, prim, outline=outline)
        GL.glDisable(GL.GL_SCISSOR_TEST)
        GL.glDisable(GL.GL_DEPTH_TEST)
        GL.glDisable(GL.GL_FRAMEBUFFER_SRGB)
        GL.glBindVertexArray(0)

    def detail_for(self, avatar: Avatar, camera: Camera | None = None, *,
                   pixel_error: float | None = None) -> "ReducedDetail | None":
        """The reduced triangles this renderer would draw ``avatar`` with, framed by ``camera``
        (default: the framing :meth:`set_avatar` would choose), at ``pixel_error`` (default
        :attr:`pixel_error`), or None with full detail. Pure CPU: any thread may call it; the
        results are kept while the avatar lives (a second upload of the same avatar does not
        simplify again)."""
        if not self.reduced:
            return None
        cam = camera or self.framing.camera_for(avatar, self.size)
        err = self.pixel_error if pixel_error is None else float(pixel_error)
        return self._details.get(avatar, round(err * pixel_size_m(cam, self.size[1]), 9))

    def set_pixel_error(self, pixel_error: float, detail: "ReducedDetail | None" = None) -> bool:
        """Draw the current avatar's reduced meshes at ``pixel_error`` output pixels from now
        on (and later avatars): only the index buffers change (:meth:`GpuAvatar.set_triangles`).
        ``detail``: those triangles computed beforehand (:meth:`detail_for`, off the render
        thread), else they are simplified now. False (nothing changed) with full detail."""
        if not self.reduced:
            return False
        self.pixel_error = float(pixel_error)
        if self.gpu is not None:
            if detail is None or detail.avatar is not self.gpu.avatar:
                detail = self.detail_for(self.gpu.avatar, self.camera)
            self.gpu.set_triangles(detail.indices)
            self.detail_tolerance_m = detail.tolerance_m
        return True

    def set_render_size(self, size: tuple[int, int]) -> None:
        """Draw into a framebuffer of ``size`` from now on, keeping the camera (same aspect:
        a window's render scale, which :meth:`present` scales to the window) and the meshes
        (their tolerance was chosen for the larger size: finer than needed, never coarser).

        Raises:
            ValueError: ``size`` has another aspect ratio than the output's (> 1 % off)."""
        size = (int(size[0]), int(size[1]))
        w, h = self.size
        if abs(size[0] / size[1] - w / h) > 0.01 * (w / h):
            raise ValueError(f"render size {size[0]}x{size[1]}: another aspect ratio than {w}x{h}")
        if size != self.size:
            self._rebuild_targets(size)

    def reframe(self, options: CameraOptions | None = None, world: np.ndarray | None = None) -> Camera | None:
        """Recompute the default camera (from ``world``, the rest pose by default;
        :meth:`render.framing.OutputFraming.frame`)."""
        return self.framing.frame(self.avatar, self.size, options=options, world=world)

    @property
    def samples(self) -> int:
        """MSAA samples in use."""
        return self.targets.samples

    def resize(self, size: tuple[int, int]) -> None:
        """Change the framebuffer size (and reframe the default camera for the new aspect)."""
        size = (int(size[0]), int(size[1]))
        if size == self.size:
            return
        self._rebuild_targets(size)
        if self.reduced and self.gpu is not None:      # the tolerance is a fraction of a pixel
            self.set_avatar(self.gpu.avatar)
        else:
            self.reframe()

    def set_background(self, background: str | Background) -> None:
        """Change the background ("transparent", "chroma", "#RRGGBB", ...)."""
        self.background = Background.parse(background)

    def _rebuild_targets(self, size: tuple[int, int]) -> None:
        self.readback.detach()
        self.targets.release()
        self.targets = RenderTargets(self.ledger, size, self._samples, fxaa=self._fxaa is not None,
                                     slots=self.readback.slots)
        if not self.readback.attach(self.targets):      # no readback thread: one slot
            self._rebuild_targets(size)

    # ------------------------------------------------------------------ frame
    def draw(self, world: np.ndarray | None = None, morph_weights: MorphInput = None, *,
             camera: Camera | None = None, overlays: Overlays | None = None, hud: HudInfo | None = None,
             hide: Collection[int] = (), viewport: tuple[int, int, int, int] | None = None,
             time_s: float = 0.0) -> None:
        """Render one frame (or one pane of it) into the output framebuffer.

        Args:
            world: (N, 4, 4) float64 world matrices of every skeleton node (hair joints as
                moved by the solver); the rest pose when None.
            morph_weights: per mesh instance (T_i,) weights (None entries: mesh defaults),
                an :class:`ExpressionFrame`, or an expression dict {"blink": 1.0, ...}.
            camera: the camera (default: the framing computed by :meth:`reframe`).
            overlays: debug lines (spring chains, colliders, head axes).
            hud: text shown top-left (fps, tracker latency, substeps), of the viewport.
            hide: indices of mesh instances not to draw.
            time_s: the run's clock in seconds (replayed runs pass their replay time), for
                MToon UV animation.
            viewport: (x, y, width, height) pixels of the output, x from the left and y from
                the top row: draw only there (cleared to the background first; the camera's
                aspect is the viewport's), leaving the other pixels as they are. None: the
                whole output.

        Raises:
            RuntimeError: no avatar set. ValueError: wrong ``world`` shape, or a viewport
            outside the output.
        """
        t0 = time.perf_counter()
        gpu = self.gpu
        if gpu is None:
            raise RuntimeError("no avatar: call set_avatar() first")
        av = gpu.avatar
        world = av.skeleton.rest_world if world is None else np.asarray(world, np.float64)
        if world.shape != (av.skeleton.node_count, 4, 4):
            raise ValueError(f"world matrices {world.shape}: expected ({av.skeleton.node_count}, 4, 4)")
        weights, overrides = self._morphs(av, morph_weights)
        gpu.materials.set_overrides(overrides)
        gpu.materials.set_time(time_s)
        gpu.joints.update(world)
        gpu.contacts.update(world)
        self.readback.begin_frame()         # frames in flight: a new frame goes to the next output slot
        cam = camera or self.camera
        rect = self._viewport(viewport)
        x, y, w, h = rect
        view = cam.view_matrix()
        self._upload_frame(cam, view, (w, h))
        st = FrameStats()

        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.targets.scene.id)
        # rows are stored top-down (flipped projection), so GL's y from the storage origin is
        # the row from the top
        GL.glViewport(x, y, w, h)
        GL.glEnable(GL.GL_FRAMEBUFFER_SRGB)
        if self.background.mode == "solid":
            GL.glClearColor(*self.background.linear(), 1.0)
        else:
            GL.glClearColor(0.0, 0.0, 0.0, 0.0)
        GL.glDepthMask(GL.GL_TRUE)
        GL.glEnable(GL.GL_SCISSOR_TEST)   # clear the pane only
        GL.glScissor(x, y, w, h)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT | GL.GL_DEPTH_BUFFER_BIT)
        GL.glDisable(GL.GL_SCISSOR_TEST)
        GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glDepthFunc(GL.GL_LEQUAL)
        GL.glDisable(GL.GL_BLEND)
        GL.glFrontFace(GL.GL_CW)  # the projection is flipped vertically (rows top-down)
        n_opaque, n_outlined, n_blended = self._mesh_pass.draw(gpu, weights, view, set(hide),
                                                               outlines=self.outlines)
        st.triangles = self._mesh_pass.triangles
        if overlays is not None:
            GL.glEnable(GL.GL_BLEND)
            GL.glBlendFunc(GL.GL_ONE, GL.GL_ONE_MINUS_SRC_ALPHA)
            if overlays.weights is not None:    # a heat map on the hair's vertices (render.inspection)
                GL.glEnable(GL.GL_DEPTH_TEST)
                GL.glDepthMask(GL.GL_FALSE)
                wp, col = weight_segments(overlays.weights)
                st.overlay_segments += self._lines.draw_arrays(self.programs.lines, wp, col)
                GL.glDepthMask(GL.GL_TRUE)
                overlays = replace(overlays, weights=None)
            g = overlays.guides
            if g is not None and g.depth:      # guides behind the head hidden by it (render.inspection)
                GL.glDepthMask(GL.GL_FALSE)
                st.overlay_segments += self._lines.draw(self.programs.lines, Overlays(guides=replace(g, roots=None)))
                GL.glDepthMask(GL.GL_TRUE)
                roots = None if g.roots is None else GuideLines(np.zeros((0, 3)), np.zeros(1, np.int64),
                                                                np.zeros(0, np.int64), g.roots, g.root_size)
                overlays = replace(overlays, guides=roots)     # the roots on the scalp: always seen
            GL.glDisable(GL.GL_DEPTH_TEST)
            st.overlay_segments += self._lines.draw(self.programs.lines, overlays)
        GL.glDisable(GL.GL_BLEND)
        GL.glDisable(GL.GL_DEPTH_TEST)
        self.targets.resolve(rect)
        if self._fxaa is not None:
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.targets.final.id)
            self._fxaa.draw(self.targets.scene_tex, rect)
        if hud is not None:
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.targets.final.id)
            GL.glViewport(x, y, w, h)
            self._empty_vao.bind()
            hr = self._hud if x == 0 else self._pane_huds.setdefault(x, HudRenderer(self.ledger))
            hr.draw(self.programs.quad, hud, (w, h))
        GL.glDisable(GL.GL_FRAMEBUFFER_SRGB)
        GL.glBindVertexArray(0)
        st.draws = n_opaque + n_outlined + n_blended
        st.blended, st.outlines = n_blended, n_outlined
        st.cpu_ms = (time.perf_counter() - t0) * 1e3
        self.stats = st
        self.frame_index += 1

    def _viewport(self, viewport: tuple[int, int, int, int] | None) -> tuple[int, int, int, int]:
        ow, oh = self.size
        if viewport is None:
            return 0, 0, ow, oh
        x, y, w, h = (int(v) for v in viewport)
        if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > ow or y + h > oh:
            raise ValueError(f"viewport {viewport}: must lie inside the {ow}x{oh} output")
        return x, y, w, h

    def _morphs(self, av: Avatar, morph_weights: MorphInput):
        if morph_weights is None:
            return None, {}
        if isinstance(morph_weights, ExpressionFrame):
            return morph_weights.morph_weights, morph_weights.material_overrides
        if isinstance(morph_weights, Mapping):
            ef = expression_frame(av, morph_weights)
            return ef.morph_weights, ef.material_overrides
        if len(morph_weights) != len(av.mesh_instances):
            raise ValueError(f"{len(morph_weights)} morph weight arrays for {len(av.mesh_instances)} mesh instances")
        return morph_weights, {}

    def _upload_frame(self, cam: Camera, view: np.ndarray, size: tuple[int, int]) -> None:
        w, h = size
        f = self._frame_data
        f[0:16] = view.T.ravel()
        f[16:32] = (_FLIP_Y @ cam.projection_matrix(w / h)).T.ravel()
        f[32:35] = cam.position
        d = np.asarray(self.lighting.direction, np.float64)
        f[36:39] = d / max(np.linalg.norm(d), 1e-12)
        f[40:43] = self.lighting.color
        f[44:47] = self.lighting.ambient
        f[48:52] = (w, h, w / h, 0.0)
        self._frame_ubo.update(f)
        GL.glBindBufferBase(GL.GL_UNIFORM_BUFFER, FRAME_BINDING, self._frame_ubo.id)

    # ------------------------------------------------------------------ output
    def read_rgba(self, out: np.ndarray | None = None) -> np.ndarray:
        """The last drawn frame as (H, W, 4) uint8 sRGB, straight alpha, row 0 = top (synchronous:
        waits for the GPU; for snapshots and tests)."""
        return self.readback.read_rgba(out)

    def _straight(self, rgba: np.ndarray) -> np.ndarray:
        if self.background.mode == "transparent":
            unpremultiply_srgb(rgba)
        return rgba

    def read_rgba_async(self, tag: Any = None, out: np.ndarray | None = None) -> tuple[np.ndarray, Any] | None:
        """Queue the last drawn frame for readback and return the previous queued one.

        Through the PBO double buffer, or with :meth:`start_reader` through the readback
        thread, which reads the frame while the next one is drawn (frames in flight); then
        the returned array is the thread's buffer for that slot unless ``out`` is given: it is
        overwritten once the next call queues the slot again, so copy what you keep (sinks
        do). With the thread, each call must follow a draw (a slot is queued once).

        Returns:
            (rgba (H, W, 4) uint8, its tag) of the frame queued by the previous call, or None
            on the first call (one frame of latency, no pipeline stall).

        Raises:
            RuntimeError: the readback thread failed to read a frame.
        """
        return self.readback.read_rgba_async(tag, out)

    def flush_readback(self, out: np.ndarray | None = None) -> tuple[np.ndarray, Any] | None:
        """The oldest frame queued by :meth:`read_rgba_async` and not returned yet (at the end
        of a stream: the last frame), or None. Call until None before closing an output, so
        it gets every frame. Waits for the GPU; reads no new pixels.

        Returns:
            (rgba (H, W, 4) uint8 straight alpha, its tag), or None.
        """
        return self.readback.flush(out)

    def start_reader(self, slots: int = DEFAULT_SLOTS) -> bool:
        """Read frames queued by :meth:`read_rgba_async` on a thread of their own while the next
        frames are drawn (:mod:`render.frame_reader`; ``slots`` output images take turns).
        Headless EGL only; elsewhere, or while a frame still waits in the PBO double buffer
        (receive it with :meth:`flush_readback` first), nothing changes and False is returned.

        Returns:
            whether frames are now read on the readback thread.
        """
        if self.readback.reader is not None:
            return True
        if self.context is None or getattr(self.context, "backend", "") != "egl" or self.readback.pending:
            return False
        self.readback.slots = max(2, int(slots))
        self._rebuild_targets(self.size)
        return self.readback.reader is not None

    def stop_reader(self) -> None:
        """Back to the PBO double buffer (frames still in flight are dropped: flush first). Idempotent."""
        if self.readback.reader is None and self.readback.slots == 1:
            return
        self.readback.slots = 1
        self._rebuild_targets(self.size)

    @property
    def reader(self) -> FrameReader | None:
        """The readback thread (:meth:`start_reader`), or None."""
        return self.readback.reader

    def present(self, window_size: tuple[int, int] | None = None) -> None:
        """Blit the output into the window's default framebuffer (``window_size`` pixels, by
        default the context's framebuffer size), scaled to fit with letterboxing (call
        ``context.swap()`` afterwards).

        Raises:
            RuntimeError: the context is headless (EGL has no window to present to).
        """
        if self.context is not None and self.context.backend == "egl":
            raise RuntimeError("present() needs a window context; headless EGL frames are read with read_rgba()")
        w, h = self.size
        if window_size is None and self.context is not None:
            window_size = self.context.framebuffer_size
        ww, wh = window_size or (w, h)
        scale = min(ww / w, wh / h)
        dw, dh = int(round(w * scale)), int(round(h * scale))
        x0, y0 = (ww - dw) // 2, (wh - dh) // 2
        GL.glDisable(GL.GL_FRAMEBUFFER_SRGB)  # copy the encoded bytes as they are
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self.targets.final.id)
        GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, 0)
        GL.glViewport(0, 0, ww, wh)
        GL.glClearColor(0.0, 0.0, 0.0, 1.0)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT)
        # Output rows are top-down; the window's row 0 is the bottom: flip while blitting.
        GL.glBlitFramebuffer(0, 0, w, h, x0, y0 + dh, x0 + dw, y0, GL.GL_COLOR_BUFFER_BIT,
                             GL.GL_NEAREST if (dw, dh) == (w, h) else GL.GL_LINEAR)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)

    def release(self) -> None:
        """Free every GL object of the renderer and its avatar. Idempotent."""
        if self._released:
            return
        self._released = True
        self.set_avatar(None)
        self.readback.detach()
        self.targets.release()
        self._lines.release()
        self._hud.release()
        if self._fxaa is not None:
            self._fxaa.release()
        for hr in self._pane_huds.values():
            hr.release()
        self._pane_huds.clear()
        self._empty_vao.release()
        self._frame_ubo.release()
        self.programs.release()
        leaked = self.ledger.snapshot()
        if leaked:
            log.warning("GL objects still alive after release: %s", leaked)

    def __enter__(self) -> "Renderer":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
