"""Pose tracks as JSON Lines: write (streaming), load and validate.

Line 1, the header::

    {"schema": "swaycam.posetrack", "version": 1, "frame": "avatar",
     "source": "face/clip.mp4", "settings": {...}}

Then one observation per line::

    {"t_ns": 40000000, "rotation": [x, y, z, w], "translation": [x, y, z],
     "blendshapes": {"browDownLeft": 0.04, ...}, "confidence": 1.0, "found": true}

Optional keys: ``"gaze": [yaw, pitch]`` (radians, :mod:`tracking.gaze`; default 0, 0),
``"voice": [aa, ih, ou, ee, oh, level, confidence, 1]`` (lip sync from audio,
:mod:`tracking.audio`; absent: no audio) and ``"body"`` (a network performer's whole-body pose, :mod:`tracking.body`)::

    "body": {"bones": {"head": [x, y, z, w], ...}, "hips": [x, y, z],
             "root": [px, py, pz, qx, qy, qz, qw], "expressions": {"happy": 0.5, ...},
             "arkit": false, "weight": 0.5}

``"view": [yaw, pitch, zoom, pan_right, pan_up]`` is the viewer's orbit when the frame was drawn
(radians, a factor, metres: render/orbit.py; recorded by the panel, replayed by ``swaycam run
--source``; absent: the framing itself).

(bones: normalized local rotations by VRM 1.0 humanoid name; ``root``: the sender's
placement of the whole avatar; ``weight``: how much of what it names the body drives, 0..1,
default 1; every key is optional; a line without ``body`` has none). ``t_ns`` is the capture time in integer ns, strictly increasing; rotation is a unit
quaternion (x, y, z, w); translation metres; blendshapes by MediaPipe/ARKit name (missing
names are 0); ``found`` defaults to ``confidence > 0``. Blendshapes keep MediaPipe's
sides (the user's left/right) in both frames: mirroring them onto the avatar is
:class:`~tracking.expressions.ExpressionMapper`'s job (its ``mirror`` option). Floats are written with Python's
shortest round-trip repr, so save -> load is exact.

Every validation error is a :class:`~tracking.errors.TrackFormatError` naming the file and
the 1-based line number.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path
from typing import Iterable

import numpy as np

from .errors import TrackFormatError, TrackingError
from .body import (BODY_BONES, BONE_INDEX, EXPRESSION_INDEX, EXPRESSION_NAMES, F_ARKIT, F_EXPR, F_HIPS, F_ON, F_ROOT,
                   NUM_BONES, NUM_EXPRESSIONS, NUM_FLAGS)
from .expressions import BLENDSHAPE_INDEX, BLENDSHAPE_NAMES, NUM_BLENDSHAPES
from .observation import FaceObservation
from .pose_track import FRAMES, SCHEMA, SCHEMA_VERSION, VOICE_W, PoseSample, PoseTrack, TrackHeader

UNIT_NORM_TOLERANCE = 1e-3
#: A line's "view": [yaw, pitch, zoom, pan_right, pan_up] (render/orbit.py ``Orbit``), its
#: identity (the framing itself) and the zoom's bounds (render.orbit ZOOM_MIN, ZOOM_MAX).
VIEW_W = 5
VIEW_IDENTITY = (0.0, 0.0, 1.0, 0.0, 0.0)
VIEW_ZOOM = (0.1, 20.0)


class PoseTrackWriter:
    """Streams observations to a JSONL file; a context manager.

    Args:
        path: output file (parent folders are created).
        header: :class:`TrackHeader` written as line 1.

    Raises:
        TrackingError: the file cannot be created (the message names it and why).
    """

    def __init__(self, path: str | os.PathLike, header: TrackHeader = TrackHeader()) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._f = open(self.path, "w", encoding="utf-8")
        except OSError as exc:
            raise TrackingError(f"pose track {self.path}: cannot write ({exc.strerror or exc})") from None
        self._last_t: int | None = None
        self.count = 0
        self._f.write(json.dumps({"schema": header.schema, "version": header.version, "frame": header.frame,
                                  "source": header.source, "settings": header.settings}) + "\n")  # fmt: skip

    def write(self, t_ns: int, rotation, translation, blendshapes, confidence: float, found: bool = True,
              gaze=None, body=None, voice=None, view=None) -> None:
        """Append one observation; ``t_ns`` must increase strictly. ``gaze`` (2,), ``body``
        (a :class:`tracking.body.BodyPose` that is on) and ``voice`` (8,) (when its ``on``,
        index 7, is set) are written when given; ``view`` (5,) the viewer's orbit (module doc)."""
        t = int(t_ns)
        if self._last_t is not None and t <= self._last_t:
            raise TrackFormatError(f"{self.path}: t_ns {t} is not after the previous {self._last_t}")
        self._last_t = t
        rec = {
            "t_ns": t,
            "rotation": [float(v) for v in rotation],
            "translation": [float(v) for v in translation],
            "blendshapes": dict(zip(BLENDSHAPE_NAMES, (float(v) for v in blendshapes))),
            "confidence": float(confidence),
            "found": bool(found),
        }
        if gaze is not None and (gaze[0] or gaze[1]):
            rec["gaze"] = [float(gaze[0]), float(gaze[1])]
        if body is not None and body.flags[F_ON]:
            rec["body"] = body_json(body)
        if voice is not None and voice[VOICE_W - 1]:
            rec["voice"] = [float(v) for v in voice]
        if view is not None:
            rec["view"] = [float(v) for v in view]
        self._f.write(json.dumps(rec) + "\n")
        self.count += 1

    def write_sample(self, s: PoseSample, view=None) -> None:
        self.write(s.t_ns, s.rotation, s.translation, s.blendshapes, s.confidence, s.found, s.gaze, s.body, s.voice,
                   view)

    def flush(self) -> None:
        self._f.flush()

    def write_observation(self, o: FaceObservation) -> None:
        """Record a raw observation (camera frame); a no-face one as identity, confidence 0."""
        self.write(o.timestamp_ns, o.rotation, o.translation, o.blendshapes, o.confidence, o.found)

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()

    def __enter__(self) -> "PoseTrackWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def body_json(body) -> dict:
    """A :class:`tracking.body.BodyPose` as the ``"body"`` object of a track line."""
    out: dict = {"bones": {BODY_BONES[i]: [float(v) for v in body.bones[i]] for i in range(NUM_BONES)
                           if body.mask[i]}}
    if body.flags[F_HIPS]:
        out["hips"] = [float(v) for v in body.hips]
    if body.flags[F_ROOT]:
        out["root"] = [float(v) for v in body.root]
    if body.weight[0] != 1.0:
        out["weight"] = float(body.weight[0])
    if body.flags[F_EXPR]:
        out["expressions"] = {EXPRESSION_NAMES[i]: float(body.expressions[i]) for i in range(NUM_EXPRESSIONS)}
    if body.flags[F_ARKIT]:
        out["arkit"] = True
    return out


