"""Generated speech for the lip-sync tests: espeak-ng vowels and sentences (no recorded voices).

espeak-ng and sox are Debian packages (.ci/system-deps.sh, test level). Vowels are spoken
from phoneme input (``[[a::::]]``) at a slow rate; the Italian voice's five vowels are the
VRM ones. Files are made once per session into a temporary folder (``speech`` fixture,
tests/conftest.py).
"""

from __future__ import annotations

import subprocess

import numpy as np

VOWELS = "aiueo"


class Speech:
    """espeak-ng takes in a folder; ``vowel(voice, pitch, letter)`` returns the decoded 16 kHz
    signal (and writes the WAV once), ``sentence(...)`` the WAV's path, ``sox(...)`` runs sox."""

    def __init__(self, folder, sox: str):
        self.folder = folder
        self.sox_exe = sox

    def wav(self, name: str, voice: str, pitch: int, text: str, speed: int = 90):
        p = self.folder / f"{name}.wav"
        if not p.exists():
            subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "-w", str(p), text],
                           check=True, capture_output=True)
        return p

    def vowel_wav(self, voice: str, pitch: int, letter: str):
        return self.wav(f"{voice}_{pitch}_{letter}", voice, pitch, f"[[{letter}::::]] [[{letter}::::]]")

    def vowel(self, voice: str, pitch: int, letter: str) -> np.ndarray:
        from tracking.audio.source import decode_audio

        return decode_audio(self.vowel_wav(voice, pitch, letter))

    def sentence(self, voice: str = "en-us", pitch: int = 50,
                 text: str = "Hello there, how are you today? I am fine.") -> object:
        return self.wav(f"sentence_{voice}_{pitch}", voice, pitch, text, speed=150)

    def sox(self, *args) -> None:
        subprocess.run([self.sox_exe, *map(str, args)], check=True, capture_output=True)
