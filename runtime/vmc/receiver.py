"""VMC Marionette / Assistant receiver: a UDP socket and a thread that turn untrusted OSC
datagrams into the newest *state* (bones, root, blend values, the sender's status), stamped
on arrival with the run's clock (docs/design.md §11: bounded names, finite values, counted drops).

What is taken (VMC protocol spec; extra arguments are ignored, as the spec says):

    /VMC/Ext/Bone/Pos   ,sfffffff…  a Unity HumanBodyBones name of :data:`runtime.vmc.names.UNITY_BONES`
    /VMC/Ext/Root/Pos   ,sfffffff…  the root placement of the whole avatar (:mod:`tracking.body`:
                                    applied on top of the hips, received or not)
    /VMC/Ext/Blend/Val  ,sf…        VRM 0.x / 1.0 presets and ARKit names (case-insensitive);
                                    other names are kept in a bounded table (counted, unused)
    /VMC/Ext/Blend/Apply            commits the values received since the last Apply
    /VMC/Ext/OK         ,i…         loaded; with 4 ints the tracking status (0: the face is lost)
    /VMC/Ext/T          ,f…         the sender's time

Dropped and counted (:class:`ReceiverStats`): datagrams that are not OSC (``malformed``),
messages with wrong type tags or too few arguments (``bad_types``), NaN/inf or a zero
quaternion (``non_finite``), bone names outside the humanoid set (``unknown_bones``), blend
names past the table's bound or longer than :data:`MAX_NAME` (``refused_names``). Unknown
addresses are ignored (``ignored``). Nothing raises out of the thread, and nothing is logged
per packet: the first drop is logged once (WARNING, with its kind), then at most one line per
:data:`LOG_INTERVAL_S` with the counts since the last line (a flood of 2,000 bad packets is a
few lines, not 2,000). The counts are in ``GET /status``, the HUD and the ``--json`` summary
(``"vmc"``: :meth:`ReceiverStats.as_dict`, watched by the run's telemetry).

The state is coalesced: :meth:`VmcReceiver.take` returns the newest state (a copy) and its
arrival time when it changed since the last take — a flood of packets costs the receiving
thread, never the render loop more than one state per frame.

A partial sender (any subset of bones, with or without Root and Hips: VMagicMirror's upper
body, a face-only Assistant, XR Animator without legs) names only what it sends: a bone is
driven once received, the hips position only once the Hips bone is, the root only once
Root is; everything else stays the avatar's own (the clip, the head drive). A Hips position of
exactly (0, 0, 0) names no position (iFacialMocap's desktop app sends every bone position as
zeros; the hips on the floor is no pose a sender means).
"""

from __future__ import annotations

import logging
import math
import socket
import threading
import time
from dataclasses import asdict, dataclass

import numpy as np

from tracking.body import BodyPose, F_ARKIT, F_EXPR, F_HIPS, F_ON, F_ROOT, HIPS, NUM_BONES, NUM_EXPRESSIONS
from tracking.expressions import NUM_BLENDSHAPES

from ..errors import SettingsError
from .names import UNITY_BONES, WIRE_EXPRESSIONS
from .osc import OscError, iter_messages

log = logging.getLogger(__name__)

DEFAULT_LISTEN_PORT = 39539
ASSISTANT_PORT = 39540
MAX_NAME = 64             # characters of a blend or bone name
MAX_CUSTOM_NAMES = 256    # distinct unknown blend names remembered
MAX_DATAGRAM = 65535
#: at most one log line about dropped packets per this many seconds
LOG_INTERVAL_S = 10.0


@dataclass
class ReceiverStats:
    """Counts since the receiver started (module doc)."""

    datagrams: int = 0
    messages: int = 0
    bones: int = 0
    blends: int = 0
    applies: int = 0
    ignored: int = 0
    malformed: int = 0
    bad_types: int = 0
    non_finite: int = 0
    unknown_bones: int = 0
    refused_names: int = 0
    states: int = 0

    @property
    def dropped(self) -> int:
        return self.malformed + self.bad_types + self.non_finite + self.unknown_bones + self.refused_names

    def as_dict(self) -> dict:
        return {**asdict(self), "dropped": self.dropped}

    def drops(self) -> dict:
        """{kind: count} of the dropped kinds (module doc)."""
        return {k: getattr(self, k) for k in ("malformed", "bad_types", "non_finite", "unknown_bones",
                                              "refused_names")}


