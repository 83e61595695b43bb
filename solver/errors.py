"""The solver's errors: one root, :class:`SolverError` (a ValueError, so every caller that
catches ValueError keeps working), and a kind for each failure a caller answers differently.

- :class:`SolverOptionError`: an option the solver does not have or a value out of its range
  (an unknown solver name, torso-capsule or rest-overlap choice, mapping method, a bend limit
  outside (0°, 180°), negative relaxation passes): the caller's mistake, a usage error.
- :class:`ChainBuildError`: the avatar's springs cannot be built into chains (a zero-length
  link, chains that hang from each other in an order the solver cannot process): the avatar
  is refused; the message names the spring and the joint node.
- :class:`HairParamsError`: spring parameters the solver cannot run (not a number, not
  finite, below 0, a stiffness and damping pair that is unstable at the substep rate, spring
  patterns that match no spring, hit radii of the wrong count): the request is refused and
  the running parameters are kept.
- :class:`StateTransferError`: another chain set's motion cannot be taken over (another
  skeleton or rest pose): the caller starts the new chain set from rest instead.

A :class:`SolverError` itself is raised for an inconsistent packed layout
(:mod:`solver.layout`, a programming error found at import or when packing).
"""

from __future__ import annotations


class SolverError(ValueError):
    """A solver input it cannot use; the message names what and where."""


class SolverOptionError(SolverError):
    """An unknown solver option or a value outside its range (module doc)."""


class ChainBuildError(SolverError):
    """The avatar's springs cannot be built into chains (module doc)."""


class HairParamsError(SolverError):
    """Spring parameters the solver cannot run (module doc)."""


class StateTransferError(SolverError):
    """Another chain set's motion cannot be taken over (module doc)."""


__all__ = ["ChainBuildError", "HairParamsError", "SolverError", "SolverOptionError", "StateTransferError"]
