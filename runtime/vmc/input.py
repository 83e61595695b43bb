"""VMC as a pose input (:class:`runtime.pose_inputs.PoseInput`): a network performer drives
the avatar — body, head, expressions — and the hair runs on top at 120 Hz (docs/design.md §11).

Marionette (the default on 39539): :class:`VmcInput` keeps a *record buffer*: every state the
receiver delivers (coalesced, at most one per frame, :meth:`runtime.vmc.receiver.VmcReceiver.take`)
becomes a record at time ``arrival + delay`` (default one 60 Hz frame), and every sample —
at each substep time t_n and at the draw time — is the pose track sampling
(:meth:`tracking.PoseTrack.sample`: slerp/lerp between the two records around t, held
outside) over that buffer. Records are only ever appended after every time already sampled
(a copy of the newest record is first put at the newest sampled time, so a held pose stays
held exactly), so the buffer written out (``--record``) IS what the run sampled: replaying it
(``--source rec.jsonl``) gives the same samples at the same substep times, hence bit-identical
hair. The first record is put at the first time sampled (the loop's t0), where an offline
replay starts its substep grid.

A silent sender is a lost face: after ``hold_s`` without data every channel it drove — each
bone it named, the hips, the root, the expressions and blendshapes — eases to neutral over
``ease_s`` (smoothstep, one record per frame): the body pose's ``weight`` goes from 1 to 0
(:mod:`tracking.body`: the avatar's own motion takes over again), the expression weights to
0. ``found`` (and so the Performer's /VMC/Ext/OK tracking status) is False from the end of
the hold, and while the sender itself reports a lost face (OK tracking status 0). A sender
that comes back takes over at once.

Assistant (on 39540, or ``role = "assistant"``): the camera input (``inner``) stays the pose
source; the received blend values replace (``face = "replace"``) or merge with (``"merge"``:
the larger of the two per channel) the tracked face, and with ``head = "vmc"`` the received
Head (and Neck) bone replace the tracked head rotation; a silent sender eases back to the
camera's face and head the same way. Not recorded bit-exactly (the camera part is the inner
input's own recording).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from tracking.body import BONE_INDEX, F_ARKIT, F_EXPR, F_ON, BodyPose
from tracking.expressions import NUM_BLENDSHAPES
from tracking.pose_track import PoseSample, TrackHeader
from tracking.track_io import PoseTrackWriter

from ..clock import Clock
from ..errors import SettingsError
from ..pose_inputs.base import InputStatus, PoseInput
from .receiver import VmcReceiver, VmcState

log = logging.getLogger(__name__)

ROLES = ("auto", "marionette", "assistant")
FACE_MODES = ("replace", "merge")
HEAD_MODES = ("camera", "vmc")


@dataclass(frozen=True)
class VmcInputOptions:
    """Settings of :class:`VmcInput` (``[vmc]`` in the config).

    Attributes:
        delay_ms: records are placed this long after their arrival (interpolation delay).
        hold_s, ease_s: a silent sender: hold, then ease to neutral (module doc).
        face: assistant mode: "replace" or "merge" the tracked face with the received one.
        head: assistant mode: "camera" (the tracked head) or "vmc" (the received Head bone).
    """

    delay_ms: float = 1000.0 / 60.0
    hold_s: float = 0.5
    ease_s: float = 1.0
    face: str = "replace"
    head: str = "camera"

    def __post_init__(self) -> None:
        if self.face not in FACE_MODES:
            raise SettingsError(f"vmc face {self.face!r} is not one of {', '.join(FACE_MODES)}")
        if self.head not in HEAD_MODES:
            raise SettingsError(f"vmc head {self.head!r} is not one of {', '.join(HEAD_MODES)}")
        for k in ("delay_ms", "hold_s", "ease_s"):
            v = getattr(self, k)
            if not (np.isfinite(v) and v >= 0):
                raise SettingsError(f"vmc {k} {v!r} must be >= 0")


class RecordBuffer:
    """Growing pose-track arrays sampled by the pose track's own kernels (module doc)."""

    def __init__(self, capacity: int = 1024):
        self.n = 0
        self._alloc(capacity)
        self._cursor = np.zeros(1, np.int64)
        self._gcursor = np.zeros(1, np.int64)
        self._bcursor = np.zeros(1, np.int64)
        self._views = None

    def _alloc(self, cap: int) -> None:
        old = self.__dict__.get("t")
        n = self.n
        new = {"t": np.zeros(cap, np.int64), "rot": np.zeros((cap, 4)), "tr": np.zeros((cap, 3)),
               "bs": np.zeros((cap, NUM_BLENDSHAPES)), "conf": np.zeros(cap), "found": np.zeros(cap, bool),
               "gaze": np.zeros((cap, 2)), "bones": np.zeros((cap,) + BodyPose().bones.shape),
               "mask": np.zeros((cap,) + BodyPose().mask.shape), "hips": np.zeros((cap, 3)),
               "root": np.zeros((cap, 7)), "expr": np.zeros((cap,) + BodyPose().expressions.shape),
               "flags": np.zeros((cap,) + BodyPose().flags.shape), "weight": np.ones(cap)}
        new["rot"][:, 3] = 1.0
        new["bones"][:, :, 3] = 1.0
        new["root"][:, 6] = 1.0
        if old is not None:
            for k, a in new.items():
                a[:n] = getattr(self, k)[:n]
        self.__dict__.update(new)
        self.cap = cap

    @property
    def last_t(self) -> int | None:
        return int(self.t[self.n - 1]) if self.n else None

    def append(self, t: int, body: BodyPose, arkit: np.ndarray, found: bool) -> int:
        """Add a record at time ``t`` (> the last one); returns its index."""
        if self.n == self.cap:
            self._alloc(2 * self.cap)
        k = self.n
        self.t[k] = t
        self.bs[k] = arkit
        self.conf[k] = 1.0 if found else 0.0
        self.found[k] = found
        self.bones[k], self.mask[k], self.hips[k] = body.bones, body.mask, body.hips
        self.root[k], self.weight[k] = body.root, body.weight[0]
        self.expr[k], self.flags[k] = body.expressions, body.flags
        self.n += 1
        self._views = None
        return k

    def duplicate_last(self, t: int) -> None:
        """Repeat the newest record at time ``t`` (a held pose)."""
        k = self.n - 1
        if self.n == self.cap:
            self._alloc(2 * self.cap)
        for a in (self.t, self.rot, self.tr, self.bs, self.conf, self.found, self.gaze, self.bones, self.mask,
                  self.hips, self.root, self.expr, self.flags, self.weight):
            a[k + 1] = a[k]
        self.t[k + 1] = t
        self.n += 1
        self._views = None

    def body_at(self, k: int, out: BodyPose) -> BodyPose:
        out.bones[:], out.mask[:], out.hips[:] = self.bones[k], self.mask[k], self.hips[k]
        out.root[:], out.weight[0] = self.root[k], self.weight[k]
        out.expressions[:], out.flags[:] = self.expr[k], self.flags[k]
        return out

    def sample(self, t_ns: int, out: PoseSample) -> PoseSample:
        """The pose track sampling of the records at ``t_ns`` (:meth:`tracking.PoseTrack.sample`'s
        kernels, the same arithmetic)."""
        from tracking.body import sample_body_kernel, sample_gaze_kernel
        from tracking.track_sampling import sample_kernel

        v = self._views
        if v is None:
            n = self.n
            v = self._views = tuple(a[:n] for a in (self.t, self.rot, self.tr, self.bs, self.conf, self.found))
        out.confidence, out.found = sample_kernel(t_ns, 0, v[0], v[1], v[2], v[3], v[4], v[5], self._cursor,
                                                  out.rotation, out.translation, out.blendshapes)
        sample_gaze_kernel(t_ns, 0, self.t, self.n, self.gaze, self._gcursor, out.gaze)
        if out.body is None:
            out.body = BodyPose()
        o = out.body
        sample_body_kernel(t_ns, 0, self.t, self.n, self.bones, self.mask, self.hips, self.root, self.expr,
                           self.flags, self.weight, self._bcursor, o.bones, o.mask, o.hips, o.root, o.expressions,
                           o.flags, o.weight)
        out.t_ns = t_ns
        return out


