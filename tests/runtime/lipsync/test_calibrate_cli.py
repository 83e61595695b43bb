"""``swaycam calibrate --audio``: from take files and, guided, from a fake microphone."""

import json
import subprocess
import sys

import numpy as np
import pytest

from tracking.audio.profiles import VowelProfiles


def test_calibrate_audio_from_takes(speech, tmp_path):
    out = tmp_path / "voice.json"
    takes = [f"--take={v}={speech.vowel_wav('it', 50, v)}" for v in "aiueo"]
    r = subprocess.run([sys.executable, "-m", "runtime.cli", "calibrate", "--audio", *takes,
                        "--voice-profile", str(out), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["voice_profile"] == str(out) and doc["takes"] == list("aeiou")
    prof = VowelProfiles.load(out)
    assert all(n > 20 for c, n in doc["windows"].items() if c != "silence")
    assert prof.means.shape == (6, 12)


def test_calibrate_audio_refuses_a_source(tmp_path):
    r = subprocess.run([sys.executable, "-m", "runtime.cli", "calibrate", "0", "--audio"], capture_output=True,
                       text=True)
    assert r.returncode != 0 and "no SOURCE" in r.stderr


def test_guided_takes_from_a_fake_microphone(speech, tmp_path, monkeypatch):
    """The guided takes through MicrophoneStream, at the sounddevice boundary: while a take
    runs, its 'sleep' plays that take's vowel into the stream's callback."""
    import argparse

    import runtime.lipsync.calibrate as cal
    from runtime.cli.calibrate import calibrate_audio

    rng = np.random.default_rng(0)
    signals = {v: speech.vowel("it", 50, v) for v in "aiueo"}
    signals["silence"] = 1e-4 * rng.standard_normal(16000)      # room noise, under the gate
    made = []

    class FakeStream:
        def __init__(self, **kw):
            self.kw = kw
            made.append(self)

        def start(self):
            pass

        def play(self, sig):
            for i in range(0, len(sig) - 255, 256):
                self.kw["callback"](sig[i:i + 256, None].astype(np.float32), 256, None, None)

        def stop(self):
            pass

        def close(self):
            pass

    orig = cal.guided_takes

    def guided(mic, rec, **kw):
        def sleep(_s):
            if rec._current is not None:
                made[0].play(signals[rec._current])
        return orig(mic, rec, **{**kw, "sleep": sleep})

    monkeypatch.setattr(cal, "guided_takes", guided)
    args = argparse.Namespace(voice_profile=str(tmp_path / "v.json"), take=[], seconds=1.5)
    out = calibrate_audio(args, say=lambda s: None, stream_factory=FakeStream)
    assert out["takes"] == sorted(["silence", "a", "i", "u", "e", "o"])
    assert all(n > 20 for c, n in out["windows"].items() if c != "silence")
    assert VowelProfiles.load(tmp_path / "v.json").means.shape == (6, 12)
