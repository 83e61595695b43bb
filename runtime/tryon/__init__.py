"""Live hairstyle try-on (issue 14; docs/design.md §9: fitting never blocks the render loop).

:mod:`.styles` — the hair folder (:class:`HairStyles`), the avatar styles are tried on
(:class:`BaseAvatar`), one fit through the disk cache (:func:`fit_style`); the errors are
:class:`StyleError`, :class:`StyleSuperseded` and :class:`SessionClosed` (runtime/errors.py);
:mod:`.fitter` — the child process fits run in (:class:`Fitter`), outside the render
process's GIL; :mod:`.switcher` — :class:`StyleSwitcher`: requests, the worker thread, the
swap between frames (the session's ``tryon``).
"""

from ..errors import SessionClosed, StyleError, StyleSuperseded
from .fitter import Fitter
from .styles import BaseAvatar, HairStyles, fit_style, guides_of, keep_guides, summary
from .switcher import StyleSwitcher, TryOnHost, carry_motion

__all__ = ["BaseAvatar", "Fitter", "HairStyles", "SessionClosed", "StyleError", "StyleSuperseded", "StyleSwitcher",
           "TryOnHost", "carry_motion", "fit_style", "guides_of", "keep_guides", "summary"]
