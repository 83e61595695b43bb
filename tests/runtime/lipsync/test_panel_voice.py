"""The panel's voice calibration (runtime/panel/voice.py) on a microphone faked at the
sounddevice boundary: takes per vowel, then the profile is used live and saved."""

import numpy as np
import pytest

from runtime.lipsync.input import Voice
from runtime.panel.voice import VoiceCalibration
from runtime.service.errors import Conflict
from tracking.audio.classifier import LipSyncAnalyzer
from tracking.audio.profiles import VowelProfiles
from tracking.audio.source import MicrophoneStream


class FakeStream:
    def __init__(self, **kw):
        self.kw = kw

    def start(self):
        pass

    def play(self, sig):
        for i in range(0, len(sig) - 255, 256):
            self.kw["callback"](sig[i:i + 256, None].astype(np.float32), 256, None, None)

    def stop(self):
        pass

    def close(self):
        pass


def test_takes_then_apply_uses_and_saves_the_profile(speech, tmp_path, monkeypatch):
    monkeypatch.setenv("SWAYCAM_VOICE_PROFILE", str(tmp_path / "voice.json"))
    made = []
    mic = MicrophoneStream(LipSyncAnalyzer(VowelProfiles.default()),
                           stream_factory=lambda **kw: made.append(FakeStream(**kw)) or made[-1])
    cal = VoiceCalibration()
    cal.attach(Voice(mic.timeline, mic=mic))
    before = mic.analyzer.profiles
    for v in "aiueo":
        assert cal.start(v)["vowel"] == v
        made[0].play(speech.vowel("es", 50, v))
        assert cal.stop()["windows"][v] > 20
    out = cal.apply()
    assert out["takes"] == sorted("aiueo")
    assert mic.analyzer.profiles is not before
    saved = VowelProfiles.load(tmp_path / "voice.json")
    np.testing.assert_allclose(saved.means, mic.analyzer.profiles.means, atol=1e-5)
    with pytest.raises(Exception, match="vowel must be"):
        cal.start("y")


def test_without_a_microphone_it_is_a_conflict():
    cal = VoiceCalibration()
    with pytest.raises(Conflict, match="microphone"):
        cal.start("a")
    cal.attach(None)
    with pytest.raises(Conflict):
        cal.apply()
