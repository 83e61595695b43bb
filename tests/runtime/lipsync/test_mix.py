"""The mouth mix, the voice beside a pose input, the rig's expressions, [lipsync] and
``swaycam calibrate --audio``."""

import json

import numpy as np
import pytest

from avatars import load_avatar
from avatars.generate import default_avatar_path
from runtime.clock import ReplayClock
from runtime.config import RunConfig, load_toml
from runtime.errors import ConfigError
from runtime.lipsync.input import Voice, VoiceInput
from runtime.lipsync.mix import MixOptions, audio_share, mix_mouth
from runtime.pose_inputs import TrackInput, head_turn_track
from runtime.rig import AvatarRig
from tracking.audio.stream import VoiceTimeline
from tracking.pose_track import PoseSample
from tracking.track_io import PoseTrackWriter, load_track


def voice(aa=0.0, oh=0.0, level=0.0, conf=0.0, on=1.0):
    return np.array([aa, 0.0, 0.0, 0.0, oh, level, conf, on])


def test_louder_and_surer_source_wins():
    cam = {"aa": 0.0, "oh": 0.6}
    o = MixOptions()
    loud = voice(aa=0.8, level=0.9, conf=0.9)
    assert audio_share(loud, cam, 0.2, o) > 0.99        # camera unsure: audio
    assert audio_share(voice(aa=0.1, level=0.1, conf=0.5), cam, 1.0, o) < 0.01   # quiet audio: camera
    assert audio_share(loud, {}, 1.0, o) == 1.0         # camera mouth closed
    assert audio_share(voice(), {}, 1.0, o) == 0.0      # both silent
    assert audio_share(loud, cam, 1.0, MixOptions(mix="camera")) == 0.0
    assert audio_share(voice(level=0.0), cam, 1.0, MixOptions(mix="audio")) == 1.0
    assert audio_share(voice(aa=1, level=1, conf=1, on=0.0), cam, 0.0, o) == 0.0  # no audio source
    # continuous: a small change of level moves the share a little
    a = [audio_share(voice(aa=0.5, level=x, conf=1.0), {"aa": 0.5}, 1.0, o) for x in np.linspace(0.3, 0.7, 41)]
    assert max(np.diff(a)) < 0.1


def test_mix_writes_the_mouth_and_keeps_the_sum():
    v = mix_mouth({"aa": 0.2, "blink": 1.0}, voice(aa=0.9, oh=0.5, level=1, conf=1), 0.0, MixOptions())
    assert v["blink"] == 1.0
    assert sum(v[k] for k in ("aa", "ih", "ou", "ee", "oh")) == pytest.approx(1.0)
    m = mix_mouth({"aa": 0.7}, voice(aa=0.2, oh=0.3, level=1, conf=1), 1.0, MixOptions(mix="max"))
    assert m["aa"] == 0.7 and m["oh"] == 0.3
    with pytest.raises(ValueError):
        MixOptions(mix="loudest")


def _timeline(step_ns=16_000_000, n=100):
    tl = VoiceTimeline(capacity=n)
    for k in range(n):
        tl.append(k * step_ns, voice(aa=0.8 if 20 <= k < 60 else 0.0, level=0.8 if 20 <= k < 60 else 0.0,
                                     conf=0.9 if 20 <= k < 60 else 0.0))
    return tl


def test_voice_input_fills_samples_offline_and_the_rig_mixes():
    inner = TrackInput(head_turn_track())
    inp = VoiceInput(inner, Voice(_timeline()))
    clock = ReplayClock(inner.status().start_ns)
    inp.start(clock)
    s = inp.sample(clock.now_ns() + 40 * 16_000_000, PoseSample())
    assert s.voice[0] == 0.8 and s.voice[7] == 1.0
    rig = AvatarRig(load_avatar(default_avatar_path()))
    ex = rig.expression_values(s)
    assert ex["aa"] == pytest.approx(0.8)              # the track's face has a closed mouth: audio wins
    quiet = inp.sample(clock.now_ns() + 80 * 16_000_000, PoseSample())
    assert rig.expression_values(quiet)["aa"] == 0.0
    rig.mouth = MixOptions(mix="camera")
    assert rig.expression_values(s)["aa"] == 0.0
    inp.close()


def test_recorded_voice_replays(tmp_path):
    path = tmp_path / "rec.jsonl"
    s = PoseSample()
    with PoseTrackWriter(path) as w:
        for k in range(5):
            s.t_ns = k * 10_000_000
            s.voice[:] = voice(aa=0.1 * k, level=0.5, conf=0.7)
            w.write_sample(s)
    tr = load_track(path)
    out = tr.sample(25_000_000, PoseSample())
    assert out.voice[0] == pytest.approx(0.25) and out.voice[7] == 1.0
    assert tr.sample(20_000_000, PoseSample()).voice[0] == 0.2       # at a record: that record
    lines = path.read_text().splitlines()
    assert "voice" in json.loads(lines[1])


def test_lipsync_config(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('audio = "mic"\n[lipsync]\nmix = "max"\nmin_db = -45\nprofile = "v.json"\n')
    cfg = load_toml(p)
    assert cfg.audio == "mic" and cfg.lipsync.mix_options().mix == "max"
    assert cfg.lipsync.analysis_options().min_db == -45
    assert cfg.lipsync.profile == str(tmp_path / "v.json")
    p.write_text('[lipsync]\nmix = "loud"\n')
    with pytest.raises(ConfigError, match="lipsync"):
        load_toml(p)
    p.write_text('[lipsync]\ngate = 3\n')
    with pytest.raises(ConfigError, match="unknown setting"):
        load_toml(p)
    p.write_text('audio = "nothere.wav"\n')
    with pytest.raises(ConfigError, match="audio"):
        load_toml(p)
    assert RunConfig().audio is None
