"""The quality governor on a synthetic frame-time source (deterministic): steps down under
load in the ladder's order, one step per burst (hold), back up when the load goes
(hysteresis), never while pinned."""

from __future__ import annotations

import logging

import pytest

from runtime.governor import MAX_BACKOFF, GovernorOptions, QualityGovernor, Rung

BUDGET_MS = 33.3
#: no warm-up frames: the frame numbers below count from the first
COLD = GovernorOptions(warmup=0)


class Ladder:
    """Rungs whose state the synthetic cost model reads: each rung taken multiplies the
    frame's work by ``factor`` (what it saves)."""

    def __init__(self, names=("tracker", "detail", "outlines"), factor: float = 0.8):
        self.factor = factor
        self.on: dict[str, bool] = {n: False for n in names}
        self.calls: list[tuple[str, bool]] = []
        self.rungs = [Rung(n, f"{n} reduced", self._setter(n)) for n in names]

    def _setter(self, name):
        def apply(on: bool):
            self.on[name] = on
            self.calls.append((name, on))
        return apply

    def work(self, base_ms: float) -> float:
        return base_ms * self.factor ** sum(self.on.values())


def drive(gov: QualityGovernor, ladder: Ladder, base_ms, frames: int) -> list:
    steps = []
    for _ in range(frames):
        s = gov.frame(ladder.work(base_ms))
        if s is not None:
            steps.append(s)
    return steps


def test_steps_down_under_load_and_back_up_when_it_goes(caplog):
    ladder = Ladder()
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, COLD)
    with caplog.at_level(logging.INFO, logger="runtime.governor"):
        assert drive(gov, ladder, 25.0, 300) == []            # idle: never a step
        down = drive(gov, ladder, 45.0, 400)                  # load: 45 -> 36 -> 28.8 ms
        # every frame misses at 45 ms: the 10th miss steps down (frame 300 + 10)
        assert [(s.rung, s.down, s.frame) for s in down] == [("tracker", True, 310), ("detail", True, 340)]
        assert gov.level == 2 and ladder.on == {"tracker": True, "detail": True, "outlines": False}
        up = drive(gov, ladder, 20.0, 400)                    # load gone: 20 -> 16 ms, calm
        assert [(s.rung, s.down) for s in up] == [("detail", False), ("tracker", False)]
        assert gov.level == 0 and not any(ladder.on.values())
    # the first step up: 60 frames met, all but 60 / CALM_SLACK = 3 calm (frame 700 was the last
    # loaded one; 698..700 met the budget at level 2 but would not have without the rung)
    assert up[0].frame == 700 + 60 - 3
    assert up[1].frame - up[0].frame == 20 + 60
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 4                                   # every step logged once
    assert logged[0] == ("quality down (frame 310: 10 of 30 frames missed the 33.3 ms budget or were dropped, "
                         "median work 45.0 ms): tracker reduced")
    assert gov.status()["step_count"] == 4 and gov.status()["active"] == []


def test_hold_gives_one_step_per_burst():
    ladder = Ladder()
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, COLD)
    steps = drive(gov, ladder, 60.0, 60)     # far over budget every frame
    # 10 misses -> step at frame 10; hold 20 frames (11..30); 10 misses again -> frame 40
    assert [s.frame for s in steps] == [10, 40]


def test_scattered_misses_below_the_threshold_never_step():
    ladder = Ladder()
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, COLD)
    for k in range(600):                      # 9 of every 30 frames late
        assert gov.frame(40.0 if k % 30 < 9 else 20.0) is None
    assert gov.level == 0


def test_drops_count_as_misses():
    gov = QualityGovernor(Ladder().rungs, BUDGET_MS, COLD)
    got = [gov.frame(10.0, dropped=1) for _ in range(10)]
    assert got[-1] is not None and got[-1].rung == "tracker" and all(s is None for s in got[:-1])


def test_no_step_up_while_the_rung_is_still_needed():
    """28.8 ms at level 2 meets the 33.3 ms budget but not its 85 % headroom: no step up."""
    ladder = Ladder()
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, COLD)
    drive(gov, ladder, 45.0, 100)
    assert gov.level == 2 and drive(gov, ladder, 45.0, 600) == []


def test_a_failed_probe_doubles_the_calm_stretch():
    """40 ms at full quality (misses), 20 ms with the rung (calm): each step up is a probe that
    fails 30 frames later; the calm stretch before the next grows 60 -> 120 -> 240 frames."""
    ladder = Ladder(("tracker",), factor=0.5)
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, COLD)
    steps = drive(gov, ladder, 40.0, 900)
    assert [(s.frame, s.down) for s in steps] == [(10, True), (90, False), (120, True), (260, False),
                                                  (290, True), (550, False), (580, True)]
    assert gov.backoff == {"tracker": 8} and gov.status()["backoff"] == {"tracker": 8}
    assert MAX_BACKOFF == 8
    later = drive(gov, ladder, 40.0, 2000)
    assert [s.frame - 580 for s in later][:2] == [20 + 480, 20 + 480 + 30]      # capped at 8 stretches


