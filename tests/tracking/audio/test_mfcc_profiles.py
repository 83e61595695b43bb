"""MFCC windows and vowel profile files."""

import json

import numpy as np
import pytest

from tracking.audio import CLASSES
from tracking.audio.mfcc import MfccExtractor, MfccOptions, mel_filter_bank
from tracking.audio.profiles import ProfileError, VowelProfiles
from tracking.audio.stream import VoiceTimeline, WindowFeeder


def test_mfcc_is_loudness_free_and_silence_is_zero():
    ex = MfccExtractor()
    t = np.arange(512) / 16000
    x = 0.3 * np.sin(2 * np.pi * 220 * t) + 0.1 * np.sin(2 * np.pi * 880 * t)
    m1, r1 = ex.window(x)
    m2, r2 = ex.window(0.01 * x)
    assert m1.shape == (12,)
    np.testing.assert_allclose(m1, m2, atol=1e-9)     # normalised to a peak of 1
    assert r2 == pytest.approx(0.01 * r1)
    z, rz = ex.window(np.zeros(512))
    assert rz == 0.0 and not z.any()


def test_mel_bank_covers_the_band():
    bank = mel_filter_bank(16000, 512, 24)
    assert bank.shape == (24, 257)
    assert bank.max() <= 1.0 and np.all(bank.sum(axis=1) > 0)


def test_options_are_checked():
    with pytest.raises(ValueError):
        MfccOptions(window=500)
    with pytest.raises(ValueError):
        MfccOptions(hop=1024)


def test_window_feeder_is_block_size_free():
    x = np.random.default_rng(1).standard_normal(5000)
    a = [(e, w) for e, w in WindowFeeder(512, 256).feed(x)]
    f = WindowFeeder(512, 256)
    b = [r for i in range(0, 5000, 77) for r in f.feed(x[i:i + 77])]
    assert [e for e, _ in a] == [e for e, _ in b] == list(range(512, 5001, 256))
    for (_, wa), (_, wb) in zip(a, b):
        assert np.array_equal(wa, wb)
        
        
def test_timeline_samples_newest_at_or_before():
    tl = VoiceTimeline(capacity=4)
    out = np.zeros(8)
    assert not tl.sample(10, out).any()
    for k in range(6):
        tl.append(100 * k, np.full(8, float(k)))
    assert tl.sample(250, out)[0] == 2.0           # kept: 200..500
    assert tl.sample(10_000, out)[0] == 5.0
    assert not tl.sample(150, out).any()           # older than anything kept


def test_profiles_round_trip_and_errors(tmp_path):
    rng = np.random.default_rng(0)
    p = VowelProfiles({c: rng.standard_normal((5, 12)) for c in CLASSES})
    path = tmp_path / "voice.json"
    p.save(path)
    q = VowelProfiles.load(path)
    np.testing.assert_allclose(q.means, p.means, atol=1e-6)
    with pytest.raises(ProfileError, match="class 'oh'"):
        VowelProfiles({c: rng.standard_normal((5, 12)) for c in CLASSES if c != "oh"})
    bad = json.loads(path.read_text())
    bad["samples"]["aa"][0][0] = "x"
    path.write_text(json.dumps(bad))
    with pytest.raises(ProfileError):
        VowelProfiles.load(path)
    assert VowelProfiles.default().means.shape == (6, 12)
