"""Fixtures for the render tests: one GL context per session, avatars, image helpers.

GL tests skip (saying why) only when no OpenGL 3.3 context can be made. Golden images are
regenerated only with ``SWAYCAM_REGEN_GOLDEN=1``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import render
from avatars import load_avatar
from tests.conftest import asset

REGEN_GOLDEN = os.environ.get("SWAYCAM_REGEN_GOLDEN", "") not in ("", "0")


@pytest.fixture(scope="session")
def gl_context():
    """A current OpenGL 3.3 core context (headless EGL here; a hidden window on desktops)."""
    try:
        ctx = render.create_context("auto", size=(64, 64), visible=False, vsync=False)
    except render.ContextError as exc:
        pytest.skip(f"no OpenGL context can be made: {exc}")
    yield ctx
    ctx.release()


@pytest.fixture()
def make_renderer(gl_context):
    """Factory for renderers released at the end of the test."""
    made = []

    def make(size=(320, 180), **kw):
        gl_context.make_current()  # another test may have made (and released) its own context
        r = render.Renderer(gl_context, size, **kw)
        made.append(r)
        return r

    yield make
    for r in made:
        r.release()


@pytest.fixture(scope="session")
def godette():
    return load_avatar(asset("vrm", "Godette_vrm_v4.vrm"))


def _generated(kind: str):
    try:
        from avatars import generate
    except ImportError as exc:  # pragma: no cover - the generator is part of the repository
        pytest.fail(f"avatars.generate is missing: {exc}")
    path = generate.default_avatar_path() if kind == "default" else generate.layered_avatar_path()
    return load_avatar(path)


@pytest.fixture(scope="session")
def default_avatar():
    return _generated("default")


@pytest.fixture(scope="session")
def layered_avatar():
    return _generated("layered")


@pytest.fixture(scope="session")
def avatars_by_name(godette, default_avatar, layered_avatar):
    return {"godette": godette, "default": default_avatar, "layered": layered_avatar}


def head_yaw_world(avatar, yaw: float) -> np.ndarray:
    """Rest-pose world matrices with the head subtree turned by ``yaw`` radians about world +Y
    around the head joint (positive: toward the avatar's left, +X)."""
    world = avatar.skeleton.rest_world.copy()
    head = avatar.head_node()
    p = world[head][:3, 3]
    c, s = np.cos(yaw), np.sin(yaw)
    rot = np.eye(4)
    rot[:3, :3] = [[c, 0, s], [0, 1, 0], [-s, 0, c]]
    pivot = np.eye(4)
    pivot[:3, 3] = p
    back = np.eye(4)
    back[:3, 3] = -p
    m = pivot @ rot @ back
    nodes = avatar.skeleton.descendants(head)
    world[nodes] = m @ world[nodes]
    return world