def _parse_body(where: str, b, rows: dict, k: int) -> None:
    if not isinstance(b, dict):
        raise TrackFormatError(f"{where}: body must be an object")
    rows["flags"][k, F_ON] = 1.0
    bones = b.get("bones", {})
    if not isinstance(bones, dict):
        raise TrackFormatError(f"{where}: body.bones must be an object of name: [x, y, z, w]")
    for name, q in bones.items():
        i = BONE_INDEX.get(name)
        if i is None:
            raise TrackFormatError(f"{where}: unknown humanoid bone {name!r}")
        rows["bones"][k, i] = _numbers(where, f"body.bones.{name}", q, 4)
        rows["mask"][k, i] = 1.0
    if "hips" in b:
        rows["hips"][k] = _numbers(where, "body.hips", b["hips"], 3)
        rows["flags"][k, F_HIPS] = 1.0
    if "root" in b:
        root = _numbers(where, "body.root", b["root"], 7)
        if abs(math.sqrt(sum(v * v for v in root[3:])) - 1.0) > UNIT_NORM_TOLERANCE:
            raise TrackFormatError(f"{where}: body.root's rotation must be a unit quaternion")
        rows["root"][k] = root
        rows["flags"][k, F_ROOT] = 1.0
    if "weight" in b:
        w = _numbers(where, "body.weight", [b["weight"]], 1)[0]
        if not 0.0 <= w <= 1.0:
            raise TrackFormatError(f"{where}: body.weight must be in [0, 1], got {w!r}")
        rows["weight"][k] = w
    ex = b.get("expressions")
    if ex is not None:
        if not isinstance(ex, dict):
            raise TrackFormatError(f"{where}: body.expressions must be an object of name: weight")
        for name, v in ex.items():
            i = EXPRESSION_INDEX.get(name)
            if i is None:
                raise TrackFormatError(f"{where}: unknown expression {name!r}")
            rows["expressions"][k, i] = _numbers(where, f"body.expressions.{name}", [v], 1)[0]
        rows["flags"][k, F_EXPR] = 1.0
    if b.get("arkit"):
        rows["flags"][k, F_ARKIT] = 1.0


