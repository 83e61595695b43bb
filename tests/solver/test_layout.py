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
    """solver/LAYOUT.md is generated from the tables (python -m solver.layout)."""
    assert L.DOC_PATH.read_text(encoding="utf-8") == L.markdown(), \
        "solver/LAYOUT.md is stale: run `python -m solver.layout`"


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
    # sections that share rows have column ranges of their own: writing a parameter never
    # writes a state column, and the other way round
    grouped = {k for g in L.ROW_GROUPS for k in g}
    for g in L.ROW_GROUPS:
        spans = sorted((getattr(L, L._BY_KEY[k].fields[0].const), L._BY_KEY[k].width) for k in g)
        for (a0, w), (b0, _) in zip(spans, spans[1:]):
            assert a0 + w == b0
        assert spans[-1][0] + spans[-1][1] == L.stride(L._BY_KEY[g[0]])
    for sec in L.SECTIONS:
        if sec.key not in grouped:
            assert L.stride(sec) == sec.width


def test_sections_tile_the_buffers(godette):
    """Every section of a built chain set has its own range of F or I; together they cover
    the buffers exactly (no overlap, no gap)."""
    cs = ChainSet.from_avatar(godette)
    F, I = cs._F, cs._I  # noqa: E741
    for buf, sections, start in (("F", L.F_SECTIONS, 0), ("I", L.I_SECTIONS, L.HDR)):
        # (sections sharing rows have one block: one range)
        ranges = sorted({(int(I[getattr(L, s.header)]), int(I[getattr(L, s.header)]) + (
            L.block_array(s, F, I).size if s.soa or s.flat else L.section_size(s, L.row_count(s, I))))
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
    assert cs._F[cs._I[L.H_OF_PAR] + 3 * L.SF_PAR + L.S_K] == 12.5
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


# the same with the current values written as literals
_src = (f"def _fold_lit(x, y):\n    return x[1, {L.S_VEXT + 2}] * x[2, {L.S_GPRE}] + y[0, {L.SI_REFMASK}]\n")
exec(compile(_src, "<literals>", "exec"))
_fold_lit = njit(cache=False)(_fold_lit)  # noqa: F821


def test_numba_folds_the_generated_constants_like_literals():
    """The constants are made at import from the tables; numba freezes global ints at
    compile time, so the compiled code is the same as with literals."""
    x, y = np.zeros((3, L.SF_PAR)), np.zeros((1, L.SI), np.int64)
    _fold_cst(x, y)
    _fold_lit(x, y)

    def asm(fn, name):
        # mangled names (and the sizes of the strings holding them) differ with numba's id of
        # each function: 99 and 100 differ in length
        text = fn.inspect_asm(fn.signatures[0])
        return re.sub(r"_ZN\S*(?: \d+)?", "F", text).replace(name, "NAME")

    assert asm(_fold_cst, "_fold_cst") == asm(_fold_lit, "_fold_lit")
