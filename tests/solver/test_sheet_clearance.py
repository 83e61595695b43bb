"""The sheet pass's clearance (solver/kernels/sheets.py): a re-projected link that moved less
than its clearance skips the contact test, and that is exact — a linked chain set with its
clearances gives the same bits, substep by substep on the real states of the head turn, as the
same set without them (margin 0: every re-projected link is tested, the pass as it was) and
with a margin so wide that no link is clear (the step's widened test finds a collider for
every link, so the exact test decides everywhere); and the skip is taken."""

from __future__ import annotations

import numpy as np
import pytest

from avatars.clips.head_turn import MOTION_S, head_turn_rotation
from solver.chains import ChainSet
from solver.eval.posing import SubtreePoser
from solver.sheets import LinkSetting
from tests.conftest import asset

LAYERS = {p: LinkSetting(link=True) for p in ("Bang*", "Inner*", "Outer*")}
GODETTE = {p: LinkSetting(link=True) for p in ("boneGroup0/*", "boneGroup2/*")}
MARGINS = (0.0, 1e-5, 1.0)      # none, small (few links stay within it), every link "in reach"


def _lockstep(avatar, links):
    """Steps the head turn (motion part, 120 Hz) with the default margin and each of
    :data:`MARGINS`, asserting equal bits after every substep; returns (links, links
    re-projected without a test over the run, the same with margin 1e-5)."""
    kw = {"links": links} if links is not None else {}
    sets = [ChainSet.from_avatar(avatar, **kw) for _ in range(1 + len(MARGINS))]
    for cs, m in zip(sets[1:], MARGINS):
        cs.sections["globals"].sheet_margin[()] = m
    assert sets[0].link_count > 0
    poser = SubtreePoser(avatar.skeleton, avatar.head_node())
    w = poser.rest.copy()
    clear = np.zeros(len(sets), np.int64)
    for n in range(1, int(MOTION_S * 120) + 1):
        poser.world(head_turn_rotation(n / 120), out=w)
        for j, cs in enumerate(sets):
            cs.step(w)
            clear[j] += cs.last_sheet_clear
        ref = sets[0]
        for cs in sets[1:]:
            assert np.array_equal(cs.tails, ref.tails) and np.array_equal(cs.velocities, ref.velocities), n
            assert np.array_equal(cs.prev_tails, ref.prev_tails), n
            assert (cs.last_contacts, cs.last_unresolved, cs.last_caps, cs.cap_bindings) == \
                (ref.last_contacts, ref.last_unresolved, ref.last_caps, ref.cap_bindings), n
    assert clear[1] == 0 and clear[3] == 0          # margin 0 and the wide margin skip nothing
    return ref.link_count, int(clear[0]), int(clear[2])


def _bob01():
    from avatars.generate import default_avatar_path
    from avatars.hair import load_hair
    from avatars import load_avatar
    from avatars.tryon import TryOnSettings, try_on

    return try_on(load_avatar(default_avatar_path()), load_hair(asset("hair", "bob01", "bob01.obj")),
                  TryOnSettings()).avatar


@pytest.mark.parametrize("name", ["default", "layered", "godette", "bob01"])
def test_the_sheet_clearance_skips_tests_and_keeps_every_bit(name, request):
    if name == "bob01":
        avatar, links = _bob01(), None          # the try-on's sheets, on by default
    else:
        avatar = request.getfixturevalue({"default": "generated_default", "layered": "generated_layered",
                                          "godette": "godette"}[name])
        links = GODETTE if name == "godette" else LAYERS
    n_links, clear, _ = _lockstep(avatar, links)
    assert clear > 0, f"{name}: the sheet pass never used a clearance ({n_links} links)"
