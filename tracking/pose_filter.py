"""The live pose buffer: observations in, a filtered avatar-frame head pose at any time out.

docs/design.md §2: the tracker pushes :class:`~tracking.observation.FaceObservation` objects (any
thread); the runtime samples the pose at every 120 Hz substep time. Per observation:
camera -> avatar frame, mirror, recenter, per-axis limits (:class:`HeadPoseMapper`), then
One Euro filters on the rotation, translation and blendshapes (at the observation's
capture time). Per query at ``t``, with ``t' = t − delay_ns`` (default: one camera frame):

- inside the buffered observations: slerp/lerp between the two around ``t'``;
- after the newest one: hold it (or extrapolate it for at most ``max_extrapolation_ns``)
  and, once ``t'`` is ``hold_s`` past it, ease to neutral (:mod:`tracking.lost_face`);
- after a loss, when the face is found again at ``t_R``: blend from the lost-face pose at
  ``t_R`` to the live pose over ``reacquire_s``. Filters restart at ``t_R`` (no filtering
  across the gap). A face is lost when an observation has no face (or a confidence
  below ``min_confidence``), or when observations stop for ``stale_s``.

Gate (before any of that): a face is used only when it is plausible. While a face is
tracked, a new one must be within ``max_rate_deg_s`` of the last used one; without one to
compare with (the first face, a face after a loss) or after such a jump, a face must
persist: ``confirm_frames`` found faces in a row, each within the rate of the one before
(an empty observation breaks the row). A confirmed row is used from its first frame on, its
neutral (``recenter_at_start``, ``recenter()``) taken from its last, confirming frame; after a
loss or a jump it is a re-acquire, blended from the held pose at the confirming frame. A
face that never persists (one false frame) never becomes the pose nor the neutral; such
faces are counted in :attr:`PoseFilter.unconfirmed`.

``recenter()`` takes the newest raw observation as neutral and blends to the recentered
pose like a re-acquire, so it never jumps either. Time is whatever the caller passes in
(integer ns): no clock is read here.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from avatars.math3d import QUAT_IDENTITY, quat_conj, quat_from_rotvec, quat_mul, rotvec_from_quat

from .expressions import NUM_BLENDSHAPES
from .filters import OneEuroFilter, OneEuroParams, QuaternionOneEuro
from .gaze import GazeOptions, GazeTracker
from .head_pose import HeadPoseMapper, HeadPoseOptions
from .lost_face import LostFaceOptions, blend_into, ease_to_neutral, ease_weight, reacquire_weight
from .observation import FaceObservation
from .pose_track import PoseSample, PoseTrack, TrackHeader

log = logging.getLogger(__name__)

#: Default filter settings, chosen by measurement (tests/tracking/test_real_pipeline.py):
#: rotation jitter on a still face with sensor noise 0.39° -> 0.12° RMS, lag 42 ms on the
#: selfie clip (25 fps), 47 ms on the android clip (12.5 fps, ±20° turns); translation
#: jitter (z) 1.3 -> 0.5 mm, lag 57 ms. Blinks (~10 weights/s) pass nearly unfiltered.
ROTATION_FILTER = OneEuroParams(min_cutoff_hz=0.7, beta=8.0, d_cutoff_hz=1.0)
TRANSLATION_FILTER = OneEuroParams(min_cutoff_hz=2.0, beta=20.0, d_cutoff_hz=1.0)
EXPRESSION_FILTER = OneEuroParams(min_cutoff_hz=5.0, beta=5.0, d_cutoff_hz=1.0)
#: Fastest plausible head rotation between two camera frames, degrees per second. Fast real
#: head shakes stay well below it (the shared clips' fastest frame-to-frame turn: see
#: tests/tracking/test_detection_gate.py); a tracker's false detection on a cut to a cartoon
#: jumped 56.6° roll in one frame (1,378 °/s).
MAX_RATE_DEG_S = 1000.0
#: Consistent frames a face needs before it is used without a tracked face to compare with.
CONFIRM_FRAMES = 2


@dataclass(frozen=True)
class PoseFilterOptions:
    """Settings of :class:`PoseFilter` (module doc). Times in integer ns or seconds as named.

    Attributes:
        head: mirror, limits, translation scale (:class:`HeadPoseOptions`).
        rotation, translation, expression: One Euro settings per part (``beta`` per rad/s,
            per m/s and per weight/s respectively).
        lost: hold / ease / re-acquire times (:class:`LostFaceOptions`).
        recenter_at_start: the first tracked face becomes the neutral pose.
        delay_ns: how far behind the query time the buffer is read (interpolation delay).
        extrapolate: past the newest observation, extrapolate with its angular/linear
            velocity (at most ``max_extrapolation_ns``) instead of holding it.
        min_confidence: observations below it count as "no face".
        buffer_size: observations kept for interpolation.
        gaze: the eye gaze estimate (:class:`tracking.gaze.GazeOptions`); it is filtered,
            held and eased like the blendshapes.
        max_rate_deg_s: a face turning faster than this from the tracked one (camera frame,
            degrees per second between their capture times) is implausible: a false
            detection, not a head (module doc, "Gate").
        confirm_frames: found faces in a row, each within ``max_rate_deg_s`` of the one
            before, that a face needs before it is used when there is no tracked face to
            compare it with (the first face, a face after a loss, a jump); 1 turns the
            persistence test off.
    """

    head: HeadPoseOptions = field(default_factory=HeadPoseOptions)
    rotation: OneEuroParams = ROTATION_FILTER
    translation: OneEuroParams = TRANSLATION_FILTER
    expression: OneEuroParams = EXPRESSION_FILTER
    lost: LostFaceOptions = field(default_factory=LostFaceOptions)
    recenter_at_start: bool = True
    delay_ns: int = 33_333_333
    extrapolate: bool = False
    max_extrapolation_ns: int = 66_666_667
    min_confidence: float = 0.5
    buffer_size: int = 16
    gaze: GazeOptions = field(default_factory=GazeOptions)
    max_rate_deg_s: float = MAX_RATE_DEG_S
    confirm_frames: int = CONFIRM_FRAMES


class _S:
    """One filtered observation."""

    __slots__ = ("t", "q", "tr", "bs", "conf", "gz")

    def __init__(self, t: int, q, tr, bs, conf: float, gz) -> None:
        self.t, self.q, self.tr, self.bs, self.conf = t, np.array(q), np.array(tr), np.array(bs), conf
        self.gz = np.array(gz)


class _Gap:
    """A loss: the last samples before it (``end``) and the re-acquire time (or None)."""

    __slots__ = ("end", "t_r")

    def __init__(self, end: list[_S], t_r: int | None) -> None:
        self.end, self.t_r = end, t_r


class PoseFilter:
    """Thread-safe live pose buffer (module doc)."""

    def __init__(self, options: PoseFilterOptions = PoseFilterOptions()) -> None:
        self.options = options
        self.mapper = HeadPoseMapper(options.head)
        self._lock = threading.Lock()
        self._f_rot = QuaternionOneEuro(options.rotation)
        self._f_tr = OneEuroFilter(3, options.translation)
        self._f_bs = OneEuroFilter(NUM_BLENDSHAPES, options.expression)
        self._gaze = GazeTracker(options.gaze, mirror=options.head.mirror)
        self._seg: deque[_S] = deque(maxlen=max(2, options.buffer_size))
        self._gap: _Gap | None = None
        self._tracking = False
        self._newest_obs: int | None = None
        self._last_raw: FaceObservation | None = None
        self._need_recenter = options.recenter_at_start
        self._tmp = PoseSample()
        self._pending: list[FaceObservation] = []
        self._provisional = False          # the neutral came from a face not yet confirmed
        self._row = 0                      # ... and this many faces in a row agree with it
        self.observations = 0
        self.rejected = 0
        self.unconfirmed = 0

    # --- input --------------------------------------------------------------------------

    def push(self, obs: FaceObservation) -> None:
        """Add one observation (time order; older-or-equal timestamps are ignored). A found
        face with a NaN/inf (or zero-length) rotation, translation, expression weight or
        confidence is rejected and counted in :attr:`rejected`: it never reaches a sample."""
        o = self.options
        if obs.found and not _finite_observation(obs):
            with self._lock:
                self.rejected += 1
            if self.rejected == 1:
                log.warning("a face observation with NaN/inf values was rejected (later ones are counted)")
            return
        with self._lock:
            t = int(obs.timestamp_ns)
            if self._newest_obs is not None and t <= self._newest_obs:
                return
            self.observations += 1
            prev_t, self._newest_obs = self._newest_obs, t
            if not obs.found or obs.confidence < o.min_confidence:
                self._drop_pending()
                self._undo_provisional()
                if self._tracking:
                    self._tracking = False
                    self._gap = _Gap(list(self._seg)[-2:], None)
                return
            ref = self._last_raw
            if self._pending and self._plausible(self._pending[-1], obs):
                self._persist(obs)            # a row of faces that agree with each other: it persists
                return
            if ref is not None and self._tracking:
                if self._plausible(ref, obs, int(obs.timestamp_ns) - int(ref.timestamp_ns)):
                    self._drop_pending()      # a one-frame jump before it: never used
                    self._use(obs)
                    if self._provisional:
                        self._row += 1
                        self._provisional = self._row < o.confirm_frames
                    return
                if self._provisional:         # the face the neutral came from did not persist
                    self._undo_provisional()
                    self._tracking = False
                    self._gap = _Gap(list(self._seg)[-2:], None)
                    self._use(obs)
                    return
            elif ref is None or (prev_t is not None and self._plausible(ref, obs, t - prev_t)):
                self._drop_pending()          # the first face, or one back where it was lost
                self._use(obs)
                return
            self._persist(obs)

    def _persist(self, obs: FaceObservation) -> None:
        """A face that a tracked one does not vouch for (a jump, or back far from where it was
        lost): used once ``confirm_frames`` of them in a row agree (module doc, "Gate")."""
        o = self.options
        if not (self._pending and self._plausible(self._pending[-1], obs)):
            self._drop_pending()
        self._pending.append(obs)
        if len(self._pending) < max(1, o.confirm_frames):
            return
        rows, self._pending = self._pending, []
        if self._tracking:                # a jump that persisted: a re-acquire from the held pose
            self._tracking = False
            self._gap = _Gap(list(self._seg)[-2:], None)
        if self._need_recenter:           # the neutral from the confirming frame
            self.mapper.recenter(rows[-1].rotation, rows[-1].translation)
            self._need_recenter = False
        for r in rows:
            self._use(r)
        if self._gap is not None and len(rows) > 1:
            self._gap.t_r = int(rows[-1].timestamp_ns)   # blend from the held pose from now on

    def _undo_provisional(self) -> None:
        """The face the neutral was taken from did not persist: forget that neutral (the next
        face is the neutral again) and that face."""
        if self._provisional:
            self._provisional = False
            self.unconfirmed += self._row
            self._need_recenter = True
            self._last_raw = None
            log.info("the face the neutral was taken from did not persist; the next face is the neutral")

    def _plausible(self, a: FaceObservation, b: FaceObservation, dt_ns: int | None = None) -> bool:
        """``b`` turned from ``a`` by at most ``max_rate_deg_s`` times ``dt_ns`` (default the
        time between them), camera frame."""
        qa, qb = np.asarray(a.rotation, np.float64), np.asarray(b.rotation, np.float64)
        cos_half = abs(float(qa @ qb)) / math.sqrt(float(qa @ qa) * float(qb @ qb))
        angle = 2.0 * math.degrees(math.acos(min(1.0, cos_half)))
        dt = (int(b.timestamp_ns) - int(a.timestamp_ns) if dt_ns is None else dt_ns) * 1e-9
        return angle <= self.options.max_rate_deg_s * dt

    def _drop_pending(self) -> None:
        """Forget faces that did not persist (counted in :attr:`unconfirmed`)."""
        if self._pending:
            self.unconfirmed += len(self._pending)
            if self.unconfirmed == len(self._pending):
                log.info("a face that did not persist (%d frame(s)) was not used (later ones are counted)",
                         len(self._pending))
            self._pending = []

    def _use(self, obs: FaceObservation) -> None:
        """Take a plausible observation into the buffer (the filters, a re-acquire)."""
        o = self.options
        t = int(obs.timestamp_ns)
        self._last_raw = obs
        if self._need_recenter:           # provisional until confirm_frames faces agree
            self.mapper.recenter(obs.rotation, obs.translation)
            self._need_recenter = False
            self._provisional, self._row = o.confirm_frames > 1, 1
        q, d = self.mapper.apply(obs.rotation, obs.translation)
        stale = bool(self._seg) and (t - self._seg[-1].t) * 1e-9 > o.lost.stale_s
        restart = not self._tracking or stale
        gz = self._gaze.update(obs.blendshapes, obs.landmarks, obs.image_size, t, restart=restart)
        if restart:
            if self._seg:  # a re-acquire (after an empty observation or a stall)
                end = self._gap.end if self._gap is not None and self._gap.t_r is None else list(self._seg)[-2:]
                self._gap = _Gap(end, t)
            self._restart(q, d, obs.blendshapes, obs.confidence, t, gz)
        else:
            q = self._f_rot(q, t).copy()
            d = self._f_tr(d, t).copy()
            bs = self._f_bs(obs.blendshapes, t)
            self._seg.append(_S(t, q, d, bs, obs.confidence, gz))
        self._tracking = True

    def _restart(self, q, d, bs, conf: float, t: int, gz) -> None:
        self._f_rot.reset(q, t)
        self._f_tr.reset(d, t)
        self._f_bs.reset(bs, t)
        self._seg.clear()
        self._seg.append(_S(t, q, d, bs, conf, gz))

    def recenter(self) -> bool:
        """Make the newest tracked pose the neutral one, blending there over
        ``lost.reacquire_s``. Without a tracked face right now (none yet, or lost), the next
        one is used; returns whether a face was available now. The new neutral is
        provisional like the first one (module doc, "Gate"): taken on a face that then does
        not persist (the kiosk recenters on every new face), it is forgotten with it."""
        with self._lock:
            raw = self._last_raw
            if raw is None or not self._seg or not self._tracking:
                self._need_recenter = True
                return False
            last = self._seg[-1]
            self._row = 1 if not self._provisional else self._row
            self._provisional = self._row < self.options.confirm_frames
            self.mapper.recenter(raw.rotation, raw.translation)
            q, d = self.mapper.apply(raw.rotation, raw.translation)
            self._gap = _Gap(list(self._seg)[-2:], last.t)
            self._restart(q, d, last.bs, last.conf, last.t, last.gz)
            return True

    def reset(self) -> None:
        """Forget everything (buffer, filters, neutral pose unless set again at start)."""
        with self._lock:
            self._seg.clear()
            self._gap = None
            self._tracking = False
            self._newest_obs = None
            self._last_raw = None
            self._pending = []
            self._provisional, self._row = False, 0
            self._need_recenter = self.options.recenter_at_start
            self.mapper.clear_neutral()
            self._gaze.reset()

    @property
    def state(self) -> str:
        """``"waiting"`` (no face yet), ``"tracking"`` or ``"lost"``."""
        if not self._seg and self._gap is None:
            return "waiting"
        return "tracking" if self._tracking else "lost"

    # --- output -------------------------------------------------------------------------

    def _segment_pose(self, seg, t: int, out: PoseSample) -> bool:
        """Pose from one segment's samples at ``t``; returns True when within tracking."""
        o = self.options
        last = seg[-1]
        if t >= last.t:
            el = t - last.t
            q_end = last.q
            if o.extrapolate and len(seg) >= 2 and el > 0:
                prev = seg[-2]
                w = rotvec_from_quat(quat_mul(last.q, quat_conj(prev.q))) / (last.t - prev.t)
                h = min(el, o.max_extrapolation_ns)
                q_end = quat_mul(quat_from_rotvec(w * h), last.q)
                out.translation[:] = last.tr + (last.tr - prev.tr) * (h / (last.t - prev.t))
            else:
                out.translation[:] = last.tr
            out.blendshapes[:] = last.bs
            w_n = ease_weight(el * 1e-9, o.lost)
            out.gaze[:] = last.gz
            out.gaze *= 1.0 - w_n
            ease_to_neutral(q_end, out.translation, out.blendshapes, w_n, out.rotation, out.translation, out.blendshapes)
            out.confidence = last.conf * (1.0 - w_n)
            return el * 1e-9 <= o.lost.stale_s
        if len(seg) == 1:
            a = seg[0]
            out.rotation[:], out.translation[:], out.blendshapes[:], out.confidence = a.q, a.tr, a.bs, a.conf
            out.gaze[:] = a.gz
            return True
        k = len(seg) - 2
        while k > 0 and seg[k].t > t:
            k -= 1
        a, b = seg[k], seg[k + 1]
        if t <= a.t:
            out.rotation[:], out.translation[:], out.blendshapes[:], out.confidence = a.q, a.tr, a.bs, a.conf
            out.gaze[:] = a.gz
            return True
        u = (t - a.t) / (b.t - a.t)
        blend_into(a.q, a.tr, a.bs, b.q, b.tr, b.bs, u, out.rotation, out.translation, out.blendshapes)
        out.gaze[:] = a.gz + (b.gz - a.gz) * u
        out.confidence = a.conf + (b.conf - a.conf) * u
        return True

    def sample(self, t_ns: int, out: PoseSample | None = None) -> PoseSample:
        """The avatar-frame head pose for time ``t_ns`` (module doc); fills ``out`` if given.

        ``rotation`` (4,) relative to neutral, ``translation`` (3,) metres, ``blendshapes``
        (52,) filtered (map them with :class:`~tracking.expressions.ExpressionMapper`),
        ``found`` False while holding/easing or before any face.
        """
        if out is None:
            out = PoseSample()
        t_q = int(t_ns) - self.options.delay_ns
        out.t_ns = int(t_ns)
        with self._lock:
            gap, seg = self._gap, self._seg
            if not seg and gap is None:
                out.rotation[:] = QUAT_IDENTITY
                out.translation[:] = 0.0
                out.blendshapes[:] = 0.0
                out.gaze[:] = 0.0
                out.confidence, out.found = 0.0, False
                return out
            if gap is not None and (gap.t_r is None or t_q < gap.t_r):
                self._segment_pose(gap.end, t_q, out)
                out.found = False
                return out
            out.found = self._segment_pose(seg, t_q, out) and self._tracking
            if gap is not None:
                u = reacquire_weight((t_q - gap.t_r) * 1e-9, self.options.lost)
                if u < 1.0:  # from the lost-face pose F at t_R toward the live pose (in out)
                    f = self._tmp
                    self._segment_pose(gap.end, gap.t_r, f)
                    blend_into(out.rotation, out.translation, out.blendshapes, f.rotation, f.translation,
                               f.blendshapes, 1.0 - u, out.rotation, out.translation, out.blendshapes)  # fmt: skip
                    out.gaze += (f.gaze - out.gaze) * (1.0 - u)
        return out


