"""Wavefront OBJ hair meshes, with MakeHuman's ``.mhmat`` (diffuse colour) and ``.mhclo``
(scale references only) beside them.

OBJ: ``v x y z``, ``vt u v``, ``f a/b/c ...`` (1-based or negative indices, n-gons fanned
into triangles); ``vn``, ``g``, ``o``, ``s``, ``usemtl``, ``mtllib`` and comments are
skipped, ``l``/``p`` elements warn. A render vertex is one (``v``, ``vt``) pair, so UV seams
split vertices as a GPU needs; ``HairMesh.weld`` keeps the ``v`` index to join them again.
UVs become glTF's v-down convention (v' = 1 − v).

MakeHuman assets (a ``.mhclo`` beside the OBJ, or a ``# basemesh hm08`` header) are in
decimetres (MakeHuman's base mesh unit; docs/design.md §8). The ``.mhclo`` ``x_scale``/``y_scale``/
``z_scale`` lines give the distance of two base-mesh vertices along each axis — the head
the style was made for — and are read as a scale reference; nothing else of the fitting
data is used (the base mesh is not available).

Every error names the file and the line: ``ponytail01.obj: line 812: face index 9000 does
not exist (3718 vertices)``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..materials import srgb_to_linear
from .model import MAX_VERTICES, HairError, HairMesh, check_mesh

log = logging.getLogger(__name__)

#: MakeHuman base-mesh unit, metres (the hm08 base mesh is modelled in decimetres).
MAKEHUMAN_UNIT = 0.1
#: Diffuse colour used when the ``.mhmat`` names a texture that is not there (linear RGB of
#: sRGB #3b2a1a, a mid brown): MakeHuman hair materials are white and tinted by the texture.
MISSING_TEXTURE_RGB = tuple(float(c) for c in srgb_to_linear(np.array([0x3B, 0x2A, 0x1A]) / 255.0))


def _floats(parts: list[str], n: int, path: str, line: int, what: str) -> list[float]:
    if len(parts) < n:
        raise HairError(path, f"line {line}", f"{what} needs {n} numbers, got {len(parts)}")
    try:
        return [float(x) for x in parts[:n]]
    except ValueError:
        raise HairError(path, f"line {line}", f"{what} has a value that is not a number: {' '.join(parts)!r}") from None


def _index(token: str, count: int, path: str, line: int, what: str) -> int:
    try:
        i = int(token)
    except ValueError:
        raise HairError(path, f"line {line}", f"face {what} index {token!r} is not an integer") from None
    if i == 0:
        raise HairError(path, f"line {line}", f"face {what} index 0 (OBJ indices start at 1)")
    k = i - 1 if i > 0 else count + i
    if not 0 <= k < count:
        raise HairError(path, f"line {line}", f"face {what} index {i} does not exist ({count} defined so far)")
    return k


def parse_obj(path: str | Path, text: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str], bool]:
    """Parse an OBJ into (positions (V, 3), uv (V, 2) or empty, faces as (T, 3, 2) pairs of
    (v index, vt index or -1), warnings, MakeHuman header seen).

    Raises:
        HairError: unreadable file, a broken line (with its number), NaN/inf vertices,
            more than :data:`MAX_VERTICES` vertices, no faces.
    """
    path = str(path)
    if text is None:
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise HairError(path, "", f"cannot read file: {exc.strerror or exc}") from None
        n_v = raw.count(b"\nv ") + raw.startswith(b"v ")
        if n_v > MAX_VERTICES:
            raise HairError(path, "", f"{n_v} vertices; the try-on accepts at most {MAX_VERTICES}: decimate the mesh "
                            "first (e.g. Blender's Decimate modifier)")
        text = raw.decode("utf-8", errors="replace")
    verts: list[list[float]] = []
    uvs: list[list[float]] = []
    tris: list[tuple[tuple[int, int], ...]] = []
    warnings: list[str] = []
    makehuman = False
    skipped_elems = 0
    for ln, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s:
            continue
        if s[0] == "#":
            if "basemesh hm08" in s:
                makehuman = True
            continue
        parts = s.split()
        tag, args = parts[0], parts[1:]
        if tag == "v":
            xyz = _floats(args, 3, path, ln, "vertex")
            if not all(np.isfinite(xyz)):
                raise HairError(path, f"line {ln}", f"vertex {len(verts) + 1} is not finite: {' '.join(args[:3])}")
            verts.append(xyz)
        elif tag == "vt":
            uv = _floats(args, 2, path, ln, "texture coordinate")
            if not all(np.isfinite(uv)):
                raise HairError(path, f"line {ln}", f"texture coordinate {len(uvs) + 1} is not finite")
            uvs.append(uv)
        elif tag == "f":
            if len(args) < 3:
                raise HairError(path, f"line {ln}", f"a face needs at least 3 vertices, got {len(args)}")
            corners = []
            for tok in args:
                sub = tok.split("/")
                vi = _index(sub[0], len(verts), path, ln, "vertex")
                ti = _index(sub[1], len(uvs), path, ln, "texture") if len(sub) > 1 and sub[1] else -1
                corners.append((vi, ti))
            for k in range(1, len(corners) - 1):
                tris.append((corners[0], corners[k], corners[k + 1]))
        elif tag in ("vn", "vp", "g", "o", "s", "usemtl", "mtllib"):
            continue
        elif tag in ("l", "p", "curv", "surf"):
            skipped_elems += 1
        else:
            raise HairError(path, f"line {ln}", f"unknown OBJ statement {tag!r}")
    if skipped_elems:
        warnings.append(f"{skipped_elems} line/point/curve elements skipped (only faces are used)")
    if not tris:
        raise HairError(path, "", f"no faces ('f' lines) in {len(verts)} vertices; a hair mesh needs a surface")
    pos = np.asarray(verts, np.float64).reshape(-1, 3)
    uv = np.asarray(uvs, np.float64).reshape(-1, 2)
    faces = np.asarray(tris, np.int64).reshape(-1, 3, 2)
    return pos, uv, faces, warnings, makehuman


def read_mhmat(path: Path) -> tuple[np.ndarray | None, list[str]]:
    """The diffuse colour (4,) linear RGBA of a MakeHuman material, or None; with warnings.

    ``diffuseColor r g b`` is sRGB in [0, 1]. MakeHuman hair is tinted by its
    ``diffuseTexture``; when that file is missing the colour is multiplied by
    :data:`MISSING_TEXTURE_RGB` (a mid brown) and a warning says so.
    """
    color = np.array([1.0, 1.0, 1.0])
    opacity = 1.0
    texture = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "diffuseColor":
            try:
                color = srgb_to_linear(np.clip([float(x) for x in parts[1:4]], 0.0, 1.0))
            except ValueError:
                return None, [f"{path.name}: diffuseColor is not three numbers; default hair colour used"]
        elif len(parts) >= 2 and parts[0] == "diffuseTexture":
            texture = parts[1]
        elif len(parts) >= 2 and parts[0] == "opacity":
            try:
                opacity = float(np.clip(float(parts[1]), 0.0, 1.0))
            except ValueError:
                pass
    warnings = []
    if texture is not None and not (path.parent / texture).exists():
        color = color * np.asarray(MISSING_TEXTURE_RGB)
        warnings.append(f"{path.name}: texture {texture} is not there; its colour is replaced by a mid brown")
    return np.concatenate([color, [opacity]]), warnings


def read_mhclo_reference(path: Path) -> np.ndarray | None:
    """(3,) width, height, depth (decimetres) of the base-mesh head the clothes/hair were
    fitted to: the ``x_scale``/``y_scale``/``z_scale`` reference distances, or None."""
    ref = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] in ("x_scale", "y_scale", "z_scale"):
            try:
                ref[parts[0][0]] = float(parts[3])
            except ValueError:
                return None
        elif parts and parts[0][:1].isdigit():
            break  # the vertex fitting data starts: the header is over
    if len(ref) != 3 or min(ref.values()) <= 0:
        return None
    return np.array([ref["x"], ref["y"], ref["z"]])


def load_obj(path: str | Path) -> HairMesh:
    """Load an OBJ hair mesh (and its MakeHuman ``.mhmat`` / ``.mhclo`` when beside it).

    Raises:
        HairError: see :func:`parse_obj`, and faces that are all degenerate.
    """
    p = Path(path)
    pos, uv, faces, warnings, makehuman = parse_obj(p)
    v_idx = faces[:, :, 0]
    # drop degenerate triangles (two corners on the same vertex, or zero area)
    a, b, c = pos[v_idx[:, 0]], pos[v_idx[:, 1]], pos[v_idx[:, 2]]
    area2 = np.linalg.norm(np.cross(b - a, c - a), axis=1)
    scale = max(float(np.ptp(pos, axis=0).max()), 1e-30)
    ok = (v_idx[:, 0] != v_idx[:, 1]) & (v_idx[:, 1] != v_idx[:, 2]) & (v_idx[:, 2] != v_idx[:, 0])
    ok &= area2 > 1e-12 * scale * scale
    if not ok.any():
        raise HairError(str(p), "", f"all {len(faces)} faces are degenerate (zero area)")
    if (~ok).sum():
        warnings.append(f"{int((~ok).sum())} degenerate faces dropped")
    faces = faces[ok]
    warnings += check_mesh(str(p), pos, faces[:, :, 0])
    # render vertices: one per (v, vt) pair
    pairs = faces.reshape(-1, 2)
    uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
    tris = inv.reshape(-1, 3).astype(np.int64)
    has_uv = len(uv) > 0 and (uniq[:, 1] >= 0).all()
    uv_out = None
    if has_uv:
        t = uv[uniq[:, 1]]
        uv_out = np.stack([t[:, 0], 1.0 - t[:, 1]], axis=1).astype(np.float32)
    mhmat = p.with_suffix(".mhmat")
    mhclo = p.with_suffix(".mhclo")
    color = None
    if mhmat.exists():
        color, w = read_mhmat(mhmat)
        warnings += w
    head_ref = read_mhclo_reference(mhclo) if mhclo.exists() else None
    unit, unit_source = None, "not stated (OBJ has no units)"
    if makehuman or mhclo.exists():
        unit, unit_source = MAKEHUMAN_UNIT, "MakeHuman asset (decimetres)"
    kwargs = {} if color is None else {"color": color}
    mesh = HairMesh(name=p.stem, path=str(p), positions=pos[uniq[:, 0]], triangles=tris, weld=uniq[:, 0].copy(),
                    uv=uv_out, unit=unit, unit_source=unit_source, head_reference=head_ref,
                    warnings=tuple(warnings), **kwargs)
    for w in warnings:
        log.info("%s: %s", p.name, w)
    return mesh
