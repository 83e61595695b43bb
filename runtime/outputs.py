"""Output specs of ``swaycam run --output`` -> render sinks, and the frames fed to them.

    window            the window (needs a display)
    vcam[:DEVICE]     a virtual camera (pyvirtualcam; v4l2loopback / OBS)
    video:PATH        an mp4 (H.264) file
    png:DIR           a PNG sequence (keeps alpha)

:class:`Outputs` feeds the open sinks one drawn frame at a time. Pixels are read back only
when a sink needs them (:attr:`render.Sink.needs_pixels`): the window presents straight from
the renderer's framebuffer, so a window-only run reads nothing back. The others get their
frames through the renderer's PBO double buffer (one frame of latency, no pipeline stall)
into one preallocated array, or, offline on headless EGL, from the renderer's readback thread,
which reads a frame while the next one is drawn (:mod:`render.frame_reader`); closing flushes
the last frame, so files get every frame.
"""

from __future__ import annotations

import datetime as _dt
import os
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .results import RunError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutputSpec:
    kind: str          # window | vcam | video | png
    target: str = ""   # path / device

    @property
    def name(self) -> str:
        """``kind:target``, or ``kind`` alone (as the user wrote it)."""
        return f"{self.kind}:{self.target}" if self.target else self.kind


def parse_outputs(specs: tuple[str, ...] | list[str]) -> list[OutputSpec]:
    out = []
    for s in specs:
        kind, _, target = s.partition(":")
        out.append(OutputSpec(kind, target))
    return out


def default_outputs(has_display: bool, out_dir: str | Path = "out") -> list[OutputSpec]:
    """A window when a display exists, else ``out/swaycam-YYYYmmdd-HHMMSS.mp4``."""
    if has_display:
        return [OutputSpec("window")]
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return [OutputSpec("video", str(Path(out_dir) / f"swaycam-{stamp}.mp4"))]


def needs_window(outputs: list[OutputSpec]) -> bool:
    return any(o.kind == "window" for o in outputs)


def check_writable(outputs: list[OutputSpec]) -> list[str]:
    """Create output folders and check they can be written, before anything runs.

    Returns notes for the user (frames of an earlier run that the first frame will replace:
    they are removed by the sink then, so a run that fails before it loses nothing). Raises
    OSError naming the path.
    """
    from render.sinks.png import earlier_frames

    from .writable import check_file, check_folder

    notes = []
    for o in outputs:
        if o.kind == "video":
            check_file(o.target, folder_reason="is a folder, not a video file")
        elif o.kind == "png":
            d = check_folder(o.target)
            stale = earlier_frames(d)
            if stale:
                notes.append(f"{len(stale)} frames of an earlier run in {d} are replaced once the first frame is drawn")
    return notes


def plan_outputs(specs: tuple[str, ...] | list[str], *, background: str, display: bool, say) -> list[OutputSpec]:
    """The outputs of a run (``specs`` as given to ``--output``; none: :func:`default_outputs`),
    checked before anything opens: a window needs a display, files must be writable
    (:func:`check_writable`), a transparent background only into outputs that keep alpha.
    Notes for the user (earlier PNG frames to be replaced) go to ``say``.

    Raises:
        RunError: a window without a display, a transparent background into the default
            video. OSError: an output cannot be written (naming it).
    """
    outputs = parse_outputs(specs) if specs else default_outputs(display)
    if needs_window(outputs) and not display:
        raise RunError("--output window needs a display (DISPLAY / WAYLAND_DISPLAY is not set); "
                       "use video:PATH.mp4, png:DIR or vcam instead")
    if background.strip().lower() == "transparent" and any(o.kind in ("video", "vcam") for o in outputs):
        from .config import NO_ALPHA      # (a RunConfig refuses such explicit outputs already)

        names = ", ".join(o.name for o in outputs if o.kind in ("video", "vcam"))
        raise RunError(f"output {names}{'' if specs else ' (the default without a display)'}: {NO_ALPHA}")
    for o in outputs if specs else ():   # a file output named goes into a folder that exists (a
        if o.kind in ("video", "png") and o.target:        # typo is not a new folder tree)
            parent = Path(o.target).expanduser().absolute().parent
            if not parent.is_dir():
                raise RunError(f"output {o.name}: the folder {parent} does not exist")
    for note in check_writable(outputs):
        say(note)
    return outputs


