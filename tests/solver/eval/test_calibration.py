"""VRM parameters -> (k, c, g) (docs/design.md §4.3): the 120 Hz solver against the 60 fps Verlet
reference on the standard head turn (trajectory RMS at the common 60 fps times)."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import SpringJoint
from avatars.clips.head_turn import head_turn_rotation
from solver.chains import ChainSet
from solver.eval import calibration
from solver.params import ANALYTIC_MAPPING, DEFAULT_MAPPING, discrete_kcg

# Measured on this machine's solver (metres, RMS over 12 s and every tail); bounds leave margin.
LEGACY_REL = 0.03       # same restoring model as the Verlet: within 3% of the motion (1.4% measured)
GODETTE_RMS_M = 2.5e-3  # rest-shape: 1.48 mm measured (motion RMS 60 mm)
SMOKE_RMS_M = 2.5e-3    # rest-shape: 1.77 mm measured (motion RMS 6.7 mm; the arc target differs
                        # from the Verlet's parent-relative one by design on this 3-link chain)


def test_discrete_mapping_reduces_to_the_analytic_one_for_soft_springs():
    # small per-frame push a and small drag: k -> stiffness·f/L, c -> −f ln(1 − d)
    k, c, g = discrete_kcg(1e-7, 1e-4, 1.0)
    assert k == pytest.approx(1e-7 * 60.0, rel=1e-3)
    assert c == pytest.approx(-60.0 * np.log1p(-1e-4), rel=1e-3)
    assert g == pytest.approx(60.0, rel=1e-3)


def test_mapping_is_per_second_and_scales_with_length():
    j = SpringJoint(node=0, stiffness=1.0, drag_force=0.4, gravity_power=0.5)
    k1, c1, g1 = DEFAULT_MAPPING.kcg(j, 0.05)
    k2, c2, g2 = DEFAULT_MAPPING.kcg(j, 0.10)
    assert k2 < k1 and c1 > 0 and g1[1] < 0
    # stiffer Verlet links damp more (the push is measured at the predicted position)
    assert c1 > c2 > -60.0 * np.log(0.6)


def _rms(avatar, mapping, solver="rest-shape", monkeypatch=None):
    if solver != "rest-shape":
        original = ChainSet.from_avatar.__func__

        def patched(cls, av, **kw):
            if kw.get("solver") == "rest-shape":
                kw["solver"] = solver
            return original(cls, av, **kw)
        monkeypatch.setattr(ChainSet, "from_avatar", classmethod(patched))
    return calibration.trajectory_rms(avatar, head_turn_rotation, mapping=mapping)


def test_legacy_follows_the_verlet_reference(smoke, monkeypatch):
    """With the same (parent-relative) restoring direction as the Verlet, the discrete mapping
    reproduces the 60 fps reference at 120 Hz almost exactly."""
    res = _rms(smoke, DEFAULT_MAPPING, "legacy", monkeypatch)
    print(f"\nlegacy smoke: RMS {res.rms * 1e3:.3f} mm of {res.scale * 1e3:.2f} mm motion")
    assert res.rms < LEGACY_REL * res.scale


def test_rest_shape_calibration_on_the_standard_head_turn(godette, smoke):
    ours = {n: _rms(a, DEFAULT_MAPPING) for n, a in (("godette", godette), ("smoke", smoke))}
    analytic = {n: _rms(a, ANALYTIC_MAPPING) for n, a in (("godette", godette), ("smoke", smoke))}
    for n in ours:
        print(f"\n{n}: calibrated RMS {ours[n].rms * 1e3:.3f} mm, analytic {analytic[n].rms * 1e3:.3f} mm, "
              f"motion {ours[n].scale * 1e3:.2f} mm")
    assert ours["godette"].rms < GODETTE_RMS_M
    assert ours["smoke"].rms < SMOKE_RMS_M
    total = sum(r.rms ** 2 for r in ours.values())
    assert total < sum(r.rms ** 2 for r in analytic.values())
