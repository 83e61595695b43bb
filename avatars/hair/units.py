"""Units of a hair mesh, decided from its size against the target head.

A file states its units (glTF: metres; MakeHuman assets: decimetres) or not (OBJ). The
ratio of the hair's largest extent to the target head's height tells whether a unit is
plausible: a hairstyle spans from about half a head (a short crop seen from the side) to
several heads (hair down to the waist). A stated unit that gives an implausible size is an
error (the mesh is about 100x too big or too small for what the file says); an unstated
unit is guessed — the plausible unit closest to a typical style — with a warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .model import HairError, HairMesh

#: Candidate units, metres per file unit.
UNITS = {"m": 1.0, "dm": 0.1, "cm": 0.01, "mm": 0.001, "in": 0.0254}
#: Plausible hair extent in head heights (inclusive range).
PLAUSIBLE_HEADS = (0.4, 8.0)
#: A typical style spans this many head heights (log-centre of the guess).
TYPICAL_HEADS = 1.8


@dataclass(frozen=True)
class UnitChoice:
    """Metres per file unit and how it was decided.

    Attributes:
        scale: metres per file unit.
        name: unit name ("m", "dm", ...).
        guessed: True when the file did not state it (a warning is due).
        heads: the hair's largest extent in target head heights under this unit.
        reason: one line for reports.
    """

    scale: float
    name: str
    guessed: bool
    heads: float
    reason: str


def detect_units(hair: HairMesh, head_height: float) -> UnitChoice:
    """Decide the units of ``hair`` for a head ``head_height`` metres tall (crown to chin).

    Raises:
        HairError: the stated unit makes the hair far too big or small for the head (the
            message gives the factor), or no unit gives a plausible size.
    """
    extent = float(hair.extent().max())
    if extent <= 0 or head_height <= 0:
        raise HairError(hair.path, "", f"cannot size the hair (extent {extent:g}, head height {head_height:g} m)")
    lo, hi = PLAUSIBLE_HEADS
    if hair.unit is not None:
        heads = extent * hair.unit / head_height
        name = next((k for k, v in UNITS.items() if math.isclose(v, hair.unit)), f"{hair.unit:g} m")
        if not lo <= heads <= hi:
            factor = heads / TYPICAL_HEADS
            word = "big" if factor > 1 else "small"
            f = factor if factor > 1 else 1.0 / factor
            raise HairError(hair.path, "", f"the mesh is about {f:.0f}x too {word} for the head: {extent:g} {name} "
                            f"({hair.unit_source}) is {heads:.3g} head heights of {head_height:.3f} m; "
                            f"expected {lo:g}-{hi:g}")
        return UnitChoice(hair.unit, name, False, heads, f"{name} ({hair.unit_source}); {heads:.2f} head heights")
    best = None
    for name, scale in UNITS.items():
        heads = extent * scale / head_height
        if lo <= heads <= hi:
            score = abs(math.log(heads / TYPICAL_HEADS))
            if best is None or score < best[0]:
                best = (score, name, scale, heads)
    if best is None:
        raise HairError(hair.path, "", f"no unit ({', '.join(UNITS)}) makes an extent of {extent:g} a hairstyle for a "
                        f"head of {head_height:.3f} m (expected {lo:g}-{hi:g} head heights)")
    _, name, scale, heads = best
    return UnitChoice(scale, name, True, heads,
                      f"{name} guessed from the size ({heads:.2f} head heights); the file states no units")
