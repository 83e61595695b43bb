"""The data the solver's linked sheets will need (avatars/tryon/sheets.py): which try-on
chains carry one connected sheet, their neighbour links with rest distances, per-joint bend
limits — in the avatar model and, through VRM extras, in the exported file."""

from __future__ import annotations

import numpy as np

from avatars import load_avatar
from avatars.tryon.sheets import ROOT_BEND_DEG, TIP_BEND_DEG, bend_limits


def test_bend_limits_ramp_from_a_stiff_root():
    lim = bend_limits(5)
    assert lim[-1] is None and np.isclose(lim[0], np.radians(ROOT_BEND_DEG)) and np.isclose(lim[3], np.radians(TIP_BEND_DEG))
    assert all(a < b for a, b in zip(lim[:3], lim[1:4]))


def test_a_bob_is_sheets_of_linked_chains(fitted):
    res = fitted("default", "bob01")
    av = res.avatar
    tryon = [k for k, s in enumerate(av.springs) if s.name.startswith("TryOn")]
    assert res.sheets.count >= 1 and len(av.spring_links) == len(res.sheets.links) >= 1
    rest = av.skeleton.rest_world
    for link in av.spring_links:
        a, b = link.springs
        assert a in tryon and b in tryon and av.springs[a].sheet == av.springs[b].sheet == link.sheet >= 0
        assert len(link.joints) == len(link.rest) >= 1 and link.shared > 0
        for (i, j), r in zip(link.joints, link.rest):
            assert i >= 1 and j >= 1    # roots are fixed to the scalp
            pa = rest[av.springs[a].joints[i].node][:3, 3]
            pb = rest[av.springs[b].joints[j].node][:3, 3]
            assert abs(np.linalg.norm(pa - pb) - r) < 1e-6
    for k in tryon:
        lim = [j.max_bend for j in av.springs[k].joints]
        assert lim == list(bend_limits(len(lim)))


def test_sheets_links_and_limits_survive_the_export(fitted, tmp_path):
    from avatars.vrm1 import save_vrm1

    res = fitted("default", "bob01")
    path = tmp_path / "bob.vrm"
    save_vrm1(res.avatar, path)
    back = load_avatar(path)
    assert back.warnings == ()
    assert [(k.springs, k.joints, k.sheet, k.shared) for k in back.spring_links] == \
        [(k.springs, k.joints, k.sheet, k.shared) for k in res.avatar.spring_links]
    assert np.allclose(np.concatenate([k.rest for k in back.spring_links]),
                       np.concatenate([k.rest for k in res.avatar.spring_links]))
    assert [s.sheet for s in back.springs] == [s.sheet for s in res.avatar.springs]
    assert [j.max_bend for s in back.springs for j in s.joints] == [j.max_bend for s in res.avatar.springs for j in s.joints]


def test_a_single_tail_has_no_sheet(fitted):
    res = fitted("default", "short02")
    assert res.sheets.count == 0 and res.avatar.spring_links == ()


def test_the_solver_links_a_fitted_sheet_by_default(fitted):
    """Linked sheets (solver/sheets.py) are on for the try-on's chains: one link per joint pair
    of every spring link, between the segments whose tails are those joints; [hair] link =
    false turns them off."""
    from solver import ChainSet
    from solver.sheets import LinkSetting

    av = fitted("default", "bob01").avatar
    cs = ChainSet.from_avatar(av)
    assert cs.link_count == sum(len(k.joints) for k in av.spring_links) > 0
    node_of = cs.segment_nodes
    for (a, b) in cs.links:
        ka, kb = cs.chain_names[cs.segment_chain[a]], cs.chain_names[cs.segment_chain[b]]
        assert ka != kb and ka.startswith("TryOn") and kb.startswith("TryOn")
        assert av.skeleton.parents[node_of[a]] >= 0
    assert ChainSet.from_avatar(av, links={"*": LinkSetting(link=False)}).link_count == 0
    assert ChainSet.from_avatar(av, sheets="off").link_count == 0