def open_sinks(outputs: list[OutputSpec], *, context, renderer, fps: float, size: tuple[int, int],
               live: bool, video_preset: str | None = None):
    """Open one sink per output (returned in the order of ``outputs``). Raises
    render.VirtualCameraUnavailable for a missing vcam.

    Video files are opened last, so a failing virtual camera never truncates an existing
    video file. They are paced by frame count offline (every rendered frame is one file
    frame) and by timestamps live (the file keeps real-time duration at a varying render rate).
    """
    from render import PngSequenceSink, VideoFileSink, VirtualCameraSink, WindowSink

    opened: dict[int, object] = {}
    order = sorted(range(len(outputs)), key=lambda k: outputs[k].kind == "video")
    try:
        for k in order:
            o = outputs[k]
            if o.kind == "window":
                opened[k] = WindowSink(context, renderer)
            elif o.kind == "vcam":
                backend = os.environ.get("SWAYCAM_VCAM_BACKEND") or None
                opened[k] = VirtualCameraSink(device=o.target or None, backend=backend, fps=fps, size=size)
            elif o.kind == "video":
                opened[k] = VideoFileSink(o.target, fps, size, pace="timestamps" if live else "frames",
                                          **({"preset": video_preset} if video_preset else {}))
            elif o.kind == "png":
                opened[k] = PngSequenceSink(o.target)
    except BaseException:
        for s in opened.values():
            s.close()
        raise
    return [opened[k] for k in range(len(outputs))]


