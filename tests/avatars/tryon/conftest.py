"""Shared try-on fixtures: the two target avatars, each shared style fitted once per session,
and its standard head-turn measurement (rest-shape solver) made once per session."""

from __future__ import annotations

import pytest

from avatars import load_avatar
from avatars.hair import load_hair
from tests.conftest import asset, shared_value

STYLES = ("ponytail01", "long01", "bob01", "short02")
AVATARS = ("default", "godette")


@pytest.fixture(scope="session")
def target_avatars():
    from avatars.generate import default_avatar_path

    return {"default": load_avatar(default_avatar_path()), "godette": load_avatar(asset("vrm", "Godette_vrm_v4.vrm"))}


@pytest.fixture(scope="session")
def fitted(target_avatars, tmp_path_factory):
    """fitted(avatar_name, style) -> TryOnResult of a shared style (computed once per run,
    across workers: :func:`tests.conftest.shared_value`)."""
    from avatars.tryon import TryOnSettings, try_on

    done = {}

    def get(avatar: str, style: str):
        if (avatar, style) not in done:
            def fit():
                return try_on(target_avatars[avatar], load_hair(asset("hair", style, f"{style}.obj")), TryOnSettings())

            done[avatar, style] = shared_value(tmp_path_factory, f"fit-{avatar}-{style}", fit)
        return done[avatar, style]

    return get


@pytest.fixture(scope="session")
def measured(fitted, tmp_path_factory):
    """measured(avatar_name, style) -> HairRun of the rest-shape solver (computed once per run)."""
    from avatars.tryon import build_head
    from solver.eval.tryon_quality import measure_tryon

    done = {}

    def get(avatar: str, style: str):
        if (avatar, style) not in done:
            def measure():
                res = fitted(avatar, style)
                head = build_head(res.avatar, hide=(res.hair_instance,))
                return measure_tryon(res, solver="rest-shape", head=head)

            done[avatar, style] = shared_value(tmp_path_factory, f"turn-{avatar}-{style}", measure)
        return done[avatar, style]

    return get
