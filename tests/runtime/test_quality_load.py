"""The quality governor in a real live run under real load (issue 32, the load harness at a
small size): CPU-burning helpers (:class:`runtime.eval.load.CpuLoad`) make the frames miss a
budget set from the run's own idle frames; the governor steps down, and back up once the
helpers are stopped. Real times on a shared machine: the budget is twice the idle median work
(so the idle frames are calm) and the phases wait for the governor within generous bounds."""

from __future__ import annotations

import statistics
import threading
import time

from runtime.config import RunConfig
from runtime.eval.load import CpuLoad
from runtime.governor import GovernorOptions, QualityGovernor
from runtime.session import Session

SIZE = (320, 180)
#: helpers while loaded (2 cores: the render thread gets a third of one at best)
LOAD = 6
#: the budget over the idle median work
BUDGET_FACTOR = 2.0
#: idle frames measured for the budget (after the warm-up)
CALIBRATION = 45
#: longest wait for each step, seconds
WAIT_S = 40.0


def test_governor_steps_down_under_load_and_back_up(tmp_path):
    cfg = RunConfig(source="turn-test", realtime=True, fps=30, size=SIZE, output=(f"video:{tmp_path}/l.mp4",),
                    detail="reduced", duration=3 * WAIT_S)
    load = CpuLoad(LOAD, max_s=3 * WAIT_S)
    work: list[float] = []
    phase = {"name": "warmup", "since": 0.0, "budget": None}
    with Session(cfg, say=lambda s: None) as session:
        q = session.quality
        real_frame = q.frame

        def measured(ms):
            work.append(ms)
            real_frame(ms)

        q.frame = measured

        def on_frame(info, rig):
            now = time.monotonic()
            gov = q.governor
            if phase["name"] == "warmup" and len(work) >= 30 + CALIBRATION:
                budget = BUDGET_FACTOR * statistics.median(work[30:])
                phase.update(budget=budget)
                q.governor = QualityGovernor(gov.rungs, 1000 / 30, GovernorOptions(budget_ms=budget, warmup=0))
                load.start()
                phase.update(name="loaded", since=now)
            elif phase["name"] == "loaded" and (gov.level > 0 or now - phase["since"] > WAIT_S):
                threading.Thread(target=load.stop, daemon=True).start()     # the render thread goes on
                phase.update(name="calm", since=now, loaded_level=gov.level)
            elif phase["name"] == "calm" and (gov.level == 0 or now - phase["since"] > WAIT_S):
                phase.update(name="done")
                session.stop()

        session.on_frame = on_frame
        try:
            session.run()
        finally:
            load.stop()
    steps = [(s.rung, s.down) for s in q.governor.steps]
    assert phase["name"] == "done", (phase, steps)
    assert phase["loaded_level"] == 1 and q.governor.level == 0, (phase, steps)
    assert steps == [("detail", True), ("detail", False)]
