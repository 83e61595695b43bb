"""One HTTP request as a route of the control service sees it: its method, path and query,
its JSON body read once (an object, with the keys the route allows), and the ways to answer
(JSON, bytes, a stream). The service's routes (runtime/service/routes.py) and the panel's
(runtime/panel/routes.py) take a :class:`Request` and nothing else of the HTTP server.

Every answer carries ``X-Content-Type-Options: nosniff`` and ``Cache-Control: no-store``
(a route may replace them); a 4xx/5xx answer closes the connection. NaN and Infinity are not
JSON: refused in bodies, never written in answers (500 instead).

Every body is bounded before a route sees it (400 otherwise): integers of at most
:data:`MAX_INT_DIGITS` digits, finite numbers (``1e400`` is not), strings of at most
:data:`MAX_STRING` characters, objects and lists of at most :data:`MAX_ITEMS` entries,
nested at most :data:`MAX_DEPTH` deep — so valid JSON never reaches a handler with a value
Python cannot turn into a float, a path the OS refuses or a loop without bound. Routes bound
their own parameters further (names, ranges).
"""

from __future__ import annotations

import json
import logging
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import BinaryIO, Callable

from .errors import BadRequest, RequestTimeout

log = logging.getLogger(__name__)

#: bounds of every JSON body (module doc)
MAX_INT_DIGITS = 15
MAX_STRING = 4096
MAX_ITEMS = 4096
MAX_DEPTH = 32


def send(handler: BaseHTTPRequestHandler, status: HTTPStatus, body: bytes, ctype: str,
         headers: dict | None = None) -> None:
    """Answer with ``body`` of type ``ctype`` (no body for HEAD)."""
    hdrs = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", **(headers or {})}
    handler.send_response(status)
    handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(body)))
    for k, v in hdrs.items():
        handler.send_header(k, v)
    if int(status) >= 400:
        handler.send_header("Connection", "close")
        handler.close_connection = True
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)


