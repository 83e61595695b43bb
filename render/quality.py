"""Quality settings chosen per backend: MToon outlines (issue 20).

MToon outlines are an inverted hull: every outlined primitive is skinned and rasterised a
second time. On a GPU that is nearly free; on llvmpipe (software, vertex processing on the
calling thread) it costs a third of the frame: default avatar 1280×720, CPU per frame
30.3 → 20.1 ms (main thread 10.1 → 4.3 ms), layered 49.3 → 30.0 ms (main 18.3 → 7.3 ms),
the median of 3 alternating runs of 20 frames in one process (docs/history/runtime-notes.md, issue 20).

``outlines``: "on" (draw what the materials ask for), "off", or "auto": on with a GPU, off on
software rasterisers (:data:`SOFTWARE_OUTLINES`). The renderer's own default is "on" (the
library draws the file as authored; golden images and the three-vrm comparison use it);
``swaycam run`` and ``swaycam bench render`` default to "auto".
"""

from __future__ import annotations

OUTLINE_MODES = ("auto", "on", "off")

#: What "auto" means on llvmpipe / softpipe / SwiftShader.
SOFTWARE_OUTLINES = "off"


def resolve_outlines(mode: str, software: bool) -> bool:
    """Whether MToon outlines are drawn for ``mode`` ("auto", "on", "off") on this backend.

    Raises:
        ValueError: an unknown mode.
    """
    if mode not in OUTLINE_MODES:
        raise ValueError(f"outlines {mode!r} is not one of {', '.join(OUTLINE_MODES)}")
    if mode == "auto":
        mode = SOFTWARE_OUTLINES if software else "on"
    return mode == "on"


__all__ = ["OUTLINE_MODES", "SOFTWARE_OUTLINES", "resolve_outlines"]