def save_track(track: PoseTrack, path: str | os.PathLike) -> None:
    """Write ``track`` to ``path`` as JSON Lines."""
    with PoseTrackWriter(path, track.header) as w:
        for i in range(len(track)):
            body = None
            if track.body is not None and track.body["flags"][i, F_ON]:
                from .body import BodyPose

                body = BodyPose()
                body.bones[:], body.mask[:] = track.body["bones"][i], track.body["mask"][i]
                body.hips[:], body.expressions[:] = track.body["hips"][i], track.body["expressions"][i]
                body.root[:], body.weight[0] = track.body["root"][i], track.body["weight"][i]
                body.flags[:] = track.body["flags"][i]
            w.write(track.t_ns[i], track.rotations[i], track.translations[i], track.blendshapes[i],
                    track.confidence[i], track.found[i], track.gaze[i], body,
                    None if track.voice is None else track.voice[i],
                    None if track.view is None else track.view[i])  # fmt: skip


def record(observations: Iterable[FaceObservation | PoseSample], path: str | os.PathLike,
           header: TrackHeader = TrackHeader()) -> int:  # fmt: skip
    """Write observations (raw :class:`FaceObservation` or processed :class:`PoseSample`)
    to ``path``; returns the number written."""
    with PoseTrackWriter(path, header) as w:
        for o in observations:
            if isinstance(o, FaceObservation):
                w.write_observation(o)
            else:
                w.write_sample(o)
        return w.count


class _NonFinite(TrackFormatError):
    """A line whose only fault is a NaN/inf number: that observation is rejected and counted."""


