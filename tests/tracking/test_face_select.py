"""Face selection: hysteresis in score and time, memory of a briefly missing person."""

import numpy as np

from tracking.face_select import FaceSelectOptions, FaceSelector, box_iou
from tracking.observation import FaceObservation

MS = 1_000_000


def face(cx, cy, size, conf=1.0):
    h = size / 2
    return FaceObservation(timestamp_ns=0, found=True, confidence=conf,
                           face_box=np.array([cx - h, cy - h, cx + h, cy + h]))  # fmt: skip


def test_box_iou():
    a = np.array([0, 0, 2, 2.0])
    assert box_iou(a, a) == 1.0
    assert box_iou(a, np.array([1, 0, 3, 2.0])) == 2 / 6
    assert box_iou(a, np.array([5, 5, 6, 6.0])) == 0.0


def test_prefers_larger_and_more_central_and_visible():
    s = FaceSelector()
    assert s.select([face(0.2, 0.5, 0.2), face(0.5, 0.5, 0.25)], 0) == 1
    s.reset()
    assert s.select([face(0.1, 0.5, 0.2), face(0.5, 0.5, 0.2)], 0) == 1  # same size: the central one
    s.reset()
    assert s.select([face(0.95, 0.5, 0.35, conf=0.5), face(0.3, 0.5, 0.2)], 0) == 1  # half out of the frame


def test_switches_only_after_a_sustained_clear_lead():
    opts = FaceSelectOptions(switch_ratio=1.5, switch_hold_s=1.0)
    s = FaceSelector(opts)
    a, b = face(0.3, 0.5, 0.2), face(0.7, 0.5, 0.2)
    assert s.select([a, b], 0) in (0, 1)
    first = s.select([a, b], 33 * MS)
    keep = [a, b][first]
    other_center = 0.7 if first == 0 else 0.3
    # the other person steps closer (score x2.25) for 0.9 s: no switch yet
    closer = face(other_center, 0.5, 0.3)
    order = [keep, closer] if first == 0 else [closer, keep]
    t = 66 * MS
    while t < 966 * MS:
        assert order[s.select(order, t)] is keep
        t += 33 * MS
    # ... and after a full second of clear lead, it switches once
    picks = []
    while t < 1200 * MS:
        picks.append(order[s.select(order, t)] is closer)
        t += 33 * MS
    assert picks[-1] and s.switches == 1
    assert picks == sorted(picks)  # False..False, True..True: one switch, no flicker


def test_alternating_lead_never_switches():
    s = FaceSelector(FaceSelectOptions(switch_hold_s=0.5))
    a = face(0.3, 0.5, 0.2)
    s.select([a], 0)
    for k in range(1, 200):
        other = face(0.7, 0.5, 0.3 if k % 10 < 5 else 0.1)  # leads for 5 frames at a time
        assert s.select([a, other], k * 40 * MS) == 0
    assert s.switches == 0


def test_missing_person_is_waited_for_then_replaced():
    s = FaceSelector(FaceSelectOptions(memory_s=1.0))
    a, b = face(0.3, 0.5, 0.25), face(0.7, 0.5, 0.2)
    assert s.select([a, b], 0) == 0
    assert s.select([b], 500 * MS) == -1  # a is briefly undetected: no jump to b
    assert s.select([a, b], 600 * MS) == 0  # a is back
    assert s.select([b], 1000 * MS) == -1
    assert s.select([b], 1700 * MS) == 0 and s.switches == 1  # a is gone for good
    assert s.select([], 1800 * MS) == -1
