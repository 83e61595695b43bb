"""The outline quality setting: auto is off on software rasterisers, on with GPUs."""

import pytest

from render.quality import resolve_outlines


def test_outlines_auto_follows_the_backend():
    assert resolve_outlines("auto", software=True) is False
    assert resolve_outlines("auto", software=False) is True
    assert resolve_outlines("on", software=True) is True and resolve_outlines("off", software=False) is False
    with pytest.raises(ValueError, match="outlines 'maybe'"):
        resolve_outlines("maybe", software=True)
