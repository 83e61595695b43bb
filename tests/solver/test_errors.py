"""solver/errors.py: every solver failure is a SolverError (a ValueError) of the kind a caller
answers: options, chains it cannot build, hair parameters, a state it cannot take over."""

from __future__ import annotations

import numpy as np
import pytest

from solver import layout as L
from solver.chains import ChainSet
from solver.errors import ChainBuildError, HairParamsError, SolverError, SolverOptionError, StateTransferError
from solver.eval.synthetic import branched_avatar, strand_avatar
from solver.modes import SolverMode
from solver.params import SUBSTEP_SECONDS, SpringOverride, VrmMapping, check_stable


def test_the_kinds_are_solver_errors_and_value_errors():
    for kind in (SolverOptionError, ChainBuildError, HairParamsError, StateTransferError):
        assert issubclass(kind, SolverError) and issubclass(kind, ValueError)


def test_options():
    with pytest.raises(SolverOptionError, match="solver: 'xpbd' is not one of"):
        SolverMode.parse("xpbd")
    with pytest.raises(SolverOptionError, match="unknown solver 'xpbd'"):
        ChainSet.from_avatar(branched_avatar(), solver="xpbd")
    with pytest.raises(SolverOptionError, match="unknown mapping method"):
        ChainSet.from_avatar(branched_avatar(), mapping=VrmMapping(method="guess"))


def test_chains_it_cannot_build():
    with pytest.raises(ChainBuildError, match="zero-length link"):
        ChainSet.from_avatar(strand_avatar([(0, 0, 0), (0, 0, 0), (0, -0.1, 0)]))


def test_hair_parameters():
    with pytest.raises(HairParamsError, match="not stable"):
        check_stable("here", 1e9, 0.0, SUBSTEP_SECONDS)
    with pytest.raises(HairParamsError, match="not stable"):
        ChainSet.from_avatar(branched_avatar(), overrides=SpringOverride(k=1e9, c=0.0))
    cs = ChainSet.from_avatar(branched_avatar())
    for kw, msg in (({"k": -1.0}, "below 0"), ({"c": float("nan")}, "not finite"), ({"k": "stiff"}, "not a number"),
                    ({"gravity": (0.0, 1.0)}, "not three numbers"), ({"k": 1.0, "springs": "Z*"}, "matches no spring")):
        with pytest.raises(HairParamsError, match=msg):
            cs.set_params(**kw)
    with pytest.raises(HairParamsError, match="set_hit_radii"):
        cs.set_hit_radii(np.zeros(2))


def test_a_state_it_cannot_take_over():
    cs = ChainSet.from_avatar(branched_avatar())
    other = ChainSet.from_avatar(strand_avatar([(0, 0, 0), (0, -0.1, 0), (0, -0.2, 0)]))
    with pytest.raises(StateTransferError, match="another avatar"):
        cs.copy_state_from(other)


def test_an_inconsistent_layout_is_a_solver_error():
    with pytest.raises(SolverError, match="layout.pack"):
        L.pack({"S": 1, "C": 0, "K": 0, "P": 0, "M": 0}, {"segment_ints": np.zeros((2, L.SI), np.int64)}, {})
