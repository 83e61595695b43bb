"""Lip sync on generated speech: vowels drive their visemes, silence closes the mouth, a file
replays bit for bit, the live path (a fake stream at the sounddevice boundary) matches it."""

import subprocess
import threading

import imageio_ffmpeg
import numpy as np
import pytest

from tracking.audio import CLASSES, LETTERS, V_CONF, V_LEVEL, V_ON, VISEMES
from tracking.audio.calibration import profiles_from_takes
from tracking.audio.classifier import LipSyncAnalyzer, LipSyncOptions
from tracking.audio.mfcc import MfccOptions
from tracking.audio.profiles import ProfileError, VowelProfiles
from tracking.audio.source import MicrophoneStream, decode_audio
from tracking.audio.stream import WindowFeeder, analyze_signal

from tests.speech import VOWELS

CAL_PITCHES = (35, 65)


def accuracy(analyzer, signals: dict[str, list[np.ndarray]]) -> dict[str, float]:
    """Share of the voiced (level > 0) windows classified as the spoken vowel, per vowel."""
    o = analyzer.mfcc.options
    out = {}
    for letter, sigs in signals.items():
        ok = n = 0
        for s in sigs:
            for _, w in WindowFeeder(o.window, o.hop).feed(s):
                c, lvl, _ = analyzer.classify(w)
                if lvl > 0:
                    n += 1
                    ok += CLASSES[c] == LETTERS[letter]
        assert n > 20, f"{letter}: only {n} voiced windows"
        out[letter] = ok / n
    return out


@pytest.fixture(scope="module")
def calibrated(speech):
    takes = {v: np.concatenate([speech.vowel("it", p, v) for p in CAL_PITCHES]) for v in VOWELS}
    return LipSyncAnalyzer(profiles_from_takes(takes))


def test_each_vowel_drives_its_viseme_same_voice(speech, calibrated):
    acc = accuracy(calibrated, {v: [speech.vowel("it", 50, v)] for v in VOWELS})
    print("same voice (it, pitch 50):", acc)
    assert min(acc.values()) >= 0.9, acc


def test_another_voice_is_measured(speech, calibrated):
    acc = accuracy(calibrated, {v: [speech.vowel("es", p, v) for p in (35, 50, 65)] for v in VOWELS})
    print("other voice (es):", acc)
    assert min(acc.values()) >= 0.8, acc


def test_spoken_vowel_wins_the_mouth(speech, calibrated):
    calibrated.reset()
    for letter in VOWELS:
        _, vals = analyze_signal(speech.vowel("it", 50, letter), calibrated)
        open_ = vals[vals[:, V_LEVEL] > 0.5]
        win = np.argmax(open_[:, :5], axis=1)
        share = np.mean(win == VISEMES.index(LETTERS[letter]))
        assert share >= 0.9, (letter, share)
        assert open_[:, :5].max() > 0.5 and np.all(vals[:, V_ON] == 1.0)


def test_silence_closes_the_mouth_within_100_ms(speech, calibrated, tmp_path):
    """A held 'a' cut by sox (0.5 s of it, then 1 s of silence): 100 ms after the sound stops
    every viseme is <= 0.05, level and confidence 0."""
    from tracking.audio.source import decode_audio

    cut = tmp_path / "a_then_silence.wav"
    speech.sox(speech.vowel_wav("it", 50, "a"), "-r", "16000", cut, "trim", "0.3", "0.5", "pad", "0", "1.0")
    signal = decode_audio(cut)
    stop = int(np.nonzero(np.abs(signal) > 1e-3)[0][-1]) + 1
    calibrated.reset()
    t, vals = analyze_signal(signal, calibrated)
    stop_ns = stop * 1_000_000_000 // calibrated.mfcc.options.sample_rate
    assert vals[t <= stop_ns][-1, :5].max() > 0.3          # open while speaking
    after = vals[t >= stop_ns + 100_000_000]
    assert len(after) > 10 and after[:, :5].max() <= 0.05
    assert np.all(after[:, V_LEVEL] == 0) and np.all(after[:, V_CONF] == 0)


