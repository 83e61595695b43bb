"""A session's controls (runtime/run_controls.py ``RunControls``) on fake parts: what each action
changes and says. No GL context, no numba."""

from __future__ import annotations

from types import SimpleNamespace

from runtime.run_controls import SCREENSHOT_DIR, RunControls


class FakeStage:
    def __init__(self, solver="rest-shape", motion_error=None):
        self.rig = SimpleNamespace(solver=solver)
        self.compare = False
        self.calls = []
        self._motion_error = motion_error

    def switch_solver(self, solver):
        self.calls.append(("switch_solver", solver))
        self.rig = SimpleNamespace(solver=solver)

    def set_compare(self, on):
        self.calls.append(("set_compare", on))
        self.compare = on

    def next_motion(self):
        if self._motion_error is not None:
            raise self._motion_error
        return "Walk_Loop"


class FakeSwitcher:
    def __init__(self, styles=("bob", "short"), folders=("hair",), error=None):
        self.names, self.error = list(styles), error
        self.styles = SimpleNamespace(folders=list(folders))
        self.asked = []
        self.pending = None

    def cycle(self, step):
        self.asked.append(("cycle", step))
        return self._ask(self.names[0] if step > 0 else None)

    def pick(self, index):
        self.asked.append(("pick", index))
        if index > len(self.names):
            return None
        return self._ask(None if index == 0 else self.names[index - 1])

    def _ask(self, name):
        if self.error is not None:
            raise self.error
        if not self.styles.folders:
            return None
        self.pending = name
        return object()

    def state(self):
        return {"pending": self.pending}


class FakeDrawer:
    def __init__(self):
        self.overlays = self.hud = False
        self.shots = []

    def screenshot(self, path):
        self.shots.append(path)
        return path


def controls(**parts):
    said, log = [], []
    p = dict(stage=FakeStage(), tryon=FakeSwitcher(), drawer=FakeDrawer(),
             clock=SimpleNamespace(toggle_pause=lambda: log.append("pause")),
             recenter=lambda: log.append("recenter"), stop=lambda: log.append("stop"),
             hotkey=lambda key: key == "f1", say=said.append)
    p.update(parts)
    return RunControls(**p), p, said, log


def test_solver_compare_pause_recenter_quit():
    c, p, said, log = controls()
    c.next_solver()
    assert p["stage"].calls == [("switch_solver", "legacy")] and said == ["solver: legacy"]
    c.toggle_compare()
    c.toggle_compare()
    assert p["stage"].calls[1:] == [("set_compare", True), ("set_compare", False)]
    c.toggle_pause()
    c.recenter()
    c.quit()
    assert log == ["pause", "recenter", "stop"]


def test_overlays_hud_and_numbered_screenshots():
    c, p, said, _ = controls()
    c.toggle_overlays()
    c.toggle_hud()
    c.toggle_hud()
    assert p["drawer"].overlays is True and p["drawer"].hud is False
    c.screenshot()
    c.screenshot()
    a, b = p["drawer"].shots
    assert a.parent == b.parent == SCREENSHOT_DIR and a.name.endswith("-1.png") and b.name.endswith("-2.png")
    assert c.screenshots == 2 and said == [f"screenshot: {a}", f"screenshot: {b}"]


def test_next_clip_says_what_plays_or_why_not():
    from runtime.rig.errors import MotionError

    c, _, said, _ = controls()
    c.next_clip()
    c2, _, said2, _ = controls(stage=FakeStage(motion_error=MotionError("this run has no body motion")))
    c2.next_clip()                                  # said, not raised: the previous clip keeps playing
    assert said == ["motion: Walk_Loop"] and said2 == ["motion: this run has no body motion"]


def test_hairstyle_keys_say_what_is_asked():
    from runtime.tryon import StyleError

    c, p, said, _ = controls()
    c.cycle_style(1)
    c.pick_style(0)
    c.pick_style(7)
    assert p["tryon"].asked == [("cycle", 1), ("pick", 0), ("pick", 7)]
    assert said == ["hairstyle: fitting bob…", "hairstyle: back to the avatar's own hair…",
                    "hairstyle: no such style in the hair folder"]
    c, _, said, _ = controls(tryon=FakeSwitcher(folders=()))
    c.cycle_style(-1)
    c2, _, said2, _ = controls(tryon=FakeSwitcher(error=StyleError("no hair style named 'bob'")))
    c2.pick_style(1)
    assert said == ["hairstyle: no hair folder (--hair-dir)"] and said2 == ["hairstyle: no hair style named 'bob'"]


def test_expression_hotkeys():
    c, _, _, _ = controls()
    assert c.expression_hotkey("f1") is True and c.expression_hotkey("x") is False
    c, _, _, _ = controls(hotkey=None)
    assert c.expression_hotkey("f1") is False


def test_a_single_substep_while_paused():
    from runtime.clock import MonotonicClock, RATE_HZ

    c, p, said, _ = controls()
    clock = MonotonicClock()
    c.clock = clock
    c.step()
    assert said[-1] == "step: pause first (space)"
    clock.pause()
    t0 = clock.now_ns()
    c.step()
    c.step()
    assert clock.now_ns() - t0 == 2 * -(-1_000_000_000 // RATE_HZ) and clock.paused   # 2 x 8333334 ns
