"""An OSC 1.0 decoder written for the tests (not the sender's code, not python-osc): a
datagram -> [(address, type tags, [args])], bundles flattened."""

from __future__ import annotations

import struct


def _string(d: bytes, i: int) -> tuple[str, int]:
    end = d.index(b"\x00", i)
    s = d[i:end].decode("utf-8")
    return s, (end + 4) & ~3


def decode(d: bytes) -> list[tuple[str, str, list]]:
    if d.startswith(b"#bundle\x00"):
        assert len(d) >= 16
        i, out = 16, []
        while i < len(d):
            (n,) = struct.unpack(">i", d[i:i + 4])
            assert n > 0 and n % 4 == 0
            out += decode(d[i + 4:i + 4 + n])
            i += 4 + n
        assert i == len(d)
        return out
    addr, i = _string(d, 0)
    tags, i = _string(d, i)
    assert tags.startswith(",")
    args = []
    for t in tags[1:]:
        if t == "f":
            args.append(struct.unpack(">f", d[i:i + 4])[0])
            i += 4
        elif t == "i":
            args.append(struct.unpack(">i", d[i:i + 4])[0])
            i += 4
        elif t == "s":
            s, i = _string(d, i)
            args.append(s)
        else:
            raise AssertionError(f"unexpected type tag {t!r}")
    assert i == len(d), "trailing bytes"
    return [(addr, tags, args)]


def message(addr: str, tags: str, *args) -> bytes:
    """Encode one message (the tests' hostile senders)."""
    def s(x: str) -> bytes:
        b = x.encode() + b"\x00"
        return b + b"\x00" * (-len(b) % 4)
    out = s(addr) + s(tags)
    for t, a in zip(tags[1:], args):
        out += struct.pack(">f", a) if t == "f" else struct.pack(">i", a) if t == "i" else s(a)
    return out


def bundle(*msgs: bytes) -> bytes:
    return b"#bundle\x00" + struct.pack(">Q", 1) + b"".join(struct.pack(">i", len(m)) + m for m in msgs)
