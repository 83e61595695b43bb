"""The runtime package's error root and its settings errors.

Every failure the runtime reports on purpose derives from :class:`SwaycamRuntimeError`; each
kind lives beside its domain and keeps the built-in base its callers catch:

    ==============================  ================================  ======================
    error                           raised for                        where
    ==============================  ================================  ======================
    :class:`SettingsError`          a bad setting value (``[hair]``,   here
    (ValueError)                    ``[expressions]``, a VMC address)
    :class:`ConfigError`            a bad config file / option: names  here
    (SettingsError)                 the setting and where it came from
    :class:`ConflictError`          not possible in the run's state    here; ``CalibrationError``
                                    now (may be later)                 runtime/panel/calibration.py
    ``RigError`` (ValueError)       an avatar the rig cannot drive     runtime/rig/errors.py
    ``MotionError`` (RigError)      body motion that cannot play       runtime/rig/errors.py
    :class:`StyleError`             a hairstyle that cannot be tried   here (raised by
    (ValueError),                   on; replaced by a newer request;   runtime/tryon/)
    :class:`StyleSuperseded`,       the run ended first
    :class:`SessionClosed`
    ``RunError`` (RuntimeError)     a run cannot start or go on        runtime/results.py
    ``RequestError`` and its        a service request refused, with    runtime/service/errors.py
    family (status codes)           its HTTP status
    ==============================  ================================  ======================

The control service answers each kind with its own status (runtime/service/errors.py
``status_of``); the CLI exits 1 for every one of them and 2 for usage errors (README,
``swaycam --help``). Errors from the other packages keep their own roots
(:class:`avatars.AvatarError` with ``ClipError``, :class:`tracking.errors.TrackingError`).
"""

from __future__ import annotations

from avatars.tryon.errors import TryOnError


class SwaycamRuntimeError(Exception):
    """The root of every error the runtime raises on purpose (see the module doc)."""


class SettingsError(SwaycamRuntimeError, ValueError):
    """A setting's value is invalid: the message names the setting (``hair.k: -1 is below 0``,
    ``expressions.mode: 'x' is not one of toggle, hold``)."""


class ConfigError(SettingsError):
    """A setting is invalid; the message names the setting and where it came from (the
    config file, or "option" for the command line)."""


class ConflictError(SwaycamRuntimeError):
    """What was asked cannot be done in the run's state now, though it may later (a newer
    request replaced it, the calibration phases are not collected yet)."""


class StyleError(SwaycamRuntimeError, TryOnError):
    """A hairstyle that cannot be tried on: the file cannot be loaded, or the try-on core
    cannot fit it (the message is the core's). Raised by runtime/tryon/. Also a
    :class:`avatars.tryon.errors.TryOnError` (so a ``ValueError``)."""


class StyleSuperseded(ConflictError, RuntimeError):
    """A newer hairstyle request (or an avatar change) replaced this one before it was
    swapped in."""


class SessionClosed(SwaycamRuntimeError, RuntimeError):
    """The session closed before the hairstyle request was swapped in."""


__all__ = ["ConfigError", "ConflictError", "SessionClosed", "SettingsError", "StyleError", "StyleSuperseded",
           "SwaycamRuntimeError"]
