"""solver/layout.py: the packed layout declared once as tables — the constants, the views and
the docs all come from them."""

from __future__ import annotations

import re

import numpy as np
import pytest
from numba import njit

from solver import layout as L
from solver.chains import ChainSet
from solver.eval.synthetic import hair_cap_avatar


def test_the_written_docs_match_the_tables():
    """solver/LAYOUT.md is generated from the tables (python -m solver.layout --write)."""
    assert L.DOC_PATH.read_text(encoding="utf-8") == L.markdown(), \
        "solver/LAYOUT.md is stale: run `python -m solver.layout --write`"


def test_every_field_constant_is_its_column_and_rows_are_covered():
    seen = set()
    for sec in (L.HEADER,) + L.SECTIONS:
        if sec.width_const:
            assert getattr(L, sec.width_const) == L.stride(sec)
        col = None
        for f in sec.fields:
            assert f.const not in seen
            seen.add(f.const)
            value = getattr(L, f.const)
            if col is not None and not sec.soa:
                assert value == col                  # fields are contiguous, in table order
            col = value + f.width
            assert 0 <= value and value + f.width <= L.stride(sec)
    assert len(L.HEADER.fields) <= L.HDR
    # the segment sections are apart: parameters never share a column range with state
    if L.SEGMENT_ROWS == "separate":
        assert [L.stride(s) for s in L.SEGMENT_SECTIONS] == [s.width for s in L.SEGMENT_SECTIONS]


def test_sections_tile_the_buffers(godette):
    """Every section of a built chain set has its own range of F or I; together they cover
    the buffers exactly (no overlap, no gap)."""
    cs = ChainSet.from_avatar(godette)
    F, I = cs._F, cs._I  # noqa: E741
    for buf, sections, start in (("F", L.F_SECTIONS, 0), ("I", L.I_SECTIONS, L.HDR)):
        ranges = sorted({(int(I[getattr(L, s.header)]), int(I[getattr(L, s.header)]) + L.block_array(s, F, I).size)
                         for s in sections})
        assert ranges[0][0] == start
        for (a0, a1), (b0, _) in zip(ranges, ranges[1:]):
            assert a1 == b0
        assert ranges[-1][1] == (F if buf == "F" else I).size


def test_views_are_windows_into_the_buffers():
    cs = ChainSet.from_avatar(hair_cap_avatar(16, colliders=4))
    S = cs.segment_count
    assert cs.state.tails.shape == (S, 3) and cs.params.k.shape == (S,)
    assert cs.scratch.frame.shape == (S, 3, 4) and cs.sections["globals"].h.shape == ()
    assert np.shares_memory(cs.params.k, cs._F) and np.shares_memory(cs.state.tails, cs._F)
    assert not np.shares_memory(cs.params.array, cs.state.array)
    cs.params.k[3] = 12.5
    st = cs.sections["params"].array
    assert st[3, L.S_K] == 12.5
    with pytest.raises(AttributeError, match="assign into the view"):
        cs.params.k = np.zeros(S)
    with pytest.raises(AttributeError, match="no field"):
        cs.params.stiffness  # noqa: B018
    bounds = cs.sections["bounds"]
    cs.step(np.ascontiguousarray(cs._tuning.rest_world))
    np.testing.assert_array_equal(bounds.r, cs.sections["colliders"].bound_radius)


@njit(cache=False)
def _fold_cst(x, y):
    return x[1, L.S_VEXT + 2] * x[2, L.S_GPRE] + y[0, L.SI_REFMASK]


@njit(cache=False)
def _fold_lit(x, y):
    return x[1, 14] * x[2, 5] + y[0, 8]


def test_numba_folds_the_generated_constants_like_literals():
    """The constants are made at import from the tables; numba freezes global ints at
    compile time, so the compiled code is the same as with literals (the values here are
    the current layout's)."""
    assert (L.S_VEXT + 2, L.S_GPRE, L.SI_REFMASK) == (14, 5, 8), "update the literals to the layout"
    x, y = np.zeros((3, L.SF_PAR)), np.zeros((1, L.SI), np.int64)
    _fold_cst(x, y)
    _fold_lit(x, y)

    def asm(fn, name):
        text = fn.inspect_asm(fn.signatures[0])
        return re.sub(r"_ZN\S*", "F", text).replace(name, "NAME")

    assert asm(_fold_cst, "_fold_cst") == asm(_fold_lit, "_fold_lit")
