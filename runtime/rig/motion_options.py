"""The options of body motion (:class:`MotionOptions`): plain data, checked when made.

Apart from the player (:mod:`runtime.rig.motion`) so that what only names or checks them (the
command line's ``--motion-layer`` choices, the config's ``[motion]`` table) imports no numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import MotionError

if TYPE_CHECKING:
    from .retarget import RetargetOptions

#: How tracking combines with a clip's head (:attr:`MotionOptions.layer`).
LAYERS = ("additive", "override")
#: What follows a one-shot clip (:attr:`MotionOptions.after`).
AFTER = ("idle", "rest", "hold")


@dataclass(frozen=True)
class MotionOptions:
    """How the body moves.

    Attributes:
        layer: "additive" (tracking turns the head on top of the clip's) or "override"
            (tracking alone turns neck and head, relative to the chest).
        fade_s: cross-fade between clips, seconds.
        speed: playback speed (1: as authored; > 0).
        in_place: remove horizontal root motion (:class:`runtime.rig.retarget.RetargetOptions`).
        rest_align: align limb directions from the clip's rest pose to the avatar's.
        after: what follows a one-shot clip or sequence: "idle", "rest" or "hold".
        idle_amplitude: the generated idle's amplitude (1: as designed; 0: still).

    Raises:
        MotionError (a ValueError): an unknown layer or after, a negative fade, a speed <= 0.
    """

    layer: str = "additive"
    fade_s: float = 0.3
    speed: float = 1.0
    in_place: bool = False
    rest_align: bool = True
    after: str = "idle"
    idle_amplitude: float = 1.0

    def __post_init__(self) -> None:
        if self.layer not in LAYERS:
            raise MotionError(f"motion layer {self.layer!r} is not one of {', '.join(LAYERS)}")
        if self.after not in AFTER:
            raise MotionError(f"motion after {self.after!r} is not one of {', '.join(AFTER)}")
        if not (math.isfinite(self.fade_s) and self.fade_s >= 0):
            raise MotionError(f"motion fade {self.fade_s!r} must be >= 0 seconds")
        if not (math.isfinite(self.speed) and self.speed > 0):
            raise MotionError(f"motion speed {self.speed!r} must be > 0")
        if not (math.isfinite(self.idle_amplitude) and self.idle_amplitude >= 0):
            raise MotionError(f"idle amplitude {self.idle_amplitude!r} must be >= 0")

    @property
    def retarget(self) -> RetargetOptions:
        from .retarget import RetargetOptions

        return RetargetOptions(in_place=self.in_place, rest_align=self.rest_align)