class Outputs:
    """The run's open sinks (in the order of the outputs), fed after every drawn frame.

    Args:
        sinks: open sinks; closed by :meth:`close`.
        names: one name per sink, for error messages (``video:out.mp4``).
        renderer: the renderer that draws the frames (its current GL context is used).
        immediate: sinks that read pixels get each frame when it is drawn (the live latency
            path; the render thread waits for the rasterizer), instead of one frame later
            through the PBO double buffer (offline: throughput).

    A context manager: leaving the block without an exception flushes the last frame; with
    one, the sinks are only closed.
    """

    def __init__(self, sinks: list, names: list[str], renderer, *, immediate: bool = False):
        self.sinks = list(sinks)
        #: deliver each frame as it is drawn (waits for the raster) instead of one frame late
        #: through the PBO double buffer: the live latency path (issue 20)
        self.immediate = bool(immediate)
        self.names = list(names)
        self.renderer = renderer
        self._shown = [(s, n) for s, n in zip(self.sinks, self.names) if not s.needs_pixels]
        self._fed = [(s, n) for s, n in zip(self.sinks, self.names) if s.needs_pixels]
        w, h = renderer.size
        self._pixels = np.empty((h, w, 4), np.uint8) if self._fed else None
        self._closed = False

    @property
    def needs_pixels(self) -> bool:
        """Some sink reads pixels (else nothing is ever read back)."""
        return bool(self._fed)

    def add(self, sink, name: str) -> None:
        """Feed ``sink`` (already open) from the next frame on (render thread); it is closed
        by :meth:`close` unless it was removed first (:meth:`remove`)."""
        if self._closed:
            raise RuntimeError("outputs are closed")
        if sink.needs_pixels and not self._fed:
            while self.renderer.flush_readback() is not None:   # frames queued before the last fed sink left
                pass
        self.sinks.append(sink)
        self.names.append(name)
        (self._fed if sink.needs_pixels else self._shown).append((sink, name))
        if sink.needs_pixels and self._pixels is None:
            w, h = self.renderer.size
            self._pixels = np.empty((h, w, 4), np.uint8)

    def remove(self, sink) -> None:
        """Stop feeding ``sink`` (render thread); the caller closes it. The frame still in
        the readback pipeline is not delivered to it."""
        k = next(i for i, s in enumerate(self.sinks) if s is sink)
        del self.sinks[k], self.names[k]
        self._fed = [(s, n) for s, n in self._fed if s is not sink]
        self._shown = [(s, n) for s, n in self._shown if s is not sink]

    def send(self, wall_ns: int) -> None:
        """Hand the frame just drawn to every sink: windows present it now; the others get
        the previous frame from the PBO double buffer (``wall_ns``, the frame's wall-clock
        time, travels with it), or this frame when :attr:`immediate`.

        Raises:
            RunError: a sink failed (naming the output).
        """
        self.send_shown(wall_ns)
        self.send_fed(wall_ns)

    def send_shown(self, wall_ns: int) -> None:
        """The windows' part of :meth:`send`: present the frame just drawn."""
        for sink, name in self._shown:
            self._send(sink, name, None, wall_ns)

    def send_fed(self, wall_ns: int) -> None:
        """The pixel sinks' part of :meth:`send` (the frame just drawn is queued for readback,
        so the renderer may draw another view into the output before the windows present).
        Raises RunError."""
        if self._fed:
            if self.immediate:       # live: this frame now, read straight into our buffer (one copy)
                self.flush()         # (nothing is queued unless immediate was just switched on)
                self._deliver(self.renderer.read_rgba(out=self._buffer()), wall_ns)
                return
            # the readback thread's own buffer when it reads (frames in flight), else ours
            got = self.renderer.read_rgba_async(tag=wall_ns, out=None if getattr(self.renderer, "reader", None) else self._buffer())
            if got is not None:
                self._deliver(*got)

    def flush(self) -> None:
        """Deliver the frames still in the PBOs (the last drawn frame). Raises RunError."""
        if self._fed:
            while (got := self.renderer.flush_readback(out=None if getattr(self.renderer, "reader", None) else self._buffer())) is not None:
                self._deliver(*got)

    def _buffer(self) -> np.ndarray:
        w, h = self.renderer.size
        if self._pixels.shape[:2] != (h, w):
            self._pixels = np.empty((h, w, 4), np.uint8)
        return self._pixels

    def _deliver(self, rgba: np.ndarray, wall_ns: int) -> None:
        for sink, name in self._fed:
            self._send(sink, name, rgba, wall_ns)

    @staticmethod
    def _send(sink, name: str, rgba, wall_ns: int) -> None:
        try:
            sink.send(rgba, wall_ns)
        except Exception as exc:  # an output failed mid-run: stop with what and where
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise RunError(f"output {name} failed: {first}") from exc

    def close(self, *, flush: bool = True, raise_errors: bool = True) -> None:
        """Flush (unless told not to) and close every sink, even when one fails. Idempotent.

        Raises:
            RunError: the flush failed, or a sink failed while closing (a video writer that
                could not finish its file: the output is not complete), naming the output;
                every sink is closed all the same. With ``raise_errors`` False (the run is
                already ending with an error) such failures are logged instead.
        """
        if self._closed:
            return
        self._closed = True
        failed: list[str] = []
        try:
            if flush:
                self.flush()
        finally:
            for s, name in zip(self.sinks, self.names):
                try:
                    s.close()
                except Exception as exc:  # noqa: BLE001 - keep closing the others
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                    failed.append(f"output {name} failed while closing: {first}")
                    log.debug("closing %s", name, exc_info=True)
        if failed:
            if raise_errors:
                raise RunError("; ".join(failed))
            for line in failed:
                log.error("%s", line)

    def __enter__(self) -> "Outputs":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(flush=exc_type is None, raise_errors=exc_type is None)


def open_outputs(outputs: list[OutputSpec], *, context, renderer, fps: float, live: bool,
                 immediate: bool | None = None, video_preset: str | None = None) -> Outputs:
    """:func:`open_sinks` for ``outputs`` at the renderer's size, as :class:`Outputs`
    (``immediate`` readback: None = for live runs, where latency counts)."""
    sinks = open_sinks(outputs, context=context, renderer=renderer, fps=fps, size=renderer.size, live=live,
                       video_preset=video_preset)
    out = Outputs(sinks, [o.name for o in outputs], renderer, immediate=live if immediate is None else immediate)
    if out.needs_pixels and not out.immediate and hasattr(renderer, "start_reader"):
        renderer.start_reader()     # offline: a frame is read back while the next is drawn (headless EGL)
    return out
