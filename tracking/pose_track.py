"""Pose tracks: timestamped head poses and blendshapes, sampled at any time.

A :class:`PoseTrack` holds N observations (strictly increasing integer-ns times) and
answers :meth:`PoseTrack.sample` at any ``t_ns``: slerp for the rotation, linear for
translation, blendshapes and confidence, clamped to the first/last observation outside
the recorded span. At a recorded time it returns the recorded values exactly. Sampling is
deterministic and allocation-free with ``out=`` (the runtime calls it at every 120 Hz
substep).

Tracks are stored as JSON Lines (:mod:`tracking.track_io`). ``frame`` says which space
rotations/translations are in: ``"avatar"`` (mirror, recenter and limits applied — what
the runtime drives the head with) or ``"camera"`` (raw MediaPipe camera frame).

:func:`synthetic_track` samples any rotation function into a track (the runtime's
``turn-test`` source is the standard head turn of :mod:`avatars.clips.head_turn`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .body import (BodyPose, NUM_BONES, NUM_EXPRESSIONS, NUM_FLAGS, sample_body_kernel,
                   sample_gaze_kernel)
from .expressions import NUM_BLENDSHAPES
from .track_sampling import sample_kernel, sample_rows_kernel

#: floats of a sample's arm pose (:mod:`tracking.hands`: per side arm_on, shoulder, elbow, wrist, hand_on, 21 landmarks)
ARM_W = 148
#: floats of a sample's voice (:mod:`tracking.audio`: aa ih ou ee oh, level, confidence, on)
VOICE_W = 8

SCHEMA = "swaycam.posetrack"
SCHEMA_VERSION = 1
FRAMES = ("avatar", "camera")


@dataclass
class PoseSample:
    """A head pose at one time. Arrays are owned; reuse one sample as ``out=``.

    Attributes:
        t_ns: the sample time, integer ns.
        rotation: (4,) quaternion (x, y, z, w).
        translation: (3,) metres.
        blendshapes: (52,) weights in MediaPipe/ARKit order.
        confidence: 0..1.
        found: whether a face was tracked at this time (False during a lost-face hold/ease).
        gaze: (2,) eye gaze relative to the head, radians, avatar terms (VRM lookAt: yaw > 0
            the avatar looks to its left (+X), pitch > 0 down; :mod:`tracking.gaze`).
        body: a whole-body pose (:class:`tracking.body.BodyPose`) from a network performer,
            or None (inputs that track the head only; tracks without a body leave it alone).
        voice: (8,) lip sync from audio (:mod:`tracking.audio` layout: visemes aa ih ou ee oh,
            level, confidence, on); all 0 (``on`` 0) without an audio source.
        arms: (148,) the arm pose from the webcam (:mod:`tracking.hands`, avatar frame; all 0
            without ``--hands``).
    """

    t_ns: int = 0
    rotation: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))
    translation: np.ndarray = field(default_factory=lambda: np.zeros(3))
    blendshapes: np.ndarray = field(default_factory=lambda: np.zeros(NUM_BLENDSHAPES))
    confidence: float = 0.0
    found: bool = False
    gaze: np.ndarray = field(default_factory=lambda: np.zeros(2))
    body: BodyPose | None = None
    voice: np.ndarray = field(default_factory=lambda: np.zeros(VOICE_W))
    arms: np.ndarray = field(default_factory=lambda: np.zeros(ARM_W))

    def copy(self) -> "PoseSample":
        return PoseSample(self.t_ns, self.rotation.copy(), self.translation.copy(),
                          self.blendshapes.copy(), self.confidence, self.found, self.gaze.copy(),
                          None if self.body is None else self.body.copy(), self.voice.copy(),
                          self.arms.copy())  # fmt: skip


@dataclass(frozen=True)
class TrackHeader:
    """The first JSONL line: schema, version, frame, source and the settings used."""

    frame: str = "avatar"
    source: str = ""
    settings: dict = field(default_factory=dict)
    schema: str = SCHEMA
    version: int = SCHEMA_VERSION


class PoseTrack:
    """N observations, sampled by time.

    Args:
        t_ns: (N,) int64, strictly increasing, N >= 1.
        rotations: (N, 4) unit quaternions (x, y, z, w).
        translations: (N, 3) metres; default zeros.
        blendshapes: (N, 52); default zeros.
        confidence: (N,); default ones.
        found: (N,) bool; default ``confidence > 0``.
        gaze: (N, 2) radians (yaw, pitch); default zeros.
        body: a dict of (N, ...) arrays ``bones`` (N, 55, 4), ``mask`` (N, 55), ``hips``
            (N, 3), ``expressions`` (N, 18), ``flags`` (N, 5) and optionally ``root`` (N, 7;
            default the identity) and ``weight`` (N,; default 1) (:mod:`tracking.body`), or
            None: a head-only track.
        voice: (N, 8) lip sync rows (:attr:`PoseSample.voice`), or None (no audio recorded).
        header: :class:`TrackHeader`.
        view: (N, 5) the viewer's orbit per observation [yaw, pitch, zoom, pan_right, pan_up]
            (tracking/track_io.py), or None (none recorded); read by :meth:`view_at`.

    Raises:
        ValueError: shapes disagree or times are not strictly increasing.
    """

    def __init__(self, t_ns, rotations, translations=None, blendshapes=None, confidence=None,
                 found=None, gaze=None, body=None, voice=None, *, header: TrackHeader = TrackHeader(),
                 view=None) -> None:  # fmt: skip
        self.t_ns = np.asarray(t_ns, dtype=np.int64).reshape(-1)
        n = len(self.t_ns)
        if n == 0:
            raise ValueError("a pose track needs at least one observation")
        if np.any(np.diff(self.t_ns) <= 0):
            raise ValueError("pose track times must be strictly increasing")
        self.rotations = np.asarray(rotations, dtype=np.float64).reshape(n, 4)
        self.translations = np.zeros((n, 3)) if translations is None else np.asarray(translations, np.float64).reshape(n, 3)
        self.blendshapes = (np.zeros((n, NUM_BLENDSHAPES)) if blendshapes is None
                            else np.asarray(blendshapes, np.float64).reshape(n, NUM_BLENDSHAPES))  # fmt: skip
        self.confidence = np.ones(n) if confidence is None else np.asarray(confidence, np.float64).reshape(n)
        self.found = self.confidence > 0 if found is None else np.asarray(found, dtype=bool).reshape(n)
        self.rejected = 0   # observations with NaN/inf dropped while reading (track_io.load_track)
        if header.frame not in FRAMES:
            raise ValueError(f"pose track frame must be one of {FRAMES}, got {header.frame!r}")
        self.header = header
        # what the compiled sampler reads: C-contiguous (copied only when not), one array type
        self._arrays = tuple(np.ascontiguousarray(a) for a in (self.t_ns, self.rotations, self.translations,
                                                               self.blendshapes, self.confidence, self.found))
        self._cursor = np.zeros(1, np.int64)
        self.gaze = np.zeros((n, 2)) if gaze is None else np.ascontiguousarray(gaze, np.float64).reshape(n, 2)
        self._gcursor = np.zeros(1, np.int64)
        self._n = n
        self.body = None
        if body is not None:
            shapes = {"bones": (n, NUM_BONES, 4), "mask": (n, NUM_BONES), "hips": (n, 3),
                      "expressions": (n, NUM_EXPRESSIONS), "flags": (n, NUM_FLAGS), "root": (n, 7), "weight": (n,)}
            body = dict(body)
            if "root" not in body:
                body["root"] = np.tile([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], (n, 1))
            if "weight" not in body:
                body["weight"] = np.ones(n)
            self.body = {k: np.ascontiguousarray(body[k], np.float64).reshape(shp) for k, shp in shapes.items()}
            self._bcursor = np.zeros(1, np.int64)
        self.voice = None if voice is None else np.ascontiguousarray(voice, np.float64).reshape(n, VOICE_W)
        self.view = None if view is None else np.asarray(view, np.float64).reshape(n, 5)
        self._vcursor = np.zeros(1, np.int64)

    def __len__(self) -> int:
        return len(self.t_ns)

    def view_at(self, t_ns: int, *, offset_ns: int = 0) -> np.ndarray | None:
        """(5,) the recorded view of the last observation at or before ``t_ns - offset_ns``
        (the first one before the track starts), or None without recorded views. Drawn frames
        only (allocates nothing but the index; not for the 120 Hz path)."""
        if self.view is None:
            return None
        k = int(np.searchsorted(self.t_ns, int(t_ns) - int(offset_ns), side="right")) - 1
        return self.view[max(k, 0)]

    @property
    def start_ns(self) -> int:
        return int(self.t_ns[0])

    @property
    def end_ns(self) -> int:
        return int(self.t_ns[-1])

    @property
    def duration_s(self) -> float:
        return (int(self.t_ns[-1]) - int(self.t_ns[0])) * 1e-9

    def sample(self, t_ns: int, out: PoseSample | None = None, *, offset_ns: int = 0) -> PoseSample:
        """The pose at track time ``t_ns − offset_ns`` (module doc), stamped ``t_ns``. Writes
        into ``out`` when given: one compiled call (:mod:`tracking.track_sampling`), no
        allocation; ``out``'s arrays must be C-contiguous float64 of shapes (4,), (3,), (52,)."""
        if out is None:
            out = PoseSample()
        t = int(t_ns)
        a = self._arrays
        out.confidence, out.found = sample_kernel(t, int(offset_ns), a[0], a[1], a[2], a[3], a[4], a[5], self._cursor,
                                                  out.rotation, out.translation, out.blendshapes)
        sample_gaze_kernel(t, int(offset_ns), a[0], self._n, self.gaze, self._gcursor, out.gaze)
        b = self.body
        if b is not None:
            if out.body is None:
                out.body = BodyPose()
            o = out.body
            sample_body_kernel(t, int(offset_ns), a[0], self._n, b["bones"], b["mask"], b["hips"], b["root"],
                               b["expressions"], b["flags"], b["weight"], self._bcursor, o.bones, o.mask, o.hips,
                               o.root, o.expressions, o.flags, o.weight)
        if self.voice is not None:
            sample_rows_kernel(t, int(offset_ns), a[0], self.voice, self._vcursor, out.voice)
        out.t_ns = t
        return out

    def observations(self):
        """The samples as :class:`~tracking.observation.FaceObservation` objects (rotation,
        translation, blendshapes, confidence, found), e.g. to re-filter a raw camera-frame
        recording with :func:`tracking.pose_filter.filter_observations`."""
        from .observation import FaceObservation

        for i in range(len(self)):
            yield FaceObservation(timestamp_ns=int(self.t_ns[i]), found=bool(self.found[i]),
                                  rotation=self.rotations[i].copy(), translation=self.translations[i].copy(),
                                  blendshapes=self.blendshapes[i].copy(), confidence=float(self.confidence[i]),
                                  index=i)  # fmt: skip

    def save(self, path) -> None:
        """Write as JSON Lines (:func:`tracking.track_io.save_track`)."""
        from .track_io import save_track

        save_track(self, path)

    @classmethod
    def load(cls, path) -> "PoseTrack":
        """Read and validate a JSON Lines track (:func:`tracking.track_io.load_track`)."""
        from .track_io import load_track

        return load_track(path)


# --- synthetic tracks ------------------------------------------------------------------

def synthetic_track(rotation_fn: Callable[[float], np.ndarray], *, duration_s: float,
                    rate_hz: int = 120, translation_fn: Callable[[float], np.ndarray] | None = None,
                    source: str = "synthetic") -> PoseTrack:  # fmt: skip
    """An avatar-frame track sampling ``rotation_fn(t_s)`` (and ``translation_fn``) at
    ``t_k = k·10⁹ // rate_hz`` ns for k = 0 .. duration·rate (integer arithmetic)."""
    n = int(round(duration_s * rate_hz)) + 1
    t_ns = np.array([k * 1_000_000_000 // rate_hz for k in range(n)], dtype=np.int64)
    rot = np.array([rotation_fn(t * 1e-9) for t in t_ns.tolist()])
    tr = None if translation_fn is None else np.array([translation_fn(t * 1e-9) for t in t_ns.tolist()])
    header = TrackHeader(frame="avatar", source=source, settings={"rate_hz": rate_hz, "duration_s": duration_s})
    return PoseTrack(t_ns, rot, tr, header=header)
