"""Fixtures for the solver tests: the real avatars and small run helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from avatars import load_avatar
from avatars.math3d import quat_from_axis_angle
from tests.conftest import asset

RATE_HZ = 120
H = 1.0 / RATE_HZ


@pytest.fixture(scope="session")
def godette():
    return load_avatar(asset("vrm", "Godette_vrm_v4.vrm"))


@pytest.fixture(scope="session")
def smoke():
    return load_avatar(asset("vrm", "smoke_spring.vrm"))


@pytest.fixture(scope="session")
def smoke_collider():
    return load_avatar(asset("vrm", "springbone_collider_sphere_x0p02_r0p1.vrm"))


def yaw_ramp(degrees: float, seconds: float):
    """Head yaw to ``degrees`` over ``seconds`` (smoothstep: no kick), then held."""
    def motion(t: float) -> np.ndarray:
        u = min(max(t / seconds, 0.0), 1.0)
        return quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), math.radians(degrees) * u * u * (3.0 - 2.0 * u))
    return motion


def run(cs, poser, motion, seconds: float, *, start: int = 1, sample_every: int = 0, world=None):
    """Step ``cs`` at 120 Hz for ``seconds`` with the head rotation ``motion(t)``.

    Returns (world of the last substep, samples (F, S, 3) of tails every ``sample_every``
    substeps or None).
    """
    w = poser.rest.copy() if world is None else world
    n_steps = int(round(seconds * RATE_HZ))
    samples = []
    for n in range(start, start + n_steps):
        poser.world(motion(n * H), out=w)
        cs.step(w)
        if sample_every and n % sample_every == 0:
            samples.append(cs.tails.copy())
    return w, (np.array(samples) if sample_every else None)


@pytest.fixture(scope="session")
def generated_default():
    """The product's generated default avatar (VRM 1.0, 9 springs, 5 colliders)."""
    gen = pytest.importorskip("avatars.generate", reason="the avatar generator is not available")
    return load_avatar(gen.default_avatar_path())


@pytest.fixture(scope="session")
def generated_layered():
    """The generated layered stress avatar (26 springs, 140 joints)."""
    gen = pytest.importorskip("avatars.generate", reason="the avatar generator is not available")
    return load_avatar(gen.layered_avatar_path())
