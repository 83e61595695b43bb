"""Generated speech for the runtime lip-sync tests (as tests/tracking/audio): espeak-ng vowels and sentences (no recorded voices).

espeak-ng and sox are Debian packages (.ci/system-deps.sh, test level). Vowels are spoken
from phoneme input (``[[a::::]]``) at a slow rate; the Italian voice's five vowels are the
VRM ones. Files are made once per session into a temporary folder.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from tracking.audio.source import decode_audio

VOWELS = "aiueo"


def _need(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed (sh .ci/system-deps.sh test)")


class Speech:
    """espeak-ng takes in a folder; ``vowel(voice, pitch, letter)`` and ``sentence(...)``
    return decoded 16 kHz signals (and write the WAV files once)."""

    def __init__(self, folder):
        self.folder = folder

    def wav(self, name: str, voice: str, pitch: int, text: str, speed: int = 90):
        p = self.folder / f"{name}.wav"
        if not p.exists():
            subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "-w", str(p), text],
                           check=True, capture_output=True)
        return p

    def vowel(self, voice: str, pitch: int, letter: str) -> np.ndarray:
        p = self.wav(f"{voice}_{pitch}_{letter}", voice, pitch, f"[[{letter}::::]] [[{letter}::::]]")
        return decode_audio(p)

    def sentence(self, voice: str = "en-us", pitch: int = 50,
                 text: str = "Hello there, how are you today? I am fine.") -> object:
        return self.wav(f"sentence_{voice}_{pitch}", voice, pitch, text, speed=150)


@pytest.fixture(scope="session")
def speech(tmp_path_factory) -> Speech:
    _need("espeak-ng")
    return Speech(tmp_path_factory.mktemp("speech"))


@pytest.fixture(scope="session")
def sox():
    _need("sox")
    return shutil.which("sox")
