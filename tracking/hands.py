"""Hands and arms from the webcam: MediaPipe's pose and hand landmarkers on the face's frames.

:class:`HandTracker` runs the Tasks ``PoseLandmarker`` (33 body landmarks; shoulders 11/12,
elbows 13/14, wrists 15/16: the subject's anatomical left/right) and ``HandLandmarker``
(21 landmarks per hand: wrist 0, thumb 1-4, index 5-8, middle 9-12, ring 13-16, little
17-20) in VIDEO mode on the frame the face tracker just saw (:class:`tracking.face_tracker.
FaceTracker` with ``hands=True``), and returns the *arm pose* (:data:`ARM_W` floats) in the
avatar frame: world landmarks (metres; MediaPipe's x right, y down, z away from the camera)
turned into glTF's (+Y up, the avatar facing +Z toward the camera). Mirrored like the head
(``mirror=True``, the selfie view): the user's right arm drives the avatar's left, and
``(x, y, z) -> (−x, −y, −z)``; unmirrored ``(x, −y, −z)``. A hand is given to the arm whose
pose wrist is nearest its own wrist in the image (MediaPipe's handedness label assumes a
mirrored image; the pose's sides do not).

Layout per avatar side (``left`` then ``right``, :data:`SIDE_W` each): ``arm_on`` (1.0 when
shoulder, elbow and wrist are in the image with visibility ≥ ``min_visibility``), shoulder,
elbow, wrist (3 each, the pose's hip-centred world landmarks), ``hand_on``, the hand's 21
world landmarks (63, hand-centred). Knows no avatar (:mod:`runtime.hands` solves it onto one).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

SIDES = ("left", "right")
#: the pose landmarks of the subject's (shoulder, elbow, wrist), by the subject's side
POSE_ARM = {"left": (11, 13, 15), "right": (12, 14, 16)}
S_ARM = 0
S_SHOULDER, S_ELBOW, S_WRIST = 1, 4, 7
S_HAND = 10
S_LANDMARKS = 11
SIDE_W = S_LANDMARKS + 63
ARM_W = 2 * SIDE_W               # tracking.pose_track.ARM_W, the width of PoseSample.arms
#: hand landmark chains per VRM finger (the wrist 0 first)
FINGER_LANDMARKS = {"Thumb": (1, 2, 3, 4), "Index": (5, 6, 7, 8), "Middle": (9, 10, 11, 12),
                    "Ring": (13, 14, 15, 16), "Little": (17, 18, 19, 20)}


@dataclass(frozen=True)
class HandTrackerOptions:
    """Attributes: hand_model, pose_model (paths; None: :func:`tracking.hand_model.ensure_hand_models`
    of ``variant``, "lite" or "full"), num_hands, min_visibility (a pose landmark counts below it as out of view), mirror
    (module doc), the landmarkers' detection/presence/tracking thresholds."""

    hand_model: str | os.PathLike | None = None
    pose_model: str | os.PathLike | None = None
    variant: str = "lite"
    num_hands: int = 2
    min_visibility: float = 0.5
    mirror: bool = True
    min_detection_confidence: float = 0.5
    min_presence_confidence: float = 0.5
    min_tracking_confidence: float = 0.5


def to_avatar(p: np.ndarray, mirror: bool) -> np.ndarray:
    """MediaPipe world coordinates (..., 3) -> the avatar frame (module doc)."""
    p = np.asarray(p, np.float64)
    s = np.array([-1.0 if mirror else 1.0, -1.0, -1.0])
    return p * s