def send_json(handler: BaseHTTPRequestHandler, status: HTTPStatus, obj, headers: dict | None = None) -> None:
    """Answer with ``obj`` as JSON; a value JSON cannot say is a 500, never invalid JSON."""
    try:
        body = json.dumps(obj, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        log.error("service: answer to %s %s is not JSON (%s)", handler.command, handler.path[:80], exc)
        status, body = HTTPStatus.INTERNAL_SERVER_ERROR, b'{"error": "internal error: the answer is not JSON"}'
    send(handler, status, body, "application/json", headers)


def _no_constant(name: str):
    raise BadRequest(f"malformed JSON: {name} is not JSON (numbers must be finite)")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadRequest(f"an integer of {len(text.lstrip('-'))} digits is over the {MAX_INT_DIGITS} allowed")
    return int(text)


def _finite_float(text: str) -> float:
    import math

    v = float(text)
    if not math.isfinite(v):
        raise BadRequest(f"{text[:40]} is not a finite number")
    return v


def check_bounds(obj) -> None:
    """Raise BadRequest when ``obj`` (parsed JSON) holds a string, object or list over the
    module doc's bounds, or nests deeper."""
    stack = [(obj, 0, "body")]
    while stack:
        o, depth, where = stack.pop()
        if isinstance(o, str):
            if len(o) > MAX_STRING:
                raise BadRequest(f"{where}: a string of {len(o)} characters is over the {MAX_STRING} allowed")
        elif isinstance(o, (dict, list)):
            if depth >= MAX_DEPTH:
                raise BadRequest(f"{where}: nested over {MAX_DEPTH} deep")
            if len(o) > MAX_ITEMS:
                raise BadRequest(f"{where}: {len(o)} entries are over the {MAX_ITEMS} allowed")
            if isinstance(o, dict):
                for k, v in o.items():
                    if len(k) > MAX_STRING:
                        raise BadRequest(f"{where}: a key of {len(k)} characters is over the {MAX_STRING} allowed")
                    stack.append((v, depth + 1, f"{where}.{k[:40]}"))
            else:
                stack.extend((v, depth + 1, f"{where}[{i}]") for i, v in enumerate(o))


class Request:
    """A request being answered (service threads; one per connection).

    Args:
        handler: the server's request handler (its socket and headers).
        method: "GET", "POST", ...
        body_length: the body's length in bytes from the headers
            (:meth:`runtime.service.security.SecurityPolicy.body_length`, which refuses a
            chunked, missing or too long one: Refused), asked when the body is first read.

    Attributes:
        method; path: the path without the query; query: the text after ``?`` ("" without).
        headers: the request headers (:class:`email.message.Message`).
    """

    def __init__(self, handler: BaseHTTPRequestHandler, method: str,
                 body_length: Callable[[str, Message], int] = lambda method, headers: 0):
        self._handler = handler
        self.method = method
        self.path, _, self.query = handler.path.partition("?")
        self.headers = handler.headers
        self._length = body_length
        self._raw: bytes | None = None
        self._body: dict | None = None

    # ------------------------------------------------------------------ reading
    def body(self, allowed: tuple[str, ...] | None = None) -> dict:
        """The JSON body (``{}`` when empty), read on the first call.

        Args:
            allowed: the keys the route takes (None: any).

        Raises:
            BadRequest: not a JSON object, malformed, cut short, or a key not in ``allowed``
                (naming it and the known ones). RequestTimeout: the body did not arrive.
        """
        if self._body is None:
            self._body = self._read()
        if allowed is not None:
            unknown = sorted(set(self._body) - set(allowed))
            if unknown:
                raise BadRequest(f"unknown key {unknown[0]!r} (known: {', '.join(allowed)})")
        return self._body

    def read_body(self) -> None:
        """Read the body's bytes now (the server does, before any route runs: the whole
        request arrives by its deadline); parsed by :meth:`body`.

        Raises:
            Refused (Content-Length: 400/411/413), RequestTimeout (408: not in time),
            BadRequest: cut short.
        """
        if self._raw is not None:
            return
        h = self._handler
        n = self._length(self.method, self.headers)
        try:
            raw = h.rfile.read(n) if n else b""
        except TimeoutError:
            raise RequestTimeout(f"the body of {n} bytes did not arrive within {h.read_limit_s():g} s") from None
        if len(raw) < n:
            raise BadRequest(f"body ended after {len(raw)} of {n} bytes")
        self._raw = raw

    def _read(self) -> dict:
        self.read_body()
        raw = self._raw
        try:
            obj = json.loads(raw or b"{}", parse_constant=_no_constant, parse_int=_bounded_int,
                             parse_float=_finite_float)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadRequest(f"malformed JSON: {exc}") from None
        except (ValueError, RecursionError) as exc:
            raise BadRequest(f"malformed JSON: {str(exc)[:200]}") from None
        if not isinstance(obj, dict):
            raise BadRequest("body must be a JSON object")
        check_bounds(obj)
        return obj

    # ------------------------------------------------------------------ answering
    def reply(self, obj, status: HTTPStatus = HTTPStatus.OK, headers: dict | None = None) -> None:
        """Answer with ``obj`` as JSON."""
        send_json(self._handler, status, obj, headers)

    def send(self, body: bytes, ctype: str, status: HTTPStatus = HTTPStatus.OK, headers: dict | None = None) -> None:
        """Answer with ``body`` of type ``ctype``; ``headers`` add to or replace the defaults."""
        send(self._handler, status, body, ctype, headers)

    def stream(self, ctype: str) -> BinaryIO:
        """Start a 200 answer of type ``ctype`` with no length (a stream: the connection
        closes when it ends) and return where its bytes go (``write``, ``flush``)."""
        h = self._handler
        h.send_response(HTTPStatus.OK)
        h.send_header("Content-Type", ctype)
        h.send_header("Cache-Control", "no-store")
        h.end_headers()
        h.close_connection = True
        return h.wfile


__all__ = ["Request", "send", "send_json"]
