"""A fitted style's guide curves as plain arrays (:class:`GuideSet`) and as JSON (docs/guides.md).

The try-on (:func:`avatars.tryon.pipeline.try_on`) extracts candidate guides from the hair's
surface graph (:mod:`avatars.tryon.guides`), attaches their roots to scalp triangles
(:mod:`avatars.tryon.scalp`) and joins unattached fragments to attached guides
(:mod:`avatars.tryon.join`). :func:`guide_set` keeps what a viewer or a hair artist needs of
that, per guide: the points, its state (attached, joined, rejected), the parent a joined
fragment continues, the scalp triangle of an attached root (mesh instance, primitive, the
three vertex indices, barycentric weights) and the suggested root (the scalp point of an
attached guide, else the curve's first point). The set is kept in the fit cache (the
intermediate guides are not), so a cached style can still be inspected and exported.

:func:`to_json` writes the document of ``guides.schema.json`` (beside this module);
:func:`from_json` reads it back, checking every part it reads (errors name the JSON path).
Frame: the avatar's rest pose, world metres, +Y up, the avatar faces +Z (docs/design.md §3).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: The ``format`` string of the JSON document.
FORMAT = "swaycam-guides-1"
#: The JSON schema of the document (draft 2020-12).
SCHEMA_PATH = Path(__file__).with_name("guides.schema.json")
#: Guide states, by code (:attr:`GuideSet.state`).
STATES = ("attached", "joined", "rejected")
ATTACHED, JOINED, REJECTED = 0, 1, 2


@dataclass(frozen=True, eq=False)
class GuideSet:
    """The guides of one fit, as flat arrays (G guides, T points in all).

    Attributes:
        points: (T, 3) float64 curve points, rest pose, world metres, each guide root first.
        offsets: (G + 1,) int64: guide g's points are ``points[offsets[g]:offsets[g + 1]]``.
        state: (G,) int8 :data:`ATTACHED`, :data:`JOINED` or :data:`REJECTED`.
        parent: (G,) int64 the guide a joined fragment continues (-1: none).
        flipped: (G,) bool a joined fragment was reversed to continue its parent.
        piece: (G,) int64 connected piece of the welded hair graph.
        length: (G,) float64 arc length, metres.
        root_source: (G, 5) int64 the scalp triangle of an attached root: mesh instance,
            primitive, its three vertex indices (-1 rows for guides not attached).
        root_bary: (G, 3) float64 barycentric weights on that triangle (NaN rows when not attached).
        root_distance: (G,) float64 distance from the curve's first point to the scalp point,
            metres (NaN when not attached).
        suggested_root: (G, 3) float64 the scalp point of an attached guide, else the curve's
            first point (where the extraction suggested its root).
        head_node: the avatar's head node (the guides move rigidly with it in a viewer; -1: none).
    """

    points: np.ndarray
    offsets: np.ndarray
    state: np.ndarray
    parent: np.ndarray
    flipped: np.ndarray
    piece: np.ndarray
    length: np.ndarray
    root_source: np.ndarray
    root_bary: np.ndarray
    root_distance: np.ndarray
    suggested_root: np.ndarray
    head_node: int = -1

    @property
    def count(self) -> int:
        return len(self.state)

    def curve(self, g: int) -> np.ndarray:
        """(P, 3) points of guide ``g``."""
        return self.points[self.offsets[g]:self.offsets[g + 1]]

    def counts(self) -> dict:
        """{candidates, attached, joined, rejected}: the ``guides`` object of ``hair fit --json``."""
        return {"candidates": self.count, **{s: int((self.state == k).sum()) for k, s in enumerate(STATES)}}


def guide_set(guides, attachments, join, head_node: int = -1) -> GuideSet:
    """The :class:`GuideSet` of a fit's intermediate results.

    Args:
        guides: the candidate :class:`avatars.tryon.guides.Guide` s (root first).
        attachments: per guide, its :class:`avatars.tryon.scalp.ScalpAttachment` or None.
        join: the :class:`avatars.tryon.join.JoinResult` (None: nothing joined).
        head_node: the avatar's head node.
    """
    g = len(guides)
    pts = [np.asarray(x.points, np.float64).reshape(-1, 3) for x in guides]
    offsets = np.zeros(g + 1, np.int64)
    offsets[1:] = np.cumsum([len(p) for p in pts]) if g else []
    parent = np.full(g, -1, np.int64) if join is None else np.asarray(join.parent, np.int64).copy()
    flipped = np.zeros(g, bool) if join is None else np.asarray(join.flipped, bool).copy()
    attached = np.array([a is not None for a in attachments], bool).reshape(g)
    state = np.where(attached, ATTACHED, np.where(parent >= 0, JOINED, REJECTED)).astype(np.int8)
    src = np.full((g, 5), -1, np.int64)
    bary = np.full((g, 3), np.nan)
    dist = np.full(g, np.nan)
    root = np.array([p[0] for p in pts]).reshape(g, 3)
    for i, a in enumerate(attachments):
        if a is not None:
            src[i], bary[i], dist[i], root[i] = a.source, a.bary, a.distance, a.point
    return GuideSet(points=np.concatenate(pts) if pts else np.zeros((0, 3)), offsets=offsets, state=state,
                    parent=parent, flipped=flipped, piece=np.array([x.piece for x in guides], np.int64).reshape(g),
                    length=np.array([x.length for x in guides], np.float64).reshape(g), root_source=src,
                    root_bary=bary, root_distance=dist, suggested_root=root, head_node=int(head_node))


def _r(v: float) -> float:
    return round(float(v), 6)     # micrometres: the JSON stays small, the points exact enough


def to_json(gs: GuideSet, *, style: str, avatar: str) -> dict:
    """The JSON document (``guides.schema.json``) of ``gs`` for ``style`` fitted on ``avatar``."""
    out = []
    for g in range(gs.count):
        st = STATES[int(gs.state[g])]
        root = None
        if gs.state[g] == ATTACHED:
            s = gs.root_source[g]
            root = {"point": [_r(v) for v in gs.suggested_root[g]], "distance": _r(gs.root_distance[g]),
                    "triangle": {"mesh_instance": int(s[0]), "primitive": int(s[1]),
                                 "vertices": [int(v) for v in s[2:]],
                                 "barycentric": [_r(v) for v in gs.root_bary[g]]}}
        out.append({"index": g, "state": st, "points": [[_r(v) for v in p] for p in gs.curve(g)],
                    "length": _r(gs.length[g]), "piece": int(gs.piece[g]),
                    "parent": int(gs.parent[g]) if gs.parent[g] >= 0 else None, "flipped": bool(gs.flipped[g]),
                    "root": root, "suggested_root": [_r(v) for v in gs.suggested_root[g]]})
    return {"format": FORMAT, "style": style, "avatar": avatar,
            "frame": "avatar rest pose, world metres, +Y up, the avatar faces +Z",
            "head_node": gs.head_node, "counts": gs.counts(), "guides": out}


def write_json(gs: GuideSet, path: str | Path, *, style: str, avatar: str) -> Path:
    """Write :func:`to_json` to ``path`` (UTF-8); returns the path. Raises OSError."""
    p = Path(path)
    p.write_text(json.dumps(to_json(gs, style=style, avatar=avatar), separators=(",", ":")), encoding="utf-8")
    return p


def _vec(v, n: int, where: str) -> np.ndarray:
    if not isinstance(v, list) or len(v) != n or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v):
        raise ValueError(f"{where}: expected {n} finite numbers, got {json.dumps(v)[:40]}")
    return np.asarray(v, np.float64)


def _int(v, where: str, lo: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise ValueError(f"{where}: expected an integer >= {lo}, got {json.dumps(v)[:40]}")
    return v


def from_json(doc: dict | str | Path) -> GuideSet:
    """A :class:`GuideSet` from a document of :func:`to_json` (a dict, or a file path).

    Raises:
        ValueError: not such a document; the message names the JSON path (``guides[3].points[0]``).
        OSError: the file cannot be read.
    """
    if isinstance(doc, (str, Path)):
        where = str(doc)
        try:
            doc = json.loads(Path(doc).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"format: expected {FORMAT!r}")
    items = doc.get("guides")
    if not isinstance(items, list):
        raise ValueError("guides: expected an array")
    g = len(items)
    pts, state, parent, flipped, piece, length = [], np.zeros(g, np.int8), np.full(g, -1, np.int64), \
        np.zeros(g, bool), np.zeros(g, np.int64), np.zeros(g)
    src, bary, dist, sugg = np.full((g, 5), -1, np.int64), np.full((g, 3), np.nan), np.full(g, np.nan), np.zeros((g, 3))
    for i, it in enumerate(items):
        w = f"guides[{i}]"
        if not isinstance(it, dict):
            raise ValueError(f"{w}: expected an object")
        if it.get("state") not in STATES:
            raise ValueError(f"{w}.state: expected one of {list(STATES)}, got {json.dumps(it.get('state'))[:40]}")
        state[i] = STATES.index(it["state"])
        p = it.get("points")
        if not isinstance(p, list) or len(p) < 2:
            raise ValueError(f"{w}.points: expected at least 2 points")
        pts.append(np.array([_vec(q, 3, f"{w}.points[{k}]") for k, q in enumerate(p)]))
        length[i] = _vec([it.get("length")], 1, f"{w}.length")[0]
        piece[i] = _int(it.get("piece"), f"{w}.piece")
        if it.get("parent") is not None:
            parent[i] = _int(it["parent"], f"{w}.parent")
            if parent[i] >= g:
                raise ValueError(f"{w}.parent: {parent[i]} is not a guide (there are {g})")
        flipped[i] = bool(it.get("flipped", False))
        sugg[i] = _vec(it.get("suggested_root"), 3, f"{w}.suggested_root")
        root = it.get("root")
        if (root is None) != (state[i] != ATTACHED):
            raise ValueError(f"{w}.root: an attached guide has a root object, the others null")
        if root is not None:
            tri = root.get("triangle") if isinstance(root, dict) else None
            if not isinstance(tri, dict):
                raise ValueError(f"{w}.root.triangle: expected an object")
            verts = tri.get("vertices")
            if not isinstance(verts, list) or len(verts) != 3:
                raise ValueError(f"{w}.root.triangle.vertices: expected 3 vertex indices")
            src[i] = [_int(tri.get("mesh_instance"), f"{w}.root.triangle.mesh_instance"),
                      _int(tri.get("primitive"), f"{w}.root.triangle.primitive"),
                      *(_int(v, f"{w}.root.triangle.vertices[{k}]") for k, v in enumerate(verts))]
            bary[i] = _vec(tri.get("barycentric"), 3, f"{w}.root.triangle.barycentric")
            dist[i] = _vec([root.get("distance")], 1, f"{w}.root.distance")[0]
    offsets = np.zeros(g + 1, np.int64)
    offsets[1:] = np.cumsum([len(p) for p in pts]) if g else []
    head = doc.get("head_node", -1)
    return GuideSet(points=np.concatenate(pts) if pts else np.zeros((0, 3)), offsets=offsets, state=state,
                    parent=parent, flipped=flipped, piece=piece, length=length, root_source=src, root_bary=bary,
                    root_distance=dist, suggested_root=sugg,
                    head_node=head if isinstance(head, int) and not isinstance(head, bool) else -1)


__all__ = ["ATTACHED", "FORMAT", "GuideSet", "JOINED", "REJECTED", "SCHEMA_PATH", "STATES", "from_json",
           "guide_set", "to_json", "write_json"]