class DropLog:
    """Rate-limited logging of dropped packets (module doc): the first drop at once, then one
    line per ``interval_s`` with the counts since the previous line."""

    def __init__(self, stats: ReceiverStats, *, interval_s: float = LOG_INTERVAL_S, clock=time.monotonic):
        self.stats, self.interval_s, self.clock = stats, interval_s, clock
        self._logged = stats.drops()
        self._next = None
        self.lines = 0

    def check(self, where: str) -> None:
        """Called after a datagram (receiver thread): log when due."""
        st = self.stats
        if st.dropped == sum(self._logged.values()):
            return
        now = self.clock()
        if self._next is not None and now < self._next:
            return
        cur = st.drops()
        new = {k: cur[k] - self._logged[k] for k in cur if cur[k] > self._logged[k]}
        self._logged, self._next = cur, now + self.interval_s
        self.lines += 1
        what = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in new.items())
        log.warning("VMC on %s: dropped %d bad packet(s)/message(s) (%s); %d dropped in all%s", where,
                    sum(new.values()), what, st.dropped,
                    "" if self.lines > 1 else f" (at most one such line per {self.interval_s:g} s)")


class VmcState:
    """One coalesced state: the body pose (avatar frame, normalized; the root in
    ``body.root``), the ARKit channels, the sender's tracking status and time."""

    __slots__ = ("body", "arkit", "tracking", "sender_t")

    def __init__(self) -> None:
        self.body = BodyPose()
        self.arkit = np.zeros(NUM_BLENDSHAPES)
        self.tracking = 1
        self.sender_t = 0.0

    def copy(self) -> VmcState:
        s = VmcState()
        s.body.copy_from(self.body)
        s.arkit[:] = self.arkit
        s.tracking, s.sender_t = self.tracking, self.sender_t
        return s


def parse_listen(text: str | int | None, default_port: int = DEFAULT_LISTEN_PORT) -> tuple[str, int]:
    """``[HOST:]PORT`` -> (host, port); the host defaults to 127.0.0.1 (a LAN address only when
    given). Raises SettingsError."""
    if text is None or text == "":
        return "127.0.0.1", default_port
    text = str(text).strip()
    if text.isdigit():
        host, port = "127.0.0.1", text
    else:
        host, _, port = text.rpartition(":")
        host = host.strip("[]") or "127.0.0.1"
        if not port:
            port = str(default_port)
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise SettingsError(f"{text!r}: the port must be 1..65535")
    return host, int(port)


def _finite(vals) -> bool:
    for v in vals:
        if not math.isfinite(v):
            return False
    return True


