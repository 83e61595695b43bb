"""The hair solver modes, named once (docs/design.md §4.1-§4.3).

- ``rest-shape``: the default; each segment is pulled toward the rest arc carried by its
  chain's anchor (docs/design.md §4.1), so tips never curl.
- ``legacy``: the early solver, restoring direction from the parent's current rotation
  (docs/design.md §4.2), kept to show and measure the "tentacle" failure.
- ``vrm``: the spec-faithful Verlet of three-vrm / UniVRM, stepped at the fixed rate (§4.3).
"""

from __future__ import annotations

from enum import Enum

from .errors import SolverOptionError


class SolverMode(str, Enum):
    """A hair solver. A ``str`` enum: ``SolverMode.LEGACY == "legacy"``, so the value can be
    passed wherever a solver name is expected and is written to JSON/TOML as its name."""

    REST_SHAPE = "rest-shape"
    LEGACY = "legacy"
    VRM = "vrm"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, name: str, *, where: str = "solver") -> SolverMode:
        """The mode named ``name``. Raises SolverOptionError (a ValueError) naming ``where`` and
        the choices."""
        try:
            return cls(name)
        except ValueError:
            raise SolverOptionError(f"{where}: {name!r} is not one of {', '.join(SOLVER_NAMES)}") from None

    def next(self) -> SolverMode:
        """The next mode in :data:`SOLVER_NAMES` order, wrapping (the window's ``s`` key)."""
        modes = list(SolverMode)
        return modes[(modes.index(self) + 1) % len(modes)]


#: The solver names in help order (argparse choices, config checks, the service).
SOLVER_NAMES: tuple[str, ...] = tuple(m.value for m in SolverMode)
