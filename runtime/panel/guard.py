"""The service's request rules as far as the panel needs them (DESIGN §11): no other web page
may drive the service.

- ``Host`` must name the loopback address the service listens on (127.0.0.1, localhost or
  [::1], with its port): a DNS-rebinding page reaches 127.0.0.1 under its own host name.
- An ``Origin`` header, when the browser sends one (every cross-origin request and every
  POST), must be this service's own origin.

Browsers send ``Origin`` with every cross-origin request and every POST (fetch and form posts
alike), so a page of another origin is refused before anything runs; a cross-origin JSON
request needs a CORS preflight, which the service never grants (no OPTIONS, no CORS headers),
so it cannot even read the answers of GETs. Requests without ``Origin`` (curl, scripts) pass.
The panel sends every change as ``fetch`` with ``Content-Type: application/json``. (Issue 16
hardens the service further: JSON content type required, tokens for non-panel clients, rate
limits; its checks supersede these.)
"""

from __future__ import annotations

from http import HTTPStatus

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def check_request(method: str, headers, port: int) -> tuple[HTTPStatus, str] | None:
    """None when the request may go on, else (status, message)."""
    host = (headers.get("Host") or "").strip().lower()
    allowed = {f"{h}:{port}" for h in LOOPBACK_HOSTS}
    if host not in allowed:
        return HTTPStatus.FORBIDDEN, f"Host {host!r} is not this service (127.0.0.1:{port})"
    origin = headers.get("Origin")
    if origin is not None and origin.strip().lower() not in {f"http://{a}" for a in allowed}:
        return HTTPStatus.FORBIDDEN, f"Origin {origin!r} may not use this service"
    return None
