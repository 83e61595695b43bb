"""Audio lip sync: the microphone (or a file's audio track) as an input, like the camera.

The pipeline follows uLipSync (hecomi/uLipSync, ``Runtime/Core/LipSyncJob.cs``): each short
window of mono audio is pre-emphasised, Hamming-windowed, normalised, turned into MFCCs
(:mod:`.mfcc`), and scored against per-user vowel profiles A/I/U/E/O and silence
(:mod:`.profiles`, :mod:`.classifier`); a volume gate closes the mouth below a level.
Sources (:mod:`.source`): the default input device through ``sounddevice`` (live) or any
audio/video file decoded by imageio-ffmpeg's ffmpeg (offline, bit-for-bit replayable).
:mod:`.stream` keeps the analysed windows on a timeline the runtime samples.

Output per window (:data:`VOICE_W` floats, the layout of ``PoseSample.voice``):
``aa ih ou ee oh`` viseme weights (VRM 1.0 names, 0..1), ``level`` (the gated volume, 0..1),
``confidence`` (the winning profile's share of the scores, 0..1), ``on`` (1.0: an audio
source produced this value). Nothing here imports sounddevice or runs ffmpeg at import.
"""

VISEMES: tuple[str, ...] = ("aa", "ih", "ou", "ee", "oh")
#: profile classes: the five vowels (VRM 1.0 viseme names) and silence
CLASSES: tuple[str, ...] = VISEMES + ("silence",)
#: the user-facing vowel letters of the classes (calibration prompts, ``--take a=FILE``)
LETTERS: dict[str, str] = {"a": "aa", "i": "ih", "u": "ou", "e": "ee", "o": "oh", "silence": "silence"}
V_LEVEL = 5
V_CONF = 6
V_ON = 7
VOICE_W = 8          # tracking.pose_track.VOICE_W, the width of PoseSample.voice
