"""The panel's voice calibration: record each vowel from the running microphone, then use and
save the profile (``POST /calibrate/voice``).

:class:`VoiceCalibration` hooks the run's :class:`runtime.lipsync.input.Voice` (only a
microphone can be calibrated: a file's analysis is fixed before the run): ``start(vowel)``
collects that vowel's windows (:class:`runtime.lipsync.calibrate.TakeRecorder` on the
stream's callback thread), ``apply()`` builds the profile from the takes over the current one
(:func:`tracking.audio.calibration.profiles_from_takes`: vowels not re-recorded keep theirs),
hands it to the running analyzer and saves it where ``swaycam calibrate --audio`` does
(:func:`runtime.lipsync.profile_path`).
"""

from __future__ import annotations

from ..errors import SettingsError
from ..service.errors import Conflict

VOWELS = ("a", "i", "u", "e", "o", "silence")


class VoiceCalibration:
    """(module doc) ``attach(voice)`` once the run's voice is open (None: no ``--audio``)."""

    def __init__(self) -> None:
        self.voice = None
        self.recorder = None
        self.takes: dict = {}

    def attach(self, voice) -> None:
        from ..lipsync.calibrate import TakeRecorder

        self.voice = voice
        if voice is not None and voice.mic is not None:
            self.recorder = TakeRecorder()
            voice.mic.on_window = self.recorder

    def _need_mic(self) -> None:
        if self.voice is None or self.recorder is None:
            raise Conflict("voice calibration needs a microphone (swaycam run --audio mic)")

    def state(self) -> dict:
        rec = self.recorder
        current = None if rec is None else rec._current
        counts = {} if rec is None else {k: len(v) for k, v in rec.takes.items()}
        return {"vowel": current, "windows": counts}

    def start(self, vowel: str) -> dict:
        self._need_mic()
        if vowel not in VOWELS:
            raise SettingsError(f"vowel must be one of {', '.join(VOWELS)} (or apply, cancel), got {vowel!r}")
        self.recorder.end()
        self.recorder.begin(vowel)
        return self.state()

    def stop(self) -> dict:
        if self.recorder is not None:
            self.recorder.end()
        return self.state()

    def apply(self) -> dict:
        """Use and save the profile from the takes so far. Raises Conflict without takes or
        with a take too quiet to learn from."""
        import numpy as np

        from tracking.audio.calibration import profiles_from_takes
        from tracking.audio.profiles import ProfileError

        from ..lipsync import profile_path

        self._need_mic()
        self.recorder.end()
        takes = {k: np.array(v) for k, v in self.recorder.takes.items() if v}
        if not takes:
            raise Conflict("no vowel recorded yet")
        analyzer = self.voice.mic.analyzer
        try:
            prof = profiles_from_takes(takes, mfcc=analyzer.profiles.mfcc, options=analyzer.options,
                                       base=analyzer.profiles)
        except ProfileError as exc:
            raise Conflict(str(exc)) from None
        analyzer.set_profiles(prof)
        path = profile_path()
        prof.save(path)
        return {"voice_profile": str(path), "takes": sorted(takes),
                "windows": {c: len(v) for c, v in prof.samples.items()}}