class VmcInput(PoseInput):
    """A VMC receiver as the loop's pose input (module doc).

    Args:
        receiver: the bound receiver (closed with the input).
        options: see :class:`VmcInputOptions`.
        inner: assistant mode: the camera input whose face / head the received data replace
            or merge with (closed with the input); None: marionette mode.
        record: path of a ``.jsonl`` track to write the records to (marionette mode), or None.
        live: frames are paced in real time (always, for a network input).
    """

    def __init__(self, receiver: VmcReceiver, *, options: VmcInputOptions = VmcInputOptions(),
                 inner: PoseInput | None = None, record: str | None = None, live: bool = True):
        self.receiver = receiver
        self.options = options
        self.inner = inner
        self.live = live
        self.buf = RecordBuffer()
        self._delay = int(round(options.delay_ms * 1e6))
        self._hold = int(round(options.hold_s * 1e9))
        self._ease = int(round(options.ease_s * 1e9))
        self._tmax: int | None = None          # the newest time sampled so far
        self._last_arrival: int | None = None
        self._last: VmcState | None = None     # the newest received state
        self._ease_w = 0.0
        self._found = False
        self._faces = 0
        self._closed = False
        self._scratch = PoseSample()
        self._writer = None
        self._written = 0
        if record and inner is None:
            host, port = receiver.address
            self._writer = PoseTrackWriter(record, TrackHeader(frame="avatar", source=f"vmc:{host}:{port}",
                                                               settings={"vmc": {"delay_ms": options.delay_ms}}))

    @property
    def assistant(self) -> bool:
        return self.inner is not None

    # ------------------------------------------------------------------ protocol
    def start(self, clock: Clock) -> None:
        self._clock = clock
        self.receiver.start(clock.now_ns)
        if self.inner is not None:
            self.inner.start(clock)

    def _append(self, t: int, state: VmcState | None, found: bool, ease_w: float = 0.0) -> None:
        body = BodyPose()
        arkit = np.zeros(NUM_BLENDSHAPES)
        if state is not None:
            body.copy_from(state.body)
            arkit[:] = state.arkit
            if ease_w > 0.0:                      # a silent sender eased out: every channel
                body.weight[0] = 1.0 - ease_w
                body.expressions *= 1.0 - ease_w
                arkit *= 1.0 - ease_w
        self.buf.append(t, body, arkit, found)

    def _hold_to(self, t: int) -> None:
        """Records are appended after every sampled time: hold the newest one up to ``_tmax``."""
        last = self.buf.last_t
        if self._tmax is not None and last is not None and self._tmax > last:
            self.buf.duplicate_last(self._tmax)

    def pump(self, t_ns: int) -> None:
        """Take the newest received state into the record buffer; ease a silent sender."""
        if self.inner is not None:
            self.inner.pump(t_ns)
        if self.buf.n == 0:
            return                                # the first record is put at the first sample time
        got = self.receiver.take()
        if got is not None:
            arrival, state = got
            self._last, self._last_arrival, self._ease_w = state, arrival, 0.0
            tau = max(arrival + self._delay, (self._tmax or 0) + 1, self.buf.last_t + 1)
            found = bool(state.body.flags[F_ON]) and state.tracking != 0
            self._hold_to(tau - 1)
            self._append(tau, state, found)
        elif self._last_arrival is not None and self._ease_w < 1.0:
            el = t_ns - (self._last_arrival + self._delay)
            if el > self._hold:
                u = min(max((el - self._hold) / max(self._ease, 1), 0.0), 1.0)
                w = u * u * (3.0 - 2.0 * u)
                tau = max(t_ns, self.buf.last_t + 1)
                self._hold_to(tau - 1)
                self._append(tau, self._last, False, w)
                self._ease_w = w
        self._flush_records()

    def _flush_records(self) -> None:
        if self._writer is None:
            return
        s = self._scratch
        b = s.body if s.body is not None else BodyPose()
        s.body = b
        buf = self.buf
        while self._written < buf.n:
            k = self._written
            s.t_ns = int(buf.t[k])
            s.rotation[:], s.translation[:], s.blendshapes[:] = buf.rot[k], buf.tr[k], buf.bs[k]
            s.confidence, s.found = float(buf.conf[k]), bool(buf.found[k])
            s.gaze[:] = buf.gaze[k]
            buf.body_at(k, b)
            if not b.flags[F_ON]:        # an empty record still carries a (silent) body
                b.flags[F_ON] = 1.0
                b.mask[:] = 0.0
            self._writer.write_sample(s)
            self._written += 1
        self._writer.flush()

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        if out is None:
            out = PoseSample()
        if self.buf.n == 0:                       # the first sample: the run's t0
            self._append(t_ns, None, False)
            self._flush_records()
        if self._tmax is None or t_ns > self._tmax:
            self._tmax = t_ns
        if self.inner is None:
            out = self.buf.sample(t_ns, out)
            self._found = out.found
            if out.found:
                self._faces = 1
            return out
        return self._assist(t_ns, out)

    def _assist(self, t_ns: int, out: PoseSample) -> PoseSample:
        """Assistant mode: the camera pose with the received face (and head) on top."""
        out = self.inner.sample(t_ns, out)
        v = self.buf.sample(t_ns, self._scratch)
        self._found = out.found
        if v.body is None or not v.body.flags[F_ON]:
            return out
        b = v.body
        mine = out.body
        if mine is None:
            mine = out.body = BodyPose()
        mine.clear()
        w = float(b.weight[0])            # < 1: a silent sender eased back to the camera
        if w <= 0.0:
            return out
        if b.flags[F_ARKIT]:
            if self.options.face == "merge":
                np.maximum(out.blendshapes, v.blendshapes, out=out.blendshapes)
            elif w >= 1.0:
                out.blendshapes[:] = v.blendshapes
            else:                         # the received values are already scaled by w
                out.blendshapes *= 1.0 - w
                out.blendshapes += v.blendshapes
        if b.flags[F_EXPR]:
            mine.expressions[:] = b.expressions
            mine.flags[F_EXPR] = 1.0
            mine.flags[F_ON] = 1.0
        if self.options.head == "vmc":
            for name in ("neck", "head"):
                i = BONE_INDEX[name]
                if b.mask[i]:
                    mine.bones[i], mine.mask[i] = b.bones[i], 1.0
                    mine.flags[F_ON] = 1.0
            mine.weight[0] = w
        return out

    def status(self) -> InputStatus:
        inner = self.inner.status() if self.inner is not None else None
        if inner is not None:
            import dataclasses

            return dataclasses.replace(inner, body=True)
        return InputStatus(live=self.live, finished=False, face_found=self._found, faces=self._faces,
                           start_ns=0, body=True)

    def recenter(self) -> None:
        if self.inner is not None:
            self.inner.recenter()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._writer is not None:
                self._flush_records()
                self._writer.close()
        finally:
            self.receiver.close()
            if self.inner is not None:
                self.inner.close()
