"""VRMC_node_constraint 1.0 loading (avatars/constraints.py): the generated test avatar's
constraints, their evaluation order, and every kind of bad input skipped with a warning that
names its JSON path while the rest of the file loads."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from avatars import AimConstraint, RollConstraint, RotationConstraint, load_avatar
from avatars.constraint_avatar import CONSTRAINTS, build_constrained_avatar, constrained_avatar_json
from avatars.constraints import dependencies, evaluation_order
from avatars.inspect import format_summary, summarize
from tests.avatars.glb import join, split

NAME = "constrained.vrm"
EXT = "VRMC_node_constraint"


def _index(doc: dict, name: str) -> int:
    return next(i for i, n in enumerate(doc["nodes"]) if n["name"] == name)


def load_edited(edit):
    doc = constrained_avatar_json()
    edit(doc)
    return load_avatar(NAME, data=json.dumps(doc).encode())


def body(doc: dict, name: str) -> dict:
    """The constraint body (roll/aim/rotation dict) on the node called ``name``."""
    con = doc["nodes"][_index(doc, name)]["extensions"][EXT]["constraint"]
    return next(iter(con.values()))


def warned(avatar, element: str, *fragments: str) -> str:
    """The one warning at ``element``, checked for ``fragments``."""
    hits = [w for w in avatar.warnings if w.element == element]
    assert len(hits) == 1, [str(w) for w in avatar.warnings]
    for f in fragments:
        assert f in hits[0].reason, str(hits[0])
    return hits[0].reason


# --------------------------------------------------------------------------- valid data


def test_generated_avatar_constraints():
    av = load_avatar(NAME, data=build_constrained_avatar())
    sk = av.skeleton
    assert av.warnings == ()
    assert av.vrm_version == "1.0"
    got = {sk.names[c.node]: c for c in av.constraints}
    assert set(got) == set(CONSTRAINTS)
    for dst, (kind, src, axis, weight) in CONSTRAINTS.items():
        c = got[dst]
        assert c.kind == kind and sk.names[c.source] == src and c.weight == weight
        assert getattr(c, "roll_axis", getattr(c, "aim_axis", None)) == axis
    assert isinstance(got["SleeveTwist_L"], RollConstraint)
    assert isinstance(got["NeckAim"], AimConstraint)
    assert isinstance(got["Collar"], RotationConstraint)
    np.testing.assert_array_equal(got["CollarTwist"].axis, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(got["PadAim_L"].axis, [0.0, -1.0, 0.0])


def test_evaluation_order_puts_sources_first():
    """Avatar.constraints is in evaluation order: a constraint comes after every constraint
    whose result it reads (CollarTwist rolls with Collar's result; PadAim_L aims at a child of
    ShoulderAim_L), although the file lists them the other way round."""
    av = load_avatar(NAME, data=build_constrained_avatar())
    sk = av.skeleton
    names = [sk.names[c.node] for c in av.constraints]
    assert names.index("Collar") < names.index("CollarTwist")
    assert names.index("ShoulderAim_L") < names.index("PadAim_L")
    assert sk.find("CollarTwist") < sk.find("Collar") and sk.find("PadAim_L") < sk.find("ShoulderAim_L")
    deps = dependencies(av.constraints, sk)
    for k, d in enumerate(deps):
        assert all(j < k for j in d), (names[k], [names[j] for j in d])
    assert [names[j] for j in deps[names.index("CollarTwist")]] == ["Collar"]
    assert [names[j] for j in deps[names.index("PadAim_L")]] == ["ShoulderAim_L"]
    # an aim also waits for constraints above its destination's parent; a roll or rotation
    # reads only its source's local rotation
    order, cycles = evaluation_order(av.constraints, sk)
    assert order == list(range(len(av.constraints))) and cycles == []


def test_defaults_and_beta_spec_version():
    def edit(doc):
        body(doc, "SubArm_R").pop("weight")
        doc["nodes"][_index(doc, "Collar")]["extensions"][EXT]["specVersion"] = "1.0-beta"

    av = load_edited(edit)
    assert av.warnings == ()
    by = {av.skeleton.names[c.node]: c for c in av.constraints}
    assert by["SubArm_R"].weight == 1.0 and by["Collar"].weight == 0.5


def test_roll_whose_source_is_below_its_destination_is_not_a_cycle():
    """A roll reads its source's local rotation only, which its own result does not change
    (three-vrm's manager would refuse it; the spec only forbids circular dependencies)."""
    def edit(doc):
        body(doc, "SleeveTwist_L")["source"] = _index(doc, "Sleeve_L_2")

    av = load_edited(edit)
    assert av.warnings == () and len(av.constraints) == len(CONSTRAINTS)


def test_inspect_lists_constraints():
    s = summarize(load_avatar(NAME, data=build_constrained_avatar()))
    assert s["constraints"] == len(CONSTRAINTS)
    first = s["constraint_list"][0]
    assert set(first) == {"node", "name", "kind", "source", "source_name", "axis", "weight"}
    twist = next(c for c in s["constraint_list"] if c["name"] == "SleeveTwist_L")
    assert (twist["kind"], twist["source_name"], twist["axis"], twist["weight"]) == ("roll", "LowerArm_L", "X", 1.0)
    text = format_summary(s)
    assert f"constraints {len(CONSTRAINTS)} (VRMC_node_constraint" in text
    assert "SleeveTwist_L            roll X from node 9 (LowerArm_L) weight 1" in text


def test_files_without_constraints_have_none(godette_path):
    assert load_avatar(godette_path).constraints == ()
    assert summarize(load_avatar(godette_path))["constraints"] == 0


# --------------------------------------------------------------------------- bad input


def _path(doc_or_index, name=None, kind=None) -> str:
    idx = doc_or_index if name is None else _index(doc_or_index, name)
    base = f"nodes[{idx}].extensions.{EXT}"
    return base if kind is None else f"{base}.constraint.{kind}"


@pytest.mark.parametrize("dst, kind, key, value, fragment", [
    ("SleeveTwist_L", "roll", "rollAxis", "W", "'W' is not one of X, Y, Z; constraint skipped"),
    ("SleeveTwist_L", "roll", "rollAxis", "x", "'x' is not one of X, Y, Z"),
    ("SleeveTwist_L", "roll", "rollAxis", None, "None is not one of X, Y, Z"),
    ("NeckAim", "aim", "aimAxis", "Up", "'Up' is not one of PositiveX, NegativeX, PositiveY"),
    ("NeckAim", "aim", "aimAxis", None, "None is not one of PositiveX"),
    ("Collar", "rotation", "source", 999, "node 999 does not exist (40 nodes); constraint skipped"),
    ("Collar", "rotation", "source", -1, "node -1 does not exist"),
    ("Collar", "rotation", "source", "4", "node '4' does not exist"),
    ("Collar", "rotation", "source", True, "node True does not exist"),
    ("Collar", "rotation", "source", None, "node None does not exist"),
    ("SubArm_R", "rotation", "weight", 1.5, "1.5 is not a number in [0, 1]; constraint skipped"),
    ("SubArm_R", "rotation", "weight", -0.1, "-0.1 is not a number in [0, 1]"),
    ("SubArm_R", "rotation", "weight", "1", "'1' is not a number in [0, 1]"),
    ("SubArm_R", "rotation", "weight", math.nan, "nan is not a number in [0, 1]"),
])
def test_bad_field_skips_the_constraint(dst, kind, key, value, fragment):
    def edit(doc):
        if value is None:
            body(doc, dst).pop(key)
        else:
            body(doc, dst)[key] = value

    av = load_edited(edit)
    doc = constrained_avatar_json()
    warned(av, f"{_path(doc, dst, kind)}.{key}", fragment)
    names = {av.skeleton.names[c.node] for c in av.constraints}
    assert dst not in names
    # the rest of the file loads; constraints that read the skipped one keep working
    assert len(av.constraints) == len(CONSTRAINTS) - 1
    assert len(av.springs) == 4 and av.humanoid["head"] == av.skeleton.find("Head")


def test_source_is_the_destination():
    av = load_edited(lambda doc: body(doc, "NeckAim").__setitem__("source", _index(doc, "NeckAim")))
    warned(av, f"{_path(constrained_avatar_json(), 'NeckAim', 'aim')}.source",
           f"is the destination node {av.skeleton.find('NeckAim')} itself; constraint skipped")
    assert len(av.constraints) == len(CONSTRAINTS) - 1


@pytest.mark.parametrize("mutate, element, fragment", [
    (lambda e: e.__setitem__("specVersion", "2.0"), ".specVersion", "'2.0' is not a known specVersion (1.0, 1.0-beta)"),
    (lambda e: e.pop("specVersion"), ".specVersion", "None is not a known specVersion"),
    (lambda e: e.pop("constraint"), ".constraint", "is missing or not an object; constraint skipped"),
    (lambda e: e.__setitem__("constraint", {}), ".constraint", "has none of roll, aim, rotation; constraint skipped"),
    (lambda e: e.__setitem__("constraint", {"roll": 3}), ".constraint.roll", "is not an object; constraint skipped"),
])
def test_bad_extension_object(mutate, element, fragment):
    av = load_edited(lambda doc: mutate(doc["nodes"][_index(doc, "ForearmTwist_L")]["extensions"][EXT]))
    warned(av, _path(constrained_avatar_json(), "ForearmTwist_L") + element, fragment)
    assert len(av.constraints) == len(CONSTRAINTS) - 1


def test_extension_that_is_not_an_object():
    av = load_edited(lambda doc: doc["nodes"][_index(doc, "Still")]["extensions"].__setitem__(EXT, [1]))
    warned(av, _path(constrained_avatar_json(), "Still"), "is not an object; constraint skipped")
    assert len(av.constraints) == len(CONSTRAINTS) - 1


def test_node_constrained_twice_keeps_the_first_as_three_vrm():
    def edit(doc):
        con = doc["nodes"][_index(doc, "SleeveTwist_L")]["extensions"][EXT]["constraint"]
        con["aim"] = {"source": _index(doc, "Hand_L"), "aimAxis": "PositiveX"}
        con["rotation"] = {"source": _index(doc, "Hand_L")}

    av = load_edited(edit)
    idx = av.skeleton.find("SleeveTwist_L")
    warned(av, f"{_path(idx)}.constraint", f"constrains node {idx} twice (roll, aim, rotation); roll is used",
           "aim, rotation skipped")
    c = next(c for c in av.constraints if c.node == idx)
    assert isinstance(c, RollConstraint) and av.skeleton.names[c.source] == "LowerArm_L"
    assert len(av.constraints) == len(CONSTRAINTS)


def test_cycle_of_two_is_skipped_and_the_rest_loads():
    """Collar reads SubArm_R, SubArm_R reads Collar: both are skipped (each named), and
    CollarTwist, which read Collar, still loads (it now reads Collar's unconstrained rotation)."""
    def edit(doc):
        body(doc, "Collar")["source"] = _index(doc, "SubArm_R")
        body(doc, "SubArm_R")["source"] = _index(doc, "Collar")

    av = load_edited(edit)
    sk = av.skeleton
    a, b = sk.find("SubArm_R"), sk.find("Collar")
    for name in ("Collar", "SubArm_R"):
        warned(av, f"{_path(sk.find(name), kind='rotation')}.source",
               f"constraint cycle among the constraints of nodes {min(a, b)}, {max(a, b)}", "constraint skipped")
    names = {sk.names[c.node] for c in av.constraints}
    assert names == set(CONSTRAINTS) - {"Collar", "SubArm_R"}
    assert len(av.warnings) == 2


def test_cycle_through_world_matrices():
    """An aim reads the world matrices of its source and its destination's parent, so it
    depends on the constraints above them: ShoulderTip_L (child of ShoulderAim_L) aimed at
    PadAim_L, which aims at ShoulderTip_L, closes a cycle."""
    def edit(doc):
        tip = doc["nodes"][_index(doc, "ShoulderTip_L")]
        tip["extensions"] = {EXT: {"specVersion": "1.0", "constraint": {
            "aim": {"source": _index(doc, "PadAim_L"), "aimAxis": "PositiveX"}}}}
        doc["nodes"][_index(doc, "ShoulderAim_L")].pop("extensions")

    av = load_edited(edit)
    sk = av.skeleton
    assert {w.element for w in av.warnings} == {f"{_path(sk.find(n), kind='aim')}.source"
                                                for n in ("ShoulderTip_L", "PadAim_L")}
    assert {sk.names[c.node] for c in av.constraints} == set(CONSTRAINTS) - {"PadAim_L", "ShoulderAim_L"}


def test_aim_at_its_own_descendant_is_a_cycle():
    av = load_edited(lambda doc: body(doc, "ShoulderAim_L").__setitem__("source", _index(doc, "ShoulderTip_L")))
    sk = av.skeleton
    warned(av, f"{_path(sk.find('ShoulderAim_L'), kind='aim')}.source",
           f"the source node {sk.find('ShoulderTip_L')} is below the destination node {sk.find('ShoulderAim_L')}",
           "depends on its own result (a constraint cycle); constraint skipped")
    # PadAim_L read ShoulderAim_L's result; it stays and is now independent
    names = [sk.names[c.node] for c in av.constraints]
    assert "ShoulderAim_L" not in names and "PadAim_L" in names


def test_missing_from_extensions_used_still_loads_with_a_warning():
    av = load_edited(lambda doc: doc["extensionsUsed"].remove(EXT))
    warned(av, "extensionsUsed", f"{EXT} is used by 9 node(s) but not listed; read anyway")
    assert len(av.constraints) == len(CONSTRAINTS)


def test_vrm0_files_have_no_node_constraints(godette_path):
    doc, bin_chunk = split(godette_path.read_bytes())
    doc["nodes"][5].setdefault("extensions", {})[EXT] = {
        "specVersion": "1.0", "constraint": {"rotation": {"source": 3}}}
    av = load_avatar("godette.vrm", data=join(doc, bin_chunk))
    assert av.constraints == ()
    warned(av, "nodes[5].extensions.VRMC_node_constraint", "is a VRM 1.0 extension; ignored on this 0.x file")
