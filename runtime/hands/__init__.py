"""Hands and arms from the webcam on the avatar (``--hands``).

:mod:`tracking.hands` gives each sample an avatar-frame arm pose (shoulder, elbow, wrist and
21 hand landmarks per side); :mod:`.solve` turns it into the avatar's arm and finger bone
rotations (two-bone IK with the elbow as the bend hint, the hand's frame from the palm,
finger segments along their landmarks); :mod:`.drive` eases them in and out with bounded
angular speed and hands the rig a :class:`tracking.body.BodyPose` whose per-bone weights
blend them over the avatar's own pose (its clip or idle).
"""