def test_a_rung_that_stayed_undone_starts_again_from_one_stretch():
    ladder = Ladder(("tracker",), factor=0.5)
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, COLD)
    drive(gov, ladder, 40.0, 130)                 # down, up (probe), down again: backoff 2
    assert gov.backoff == {"tracker": 2} and gov.level == 1
    drive(gov, ladder, 20.0, 300)                 # the load went: up after 120 calm frames
    assert gov.level == 0
    steps = drive(gov, ladder, 40.0, 15)           # a new burst much later: not a failed probe
    assert [s.down for s in steps] == [True] and gov.backoff == {"tracker": 1}


def test_top_of_the_ladder_stays():
    ladder = Ladder(("tracker",))
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, COLD)
    steps = drive(gov, ladder, 80.0, 300)
    assert [s.rung for s in steps] == ["tracker"] and gov.level == 1


def test_pin_fixes_the_level():
    ladder = Ladder()
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, GovernorOptions(pin="detail"))
    assert ladder.on == {"tracker": True, "detail": True, "outlines": False}
    assert drive(gov, ladder, 80.0, 200) == [] and drive(gov, ladder, 5.0, 200) == []
    assert gov.level == 2 and gov.text() == "tracker, detail (pinned)"
    full = QualityGovernor(Ladder().rungs, BUDGET_MS, GovernorOptions(pin="full"))
    assert drive(full, Ladder(), 80.0, 200) == [] and full.text() == "full"


def test_bad_settings_name_the_choices():
    with pytest.raises(ValueError, match="quality 'low': one of auto, full, tracker, detail, scale, outlines, rate"):
        GovernorOptions(pin="low")
    with pytest.raises(ValueError, match=r"this run has no such step \(its steps: tracker, detail\)"):
        QualityGovernor(Ladder(("tracker", "detail")).rungs, BUDGET_MS, GovernorOptions(pin="rate"))
    with pytest.raises(ValueError, match="misses 40: outside 1..window"):
        GovernorOptions(misses=40)


def test_retire_undoes_a_rung_and_those_above_it():
    ladder = Ladder(("tracker", "detail", "outlines"))
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, GovernorOptions())
    drive(gov, ladder, 100.0, 200)
    assert gov.level == 3
    gov.retire("detail")
    assert gov.level == 1 and ladder.on == {"tracker": True, "detail": False, "outlines": False}
    assert [r.name for r in gov.rungs] == ["tracker", "outlines"]
    gov.retire("rate")                            # not on the ladder: nothing
    assert gov.level == 1


def test_warmup_frames_count_for_nothing():
    ladder = Ladder()
    gov = QualityGovernor(ladder.rungs, BUDGET_MS)          # 30 warm-up frames
    assert drive(gov, ladder, 120.0, 30) == []              # compiling, first uploads
    steps = drive(gov, ladder, 45.0, 10)
    assert [(s.rung, s.frame) for s in steps] == [("tracker", 40)]


def test_one_hiccup_in_twenty_does_not_hold_the_quality_down():
    """16 ms frames with a 30 ms one now and then (not calm: over 85 % of 33.3 ms, though it
    meets the budget)."""
    ladder = Ladder(("tracker",))
    gov = QualityGovernor(ladder.rungs, BUDGET_MS, COLD)
    drive(gov, ladder, 40.0, 45)                              # down at 10; the hold; 32 ms frames
    assert gov.level == 1
    steps = []
    for k in range(60):                                       # 3 of 60 frames not calm
        steps += [s for s in [gov.frame(30.0 if k % 20 == 5 else 16.0)] if s is not None]
    assert [(s.rung, s.down, s.frame) for s in steps] == [("tracker", False, 105)]
    ladder2 = Ladder(("tracker",))
    gov2 = QualityGovernor(ladder2.rungs, BUDGET_MS, COLD)
    drive(gov2, ladder2, 40.0, 45)
    for k in range(120):                                      # 4 of 60: held down
        assert gov2.frame(30.0 if k % 15 == 5 else 16.0) is None
    assert gov2.level == 1


def test_budget_can_be_set():
    gov = QualityGovernor(Ladder().rungs, BUDGET_MS, GovernorOptions(budget_ms=10.0, warmup=0))
    assert gov.budget_ms == 10.0
    assert [gov.frame(12.0) for _ in range(10)][-1].rung == "tracker"
