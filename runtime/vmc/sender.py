"""VMC Performer: our avatar's pose and expressions to Marionettes (VSeeFace, VMagicMirror,
XR Animator, Warudo, ...) over UDP, one bundle per sent frame (docs/design.md §11).

Per sent frame (every ``divisor``-th drawn frame), one OSC bundle with, in order (VMC
protocol spec, "Marionette" section, exact type tags):

    /VMC/Ext/Root/Pos   ,sfffffff  "root", p, q              (our root: the origin, identity)
    /VMC/Ext/Bone/Pos   ,sfffffff  name, p, q  per humanoid bone the avatar has
    /VMC/Ext/Blend/Val  ,sf        name, weight  per expression of the avatar
    /VMC/Ext/Blend/Apply ,
    /VMC/Ext/OK         ,iiii      loaded 1, calibration state, calibration mode 0, tracking
    /VMC/Ext/T          ,f         seconds since the run started

Bone poses are *local and normalized* (a bone at rest is the identity, as in UniVRM's
normalized humanoid that VMC apps exchange): with D = W · W0⁻¹ the world rotation change of
a node, n_b = D_parent⁻¹ · D_b and p_b = D_parent⁻¹ · (x_b − x_parent) (metres); then the
Unity frame (:mod:`runtime.vmc.names`). Calibration state: 3 (calibrated) once a face has
been tracked, else 1 (waiting); tracking status 1 while the face is found, 0 while it is
lost (VMC V2.7). Every float is sent as an OSC float32 ("f"), every int as "i".
"""

from __future__ import annotations

import logging
import socket
import struct
import time
from dataclasses import dataclass

import numpy as np

from avatars import Avatar
from avatars.math3d import mat3_from_quat, mat_decompose
from tracking.body import BODY_BONES

from ..errors import SettingsError
from .names import UNITY_NAMES, wire_expression_name
from .osc import bundle, message_head
from .pose_kernel import unity_local_pose

log = logging.getLogger(__name__)

DEFAULT_PORT = 39539
_F7 = struct.Struct(">7f")
_F1 = struct.Struct(">f")
_I4 = struct.Struct(">4i")
CALIBRATED, WAITING = 3, 1


def parse_target(text: str, default_port: int = DEFAULT_PORT) -> tuple[str, int]:
    """``HOST[:PORT]`` (or ``:PORT``, ``PORT``) -> (host, port). Raises SettingsError."""
    text = text.strip()
    if text.isdigit():
        host, port = "127.0.0.1", text
    elif text.startswith("["):                      # [v6]:port
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else str(default_port)
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, str(default_port)
    host = host or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise SettingsError(f"{text!r}: the port must be 1..65535")
    return host, int(port)


@dataclass
class SenderStats:
    frames: int = 0
    bytes: int = 0
    errors: int = 0


