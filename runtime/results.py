"""What ``swaycam run`` gives back: the result of a run, or the one error that stopped it."""

from __future__ import annotations

from dataclasses import dataclass, field


class RunError(RuntimeError):
    """A run cannot start or go on (no display for a window, an avatar it cannot drive, a port
    in use, an output it cannot write or that failed); the message says what and where."""


@dataclass
class RunResult:
    """What a run produced.

    Attributes:
        frames: frames drawn.
        outputs: the outputs, as given (``kind:target``).
        summary: :meth:`runtime.telemetry.Telemetry.summary` at the end.
        duration_s: wall-clock seconds the frames took (processing time, measured, not run time).
        interrupted: Ctrl-C, SIGTERM or SIGHUP ended the run; ``signal`` is its number.
        tracked_frames: frames run through the face tracker, None when nothing was tracked.
        face_frames: of those, frames with a face.
    """

    frames: int = 0
    outputs: list[str] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    duration_s: float = 0.0
    interrupted: bool = False
    signal: int | None = None
    tracked_frames: int | None = None
    face_frames: int | None = None
