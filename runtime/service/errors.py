"""The service's refusals and the status each kind of error is answered with.

A route refuses a request by raising a :class:`RequestError` (the status and the message the
client gets as ``{"error": ...}``); the subclasses name the common ones. Errors of the
runtime's domains that reach the service (runtime/errors.py) are answered by type,
:func:`status_of`:

    ==========================================  ====  =======================================
    error                                       code  meaning
    ==========================================  ====  =======================================
    SettingsError (ConfigError)                 400   a setting in the request is invalid
    ConflictError (StyleSuperseded,             409   not in the run's state now: a newer
    CalibrationError)                                 request replaced it, phases missing
    RigError (MotionError), StyleError,         422   understood, but this avatar / clip /
    AvatarError (ClipError)                           style cannot do it
    SessionClosed                               503   the run ended first
    ==========================================  ====  =======================================

Anything else is an internal error (500, one log line). A route that means another status for
one of them (saving a config file: 422) catches it itself.
"""

from __future__ import annotations

from http import HTTPStatus

from ..errors import SwaycamRuntimeError


class RequestError(SwaycamRuntimeError):
    """A request the service refuses: ``status`` (:class:`http.HTTPStatus`), the message and
    extra ``headers`` of the answer."""

    def __init__(self, status: HTTPStatus | int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status = HTTPStatus(status)
        self.headers = dict(headers or {})


class _Fixed(RequestError):
    STATUS: HTTPStatus

    def __init__(self, message: str):
        super().__init__(self.STATUS, message)


class BadRequest(_Fixed):
    """400: a malformed body, an unknown key, a value of the wrong type."""

    STATUS = HTTPStatus.BAD_REQUEST


class Forbidden(_Fixed):
    """403: a path outside its folder, no such folder configured."""

    STATUS = HTTPStatus.FORBIDDEN


class NotFound(_Fixed):
    """404: no such endpoint, file or name."""

    STATUS = HTTPStatus.NOT_FOUND


class MethodNotAllowed(_Fixed):
    """405: the endpoint exists, not with this method."""

    STATUS = HTTPStatus.METHOD_NOT_ALLOWED


class RequestTimeout(_Fixed):
    """408: the body did not arrive in time."""

    STATUS = HTTPStatus.REQUEST_TIMEOUT


class Conflict(_Fixed):
    """409: the run's state forbids it now."""

    STATUS = HTTPStatus.CONFLICT


class Unprocessable(_Fixed):
    """422: understood, but it cannot be done (a file that cannot be written or loaded)."""

    STATUS = HTTPStatus.UNPROCESSABLE_ENTITY


class Unavailable(_Fixed):
    """503: nothing to answer with yet (no frame), or the run is ending."""

    STATUS = HTTPStatus.SERVICE_UNAVAILABLE


class GatewayTimeout(_Fixed):
    """504: the render thread or the try-on did not finish in time."""

    STATUS = HTTPStatus.GATEWAY_TIMEOUT


def _table() -> tuple[tuple[type[BaseException], HTTPStatus], ...]:
    from avatars import AvatarError

    from ..errors import ConflictError, SessionClosed, SettingsError, StyleError
    from ..rig.errors import RigError

    return ((SettingsError, HTTPStatus.BAD_REQUEST), (ConflictError, HTTPStatus.CONFLICT),
            (RigError, HTTPStatus.UNPROCESSABLE_ENTITY),
            (StyleError, HTTPStatus.UNPROCESSABLE_ENTITY), (AvatarError, HTTPStatus.UNPROCESSABLE_ENTITY),
            (SessionClosed, HTTPStatus.SERVICE_UNAVAILABLE))


def status_of(exc: BaseException) -> HTTPStatus | None:
    """The status ``exc`` is answered with (the module doc's table; a RequestError's own), or
    None: an internal error."""
    if isinstance(exc, RequestError):
        return exc.status
    for kind, status in _table():
        if isinstance(exc, kind):
            return status
    return None


__all__ = ["BadRequest", "Conflict", "Forbidden", "GatewayTimeout", "MethodNotAllowed", "NotFound", "RequestError",
           "RequestTimeout", "Unavailable", "Unprocessable", "status_of"]