def arm_pose(pose_world, pose_image, visibility, hands, *, mirror: bool = True,
             min_visibility: float = 0.5, out: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """The arm pose (ARM_W,) (module doc) of one frame's landmarks.

    Args:
        pose_world: (33, 3) pose world landmarks, or None (no body found).
        pose_image: (33, 3) normalised image landmarks (x, y in 0..1), or None.
        visibility: (33,) landmark visibility, or None.
        hands: list of ``(world (21, 3), image (21, 3))`` per hand found.
    """
    if out is None:
        out = np.zeros(ARM_W)
    out[:] = 0.0
    if pose_world is None:
        return out
    pw, pi, vis = np.asarray(pose_world), np.asarray(pose_image), np.asarray(visibility)
    for subject in SIDES:
        avatar_side = ("right" if subject == "left" else "left") if mirror else subject
        o = SIDES.index(avatar_side) * SIDE_W
        idx = POSE_ARM[subject]
        inside = all(0.0 <= pi[i, 0] <= 1.0 and 0.0 <= pi[i, 1] <= 1.0 for i in idx)
        out[o + S_ARM] = 1.0 if inside and min(vis[i] for i in idx) >= min_visibility else 0.0
        for k, i in zip((S_SHOULDER, S_ELBOW, S_WRIST), idx):
            out[o + k:o + k + 3] = to_avatar(pw[i], mirror)
    wrists = {s: pi[POSE_ARM[s][2], :2] for s in SIDES}

    def dist(hand, subject):
        return float(np.sum((wrists[subject] - np.asarray(hand[1])[0, :2]) ** 2))

    if len(hands) >= 2:        # two hands: the assignment with the smaller total distance
        a, b = hands[0], hands[1]
        pairs = [(a, "left"), (b, "right")] if dist(a, "left") + dist(b, "right") <= \
            dist(a, "right") + dist(b, "left") else [(a, "right"), (b, "left")]
    else:
        pairs = [(h, min(SIDES, key=lambda s: dist(h, s))) for h in hands]
    for (world, _image), subject in pairs:
        avatar_side = ("right" if subject == "left" else "left") if mirror else subject
        o = SIDES.index(avatar_side) * SIDE_W
        out[o + S_HAND] = 1.0
        out[o + S_LANDMARKS:o + SIDE_W] = to_avatar(np.asarray(world), mirror).ravel()
    return out


class HandTracker:
    """The pose and hand landmarkers (module doc); ``process(image, t_ns) -> (ARM_W,)``.

    Raises:
        tracking.hand_model.HandModelError: a model could not be obtained.
    """

    def __init__(self, options: HandTrackerOptions = HandTrackerOptions()) -> None:
        from .hand_model import ensure_hand_models
        from .mediapipe_import import import_mediapipe

        self.options = o = options
        self.hand_model, self.pose_model = ensure_hand_models(o.hand_model, o.pose_model, variant=o.variant)
        mp = import_mediapipe()
        from mediapipe.tasks.python import BaseOptions, vision

        self._mp = mp
        video = vision.RunningMode.VIDEO
        self._hands = vision.HandLandmarker.create_from_options(vision.HandLandmarkerOptions(
            base_options=BaseOptions(model_asset_path=str(self.hand_model)), running_mode=video, num_hands=o.num_hands,
            min_hand_detection_confidence=o.min_detection_confidence,
            min_hand_presence_confidence=o.min_presence_confidence, min_tracking_confidence=o.min_tracking_confidence))
        self._pose = vision.PoseLandmarker.create_from_options(vision.PoseLandmarkerOptions(
            base_options=BaseOptions(model_asset_path=str(self.pose_model)), running_mode=video,
            min_pose_detection_confidence=o.min_detection_confidence,
            min_pose_presence_confidence=o.min_presence_confidence, min_tracking_confidence=o.min_tracking_confidence))
        self._last_ms = -1

    def process(self, image: np.ndarray, t_ns: int, mp_image=None) -> np.ndarray:
        """The arm pose of RGB ``image`` (H, W, 3) uint8 captured at ``t_ns`` (strictly later
        than the previous frame's millisecond, else bumped by 1 ms as the face tracker does)."""
        ms = max(int(t_ns // 1_000_000), self._last_ms + 1)
        self._last_ms = ms
        if mp_image is None:
            mp_image = self._mp.Image(image_format=self._mp.ImageFormat.SRGB, data=np.ascontiguousarray(image))
        rp = self._pose.detect_for_video(mp_image, ms)
        rh = self._hands.detect_for_video(mp_image, ms)
        if not rp.pose_world_landmarks:
            return arm_pose(None, None, None, [])
        pw = np.array([(p.x, p.y, p.z) for p in rp.pose_world_landmarks[0]])
        pi = np.array([(p.x, p.y, p.z) for p in rp.pose_landmarks[0]])
        vis = np.array([p.visibility if p.visibility is not None else 1.0 for p in rp.pose_landmarks[0]])
        hands = [(np.array([(p.x, p.y, p.z) for p in w]), np.array([(p.x, p.y, p.z) for p in im]))
                 for w, im in zip(rh.hand_world_landmarks, rh.hand_landmarks)]
        o = self.options
        return arm_pose(pw, pi, vis, hands, mirror=o.mirror, min_visibility=o.min_visibility)

    def close(self) -> None:
        for lm in (self._hands, self._pose):
            if lm is not None:
                lm.close()
        self._hands = self._pose = None
