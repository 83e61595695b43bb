"""The window keys as a table (runtime/keys.py) against fake controls: which control each key
calls, kiosk mode, expression hotkeys, the help line and the keys hotkeys may not use. No
GL context, no numba."""

from __future__ import annotations

import pytest

from runtime.keys import BINDINGS, KEY_HELP, KEYS, Keys


class FakeControls:
    """Records every call as (name, args); ``hotkeys``: the keys that are an expression's."""

    def __init__(self, hotkeys=()):
        self.calls = []
        self.hotkeys = set(hotkeys)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def record(*args):
            self.calls.append((name, args))
            if name == "expression_hotkey":
                return args[0] in self.hotkeys
        return record


@pytest.mark.parametrize("key, call", [
    ("r", ("recenter", ())), ("o", ("toggle_overlays", ())), ("h", ("toggle_hud", ())),
    ("s", ("next_solver", ())), ("c", ("toggle_compare", ())), ("m", ("next_clip", ())),
    ("[", ("cycle_style", (-1,))), ("]", ("cycle_style", (1,))), ("0", ("pick_style", (0,))),
    ("1", ("pick_style", (1,))), ("9", ("pick_style", (9,))), ("space", ("toggle_pause", ())),
    ("p", ("screenshot", ())), ("q", ("quit", ())), ("escape", ("quit", ())),
    ("k", ("restart_clip", ())), ("v", ("move_then_settle", ())), ("f", ("next_framing", ())), ("x", ("reset_view", ())),
    ("g", ("next_inspect", ())), ("t", ("toggle_roots", ())), (".", ("next_chain", ())), ("right", ("step", ())),
])
def test_each_key_calls_its_control(key, call):
    c = FakeControls()
    Keys(c).press(key)
    assert c.calls == [call]


def test_kiosk_mode_keeps_overlays_and_hud_off_and_the_rest_on():
    c = FakeControls()
    keys = Keys(c, kiosk=True)
    for k in ("o", "h"):
        keys.press(k)
    assert c.calls == []                        # nothing, not even a hotkey
    for k in ("r", "s", "q"):
        keys.press(k)
    assert [n for n, _ in c.calls] == ["recenter", "next_solver", "quit"]


def test_other_keys_go_to_the_expression_hotkeys():
    c = FakeControls(hotkeys={"f1"})
    keys = Keys(c)
    keys.press("f1")
    keys.press("y")
    assert c.calls == [("expression_hotkey", ("f1",)), ("expression_hotkey", ("y",))]


def test_help_line_and_reserved_keys_come_from_the_table():
    from runtime.panel.settings import RESERVED_KEYS

    assert KEY_HELP == ("r recenter · o overlays · h HUD · s switch solver · c compare solvers side by side · "
                        "m next clip · k restart clip · v move then settle · [ ] hairstyle · 1-9 hairstyle N · 0 own hair · f framing · "
                        "x reset view · g inspection view · t suggested roots · . next chain's weights · space pause · → one substep (paused) · "
                        "p screenshot · "
                        "q/esc quit")
    assert RESERVED_KEYS == frozenset(KEYS) == frozenset(
        "r o h s c m k v f x g t . p q [ ] 0 1 2 3 4 5 6 7 8 9 space right escape".split())
    assert len(KEYS) == sum(len(b.keys) for b in BINDINGS)      # no key bound twice