class VmcSender:
    """Builds and sends the bundle of one avatar (module doc). A context manager.

    Args:
        avatar: the avatar whose rig's draw pose is sent.
        targets: (host, port) pairs to send to (each gets every bundle).
        divisor: send every ``divisor``-th frame (1: every drawn frame).
        names: "vrm0" (default: VRM 0.x preset names) or "vrm1".
    """

    def __init__(self, avatar: Avatar, targets: list[tuple[str, int]], *, divisor: int = 1, names: str = "vrm0"):
        if divisor < 1:
            raise SettingsError(f"VMC send divisor {divisor} must be >= 1")
        self.avatar = avatar
        self.targets = [(socket.getaddrinfo(h, p, type=socket.SOCK_DGRAM)[0][4]) for h, p in targets]
        self.divisor = int(divisor)
        self.stats = SenderStats()
        self._n = 0
        self._socks: dict[int, socket.socket] = {}
        for addr in self.targets:
            fam = socket.AF_INET6 if ":" in addr[0] else socket.AF_INET
            if fam not in self._socks:
                self._socks[fam] = socket.socket(fam, socket.SOCK_DGRAM)
        self._names = names
        self._apply = message_head("/VMC/Ext/Blend/Apply", ",")
        self._ok = message_head("/VMC/Ext/OK", ",iiii")
        self._t = message_head("/VMC/Ext/T", ",f")
        self.set_avatar(avatar)

    def set_avatar(self, avatar: Avatar) -> None:
        """Send ``avatar`` from the next frame on (a new avatar in the running session): its
        humanoid bones and expressions; the targets, divisor and names stay."""
        self.avatar = avatar
        sk = avatar.skeleton
        self.bones = [(b, avatar.humanoid[name]) for b, name in enumerate(BODY_BONES) if name in avatar.humanoid]
        self.nodes = np.array([n for _, n in self.bones], np.int64)
        self.parents = np.array([int(sk.parents[n]) for _, n in self.bones], np.int64)
        self._r0 = mat3_from_quat(mat_decompose(sk.rest_world)[1])      # (N, 3, 3) rest world rotations
        self._pose = np.zeros((len(self.bones), 7))
        self._bone_heads = [message_head("/VMC/Ext/Bone/Pos", ",sfffffff", UNITY_NAMES[b]) for b, _ in self.bones]
        self._root = message_head("/VMC/Ext/Root/Pos", ",sfffffff", "root") + _F7.pack(0, 0, 0, 0, 0, 0, 1)
        exprs = sorted(avatar.expressions.values(), key=lambda e: (not e.preset, e.name))
        self.expression_names = [e.name for e in exprs]
        self._blend_heads = [message_head("/VMC/Ext/Blend/Val", ",sf",
                                          wire_expression_name(e.name, e.preset, self._names)) for e in exprs]

    # ------------------------------------------------------------------ pose
    def local_pose(self, world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions (B, 3), rotations (B, 4)) of the avatar's humanoid bones, normalized and
        local (module doc), in the UNITY frame, from world matrices (N, 4, 4) (compiled:
        :func:`runtime.vmc.pose_kernel.unity_local_pose`)."""
        unity_local_pose(np.ascontiguousarray(world, np.float64), self.nodes, self.parents, self._r0, self._pose)
        return self._pose[:, :3], self._pose[:, 3:]

    def build(self, world: np.ndarray, expressions: dict[str, float], t_s: float, *, found: bool,
              calibrated: bool = True) -> bytes:
        """The bundle for one frame (module doc)."""
        self.local_pose(world)
        pq = self._pose.tolist()
        pack = _F7.pack
        parts = [self._root]
        for head, v in zip(self._bone_heads, pq):
            parts.append(head + pack(*v))
        get = expressions.get
        for name, head in zip(self.expression_names, self._blend_heads):
            v = get(name, 0.0)
            parts.append(head + _F1.pack(min(max(float(v), 0.0), 1.0) if v == v else 0.0))
        parts.append(self._apply)
        parts.append(self._ok + _I4.pack(1, CALIBRATED if calibrated else WAITING, 0, 1 if found else 0))
        parts.append(self._t + _F1.pack(float(t_s)))
        return bundle(parts)

    def send_frame(self, world: np.ndarray, expressions: dict[str, float], t_s: float, *, found: bool,
                   calibrated: bool = True) -> int:
        """Build and send one frame when the divisor says so; returns the bytes sent per target
        (0: skipped). A send error (no route, buffer full) is counted, never raised."""
        n = self._n
        self._n += 1
        if n % self.divisor:
            return 0
        data = self.build(world, expressions, t_s, found=found, calibrated=calibrated)
        for addr in self.targets:
            try:
                self._socks[socket.AF_INET6 if ":" in addr[0] else socket.AF_INET].sendto(data, addr)
                self.stats.bytes += len(data)
            except OSError as exc:
                self.stats.errors += 1
                if self.stats.errors in (1, 100, 10000):
                    log.warning("VMC send to %s:%s failed (%s); %d errors so far", addr[0], addr[1], exc,
                                self.stats.errors)
        self.stats.frames += 1
        return len(data)

    def close(self) -> None:
        for s in self._socks.values():
            s.close()
        self._socks.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def bench_build(sender: VmcSender, world: np.ndarray, expressions: dict, n: int = 2000) -> float:
    """Mean µs to build one bundle (for ``swaycam bench vmc``)."""
    t0 = time.perf_counter()
    for k in range(n):
        sender.build(world, expressions, k / 60.0, found=True)
    return (time.perf_counter() - t0) / n * 1e6
