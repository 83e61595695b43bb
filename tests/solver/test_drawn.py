"""Hit radii covering the drawn hair (solver/drawn.py, ``BuildOptions.cover_mesh``): measured
from the mesh at build, raised only where the raised link clears its colliders at rest, off
by default (the default build keeps its bits)."""

from __future__ import annotations

import numpy as np
import pytest

from solver.chains import ChainSet
from solver.drawn import COVER_SLACK, MAX_COVER, covered, drawn_radii
from solver.topology import chain_topology


def test_chain_cover_never_grows_toward_the_tip():
    from solver.drawn import chain_cover

    assert chain_cover([0.015] * 5, [0.0154, 0.0198, 0.0201, 0.0162, 0.015]) == [0.0201, 0.0201, 0.0201, 0.0162, 0.015]
    assert chain_cover([0.01, 0.01], [None, 0.03]) == [0.01, 0.02]     # capped; an override keeps its radius


def test_covered_radius_rule():
    assert covered(0.01, None) == 0.01
    assert covered(0.01, 0.005) == 0.01                 # never lowered
    assert covered(0.01, 0.015) == 0.015 - COVER_SLACK  # stops the slack short of the drawn radius
    assert covered(0.01, 0.0102) == 0.01                # within the slack of the file's: none
    assert covered(1.0, 1.5, scale=100.0) == 1.5 - 100.0 * COVER_SLACK   # the slack scales with the model
    assert covered(0.01, 0.05) == MAX_COVER * 0.01      # capped
    assert covered(0.0, 0.02) == 0.0                    # no authored radius: none


def test_drawn_radii_of_the_layered_strands(generated_layered):
    """The generated ribbons are wider than their 15 mm hitRadius (up to ~22 mm off the link)."""
    links = [lk for ch in chain_topology(generated_layered).chains for lk in ch.links]
    r = drawn_radii(generated_layered, {lk.joint.node: lk.head for lk in links},
                    {lk.joint.node: lk.tail for lk in links})
    assert len(r) == len(links)
    assert 0.020 < max(r.values()) < 0.030


def test_cover_mesh_raises_radii_without_rest_overlaps(generated_layered):
    plain = ChainSet.from_avatar(generated_layered)
    off = ChainSet.from_avatar(generated_layered, cover_mesh=False)
    on = ChainSet.from_avatar(generated_layered, cover_mesh=True)
    assert np.array_equal(plain._F, on._F)                        # on by default
    assert np.all(on.hit_radii >= off.hit_radii) and (on.hit_radii > off.hit_radii).sum() > 50
    assert np.all(on.hit_radii <= MAX_COVER * off.hit_radii)
    assert on.report.rest_overlaps == () == off.report.rest_overlaps
    # against a collider a chain lies close to at rest (the scalp strands and the head) the
    # raised radius is limited to the rest clearance by a cover allowance, one per (chain, collider)
    cover = on.sections["cover"].cover
    assert cover.any() and not off.sections["cover"].cover.any()
    assert np.all(on.sections["allowances"].allowance >= cover)
    seg, col = on.sections["segment_ints"], on.sections["pairs"].collider
    parent = on.simulated_parents
    for i in range(on.segment_count):                  # against each collider, no radius grows toward the tip
        if parent[i] < 0:
            continue
        mine = {int(col[p]): on.hit_radii[i] - cover[p] for p in range(int(seg.pair_begin[i]), int(seg.pair_end[i]))}
        theirs = {int(col[p]): on.hit_radii[parent[i]] - cover[p]
                  for p in range(int(seg.pair_begin[parent[i]]), int(seg.pair_end[parent[i]]))}
        assert all(r <= theirs[c] + 1e-12 for c, r in mine.items() if c in theirs)
    # set_overrides(None) gives what the build gave: the covering stays (test_retune.py) ...
    F = on._F.copy()
    on.set_overrides(None)
    assert np.array_equal(on._F, F)
    # ... a retune of the radii drops the covering of its rows, and then the file's radii return
    on.set_params(hit_radius=float(off.hit_radii.max()))
    assert not on.sections["cover"].cover.any()
    on.set_overrides(None)
    assert np.array_equal(on.hit_radii, off.hit_radii)


def test_cover_mesh_from_the_config(generated_default):
    from runtime.errors import SettingsError
    from runtime.rig.hair_external import build_fields

    assert build_fields({"cover_mesh": True})["cover_mesh"] is True
    assert build_fields({})["cover_mesh"] is True
    assert build_fields({"cover_mesh": False})["cover_mesh"] is False
    with pytest.raises(SettingsError, match="hair.cover_mesh"):
        build_fields({"cover_mesh": 1})