def _video_with_speech(speech, tmp_path):
    wav = speech.sentence()
    mp4 = tmp_path / "talk.mp4"
    subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-f", "lavfi", "-i", "color=c=gray:s=64x64:r=10",
                    "-i", str(wav), "-shortest", "-c:v", "libx264", "-c:a", "aac", "-y", str(mp4)], check=True)
    return mp4


def test_file_with_audio_track_replays_bit_for_bit(speech, tmp_path):
    mp4 = _video_with_speech(speech, tmp_path)
    prof = profiles_from_takes({v: speech.vowel("it", 50, v) for v in VOWELS})
    runs = []
    for block in (4096, 333):
        t, v = analyze_signal(decode_audio(mp4), LipSyncAnalyzer(prof), block=block)
        runs.append((t, v))
    assert len(runs[0][0]) > 50
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert runs[0][1][:, :5].max() > 0.3                   # the sentence opens the mouth


def test_a_video_without_audio_is_refused(tmp_path):
    from tracking.errors import SourceError

    mp4 = tmp_path / "mute.mp4"
    subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-f", "lavfi", "-i", "color=c=gray:s=64x64:r=10",
                    "-t", "0.5", "-c:v", "libx264", "-y", str(mp4)], check=True)
    with pytest.raises(SourceError, match="no audio track"):
        decode_audio(mp4)


class FakeInputStream:
    """Stands in for sounddevice.InputStream: plays ``signal`` into the callback in blocks of
    ``blocksize`` on its own thread, stamped on a fake clock that advances with the audio."""

    def __init__(self, signal, clock, **kw):
        self.kw, self.signal, self.clock = kw, signal, clock
        self.done = threading.Event()
        self.stopped = self.closed = False

    def start(self):
        def run():
            n, sr = self.kw["blocksize"], self.kw["samplerate"]
            for i in range(0, len(self.signal) - n + 1, n):
                self.clock[0] = (i + n) * 1_000_000_000 // sr
                self.kw["callback"](self.signal[i:i + n, None].astype(np.float32), n, None, None)
            self.done.set()
        threading.Thread(target=run, daemon=True).start()

    def stop(self):
        self.stopped = True

    def close(self):
        self.closed = True


def test_live_stream_gives_the_offline_visemes(speech):
    prof = profiles_from_takes({v: speech.vowel("it", 50, v) for v in VOWELS})
    sig = decode_audio(speech.sentence()).astype(np.float32).astype(np.float64)   # the device gives float32
    clock = [0]
    made = []

    def factory(**kw):
        made.append(FakeInputStream(sig, clock, **kw))
        return made[0]

    mic = MicrophoneStream(LipSyncAnalyzer(prof), clock_ns=lambda: clock[0], stream_factory=factory)
    with mic:
        assert made[0].done.wait(10)
    assert made[0].stopped and made[0].closed
    assert made[0].kw["samplerate"] == 16000 and made[0].kw["channels"] == 1
    t_live, v_live = mic.timeline.arrays()
    n = len(sig) // 256 * 256
    t_off, v_off = analyze_signal(sig[:n], LipSyncAnalyzer(prof))
    assert np.array_equal(t_live, t_off[-len(t_live):])
    assert np.array_equal(v_live, v_off[-len(v_live):])
    assert all(a == 0.0 for a, _ in mic.stages)            # the fake gives no PortAudio time stamps


def test_options_are_checked():
    with pytest.raises(ValueError):
        LipSyncOptions(compare="dtw")
    with pytest.raises(ValueError):
        LipSyncOptions(min_db=-20, max_db=-30)
    with pytest.raises(ProfileError, match="measured with"):
        LipSyncAnalyzer(VowelProfiles.default(), mfcc=MfccOptions(window=1024))


def test_latency_by_stage_is_within_a_window_and_a_frame(speech, calibrated):
    """Sound to mouth (tracking.eval.lipsync): window fill + analysis + one frame <= one
    audio window + one frame; silence closes the mouth within 100 ms."""
    from tracking.eval.lipsync import latency_stages

    rows = latency_stages(calibrated, {v: speech.vowel("it", 50, v) for v in VOWELS}, fps=60.0)
    for letter, r in rows.items():
        print(letter, {k: round(x, 2) for k, x in r.items()})
        assert r["total_ms"] <= r["bound_ms"], (letter, r)
        assert r["close_ms"] <= 100.0, (letter, r)
