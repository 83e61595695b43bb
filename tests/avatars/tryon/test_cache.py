"""The try-on disk cache: a hit returns the stored result; the key follows the avatar file,
the style file (and its MakeHuman sidecars) and the settings; broken entries are misses."""

from __future__ import annotations

import shutil

from avatars.tryon import TryOnSettings
from avatars.tryon.cache import TryOnCache, cached_try_on
from tests.conftest import asset


def test_cached_try_on_hits_after_the_first_fit(tmp_path):
    from avatars.generate import default_avatar_path

    style = tmp_path / "short02.obj"
    for suffix in (".obj", ".mhmat", ".mhclo"):
        shutil.copy(asset("hair", "short02", f"short02{suffix}"), style.with_suffix(suffix))
    cache = TryOnCache(tmp_path / "cache")
    first, hit1 = cached_try_on(default_avatar_path(), style, cache=cache)
    again, hit2 = cached_try_on(default_avatar_path(), style, cache=cache)
    assert not hit1 and hit2 and first.avatar is not None
    assert again.summary() == first.summary() and again.guides == ()
    assert again.avatar.skeleton.names == first.avatar.skeleton.names
    # another setting, or an edited sidecar, is another entry
    assert cache.load(default_avatar_path(), style, TryOnSettings(max_chains=3)) is None
    with open(style.with_suffix(".mhmat"), "a") as f:
        f.write("\n# edited\n")
    assert cache.load(default_avatar_path(), style) is None
    # a corrupt entry is a miss, not a crash
    _, hit3 = cached_try_on(default_avatar_path(), style, cache=cache)
    entry = cache.path(default_avatar_path(), style, TryOnSettings())
    entry.write_bytes(b"not a pickle")
    assert not hit3 and cache.load(default_avatar_path(), style) is None
