"""``--audio``: the voice beside the run's pose input.

:func:`open_voice` makes a :class:`Voice` for the run: the microphone
(:class:`tracking.audio.source.MicrophoneStream`, values stamped on the capture clock), or a
file's audio track analysed whole before the run (:func:`tracking.audio.stream.analyze_signal`,
stamped in media time). :class:`VoiceInput` wraps the pose input and writes the voice value
of each sample's time into ``PoseSample.voice``; the pose input's own recording (``--record``)
is handed the same timeline and writes the voice of each recorded pose's time.

Time bases, as the pose inputs': an offline run maps loop time to media time by the
offset fixed at ``start`` (``media = t − (now_at_start − start_ns)``); a live run samples at
the loop time's wall time (:meth:`runtime.clock.Clock.to_wall_ns`), and a file's analysis is
moved onto the wall clock at ``start`` (its media time 0 at the start's wall time).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from tracking.audio.stream import VoiceTimeline
from tracking.pose_track import PoseSample

from ..pose_inputs.base import InputStatus, PoseInput

log = logging.getLogger(__name__)


@dataclass
class Voice:
    """An opened ``--audio`` source. ``timeline``: its values; ``mic``: the live stream or
    None (a file); ``name``: what it is, for messages; ``analysis_ms``: the analysis time
    of a file (0 live)."""

    timeline: VoiceTimeline
    mic: object | None = None
    name: str = ""
    analysis_ms: float = 0.0
    started: bool = field(default=False, repr=False)

    def start(self, clock, live: bool, start_ns: int) -> int:
        """Start the microphone, or place a file's analysis on the run's time base; returns
        the offset of loop time to the timeline's time for offline runs (0 live)."""
        if self.started:
            return 0
        self.started = True
        if self.mic is not None:
            self.mic.start()
            return 0
        if live:
            self.timeline.shift(clock.to_wall_ns(clock.now_ns()))
            return 0
        return clock.now_ns() - start_ns

    def close(self) -> None:
        if self.mic is not None:
            self.mic.close()
            self.mic = None


def _file_audio(source: str | None) -> str | None:
    """The source's own file when it may carry an audio track (a video or audio file)."""
    if source is None or source.isdigit() or source.startswith("/dev/video") or source.endswith(".jsonl"):
        return None
    p = Path(source)
    return str(p) if p.is_file() and p.suffix.lower() not in (".gif", ".png", ".jpg", ".jpeg", ".bmp", ".webp") else None


def open_voice(cfg, *, stream_factory=None) -> Voice | None:
    """The run's :class:`Voice` for ``cfg.audio`` (None: off): ``"mic"`` the default input
    device, a path that file's audio track, ``"auto"`` the source file's track when the
    source is a file, else the microphone.

    Raises:
        tracking.errors.SourceError: no microphone / PortAudio, or the file has no audio track;
        tracking.audio.profiles.ProfileError: a bad ``[lipsync] profile``.
    """
    if cfg.audio is None:
        return None
    import time

    from tracking.audio.classifier import LipSyncAnalyzer
    from tracking.audio.source import MicrophoneStream, decode_audio
    from tracking.audio.stream import analyze_signal, timeline_of

    from . import load_profiles

    analyzer = LipSyncAnalyzer(load_profiles(cfg.lipsync.profile), cfg.lipsync.analysis_options())
    what = cfg.audio
    if what == "auto":
        what = _file_audio(cfg.source) or "mic"
    if what == "mic":
        kw = {} if stream_factory is None else {"stream_factory": stream_factory}
        mic = MicrophoneStream(analyzer, **kw)
        log.info("lip sync: the default microphone")
        return Voice(mic.timeline, mic=mic, name="microphone")
    t0 = time.perf_counter()
    times, values = analyze_signal(decode_audio(what, analyzer.mfcc.options.sample_rate), analyzer)
    ms = (time.perf_counter() - t0) * 1e3
    log.info("lip sync: %s, %d windows analysed in %.0f ms", what, len(times), ms)
    return Voice(timeline_of(times, values), name=str(what), analysis_ms=ms)


class VoiceInput(PoseInput):
    """``inner`` whose samples carry the voice (module doc); everything else is ``inner``'s.
    Closing it closes ``inner`` and the microphone."""

    def __init__(self, inner: PoseInput, voice: Voice) -> None:
        self.inner = inner
        self.voice = voice
        self._clock = None
        self._live = False
        self._offset = 0

    @property
    def arrivals(self):
        return self.inner.arrivals

    def start(self, clock) -> None:
        self.inner.start(clock)
        st = self.inner.status()
        self._clock, self._live = clock, st.live
        self._offset = self.voice.start(clock, st.live, st.start_ns)

    def pump(self, t_ns: int) -> None:
        self.inner.pump(t_ns)

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        out = self.inner.sample(t_ns, out=out)
        if self._clock is None:
            at = t_ns
        elif self._live:
            at = self._clock.to_wall_ns(t_ns)
        else:
            at = t_ns - self._offset
        self.voice.timeline.sample(at, out.voice)
        return out

    def status(self) -> InputStatus:
        return self.inner.status()

    def recenter(self) -> None:
        self.inner.recenter()

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.voice.close()
