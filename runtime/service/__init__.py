"""The local control service (off unless asked): JSON over HTTP on 127.0.0.1 only.

:mod:`.server` — the HTTP server, its endpoints and the :class:`Controller` protocol;
:mod:`.security` — who may talk to it (Host, Origin, content type, token, body length, rate).
"""

from .server import (
    AVATAR_SUFFIXES,
    CLIP_SUFFIXES,
    ControlService,
    Controller,
    RequestError,
    folder_files,
    resolve_avatar,
    resolve_clip,
    resolve_style,
)

__all__ = ["AVATAR_SUFFIXES", "CLIP_SUFFIXES", "ControlService", "Controller", "RequestError", "folder_files",
           "resolve_avatar", "resolve_clip", "resolve_style"]