class VmcReceiver:
    """UDP listener + parsing thread (module doc). A context manager.

    Args:
        host, port: where to listen (port 0: any free port, see :attr:`address`).
        clock_ns: the time stamping arrivals (the run's clock; set by :meth:`start`).

    Raises:
        OSError: the address cannot be bound (the message names it).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_LISTEN_PORT, *, clock_ns=time.perf_counter_ns):
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.socket(fam, socket.SOCK_DGRAM)
        try:
            self._sock.bind((host, port))
        except OSError as exc:
            self._sock.close()
            raise OSError(exc.errno, f"VMC: cannot listen on {host}:{port} ({exc.strerror or exc})") from None
        self._sock.settimeout(0.1)
        self.address = self._sock.getsockname()[:2]
        self.clock_ns = clock_ns
        self.stats = ReceiverStats()
        self.drop_log = DropLog(self.stats)
        self._where = f"{self.address[0]}:{self.address[1]}"
        self.custom_names: dict[str, float] = {}
        self._state = VmcState()
        self._pending_expr = np.zeros(NUM_EXPRESSIONS)
        self._pending_arkit = np.zeros(NUM_BLENDSHAPES)
        self._pending_has_expr = False
        self._pending_has_arkit = False
        self._lock = threading.Lock()
        self._latest: tuple[int, VmcState] | None = None
        self._serial = 0
        self._taken = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="swaycam-vmc", daemon=True)

    def start(self, clock_ns=None) -> None:
        """Start receiving (arrivals are stamped by ``clock_ns`` from now on)."""
        if clock_ns is not None:
            self.clock_ns = clock_ns
        if not self._thread.is_alive():
            self._thread.start()

    # ------------------------------------------------------------------ thread
    def _run(self) -> None:
        recv = self._sock.recv
        while not self._stop.is_set():
            try:
                data = recv(MAX_DATAGRAM)
            except socket.timeout:
                continue
            except OSError:
                if self._stop.is_set():
                    break
                continue
            try:
                self.handle(data)
            except Exception:       # a bug must not kill the thread on hostile input
                self.stats.malformed += 1
                log.exception("VMC: datagram handling failed")

    def handle(self, data: bytes) -> bool:
        """Take one datagram (also for tests and benches); returns whether the state changed."""
        st = self.stats
        st.datagrams += 1
        changed = False
        s = self._state
        try:
            for address, tags, params in iter_messages(data):
                st.messages += 1
                changed |= self._message(s, address, tags, params)
        except OscError:
            st.malformed += 1
        if changed:
            with self._lock:
                self._serial += 1
                self._latest = (self.clock_ns(), s)
            st.states += 1
        self.drop_log.check(self._where)
        return changed

    def _message(self, s: VmcState, address: str, tags: str, params: list) -> bool:
        st = self.stats
        if address == "/VMC/Ext/Bone/Pos" or address == "/VMC/Ext/Root/Pos":
            if not tags.startswith(",sfffffff") or len(params) < 8:
                st.bad_types += 1
                return False
            name = params[0]
            vals = params[1:8]
            if not _finite(vals):
                st.non_finite += 1
                return False
            px, py, pz, qx, qy, qz, qw = vals
            n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
            if n < 1e-6 or n > 1e6:
                st.non_finite += 1
                return False
            # Unity -> avatar frame: p -> (−x, y, z), q -> (x, −y, −z, w)
            p = (-px, py, pz)
            q = (qx / n, -qy / n, -qz / n, qw / n)
            if address == "/VMC/Ext/Root/Pos":
                with self._lock:
                    s.body.root[:3] = p
                    s.body.root[3:] = q
                    s.body.flags[F_ROOT] = 1.0
                    s.body.flags[F_ON] = 1.0
                return True
            b = UNITY_BONES.get(name) if len(name) <= MAX_NAME else None
            if b is None:
                st.unknown_bones += 1
                return False
            st.bones += 1
            with self._lock:
                s.body.bones[b] = q
                s.body.mask[b] = 1.0
                s.body.flags[F_ON] = 1.0
                if b == HIPS and (px or py or pz):     # senders that fill positions with
                    s.body.hips[:] = p                   # zeros name no hips position
                    s.body.flags[F_HIPS] = 1.0
            return True
        if address == "/VMC/Ext/Blend/Val":
            if not tags.startswith(",sf") or len(params) < 2:
                st.bad_types += 1
                return False
            name, v = params[0], params[1]
            if not math.isfinite(v):
                st.non_finite += 1
                return False
            if len(name) > MAX_NAME:
                st.refused_names += 1
                return False
            v = min(max(v, 0.0), 1.0)
            hit = WIRE_EXPRESSIONS.get(name.lower())
            if hit is None:
                if name in self.custom_names or len(self.custom_names) < MAX_CUSTOM_NAMES:
                    self.custom_names[name] = v
                else:
                    st.refused_names += 1
                return False
            st.blends += 1
            kind, i = hit
            if kind == "preset":
                self._pending_expr[i] = v
                self._pending_has_expr = True
            else:
                self._pending_arkit[i] = v
                self._pending_has_arkit = True
            return False
        if address == "/VMC/Ext/Blend/Apply":
            st.applies += 1
            if not (self._pending_has_expr or self._pending_has_arkit):
                return False
            with self._lock:
                if self._pending_has_expr:
                    s.body.expressions[:] = self._pending_expr
                    s.body.flags[F_EXPR] = 1.0
                if self._pending_has_arkit:
                    s.arkit[:] = self._pending_arkit
                    s.body.flags[F_ARKIT] = 1.0
                s.body.flags[F_ON] = 1.0
            self._pending_has_expr = self._pending_has_arkit = False
            return True
        if address == "/VMC/Ext/OK":
            if not tags.startswith(",i") or not params:
                st.bad_types += 1
                return False
            if len(params) >= 4 and tags.startswith(",iiii"):
                s.tracking = 1 if params[3] else 0
            return False
        if address == "/VMC/Ext/T":
            if not tags.startswith(",f") or not params:
                st.bad_types += 1
                return False
            if math.isfinite(params[0]):
                s.sender_t = float(params[0])
            return False
        st.ignored += 1
        return False

    # ------------------------------------------------------------------ render thread
    def take(self) -> tuple[int, VmcState] | None:
        """(arrival time, a copy of the newest state) when it changed since the last take,
        else None."""
        with self._lock:
            if self._latest is None or self._serial == self._taken:
                return None
            self._taken = self._serial
            t, s = self._latest
            return t, s.copy()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["ASSISTANT_PORT", "DEFAULT_LISTEN_PORT", "MAX_CUSTOM_NAMES", "ReceiverStats", "VmcReceiver",
           "VmcState", "parse_listen", "NUM_BONES"]
