"""The panel's Outputs card: a virtual camera switched on and off, and recordings of a video
or a pose track started and stopped while the run goes on (``POST /vcam``, ``POST /record``).

Sinks are opened and closed on the request's thread (ffmpeg starting or finishing its file,
the camera device opening, never on the render thread) and handed to / taken from the run's
:class:`runtime.outputs.Outputs` through the session's command queue (render thread; the
session is the :class:`OutputHost`). The background is a live setting
(:class:`runtime.live_settings.LiveSettings`), changed here under the same lock as the
outputs, so a transparent background and an output without alpha are never both on. A pose
track records the pose each drawn frame used (avatar frame, loop time: ``swaycam run --source
FILE`` and ``swaycam replay FILE`` play it back). Recordings go into the record folder
(``--record-dir``, default ./recordings) under a name of the request's or a time-stamped one.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..service.errors import RequestError

if TYPE_CHECKING:  # pragma: no cover
    from ..commands import CommandQueue
    from ..live_settings import LiveSettings
    from ..outputs import Outputs, OutputSpec

log = logging.getLogger(__name__)

#: Where recordings go without --record-dir.
DEFAULT_RECORD_DIR = "recordings"
KINDS = {"video": ".mp4", "poses": ".jsonl"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class OutputError(RequestError):
    """A request the outputs cannot do: ``status`` (HTTP: 400 a bad name or kind, 409 the
    state forbids it, 422 a file that cannot be written, 503 no virtual camera) and the
    message."""

    def __init__(self, status: int, message: str):
        super().__init__(status, message)


class OutputHost(Protocol):
    """What :class:`OutputControl` uses of the running session (the ``Session``)."""

    fps: float
    live: bool
    output_specs: list[OutputSpec]       # the run's own outputs (command line, config)
    commands: CommandQueue               # render-thread work
    outputs: Outputs | None              # the open outputs (render thread)
    renderer: object                     # render.Renderer: its size, set_background (render thread)


class OutputControl:
    """The virtual camera and the recordings of ``host`` (see the module doc).

    Args:
        host: the running session.
        settings: its live settings (the background).
        record_dir: the ``--record-dir`` (None: ./recordings).
        video_preset: the ``video_preset`` setting of recorded videos.
        source: the run's ``--source`` (named in a pose track's header).
    """

    def __init__(self, host: OutputHost, settings: LiveSettings, *, record_dir: str | None = None,
                 video_preset: str = "auto", source: str | None = None):
        self.host = host
        self.settings = settings
        self._record_dir = record_dir
        self._video_preset = video_preset
        self._source = source
        self._lock = threading.Lock()          # one change at a time
        self.vcam = None                       # render.VirtualCameraSink opened here
        self.video = None                      # (VideoFileSink, Path)
        self.poses = None                      # (PoseTrackWriter, Path), written on the render thread
        self._last_pose_t: int | None = None

    @property
    def record_dir(self) -> Path:
        return Path(self._record_dir or DEFAULT_RECORD_DIR)

    # ------------------------------------------------------------------ state
    def run_outputs(self) -> list[str]:
        """The run's own outputs, as given (``kind:target``)."""
        return [o.name for o in self.host.output_specs]

    def state(self) -> dict:
        s = self.host
        cmdline_vcam = any(o.kind == "vcam" for o in s.output_specs)
        v, p = self.video, self.poses
        return {"vcam": {"on": self.vcam is not None or cmdline_vcam, "panel": self.vcam is not None,
                         "device": self.vcam.device_name if self.vcam is not None else None},
                "recording": {"video": None if v is None else {"path": str(v[1].resolve()), "frames": v[0].frames},
                              "poses": None if p is None else {"path": str(p[1].resolve()), "frames": p[0].count}},
                "record_dir": str(self.record_dir.resolve())}

    def opaque_outputs(self) -> list[str]:
        """Outputs of the run that have no alpha (H.264 video, virtual cameras): those a
        transparent background would fill with black."""
        s = self.host
        names = [o.name for o in s.output_specs if o.kind in ("video", "vcam")]
        if self.vcam is not None:
            names.append("vcam (panel)")
        if self.video is not None:
            names.append(f"video:{self.video[1]} (recording)")
        return names

    def set_background(self, bg: str) -> None:
        """Switch the run's background (``bg`` already parsed: "transparent", "green" or
        "#rrggbb") under the same lock as the outputs, so a transparent background and an
        output without alpha are never both on.

        Raises:
            OutputError: 409 for "transparent" while a video or virtual camera output runs.
        """
        from ..config import NO_ALPHA

        s = self.host
        with self._lock:
            opaque = self.opaque_outputs() if bg.strip().lower() == "transparent" else []
            if opaque:
                raise OutputError(409, f"output {', '.join(opaque)}: {NO_ALPHA}")
            s.commands.call(lambda: s.renderer.set_background("chroma" if bg.strip().lower() == "green" else bg))
            self.settings.set_background(bg)

    def _refuse_transparent(self, what: str) -> None:
        from ..config import NO_ALPHA

        if self.settings.background.strip().lower() == "transparent":
            raise OutputError(409, f"{what} with the transparent background: {NO_ALPHA}")

    # ------------------------------------------------------------------ virtual camera
    def set_vcam(self, on: bool, device: str | None = None) -> dict:
        from render import VirtualCameraSink, VirtualCameraUnavailable

        s = self.host
        with self._lock:
            if on and self.vcam is None:
                if any(o.kind == "vcam" for o in s.output_specs):
                    raise OutputError(409, "a virtual camera is already an output of this run (--output vcam)")
                self._refuse_transparent("a virtual camera")
                backend = os.environ.get("SWAYCAM_VCAM_BACKEND") or None
                try:
                    sink = VirtualCameraSink(device=device, backend=backend, fps=s.fps, size=tuple(s.renderer.size))
                except VirtualCameraUnavailable as exc:
                    raise OutputError(503, str(exc).splitlines()[0]) from None
                try:
                    s.commands.call(lambda: s.outputs.add(sink, "vcam"))
                except BaseException:
                    sink.close()
                    raise
                self.vcam = sink
            elif not on and self.vcam is not None:
                sink, self.vcam = self.vcam, None
                s.commands.call(lambda: s.outputs.remove(sink))
                sink.close()
            return self.state()

    # ------------------------------------------------------------------ recordings
    def _path(self, kind: str, name: str | None) -> Path:
        """The file a new ``kind`` recording goes to: ``name`` in the record folder (409 when it
        exists), or a timestamped name (numbered when taken)."""
        named = name is not None
        if name is None:
            name = f"swaycam-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}{KINDS[kind]}"
        elif not _NAME.match(name) or not name.endswith(KINDS[kind]):
            raise OutputError(400, f"'name' must be a plain file name ending in {KINDS[kind]} "
                              "(letters, digits, . _ -; it goes into the record folder)")
        d = self.record_dir
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(422, f"cannot create the record folder {d}: {exc.strerror or exc}") from None
        path = d / name
        if path.exists():
            if named:                      # a take is never overwritten
                raise OutputError(409, f"{name} exists in the record folder; pick another name")
            stem, suffix = path.stem, path.suffix
            k = 2
            while path.exists():           # the same second twice: numbered
                path = d / f"{stem}-{k}{suffix}"
                k += 1
        return path

    def start(self, kind: str, name: str | None = None) -> dict:
        from render import VideoFileSink
        from tracking.pose_track import TrackHeader

        from ..config import video_preset
        from tracking.track_io import PoseTrackWriter

        if kind not in KINDS:
            raise OutputError(400, f"'kind' must be one of {', '.join(KINDS)}")
        s = self.host
        with self._lock:
            path = self._path(kind, name)
            if getattr(self, kind) is not None:
                raise OutputError(409, f"a {kind} recording is already running ({getattr(self, kind)[1]})")
            if kind == "video":
                self._refuse_transparent("a video recording")
            try:
                if kind == "video":
                    sink = VideoFileSink(path, s.fps, tuple(s.renderer.size), pace="timestamps" if s.live else "frames",
                                         preset=video_preset(self._video_preset, s.live))
                    s.commands.call(lambda: s.outputs.add(sink, f"video:{path}"))
                    self.video = (sink, path)
                else:
                    header = TrackHeader(frame="avatar", source=f"swaycam run ({self._source or 'default source'})",
                                         settings={"recorded_by": "panel", "fps": s.fps})
                    writer = PoseTrackWriter(path, header)

                    def begin():
                        self._last_pose_t = None
                        self.poses = (writer, path)
                    s.commands.call(begin)
            except (OSError, ValueError) as exc:
                raise OutputError(422, f"cannot record to {path}: {exc}") from None
            return self.state()

    def stop(self, kind: str) -> dict:
        if kind not in KINDS:
            raise OutputError(400, f"'kind' must be one of {', '.join(KINDS)}")
        s = self.host
        with self._lock:
            cur = getattr(self, kind)
            if cur is None:
                raise OutputError(409, f"no {kind} recording is running")
            if kind == "video":
                sink, path = cur
                s.commands.call(lambda: s.outputs.remove(sink))
                self.video = None
                sink.close()                          # ffmpeg finishes the file here, off the render thread
                frames = sink.frames
            else:
                def end():
                    self.poses = None
                s.commands.call(end)
                writer, path = cur
                writer.close()
                frames = writer.count
            out = self.state()
            out["stopped"] = {"kind": kind, "path": str(path.resolve()), "frames": frames}
            return out

    # ------------------------------------------------------------------ render thread
    def frame_drawn(self, sample, view=None) -> None:
        """Record the pose the frame just drawn used, and ``view`` (the viewer's orbit (5,),
        tracking/track_io.py "view"; render thread)."""
        p = self.poses
        if p is None or sample is None:
            return
        t = int(sample.t_ns)
        if self._last_pose_t is not None and t <= self._last_pose_t:
            return
        self._last_pose_t = t
        p[0].write_sample(sample, view)

    def close(self) -> None:
        """At the end of the run (render thread, before the outputs close): finish every
        recording and release the camera; the run's own outputs are left alone."""
        s = self.host
        if self.poses is not None:
            self.poses[0].close()
            self.poses = None
        for sink in [self.vcam, self.video[0] if self.video is not None else None]:
            if sink is None:
                continue
            try:
                if s.outputs is not None and any(x is sink for x in s.outputs.sinks):
                    s.outputs.remove(sink)
                sink.close()
            except Exception:  # noqa: BLE001 - the run is ending; report and go on
                log.exception("closing a panel output")
        self.vcam = self.video = None
