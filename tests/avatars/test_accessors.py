"""Accessor decoding: byteStride, normalized integers, sparse accessors, every component type."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from avatars import AvatarError, load_avatar
from avatars.accessors import read_accessor
from avatars.gltf_io import read_document


def gltf_with(buffer: bytes, views: list[dict], accessors: list[dict], **extra) -> bytes:
    doc = {
        "asset": {"version": "2.0"},
        "buffers": [{"byteLength": len(buffer),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(buffer).decode()}],
        "bufferViews": views,
        "accessors": accessors,
        **extra,
    }
    return json.dumps(doc).encode()


def doc_of(data: bytes):
    return read_document("mem.gltf", data)


def test_interleaved_byte_stride():
    # 3 vertices, each: position (3 x f32) + uv (2 x u16 normalized) + 2 pad bytes = 20 bytes
    rec = np.zeros(3, dtype=[("p", "<f4", 3), ("uv", "<u2", 2), ("pad", "u1", 4)])
    rec["p"] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    rec["uv"] = [[0, 65535], [32768, 0], [65535, 65535]]
    buf = rec.tobytes()
    d = doc_of(gltf_with(buf, [{"buffer": 0, "byteLength": len(buf), "byteStride": 20}], [
        {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"},
        {"bufferView": 0, "byteOffset": 12, "componentType": 5123, "count": 3, "type": "VEC2", "normalized": True},
    ]))
    assert read_accessor(d, 0).tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    uv = read_accessor(d, 1)
    assert uv.dtype == np.float32
    assert uv == pytest.approx(np.array([[0, 1], [32768 / 65535, 0], [1, 1]]), abs=1e-7)


@pytest.mark.parametrize("ctype,dtype", [(5120, "<i1"), (5121, "<u1"), (5122, "<i2"), (5123, "<u2"),
                                         (5125, "<u4"), (5126, "<f4")])
def test_every_component_type(ctype, dtype):
    vals = np.array([0, 1, 2, 100, 7, 3], dtype=dtype)
    buf = vals.tobytes() + b"\0" * (-vals.nbytes % 4)
    d = doc_of(gltf_with(buf, [{"buffer": 0, "byteLength": len(buf)}],
                         [{"bufferView": 0, "componentType": ctype, "count": 6, "type": "SCALAR"}]))
    out = read_accessor(d, 0)
    assert out.dtype == np.dtype(dtype)
    assert out.tolist() == [0, 1, 2, 100, 7, 3]


def test_normalized_signed_clamps_to_minus_one():
    vals = np.array([-128, -127, 0, 127], dtype="<i1")
    d = doc_of(gltf_with(vals.tobytes(), [{"buffer": 0, "byteLength": 4}], [
        {"bufferView": 0, "componentType": 5120, "count": 4, "type": "SCALAR", "normalized": True}]))
    assert read_accessor(d, 0).tolist() == [-1.0, -1.0, 0.0, 1.0]


def test_sparse_accessor_substitutes_values():
    base = np.arange(12, dtype="<f4")  # 4 x VEC3
    idx = np.array([1, 3], dtype="<u2")
    vals = np.array([[10, 11, 12], [30, 31, 32]], dtype="<f4")
    buf = base.tobytes() + idx.tobytes() + vals.tobytes()
    views = [{"buffer": 0, "byteLength": 48}, {"buffer": 0, "byteOffset": 48, "byteLength": 4},
             {"buffer": 0, "byteOffset": 52, "byteLength": 24}]
    acc = {"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3",
           "sparse": {"count": 2, "indices": {"bufferView": 1, "componentType": 5123},
                      "values": {"bufferView": 2}}}
    out = read_accessor(doc_of(gltf_with(buf, views, [acc])), 0)
    assert out.tolist() == [[0, 1, 2], [10, 11, 12], [6, 7, 8], [30, 31, 32]]
    # sparse without a bufferView starts from zeros (morph targets are often stored so)
    acc0 = dict(acc)
    del acc0["bufferView"]
    out0 = read_accessor(doc_of(gltf_with(buf, views, [acc0])), 0)
    assert out0.tolist() == [[0, 0, 0], [10, 11, 12], [0, 0, 0], [30, 31, 32]]


def test_sparse_index_out_of_range():
    idx = np.array([9], dtype="<u2").tobytes() + b"\0\0"
    vals = np.zeros(1, "<f4").tobytes()
    buf = idx + vals
    acc = {"componentType": 5126, "count": 4, "type": "SCALAR",
           "sparse": {"count": 1, "indices": {"bufferView": 0, "componentType": 5123}, "values": {"bufferView": 1}}}
    d = doc_of(gltf_with(buf, [{"buffer": 0, "byteLength": 4}, {"buffer": 0, "byteOffset": 4, "byteLength": 4}], [acc]))
    with pytest.raises(AvatarError, match=r"accessors\[0\]\.sparse\.indices: index 9 >= count 4"):
        read_accessor(d, 0)


def test_mat4_accessor_is_column_major():
    m = np.arange(16, dtype="<f4")
    d = doc_of(gltf_with(m.tobytes(), [{"buffer": 0, "byteLength": 64}],
                         [{"bufferView": 0, "componentType": 5126, "count": 1, "type": "MAT4"}]))
    from avatars.accessors import read_matrices
    M = read_matrices(d, 0, "x")[0]
    assert M[0, 3] == 12 and M[3, 0] == 3  # translation lives in elements 12..14


def test_minimal_plain_gltf_with_spring_extension_loads():
    """A plain glTF carrying VRMC_springBone without VRMC_vrm loads (springs, no humanoid)."""
    data = json.dumps({
        "asset": {"version": "2.0"},
        "nodes": [{"name": "root", "children": [1]}, {"name": "a", "translation": [0, -0.1, 0], "children": [2]},
                  {"name": "b", "translation": [0, -0.1, 0]}],
        "extensions": {"VRMC_springBone": {"specVersion": "1.0", "springs": [
            {"name": "tail", "joints": [{"node": 1, "hitRadius": 0.01}, {"node": 2}]}]}},
    }).encode()
    a = load_avatar("plain.gltf", data=data)
    assert a.vrm_version is None and a.format_name == "glTF"
    assert len(a.springs) == 1 and a.springs[0].joints[0].hit_radius == 0.01
    assert a.springs[0].joints[1].stiffness == 1.0 and a.springs[0].joints[1].drag_force == 0.5
    assert a.humanoid == {}
