"""Import MediaPipe without the plotting and audio libraries its package imports eagerly.

``import mediapipe`` (1.2.x) runs ``mediapipe.tasks.python``, which imports every task: the
vision package's ``drawing_utils`` imports ``matplotlib.pyplot`` and the audio package tries
``sounddevice``. Here that is ~0.33 s and ~0.11 s of a 0.55 s import, paid at the start of every
tracked run and never used (we draw nothing with MediaPipe and record no audio; issue 20: the
set-up of an offline run). :func:`import_mediapipe` imports MediaPipe with a deferred stand-in
for those modules: MediaPipe's modules keep a reference to the stand-in, whose first attribute
read imports the real module, so its drawing and audio helpers still work if something calls
them. The stand-ins are in ``sys.modules`` only during MediaPipe's import; any other import of
matplotlib or sounddevice before or after it gets the real module. One on another thread
*during* it (a few tens of ms, once per process) would see a stand-in: ``import matplotlib.x``
fails there ("not a package"), and ``import sounddevice`` gets a stand-in instead of its own
error; swaycam imports neither while a run starts (only ``runtime/eval/hair_quality.py``
plots, in its own command).

Should a MediaPipe version import more of those libraries than the stand-ins provide, the
import is undone and done again the plain way (a debug log says so).
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
import types

log = logging.getLogger(__name__)

#: modules MediaPipe imports at package import and only uses in helpers we never call;
#: a package is listed before its submodules
DEFERRED = ("matplotlib", "matplotlib.pyplot", "sounddevice")

_lock = threading.Lock()


class _Deferred(types.ModuleType):
    """Stands for module ``name`` during MediaPipe's import; the first read of a public
    attribute imports the real module (then every read goes to it)."""

    def __getattr__(self, attr: str):
        if attr.startswith("__"):           # the import system's probes (__path__, __file__, ...)
            raise AttributeError(attr)
        _drop_stand_ins()
        return getattr(importlib.import_module(self.__name__), attr)


def _drop_stand_ins() -> None:
    for name in DEFERRED:
        if isinstance(sys.modules.get(name), _Deferred):
            del sys.modules[name]


def import_mediapipe() -> types.ModuleType:
    """The ``mediapipe`` package, imported once (module doc); thread-safe: a caller on
    another thread waits until the import is complete.

    Raises:
        ImportError: MediaPipe is not installed or cannot be imported (as ``import mediapipe``).
    """
    got = sys.modules.get("mediapipe")
    if got is not None and not getattr(getattr(got, "__spec__", None), "_initializing", False):
        return got
    with _lock:
        if "mediapipe" in sys.modules:       # imported meanwhile (or being imported the plain way)
            import mediapipe                 # waits for an import in progress on another thread

            return mediapipe
        placed = []
        for name in DEFERRED:
            if name not in sys.modules:
                sys.modules[name] = stand_in = _Deferred(name)
                placed.append(name)
                parent, _, child = name.rpartition(".")
                if parent in placed:        # `import matplotlib.pyplot as plt` reads the attribute
                    setattr(sys.modules[parent], child, stand_in)
        try:
            import mediapipe
        except Exception as exc:  # noqa: BLE001 - any failure with the stand-ins: undo, then the plain way
            _drop_stand_ins()
            for name in [n for n in sys.modules if n == "mediapipe" or n.startswith("mediapipe.")]:
                del sys.modules[name]
            log.debug("mediapipe imported with the plain import (%s)", exc)
            import mediapipe
        finally:
            _drop_stand_ins()
        return mediapipe


__all__ = ["DEFERRED", "import_mediapipe"]
