"""The try-on core's error root (avatars/tryon/errors.py): each step raises a kind of
:class:`TryOnError` (a ``ValueError``), which the pipeline reports in ``fit.problems``; the
runtime's StyleError is one too."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.tryon import FitError, NoHeadError, TryOnError, build_head
from avatars.tryon.placement import estimate_source_head
from avatars.tryon.geometry import TriangleIndex
from tests.conftest import asset


def test_kinds_share_one_root_and_stay_value_errors():
    from runtime.tryon import StyleError

    for kind in (NoHeadError, FitError, StyleError):
        assert issubclass(kind, TryOnError)
    assert issubclass(TryOnError, ValueError)


def test_an_avatar_without_a_head_mesh_raises_no_head():
    with pytest.raises(NoHeadError, match="no drawn mesh is skinned to the head"):
        build_head(load_avatar(asset("vrm", "debug_robot.vrm")))


def test_hair_without_a_head_shaped_opening_raises_fit_error():
    solid = np.random.default_rng(0).uniform(-0.1, 0.1, (4000, 3))       # a filled box: no opening
    with pytest.raises(FitError, match="no head-shaped opening"):
        estimate_source_head(solid, None)
    with pytest.raises(FitError, match="at least one triangle"):
        TriangleIndex(np.zeros((3, 3)), np.zeros((0, 3), np.int64))
