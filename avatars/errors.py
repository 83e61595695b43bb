"""Errors and warnings raised while loading avatars.

Every problem names the file and the element, in glTF/VRM JSON path terms, e.g.
``Godette.vrm: springs[2].joints[5]: node 88 does not exist``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path  # noqa: F401 (type hints)


class AvatarError(ValueError):
    """An avatar file cannot be loaded.

    Attributes:
        path: the file (``"<bytes>"`` when loaded from memory).
        element: the JSON path of the broken element, e.g. ``"accessors[3]"`` (may be empty).
        reason: what is wrong with it.
    """

    def __init__(self, path: str | Path, element: str, reason: str):
        self.path = str(path)
        self.element = element
        self.reason = reason
        where = f"{self.path}: {element}: " if element else f"{self.path}: "
        super().__init__(where + reason)


@dataclass(frozen=True)
class AvatarWarning:
    """An optional part that was skipped (a broken collider, an expression bind, ...)."""

    element: str
    reason: str

    def __str__(self) -> str:
        return f"{self.element}: {self.reason}"


class Issues:
    """Collects warnings for one file and builds errors that name it."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self.warnings: list[AvatarWarning] = []

    def error(self, element: str, reason: str) -> AvatarError:
        return AvatarError(self.path, element, reason)

    def warn(self, element: str, reason: str) -> None:
        self.warnings.append(AvatarWarning(element, reason))

    def spec_version(self, element: str, ext: dict, known: tuple[str, ...] = ("1.0", "1.0-beta")) -> None:
        """Warn at ``element.specVersion`` when a VRM 1.0 extension object states a version
        not in ``known`` (the ones three-vrm 3.x reads). The extension is still read as 1.0:
        three-vrm skips it instead, which would leave e.g. an avatar without a humanoid."""
        spec = ext.get("specVersion")
        if spec not in known:
            self.warn(f"{element}.specVersion", f"{spec!r} is not a known specVersion ({', '.join(known)}); "
                      "read as 1.0")


def did_you_mean(name: str, choices) -> str:
    """`` (did you mean 'X'?)`` for the choice closest to a mistyped ``name`` (difflib), or ""
    when none is close: the tail of an "unknown name" message."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
