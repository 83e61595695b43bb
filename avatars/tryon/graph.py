"""The connectivity graph of a hair mesh, for the guide analysis (docs/design.md §9, seed articles).

Vertices split only by UV seams or normals (same ``HairMesh.weld`` key), and vertices at the
same position, are welded into one graph node; the rendered mesh keeps its own vertices.
Edges are the welded triangle edges, weighted by their length; shortest surface paths use
:func:`scipy.sparse.csgraph.dijkstra`, pieces :func:`~scipy.sparse.csgraph.connected_components`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

#: Vertices closer than this fraction of the mesh size are welded.
WELD_TOLERANCE = 1e-6


@dataclass(frozen=True, eq=False)
class HairGraph:
    """Welded surface graph.

    Attributes:
        node: (V,) graph node of each render vertex.
        points: (N, 3) node positions (metres, world rest).
        edges: (E, 2) int64 node pairs (i < j), unique.
        lengths: (E,) edge lengths, metres.
        matrix: (N, N) symmetric CSR matrix of edge lengths.
        component: (N,) connected-component label of each node.
        component_count: number of components.
        triangles: (T, 3) welded triangles (node indices).
    """

    node: np.ndarray
    points: np.ndarray
    edges: np.ndarray
    lengths: np.ndarray
    matrix: csr_matrix
    component: np.ndarray
    component_count: int
    triangles: np.ndarray

    @property
    def node_count(self) -> int:
        return int(self.points.shape[0])

    def neighbours(self) -> csr_matrix:
        """The adjacency as a CSR matrix (same pattern as :attr:`matrix`)."""
        return self.matrix


def build_graph(positions: np.ndarray, triangles: np.ndarray, weld: np.ndarray) -> HairGraph:
    """Weld and connect: ``positions`` (V, 3) metres, ``triangles`` (T, 3), ``weld`` (V,) keys."""
    pos = np.asarray(positions, np.float64)
    size = float(np.ptp(pos, axis=0).max()) if len(pos) else 1.0
    q = np.round(pos / max(WELD_TOLERANCE * size, 1e-30)).astype(np.int64)
    # a node per weld key, then merge keys whose positions coincide
    _, key = np.unique(np.asarray(weld), return_inverse=True)
    key = key.reshape(-1)
    _, by_pos = np.unique(q, axis=0, return_inverse=True)
    by_pos = by_pos.reshape(-1)
    n_key = int(key.max()) + 1
    # union of the two partitions through connected components of a bipartite graph
    rows = np.concatenate([key, n_key + by_pos])
    cols = np.concatenate([n_key + by_pos, key])
    m = int(n_key + by_pos.max() + 1)
    _, lab = connected_components(csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, m)), directed=False)
    _, node = np.unique(lab[key], return_inverse=True)
    node = node.reshape(-1)
    n = int(node.max()) + 1
    points = np.zeros((n, 3))
    cnt = np.zeros(n)
    np.add.at(points, node, pos)
    np.add.at(cnt, node, 1.0)
    points /= cnt[:, None]
    t = node[np.asarray(triangles, np.int64)]
    e = np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]])
    e = np.sort(e[e[:, 0] != e[:, 1]], axis=1)
    e = np.unique(e, axis=0)
    length = np.linalg.norm(points[e[:, 0]] - points[e[:, 1]], axis=1)
    length = np.maximum(length, 1e-12)
    mat = csr_matrix((np.r_[length, length], (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])), shape=(n, n))
    nc, comp = connected_components(mat, directed=False)
    return HairGraph(node=node, points=points, edges=e, lengths=length, matrix=mat, component=comp,
                     component_count=int(nc), triangles=t)


def loose_regions(graph: HairGraph, loose: np.ndarray) -> np.ndarray:
    """(N,) label of the connected region of ``loose`` nodes (an (N,) bool mask: hair
    farther from the head than the attachment band) each node lies in, through edges
    between loose nodes only; −1 for the other nodes. A layer of hair laid over the head
    and falling on both sides is one piece but two loose regions (its band over the head
    joins them); the labels are the pieces' own regions, never shared between pieces."""
    loose = np.asarray(loose, bool)
    n = graph.node_count
    e = graph.edges[loose[graph.edges].all(axis=1)]
    mat = csr_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    _, lab = connected_components(mat, directed=False)
    out = np.full(n, -1, np.int64)
    _, out[loose] = np.unique(lab[loose], return_inverse=True)
    return out
