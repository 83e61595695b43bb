"""OSC 1.0 on the wire for VMC: packing our messages fast, walking untrusted bundles.

Packing: every message we send has a fixed head (address, type tag, and for bones and blend
values the name), encoded once with python-osc's string writer; per frame only the
big-endian 32-bit arguments are packed (``struct``). A bundle is ``#bundle\\0``, the time tag
1 ("immediately") and size-prefixed elements (OSC 1.0 spec).

Reading: :func:`iter_messages` walks a datagram (a message, or a bundle of messages and
bundles) iteratively with a depth and an element budget, and parses each message with
python-osc (:class:`pythonosc.osc_message.OscMessage`); it yields ``(address, type tags,
arguments)`` and raises :class:`OscError` on anything malformed. The two layouts that make up
nearly every VMC datagram (``,sfffffff`` bones and ``,sf`` blend values) take a fast path:
the strings read by python-osc's reader, the floats unpacked at once (``struct``, the same
big-endian float32 python-osc reads); a message of any other layout goes through OscMessage. python-osc's own
:class:`~pythonosc.osc_bundle.OscBundle` recurses without a limit and logs every unknown
element: not for datagrams from the network.
"""

from __future__ import annotations

import struct

from pythonosc.osc_message import OscMessage
from pythonosc.parsing import osc_types

_I = struct.Struct(">i")
_F7 = struct.Struct(">7f")
_F1 = struct.Struct(">f")
_FAST = {",sfffffff": _F7, ",sf": _F1}
#: the OSC 1.0 (and common 1.1) argument types python-osc reads; any other tag makes the
#: message malformed here (python-osc would log a warning per message and go on)
_TAGS = frozenset("ihfdsbrmtTFN[]")
BUNDLE_HEAD = b"#bundle\x00" + struct.pack(">Q", 1)
#: limits on one datagram
MAX_DEPTH = 4
MAX_ELEMENTS = 4096


class OscError(ValueError):
    """A datagram that is not well-formed OSC (or exceeds the limits)."""


def osc_string(s: str) -> bytes:
    """An OSC string: UTF-8, NUL-terminated, padded to a multiple of 4 (python-osc's writer)."""
    return osc_types.write_string(s)


def message_head(address: str, tags: str, *strings: str) -> bytes:
    """The fixed start of a message: address, type tag string and leading string arguments."""
    return osc_string(address) + osc_string(tags) + b"".join(osc_string(s) for s in strings)


def bundle(elements: list[bytes]) -> bytes:
    """A bundle (time tag "immediately") of encoded messages."""
    size = _I.pack
    return BUNDLE_HEAD + b"".join([size(len(e)) + e for e in elements])


def iter_messages(dgram: bytes):
    """Yield ``(address, tags, params)`` for every message of a datagram (module doc).

    Raises:
        OscError: malformed OSC, a bundle nested deeper than :data:`MAX_DEPTH` or holding
            more than :data:`MAX_ELEMENTS` elements in all.
    """
    stack = [(dgram, 0)]
    count = 0
    while stack:
        d, depth = stack.pop()
        if d.startswith(b"#bundle\x00"):
            if depth >= MAX_DEPTH:
                raise OscError("bundle nested too deep")
            if len(d) < 16:
                raise OscError("bundle too short")
            i = 16
            elems = []
            while i < len(d):
                if i + 4 > len(d):
                    raise OscError("truncated bundle element size")
                (n,) = struct.unpack_from(">i", d, i)
                i += 4
                if n <= 0 or n % 4 or i + n > len(d):
                    raise OscError(f"bad bundle element size {n}")
                elems.append(d[i:i + n])
                i += n
                count += 1
                if count > MAX_ELEMENTS:
                    raise OscError("too many bundle elements")
            stack.extend((e, depth + 1) for e in reversed(elems))
        elif d.startswith(b"/"):
            try:
                address, i = osc_types.get_string(d, 0)
                tags, j = osc_types.get_string(d, i) if i < len(d) else (",", i)
                fast = _FAST.get(tags)
                if fast is not None:
                    name, k = osc_types.get_string(d, j)
                    if k + fast.size != len(d):
                        raise OscError("message length disagrees with its type tags")
                    params = [name, *fast.unpack_from(d, k)]
                else:
                    if not tags.startswith(",") or not _TAGS.issuperset(tags[1:]):
                        raise OscError("unknown OSC type tag")
                    params = OscMessage(d).params
            except OscError:
                raise
            except Exception as exc:      # python-osc's ParseError and whatever a fuzzed input provokes
                raise OscError(f"malformed message ({type(exc).__name__})") from None
            count += 1
            if count > MAX_ELEMENTS:
                raise OscError("too many messages")
            yield address, tags, params
        else:
            raise OscError("not an OSC message or bundle")
