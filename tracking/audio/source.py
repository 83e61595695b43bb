"""Audio sources: a file's audio track decoded offline, or the default input device live.

:func:`decode_audio` runs imageio-ffmpeg's ffmpeg binary (already a dependency: video
decoding) to mono 16-bit PCM at the analysis rate; the same file always gives the same
samples. :class:`MicrophoneStream` opens the default input device with ``sounddevice``
(PortAudio; imported when a stream opens) and analyses each completed window on the
device's callback thread into a :class:`~.stream.VoiceTimeline` stamped on the capture
clock. The device is reached only through ``stream_factory`` (default
``sounddevice.InputStream``), so tests run it with a fake stream.
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections import deque
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import SourceError
from .classifier import LipSyncAnalyzer
from .stream import NS, VoiceTimeline, WindowFeeder

log = logging.getLogger(__name__)


def decode_audio(path: str | Path, sample_rate: int = 16000, *, timeout_s: float = 300.0) -> np.ndarray:
    """The first audio track of ``path`` (any format ffmpeg reads: WAV, MP3, MP4, MKV, ...)
    as mono float64 samples in [-1, 1] at ``sample_rate`` Hz; channels are averaged by ffmpeg
    (``-ac 1``). Media time 0 is the first sample.

    Raises:
        SourceError: the file does not exist, has no audio track, or ffmpeg failed.
    """
    import imageio_ffmpeg

    p = Path(path)
    if not p.is_file():
        raise SourceError(f"audio {p}: no such file")
    cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-nostdin", "-v", "error", "-i", str(p), "-map", "0:a:0",
           "-vn", "-ac", "1", "-ar", str(int(sample_rate)), "-f", "s16le", "-acodec", "pcm_s16le", "-"]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise SourceError(f"audio {p}: ffmpeg took more than {timeout_s:g} s") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        hint = "no audio track" if any("matches no streams" in m for m in msg) else (msg[-1] if msg else "ffmpeg failed")
        raise SourceError(f"audio {p}: {hint}")
    return np.frombuffer(proc.stdout, dtype="<i2").astype(np.float64) / 32768.0


def _sounddevice_stream(**kw):
    try:
        import sounddevice
    except OSError as exc:       # the wheel is there but PortAudio is not (libportaudio2)
        raise SourceError(f"microphone: {exc} (install PortAudio, e.g. the libportaudio2 package)") from None
    try:
        return sounddevice.InputStream(**kw)
    except Exception as exc:     # noqa: BLE001 - PortAudioError and friends: no device
        raise SourceError(f"microphone: {exc}") from None


class MicrophoneStream:
    """The default input device, analysed live (module doc); a context manager.

    Args:
        analyzer: the :class:`~.classifier.LipSyncAnalyzer` (its sample rate is the device's).
        timeline: where values go (default: a new one of a few seconds).
        clock_ns: the capture clock (the one the loop's wall times use).
        device: a sounddevice device (None: the default input device).
        stream_factory: builds the stream from sounddevice.InputStream's keyword arguments.
        on_window: optional ``on_window(mfcc_window)`` per window, on the callback thread
            (calibration takes).

    Attributes:
        stages: deque of recent ``(block_ms, analysis_ms)``: the newest sample's age when its
            block reached the callback (PortAudio's input latency from its time stamps, or 0
            when the stream gives none) and the analysis time of the block's windows.
    """

    def __init__(self, analyzer: LipSyncAnalyzer, *, timeline: VoiceTimeline | None = None,
                 clock_ns: Callable[[], int] = time.perf_counter_ns, device=None,
                 stream_factory: Callable[..., object] = _sounddevice_stream,
                 on_window: Callable[[np.ndarray], None] | None = None) -> None:  # fmt: skip
        o = analyzer.mfcc.options
        self.analyzer = analyzer
        self.timeline = timeline if timeline is not None else VoiceTimeline(capacity=4 * o.sample_rate // o.hop)
        self._clock = clock_ns
        self._feeder = WindowFeeder(o.window, o.hop)
        self._rate = o.sample_rate
        self.on_window = on_window
        self.stages: deque[tuple[float, float]] = deque(maxlen=256)
        self.overflows = 0
        self._value = np.zeros(8)
        self._stream = stream_factory(samplerate=o.sample_rate, channels=1, dtype="float32", blocksize=o.hop,
                                      device=device, callback=self._callback)

    def _callback(self, indata, frames, time_info, status) -> None:
        """PortAudio's callback (its thread): stamp, cut into windows, analyse."""
        now = self._clock()
        if status:
            self.overflows += 1
        block = np.asarray(indata, np.float64)[:, 0] if np.ndim(indata) == 2 else np.asarray(indata, np.float64)
        age_ns = 0
        try:
            adc, cur = float(time_info.inputBufferAdcTime), float(time_info.currentTime)
            if adc > 0 and cur >= adc:
                age_ns = int((cur - adc) * NS) + len(block) * NS // self._rate   # to the block's last sample
        except AttributeError:
            pass
        t_last = now - age_ns                       # capture time of the block's last sample
        end_count = self._feeder.count + len(block)
        t0 = time.perf_counter_ns()
        for end, w in self._feeder.feed(block):
            t = t_last - (end_count - end) * NS // self._rate
            self.analyzer.step(w, out=self._value)
            self.timeline.append(t, self._value)
            if self.on_window is not None:
                self.on_window(w)
        self.stages.append((age_ns * 1e-6, (time.perf_counter_ns() - t0) * 1e-6))

    def start(self) -> "MicrophoneStream":
        self._stream.start()
        return self

    def close(self) -> None:
        s, self._stream = self._stream, None
        if s is not None:
            try:
                s.stop()
            finally:
                s.close()

    def __enter__(self) -> "MicrophoneStream":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
