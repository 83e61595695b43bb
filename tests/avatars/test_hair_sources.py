"""Hair sources (avatars/hair): OBJ + MakeHuman sidecars, meshes inside avatars, units, and
every bad input the try-on must refuse or report clearly (file and line/element named)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from avatars import load_avatar
from avatars.hair import MAX_VERTICES, HairError, detect_units, find_style, hair_from_avatar, load_hair, load_obj
from avatars.hair.obj import MAKEHUMAN_UNIT
from tests.conftest import asset

STYLES = ("ponytail01", "long01", "bob01", "short02")
HEAD = 0.21   # metres, about the default avatar's crown-to-chin height


@pytest.fixture(scope="module")
def default_avatar_path():
    from avatars.generate import default_avatar_path as path

    return path()


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


QUAD = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nf 1/1 2/2 3/3 4/4\n"


@pytest.mark.parametrize("style", STYLES)
def test_makehuman_styles_load_with_colour_units_and_head_reference(style):
    h = load_hair(asset("hair", style, f"{style}.obj"))
    assert h.unit == MAKEHUMAN_UNIT and "MakeHuman" in h.unit_source
    assert h.triangle_count > 1000 and h.uv is not None and h.uv.shape == (h.vertex_count, 2)
    # UV seams split vertices for the GPU; the weld key joins them again
    assert len(np.unique(h.weld)) < h.vertex_count
    assert h.head_reference is not None and 1.0 < h.head_reference[1] < 3.0     # decimetres
    assert any("texture" in w for w in h.warnings)                             # .png not shipped: said
    assert np.all(h.color[:3] < 0.2) and h.color[3] == 1.0                     # a brown, not white


def test_style_names_resolve_in_the_hair_folders():
    assert find_style("long01").name == "long01.obj"
    with pytest.raises(HairError, match="no hair style named 'nope'.*long01"):
        find_style("nope")


def test_obj_without_faces_is_refused(tmp_path):
    p = _write(tmp_path, "empty.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n")
    with pytest.raises(HairError, match=r"empty\.obj: no faces"):
        load_obj(p)


@pytest.mark.parametrize("text,line,what", [
    ("v 0 0 0\nv 1 0 zero\nv 0 1 0\nf 1 2 3\n", 2, "not a number"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", 4, "index 9 does not exist"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", 4, "at least 3 vertices"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", 4, "index 0"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nwat 1 2 3\nf 1 2 3\n", 4, "unknown OBJ statement"),
    ("v 0 0 0\nv 1 0\nv 0 1 0\nf 1 2 3\n", 2, "needs 3 numbers"),
])
def test_broken_obj_lines_are_named_by_number(tmp_path, text, line, what):
    p = _write(tmp_path, "broken.obj", text)
    with pytest.raises(HairError, match=rf"broken\.obj: line {line}: .*{what}"):
        load_obj(p)


def test_nan_vertices_are_refused_with_their_line(tmp_path):
    p = _write(tmp_path, "nan.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n")
    with pytest.raises(HairError, match=r"nan\.obj: line 2: vertex 2 is not finite"):
        load_obj(p)


def test_a_500k_vertex_mesh_is_refused_before_parsing(tmp_path):
    p = tmp_path / "huge.obj"
    with open(p, "w") as f:
        f.write("v 0 0 0\n" * 500_000 + "f 1 2 3\n")
    with pytest.raises(HairError, match=rf"huge\.obj: 500000 vertices; the try-on accepts at most {MAX_VERTICES}"):
        load_obj(p)


def test_degenerate_faces_are_dropped_and_said(tmp_path):
    p = _write(tmp_path, "deg.obj", QUAD + "f 1 1 2\n")
    h = load_obj(p)
    assert h.triangle_count == 2 and any("degenerate" in w for w in h.warnings)


def test_non_manifold_and_disconnected_meshes_load_with_a_warning(tmp_path):
    # three triangles on one edge (non-manifold) plus a separate triangle (disconnected)
    text = ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nv 5 5 5\nv 6 5 5\nv 5 6 5\n"
            "f 1 2 3\nf 2 1 4\nf 1 2 5\nf 6 7 8\n")
    h = load_obj(_write(tmp_path, "nm.obj", text))
    assert any("non-manifold" in w for w in h.warnings)
    assert h.triangle_count == 4 and h.uv is None


def _scaled_copy(tmp_path, style, factor, header=True):
    src = asset("hair", style, f"{style}.obj")
    out = []
    for line in src.read_text().splitlines():
        if line.startswith("v "):
            x, y, z = (float(v) * factor for v in line.split()[1:4])
            line = f"v {x} {y} {z}"
        elif not header and line.startswith("#"):
            continue
        out.append(line)
    p = tmp_path / f"{style}.obj"
    p.write_text("\n".join(out) + "\n")
    if header:
        shutil.copy(src.with_suffix(".mhmat"), p.with_suffix(".mhmat"))
    return p


@pytest.mark.parametrize("factor,word", [(100.0, "big"), (0.01, "small")])
def test_a_makehuman_mesh_100x_off_its_stated_units_is_refused(tmp_path, factor, word):
    h = load_obj(_scaled_copy(tmp_path, "short02", factor))
    with pytest.raises(HairError, match=rf"short02\.obj: the mesh is about \d+x too {word} for the head"):
        detect_units(h, HEAD)


def test_units_of_a_plain_obj_are_guessed_with_a_warning(tmp_path):
    h = load_obj(_scaled_copy(tmp_path, "bob01", 10.0, header=False))     # decimetres x 10 = centimetres
    assert h.unit is None
    choice = detect_units(h, HEAD)
    assert choice.guessed and choice.name == "cm" and "guessed" in choice.reason
    with pytest.raises(HairError, match="no unit"):
        detect_units(load_obj(_scaled_copy(tmp_path, "bob01", 1e6, header=False)), HEAD)


def test_hair_from_an_avatar_by_mesh_node_and_spring(default_avatar_path):
    av = load_avatar(default_avatar_path)
    by_mesh = hair_from_avatar(av, mesh="Hair")
    by_node = hair_from_avatar(av, node="Hair")
    assert by_mesh.vertex_count == by_node.vertex_count == av.meshes[2].vertex_count
    assert set(by_mesh.cleared_springs) == {s.name for s in av.springs}
    pony = hair_from_avatar(av, spring="Ponytail")
    assert pony.cleared_springs == ("Ponytail",) and pony.frame == "avatar-rest" and pony.unit == 1.0
    # the ponytail tube only: below the scalp, behind the head, not the scrunchie
    assert pony.positions[:, 2].max() < -0.08 and 300 < pony.vertex_count < 600
    with pytest.raises(HairError, match="no spring named 'Pigtail'.*Ponytail"):
        hair_from_avatar(av, spring="Pigtail")
    with pytest.raises(HairError, match="no mesh named 'Wig'.*Hair"):
        hair_from_avatar(av, mesh="Wig")
    with pytest.raises(HairError, match="exactly one"):
        hair_from_avatar(av, mesh="Hair", spring="Ponytail")


def test_a_glb_hair_file_with_several_meshes_asks_for_a_selection(default_avatar_path):
    with pytest.raises(HairError, match="3 meshes .*Body, Face, Hair.*choose"):
        load_hair(default_avatar_path)
    assert load_hair(default_avatar_path, mesh="Hair").unit_source == "glTF (metres)"
