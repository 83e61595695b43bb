"""glTF accessors -> numpy arrays (glTF 2.0 spec §3.6 Accessors, §3.6.2 sparse accessors).

Handles byteStride (interleaved views), every component type, ``normalized`` integers
(converted to float as the spec's §3.11 equations say), sparse substitution, and accessors
without a bufferView (zeros). Every range is checked; errors name the accessor.
"""

from __future__ import annotations

import numpy as np

from .gltf_io import GltfDocument

COMPONENT_DTYPES = {
    5120: np.dtype("<i1"),
    5121: np.dtype("<u1"),
    5122: np.dtype("<i2"),
    5123: np.dtype("<u2"),
    5125: np.dtype("<u4"),
    5126: np.dtype("<f4"),
}
TYPE_SIZES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


def _normalize(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """glTF §3.11: signed -> max(c / (2^(b-1) - 1), -1); unsigned -> c / (2^b - 1)."""
    info = np.iinfo(dtype)
    if info.min < 0:
        return np.maximum(a.astype(np.float32) / np.float32(info.max), np.float32(-1.0))
    return a.astype(np.float32) / np.float32(info.max)


def read_view(doc: GltfDocument, view_index: int, element: str) -> tuple[bytes, int, int, int | None]:
    """(buffer bytes, byteOffset, byteLength, byteStride) of bufferViews[view_index], range-checked."""
    views = doc.json.get("bufferViews", []) or []
    if not isinstance(view_index, int) or not 0 <= view_index < len(views):
        raise doc.issues.error(element, f"bufferView {view_index} does not exist ({len(views)} bufferViews)")
    v = views[view_index]
    b = v.get("buffer", -1)
    if not isinstance(b, int) or not 0 <= b < len(doc.buffers):
        raise doc.issues.error(f"bufferViews[{view_index}]", f"buffer {b} does not exist")
    off = int(v.get("byteOffset", 0))
    length = int(v.get("byteLength", -1))
    if off < 0 or length < 0 or off + length > len(doc.buffers[b]):
        raise doc.issues.error(
            f"bufferViews[{view_index}]",
            f"range {off}..{off + length} is outside buffer {b} ({len(doc.buffers[b])} bytes)",
        )
    return doc.buffers[b], off, length, v.get("byteStride")


def view_bytes(doc: GltfDocument, view_index: int, element: str) -> bytes:
    """The bytes of bufferViews[view_index] (for images)."""
    buf, off, length, _ = read_view(doc, view_index, element)
    return bytes(buf[off : off + length])


def _strided(doc, view_index, byte_offset, count, dtype, ncomp, element) -> np.ndarray:
    buf, voff, vlen, stride = read_view(doc, view_index, element)
    elem_size = dtype.itemsize * ncomp
    stride = int(stride) if stride else elem_size
    if stride < elem_size:
        raise doc.issues.error(element, f"byteStride {stride} is smaller than the element size {elem_size}")
    need = byte_offset + (count - 1) * stride + elem_size if count else 0
    if byte_offset < 0 or need > vlen:
        raise doc.issues.error(
            element, f"{count} elements at byteOffset {byte_offset} need {need} bytes; bufferView has {vlen}"
        )
    if count == 0:
        return np.zeros((0, ncomp), dtype)
    raw = np.frombuffer(buf, dtype=np.uint8, count=need, offset=voff)
    rows = np.lib.stride_tricks.as_strided(raw[byte_offset:], shape=(count, elem_size), strides=(stride, 1))
    return np.ascontiguousarray(rows).view(dtype).reshape(count, ncomp)


def read_accessor(doc: GltfDocument, index: int, element: str | None = None) -> np.ndarray:
    """Read accessors[index] as a numpy array.

    Returns:
        (count,) for SCALAR, (count, n) for VECn, (count, n, n) for MATn (column-major as
        stored, i.e. ``a[k].T`` is the math matrix); float32 when normalized, else the
        component dtype.

    Raises:
        AvatarError: index out of range, unknown type/componentType, view or buffer range.
    """
    accs = doc.json.get("accessors", []) or []
    where = element or f"accessors[{index}]"
    if not isinstance(index, int) or not 0 <= index < len(accs):
        raise doc.issues.error(where, f"accessor {index} does not exist ({len(accs)} accessors)")
    acc = accs[index]
    elem = f"accessors[{index}]"
    ctype = acc.get("componentType")
    if ctype not in COMPONENT_DTYPES:
        raise doc.issues.error(elem, f"componentType {ctype!r} is not a glTF component type")
    atype = acc.get("type")
    if atype not in TYPE_SIZES:
        raise doc.issues.error(elem, f"type {atype!r} is not a glTF accessor type")
    count = acc.get("count")
    if not isinstance(count, int) or count < 0:
        raise doc.issues.error(elem, f"count {count!r} is not a non-negative integer")
    dtype = COMPONENT_DTYPES[ctype]
    ncomp = TYPE_SIZES[atype]
    if ncomp in (4, 9, 16) and atype.startswith("MAT") and dtype.itemsize < 4:
        raise doc.issues.error(elem, "byte/short matrix accessors need column padding; not supported")
    if "bufferView" in acc:
        data = _strided(doc, acc["bufferView"], int(acc.get("byteOffset", 0)), count, dtype, ncomp, elem)
    else:
        data = np.zeros((count, ncomp), dtype)
    sparse = acc.get("sparse")
    if sparse:
        data = data.copy()
        scount = int(sparse.get("count", 0))
        idx = sparse.get("indices", {})
        ityp = COMPONENT_DTYPES.get(idx.get("componentType"))
        if ityp is None or ityp.kind != "u":
            raise doc.issues.error(f"{elem}.sparse.indices", f"componentType {idx.get('componentType')!r} invalid")
        ind = _strided(doc, idx.get("bufferView"), int(idx.get("byteOffset", 0)), scount, ityp, 1,
                       f"{elem}.sparse.indices")[:, 0].astype(np.int64)
        if scount and (ind.min() < 0 or ind.max() >= count):
            raise doc.issues.error(f"{elem}.sparse.indices", f"index {int(ind.max())} >= count {count}")
        val = sparse.get("values", {})
        vals = _strided(doc, val.get("bufferView"), int(val.get("byteOffset", 0)), scount, dtype, ncomp,
                        f"{elem}.sparse.values")
        data[ind] = vals
    if acc.get("normalized") and dtype.kind in "iu":
        data = _normalize(data, dtype)
    if atype == "SCALAR":
        return data[:, 0]
    if atype.startswith("MAT"):
        n = int(round(ncomp ** 0.5))
        return data.reshape(count, n, n)
    return data


def read_matrices(doc: GltfDocument, index: int, element: str) -> np.ndarray:
    """A MAT4 accessor as (count, 4, 4) float64 math matrices (column vectors)."""
    m = read_accessor(doc, index, element)
    if m.ndim != 3 or m.shape[1:] != (4, 4):
        raise doc.issues.error(element, f"accessor {index} is not MAT4")
    return np.transpose(m.astype(np.float64), (0, 2, 1))
