"""The local control service (off unless asked): JSON over HTTP on 127.0.0.1 only.

:mod:`.server` — the HTTP server (threads, routing, errors as JSON); :mod:`.request` — one
request as a route sees it (:class:`Request`: body with the allowed keys, replies, streams);
:mod:`.routes` — the service's own endpoints and the :class:`Controller` they call;
:mod:`.paths` — the folders it may load from; :mod:`.errors` — refusals with their status
and the status of each kind of runtime error; :mod:`.security` — who may talk to it (Host,
Origin, content type, token, body length, rate).
"""

from .errors import RequestError, status_of
from .paths import AVATAR_SUFFIXES, CLIP_SUFFIXES, folder_files, resolve_avatar, resolve_clip, resolve_style
from .request import Request
from .routes import Controller, Route
from .server import ControlService

__all__ = ["AVATAR_SUFFIXES", "CLIP_SUFFIXES", "ControlService", "Controller", "Request", "RequestError", "Route",
           "folder_files", "resolve_avatar", "resolve_clip", "resolve_style", "status_of"]
