"""Head pose inputs of the loop (what drives the avatar), apart from the frame sources of
:mod:`tracking.frame_sources` (what a tracker reads).

All of them implement one protocol, :class:`PoseInput` (:mod:`.base`): ``start(clock)``,
``pump(t_ns)``, ``sample(t_ns, out)`` in the loop's time base, ``status()`` ->
:class:`InputStatus`, ``recenter()``, ``close()`` and the context-manager methods.

- :class:`TrackInput` (:mod:`.track`): a recorded or synthetic :class:`tracking.PoseTrack`
  (deterministic); :func:`head_turn_track`, the built-in ``turn-test``.
- :class:`OfflineTracking` (:mod:`.offline`): a file (video, GIF, image, folder) tracked frame
  by frame as the loop reaches each frame's media time. Deterministic; no thread.
- :class:`LiveInput` (:mod:`.live`): a webcam or a file played in real time, tracked on its
  own thread into a :class:`tracking.PoseFilter` sampled with a small delay.
- :class:`IdlePose` (:mod:`.idle`): the kiosk's idle sway around any of them.
- :func:`open_pose_input` (:mod:`.open`): ``--source`` -> one of the above.
"""

from .base import InputStatus, PoseInput
from .idle import IdlePose
from .live import LiveInput, PlayedAsCamera
from .offline import OfflineTracking
from .open import open_pose_input, webcam_available
from .track import TrackInput, head_turn_track

__all__ = ["IdlePose", "InputStatus", "LiveInput", "OfflineTracking", "PlayedAsCamera", "PoseInput", "TrackInput",
           "head_turn_track", "open_pose_input", "webcam_available"]