def filter_observations(observations: Iterable[FaceObservation], options: PoseFilterOptions = PoseFilterOptions(),
                        *, header: TrackHeader | None = None) -> PoseTrack:  # fmt: skip
    """Offline: push every observation and sample at its own time with no delay, giving an
    avatar-frame :class:`PoseTrack` (frames without a face hold/ease as live)."""
    from dataclasses import replace

    pf = PoseFilter(replace(options, delay_ns=0))
    t, rot, tr, bs, conf, found, gz = [], [], [], [], [], [], []
    s = PoseSample()
    for obs in observations:
        pf.push(obs)
        pf.sample(obs.timestamp_ns, out=s)
        t.append(s.t_ns), rot.append(s.rotation.copy()), tr.append(s.translation.copy())
        bs.append(s.blendshapes.copy()), conf.append(s.confidence), found.append(s.found), gz.append(s.gaze.copy())
    if not t:
        raise ValueError("no observations to filter")
    return PoseTrack(t, rot, tr, np.array(bs), conf, found, np.array(gz), header=header or TrackHeader(frame="avatar"))


def _finite_observation(obs: FaceObservation) -> bool:
    """Every number of ``obs`` a sample reads is finite, and its rotation has a length."""
    c = obs.confidence
    if not isinstance(c, (int, float)) or not math.isfinite(c):
        return False
    for a in (obs.rotation, obs.translation, obs.blendshapes):
        if not np.all(np.isfinite(a)):
            return False
    return float(np.dot(obs.rotation, obs.rotation)) > 1e-12
