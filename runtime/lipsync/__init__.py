"""Lip sync in the runtime: the audio input beside the camera, and the mouth mix.

:mod:`.input` opens ``--audio`` (the microphone, or a file's audio track analysed offline:
:mod:`tracking.audio`) and wraps the run's pose input so every sample carries the voice
value of its time (``PoseSample.voice``), which recordings keep. :mod:`.mix` meets the
audio's visemes with the camera's mouth in :meth:`runtime.rig.AvatarRig.expression_values`,
so the avatar, the VMC sender and the panel see the mixed mouth.
"""

from __future__ import annotations

import os
from pathlib import Path


def profile_path() -> Path:
    """Where ``swaycam calibrate --audio`` saves the user's vowel profile:
    ``$SWAYCAM_VOICE_PROFILE``, else ``voice_profile.json`` in the swaycam cache folder
    (:func:`avatars.user_cache.cache_dir`)."""
    env = os.environ.get("SWAYCAM_VOICE_PROFILE")
    if env:
        return Path(env).expanduser()
    from avatars.user_cache import cache_dir

    return cache_dir() / "voice_profile.json"


def load_profiles(path: str | None = None):
    """The vowel profiles of a run: ``path`` ([lipsync] profile), else the user's saved ones
    (:func:`profile_path`) when they exist, else the bundled default.

    Raises:
        tracking.audio.profiles.ProfileError: the file named is missing or malformed.
    """
    from tracking.audio.profiles import VowelProfiles

    if path is not None:
        return VowelProfiles.load(path)
    p = profile_path()
    return VowelProfiles.load(p) if p.is_file() else VowelProfiles.default()