def _numbers(where: str, key: str, value, n: int) -> list[float]:
    if not isinstance(value, list) or len(value) != n:
        got = f"{len(value)} values" if isinstance(value, list) else type(value).__name__
        raise TrackFormatError(f"{where}: {key} must be a list of {n} numbers, got {got}")
    for v in value:
        if isinstance(v, float) and not math.isfinite(v):
            raise _NonFinite(f"{where}: {key} has {v!r}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or abs(v) > 1e300:
            raise TrackFormatError(f"{where}: {key} must hold finite numbers, got {v!r}")
    return [float(v) for v in value]


def _parse_header(where: str, line: str) -> TrackHeader:
    try:
        h = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TrackFormatError(f"{where}: header is not valid JSON ({exc.msg})") from None
    if not isinstance(h, dict) or h.get("schema") != SCHEMA:
        raise TrackFormatError(f"{where}: not a pose track header (expected schema {SCHEMA!r})")
    if h.get("version") != SCHEMA_VERSION:
        raise TrackFormatError(f"{where}: unsupported version {h.get('version')!r} (this reader: {SCHEMA_VERSION})")
    if h.get("frame", "avatar") not in FRAMES:
        raise TrackFormatError(f"{where}: frame must be one of {FRAMES}, got {h.get('frame')!r}")
    settings = h.get("settings", {})
    if not isinstance(settings, dict):
        raise TrackFormatError(f"{where}: settings must be an object")
    return TrackHeader(frame=h.get("frame", "avatar"), source=str(h.get("source", "")), settings=settings)


def _parse_line(where: str, line: str, blend_row: np.ndarray):
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TrackFormatError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(rec, dict):
        raise TrackFormatError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    t = rec.get("t_ns")
    if isinstance(t, bool) or not isinstance(t, int):
        raise TrackFormatError(f"{where}: t_ns must be an integer (nanoseconds), got {t!r}")
    rot = _numbers(where, "rotation", rec.get("rotation"), 4)
    norm = math.sqrt(sum(v * v for v in rot))
    if abs(norm - 1.0) > UNIT_NORM_TOLERANCE:
        raise TrackFormatError(f"{where}: rotation is not a unit quaternion (norm {norm:.6g})")
    tr = _numbers(where, "translation", rec.get("translation", [0.0, 0.0, 0.0]), 3)
    bs = rec.get("blendshapes", {})
    if not isinstance(bs, dict):
        raise TrackFormatError(f"{where}: blendshapes must be an object of name: weight")
    for name, v in bs.items():
        i = BLENDSHAPE_INDEX.get(name)
        if i is None:
            raise TrackFormatError(f"{where}: unknown blendshape {name!r}")
        if isinstance(v, float) and not math.isfinite(v):
            raise _NonFinite(f"{where}: blendshape {name} has {v!r}")
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TrackFormatError(f"{where}: blendshape {name} must be a finite number, got {v!r}")
        blend_row[i] = v
    conf = rec.get("confidence", 1.0)
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0.0 <= conf <= 1.0:
        raise TrackFormatError(f"{where}: confidence must be a number in [0, 1], got {conf!r}")
    found = rec.get("found", conf > 0)
    if not isinstance(found, bool):
        raise TrackFormatError(f"{where}: found must be true or false, got {found!r}")
    gaze = _numbers(where, "gaze", rec.get("gaze", [0.0, 0.0]), 2)
    voice = _numbers(where, "voice", rec["voice"], VOICE_W) if "voice" in rec else None
    view = _numbers(where, "view", rec["view"], VIEW_W) if "view" in rec else None
    if view is not None and not VIEW_ZOOM[0] <= view[2] <= VIEW_ZOOM[1]:
        raise TrackFormatError(f"{where}: view zoom must be in {VIEW_ZOOM[0]}..{VIEW_ZOOM[1]}, got {view[2]!r}")
    return t, rot, tr, float(conf), found, gaze, rec.get("body"), voice, view


def _body_rows(n: int) -> dict:
    """Zeroed whole-body arrays for ``n`` observations (identity bone rotations)."""
    rows = {"bones": np.zeros((n, NUM_BONES, 4)), "mask": np.zeros((n, NUM_BONES)), "hips": np.zeros((n, 3)),
            "expressions": np.zeros((n, NUM_EXPRESSIONS)), "flags": np.zeros((n, NUM_FLAGS)),
            "root": np.zeros((n, 7)), "weight": np.ones(n)}
    rows["bones"][:, :, 3] = 1.0
    rows["root"][:, 6] = 1.0
    return rows


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def load_track(path: str | os.PathLike) -> PoseTrack:
    """Read and validate a JSONL pose track.

    A recording cut off mid-write (the process was killed) ends in a partial line with no
    newline; that one line is dropped with a :class:`UserWarning` naming it, the rest loads.
    An observation holding NaN or inf (JSON's non-standard ``NaN``/``Infinity``) is rejected
    and counted in the track's ``rejected``, with one warning naming the first such line:
    it never reaches a sample.

    Raises:
        TrackFormatError: the file is missing, empty, has no observations, or a line is
            malformed (the message says ``<path> line <n>: <what>``); blank lines are skipped.
    """
    p = Path(path)
    if not p.exists():
        raise TrackFormatError(f"pose track {p} does not exist")
    if not p.is_file():
        raise TrackFormatError(f"pose track {p} is not a regular file")
    header = None
    rejected, first_rejected = 0, ""
    t_ns, rots, trs, confs, founds, blends, gazes, bodies, voices, views = [], [], [], [], [], [], [], [], [], []
    with open(p, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{p} line {lineno}"
            if "\ufffd" in line:
                raise TrackFormatError(f"{where}: not UTF-8 text (is this a pose track .jsonl?)")
            if header is None:
                header = _parse_header(where, line)
                continue
            if not line.endswith("\n") and not _is_json(line):
                warnings.warn(f"{where}: incomplete last line (recording cut off?) dropped", stacklevel=2)
                break
            row = np.zeros(NUM_BLENDSHAPES)
            try:
                t, rot, tr, conf, found, gaze, body, voice, view = _parse_line(where, line, row)
                if body is not None:      # a NaN/inf inside the body rejects the observation too
                    _parse_body(where, body, _body_rows(1), 0)
            except _NonFinite as exc:
                rejected += 1
                first_rejected = first_rejected or str(exc)
                continue
            if t_ns and t <= t_ns[-1]:
                raise TrackFormatError(f"{where}: t_ns {t} is not after the previous {t_ns[-1]}")
            t_ns.append(t), rots.append(rot), trs.append(tr), confs.append(conf), founds.append(found), blends.append(row)
            gazes.append(gaze), bodies.append((where, body)), voices.append(voice), views.append(view)
    if header is None:
        raise TrackFormatError(f"pose track {p} is empty (expected a header line)")
    if not t_ns:
        raise TrackFormatError(f"pose track {p} has a header but no observations")
    body = None
    if any(b is not None for _, b in bodies):
        body = _body_rows(len(t_ns))
        for k, (where, b) in enumerate(bodies):
            if b is not None:
                _parse_body(where, b, body, k)
    if rejected:
        warnings.warn(f"pose track {p}: {rejected} observation(s) with NaN/inf rejected (first: {first_rejected})",
                      stacklevel=2)
    voice = None
    if any(v is not None for v in voices):      # records without one: no audio then (on 0)
        voice = np.array([v if v is not None else [0.0] * VOICE_W for v in voices])
    view = None
    if any(v is not None for v in views):       # records without one: the framing itself
        view = np.array([v if v is not None else VIEW_IDENTITY for v in views])
    track = PoseTrack(t_ns, rots, trs, np.array(blends), confs, founds, np.array(gazes), body, voice, header=header,
                      view=view)
    track.rejected = rejected
    return track
