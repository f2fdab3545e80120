"""Group assignments for d_sigma-privacy, built from public side information.

A *group assignment* gives every user ``i`` (0-based) a group ``G_i``: a collection of user indices
that contains ``i`` itself (Meehan, Roy-Chowdhury, Chaudhuri, Jha, *Privacy Implications of
Shuffling*, ICLR 2022, Sec. 4.2). The library stores it as a tuple of sorted ``int64`` arrays.

Builders, none of which forms a dense n x n matrix:

* :func:`groups_from_points` -- ``G_i = {j : d(t_i, t_j) <= r}`` for Euclidean points or for
  latitude/longitude pairs with the haversine distance in kilometres (scipy KD-tree; haversine is
  answered exactly through the chord length on the unit sphere);
* :func:`groups_from_graph` -- ``G_i = {j : shortest-path length(i, j) <= r}`` on a graph given as
  an edge list or a scipy sparse matrix (sparse boolean powers for unweighted graphs, chunked
  Dijkstra with a distance limit for weighted ones);
* :func:`nearest_groups` -- the ``size`` nearest users (including ``i``) under the same metrics;
* :func:`validate_groups` -- explicit groups, checked.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra
from scipy.spatial import cKDTree

from .._validation import (
    ParameterError,
    check_choice,
    check_int,
    check_max_work,
    check_real,
    check_real_array,
    check_work,
)

__all__ = [
    "EARTH_RADIUS_KM",
    "validate_groups",
    "groups_from_points",
    "groups_from_graph",
    "nearest_groups",
]

#: Mean Earth radius (IUGG) used by the haversine metric, in kilometres.
EARTH_RADIUS_KM = 6371.0088

_METRICS = ("euclidean", "haversine")


class _ValidGroups(tuple):
    """Marker: a tuple of sorted int64 group arrays already checked by :func:`validate_groups`."""

    __slots__ = ()


class SymmetricGroups(_ValidGroups):
    """Marker: valid groups with ``j in G_i <=> i in G_j`` (distance thresholds), so the reverse
    adjacency equals the groups and the BFS of :mod:`.reference` need not build it."""

    __slots__ = ()


#: Work units charged per group member by :func:`groups_from_points` (the KD-tree query, the BFS
#: reference permutation and the exact sensitivity each touch every member; calibrated so that
#: ``DEFAULT_MAX_WORK`` = 1e8 units is about two million members, a few seconds end to end).
WORK_PER_MEMBER: int = 50


def _check_one_group(i: int, g: Any, size: int) -> np.ndarray:
    if isinstance(g, (str, bytes)):
        raise ParameterError(f"groups[{i}] must be a collection of integer indices, got {g!r}")
    if isinstance(g, np.ndarray):
        # a 1-D integer array only: a 2-D array would be silently flattened, a bool array
        # silently read as 0/1
        if g.ndim != 1 or g.dtype.kind not in "iu":
            raise ParameterError(
                f"groups[{i}] must be a flat collection of integer indices in [0, {size}), got an "
                f"array of dtype {g.dtype} and shape {g.shape}"
            )
        arr = g.astype(np.int64)
    else:
        try:
            items = list(g)
        except TypeError as exc:
            raise ParameterError(f"groups[{i}] must be a collection of integer indices, got {g!r}") from exc
        for v in items:  # no bools (True is not user 1), no nested collections (no flattening)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise ParameterError(f"groups[{i}] must hold integer indices in [0, {size}), got {v!r}")
        arr = np.asarray(items, dtype=np.int64) if items else np.zeros(0, dtype=np.int64)
    if arr.size == 0:
        raise ParameterError(f"groups[{i}] must be non-empty (it must contain {i}), got []")
    if arr.min() < 0 or arr.max() >= size:
        bad = int(arr[(arr < 0) | (arr >= size)][0])
        raise ParameterError(f"groups[{i}] must hold indices in [0, {size}), got {bad}")
    arr = np.sort(arr)
    if arr.size > 1 and np.any(arr[1:] == arr[:-1]):
        raise ParameterError(f"groups[{i}] must not repeat an index, got {arr.tolist()}")
    k = int(np.searchsorted(arr, i))
    if k >= arr.size or arr[k] != i:
        raise ParameterError(f"groups[{i}] must contain its owner {i}, got {arr.tolist()}")
    return arr


def validate_groups(groups: Any, n: int | None = None) -> tuple[np.ndarray, ...]:
    """Check an explicit group assignment and return it as a tuple of sorted int64 arrays.

    Args:
        groups: A sequence of ``n`` index collections; ``groups[i]`` is user ``i``'s group. Every
            group must be non-empty, hold integer indices in ``[0, n)``, have no repeats and
            contain ``i`` itself.
        n: Expected number of users, or ``None`` to take ``len(groups)``.

    Returns:
        ``n`` sorted ``int64`` arrays (a tuple; passing it back in is free).

    Raises:
        ParameterError: If ``groups`` is empty or not a sequence, or a group is empty, contains
            a non-integer, an out-of-range or repeated index, or does not contain its owner.

    Example:
        >>> validate_groups([{0, 1}, [1, 0], (2,)])
        (array([0, 1]), array([0, 1]), array([2]))
        >>> validate_groups([[1], [1]])
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: groups[0] must contain its owner 0, got [1]
    """
    if isinstance(groups, _ValidGroups):
        if n is not None and len(groups) != n:
            raise ParameterError(f"groups must have one group per user ({n}), got {len(groups)}")
        return groups
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
        raise ParameterError(f"groups must be a sequence of index collections, got {type(groups).__name__}")
    size = len(groups)
    if size == 0:
        raise ParameterError("groups must be a non-empty sequence of index collections, got length 0")
    if n is not None and size != n:
        raise ParameterError(f"groups must have one group per user ({n}), got {size}")
    fast = _validate_fast(groups, size)
    if fast is not None:
        return fast
    # slow path: find the first offending group and report it precisely
    return _ValidGroups(_check_one_group(i, groups[i], size) for i in range(size))


def _validate_fast(groups: Any, size: int) -> _ValidGroups | None:
    """Vectorised validation; ``None`` if anything looks wrong (the slow path then explains)."""
    try:
        if any(isinstance(g, (str, bytes)) or (isinstance(g, np.ndarray) and g.ndim != 1) for g in groups):
            return None
        lengths = np.fromiter((len(g) for g in groups), dtype=np.int64, count=size)
        flat_list = list(
            itertools.chain.from_iterable(
                g.ravel().tolist() if isinstance(g, np.ndarray) else g for g in groups
            )
        )
    except TypeError:
        return None
    kinds = set(map(type, flat_list))
    if any(issubclass(t, (bool, np.bool_)) or not issubclass(t, (int, np.integer)) for t in kinds):
        return None
    if np.any(lengths == 0):
        return None
    flat = np.array(flat_list, dtype=np.int64)
    if flat.size and (flat.min() < 0 or flat.max() >= size):
        return None
    gid = np.repeat(np.arange(size, dtype=np.int64), lengths)
    key = np.sort(gid * size + flat)
    if np.any(key[1:] == key[:-1]):
        return None
    if np.count_nonzero(flat == gid) != size:
        return None
    vals = key - np.repeat(np.arange(size, dtype=np.int64), lengths) * size
    return _ValidGroups(np.split(vals, np.cumsum(lengths)[:-1]))


def _check_points(points: Any, metric: str) -> np.ndarray:
    arr = check_real_array("points", points)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ParameterError(f"points must be a non-empty (n, d) array, got shape {arr.shape}")
    if metric == "haversine":
        if arr.shape[1] != 2:
            raise ParameterError(
                f"points must be (n, 2) latitude/longitude in degrees for haversine, got shape {arr.shape}"
            )
        if np.any(np.abs(arr[:, 0]) > 90.0) or np.any(np.abs(arr[:, 1]) > 180.0):
            raise ParameterError(
                "points must hold latitudes in [-90, 90] and longitudes in [-180, 180] degrees"
            )
    return arr


def _unit_vectors(latlon_deg: np.ndarray) -> np.ndarray:
    lat = np.radians(latlon_deg[:, 0])
    lon = np.radians(latlon_deg[:, 1])
    c = np.cos(lat)
    return np.column_stack((c * np.cos(lon), c * np.sin(lon), np.sin(lat)))


def _haversine_km(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lat1, lon1 = np.radians(a[..., 0]), np.radians(a[..., 1])
    lat2, lon2 = np.radians(b[..., 0]), np.radians(b[..., 1])
    h = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


def _ragged_to_groups(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, ...]:
    return _ValidGroups(np.sort(np.asarray(g, dtype=np.int64)) for g in lists)


#: Points per ``query_ball_point`` call: bounds the Python lists alive at once (each member is a
#: Python int while it is a list; the groups themselves are int64 views into one flat array).
QUERY_CHUNK: int = 4096


def _check_members(tree: cKDTree, radius: float, n: int, what: str, max_work: Any) -> None:
    """Refuse up front when the groups would have too many members (counted, not built)."""
    members = int(tree.count_neighbors(tree, radius))
    check_work(
        f"{what} ({members} group members, mean group size {members / n:.1f})",
        WORK_PER_MEMBER * members,
        max_work=max_work,
        alternative=(
            "use nearest_groups(points, size) for groups of a fixed size (n * size members), or a smaller r"
        ),
    )


def _flat_groups(tree: cKDTree, arr: np.ndarray, radius: float) -> _ValidGroups:
    """``G_i = tree points within radius of arr[i]`` (sorted), as views into one int64 array.

    The KD-tree answers chunk by chunk, each chunk is flattened at once, so memory is about
    ``8 sum |G_i|`` bytes plus one chunk of Python lists (was ~100 bytes per member: 2.7 GB at
    1e5 points with ~280 neighbours each, issue 12).
    """
    n = arr.shape[0]
    counts = np.empty(n, dtype=np.int64)
    parts = []
    for lo in range(0, n, QUERY_CHUNK):
        lists = tree.query_ball_point(arr[lo : lo + QUERY_CHUNK], radius, return_sorted=True)
        c = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
        counts[lo : lo + len(lists)] = c
        parts.append(np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64, count=int(c.sum())))
    flat = np.concatenate(parts) if len(parts) > 1 else parts[0]
    return SymmetricGroups(np.split(flat, np.cumsum(counts)[:-1]))


def groups_from_points(
    points: Any, r: float, metric: str = "euclidean", *, max_work: Any = None
) -> tuple[np.ndarray, ...]:
    """Threshold groups ``G_i = {j : d(t_i, t_j) <= r}`` from public points.

    Paper: *Privacy Implications of Shuffling*, Sec. 4.2 (distance threshold on public auxiliary
    information). Built with a scipy KD-tree (``query_ball_point``), memory ``O(sum |G_i|)``.

    Args:
        points: ``(n, d)`` coordinates (``metric="euclidean"``) or ``(n, 2)`` latitude/longitude in
            degrees (``metric="haversine"``, great-circle distance in km on a sphere of radius
            :data:`EARTH_RADIUS_KM`).
        r: Threshold (finite, >= 0), in the units of the metric.
        metric: ``"euclidean"`` or ``"haversine"``.
        max_work: Work budget (``None``: ``DEFAULT_MAX_WORK`` = 1e8). The number of members
            ``S = sum |G_i|`` is counted first (KD-tree ``count_neighbors``, no lists built) and
            charged :data:`WORK_PER_MEMBER` units each.

    Returns:
        Tuple of ``n`` sorted int64 arrays; ``G_i`` always contains ``i``.

    Raises:
        ParameterError: On non-finite points, a bad shape, a negative or non-finite ``r`` or an
            unknown metric.
        WorkBudgetExceeded: If ``WORK_PER_MEMBER * S > max_work`` (raised before any group is
            built); :func:`nearest_groups` (``n * size`` members) or a smaller ``r`` is cheaper.

    Example:
        >>> groups_from_points([[0.0], [1.0], [5.0]], r=1.5)
        (array([0, 1]), array([0, 1]), array([2]))
    """
    metric = check_choice("metric", metric, _METRICS)
    r = check_real("r", r, low=0.0)
    arr = _check_points(points, metric)
    check_max_work(max_work)
    if metric == "euclidean":
        tree = cKDTree(arr)
        _check_members(tree, r, arr.shape[0], f"groups_from_points(n={arr.shape[0]}, r={r:g})", max_work)
        return _flat_groups(tree, arr, r)
    # Haversine: great-circle angle phi <= r / R  <=>  chord 2 sin(phi / 2) <= 2 sin(r / (2R)).
    xyz = _unit_vectors(arr)
    angle = r / EARTH_RADIUS_KM
    if angle >= math.pi:
        return SymmetricGroups(np.arange(arr.shape[0], dtype=np.int64) for _ in range(arr.shape[0]))
    chord = 2.0 * math.sin(angle / 2.0)
    tree = cKDTree(xyz)
    _check_members(
        tree,
        chord * (1 + 1e-9) + 1e-12,
        arr.shape[0],
        f"groups_from_points(n={arr.shape[0]}, r={r:g}, metric='haversine')",
        max_work,
    )
    # Query a slightly larger chord, then filter with the exact haversine distance.
    lists = tree.query_ball_point(xyz, chord * (1 + 1e-9) + 1e-12, return_sorted=True)
    counts = np.fromiter((len(c) for c in lists), dtype=np.int64, count=len(lists))
    cand = np.fromiter((j for c in lists for j in c), dtype=np.int64, count=int(counts.sum()))
    owner = np.repeat(np.arange(len(lists), dtype=np.int64), counts)
    d = _haversine_km(arr[owner], arr[cand])
    keep = (d <= r) | (cand == owner)
    kept_counts = np.bincount(owner[keep], minlength=len(lists))
    parts = np.split(cand[keep], np.cumsum(kept_counts)[:-1])
    return SymmetricGroups(np.sort(p) for p in parts)


def nearest_groups(points: Any, size: int, metric: str = "euclidean") -> tuple[np.ndarray, ...]:
    """Fixed-size groups: ``G_i`` = the ``size`` users nearest to ``i`` (``i`` itself included).

    Paper: *Privacy Implications of Shuffling*, Sec. 4.2 (groups of a specific size). Ties are
    broken by the KD-tree's order; if duplicates of ``i``'s point push ``i`` out, ``i`` replaces
    the farthest member.

    Args:
        points: As in :func:`groups_from_points`.
        size: Group size, integer in ``[1, n]``.
        metric: ``"euclidean"`` or ``"haversine"`` (nearest by great-circle distance).

    Returns:
        Tuple of ``n`` sorted int64 arrays of length ``size``.

    Raises:
        ParameterError: On bad points, metric, or ``size`` outside ``[1, n]``.

    Example:
        >>> nearest_groups([[0.0], [1.0], [5.0]], size=2)
        (array([0, 1]), array([0, 1]), array([1, 2]))
    """
    metric = check_choice("metric", metric, _METRICS)
    arr = _check_points(points, metric)
    n = arr.shape[0]
    size = check_int("size", size, minimum=1, maximum=n)
    data = arr if metric == "euclidean" else _unit_vectors(arr)
    tree = cKDTree(data)
    _, idx = tree.query(data, k=size)
    idx = np.asarray(idx, dtype=np.int64).reshape(n, size)
    own = np.arange(n)
    missing = ~np.any(idx == own[:, None], axis=1)
    idx[missing, -1] = own[missing]
    return _ValidGroups(np.sort(row) for row in idx)


def _graph_edges(graph: Any, n: int | None) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    if sp.issparse(graph):
        mat = sp.csr_matrix(graph, dtype=float)
        if mat.shape[0] != mat.shape[1]:
            raise ParameterError(f"graph must be a square sparse matrix, got shape {mat.shape}")
        if n is not None and mat.shape[0] != n:
            raise ParameterError(f"n must match the graph's size {mat.shape[0]}, got {n}")
        mat.sum_duplicates()
        check_real_array("graph", mat.data, low=0.0)
        coo = mat.tocoo()
        return mat.shape[0], coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data.astype(float)
    arr = np.asarray(graph, dtype=object) if not isinstance(graph, np.ndarray) else graph
    if arr.ndim != 2 or arr.shape[1] not in (2, 3):
        raise ParameterError(
            f"graph must be an edge list of (i, j) or (i, j, weight) rows, got shape {arr.shape}"
        )
    ends = arr[:, :2]
    for v in ends.ravel():
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ParameterError(f"graph edge ends must be integer user indices, got {v!r}")
    ends = ends.astype(np.int64)
    if n is None:
        raise ParameterError("n must be given with an edge list (the number of users), got None")
    if ends.size and (ends.min() < 0 or ends.max() >= n):
        raise ParameterError(
            f"graph edge ends must be in [0, {n}), got {int(ends[(ends < 0) | (ends >= n)][0])}"
        )
    w = (
        check_real_array("graph", arr[:, 2].astype(float) if arr.dtype == object else arr[:, 2], low=0.0)
        if arr.shape[1] == 3
        else np.ones(len(ends))
    )
    return n, ends[:, 0], ends[:, 1], np.asarray(w, dtype=float)


def groups_from_graph(graph: Any, r: float, n: int | None = None) -> tuple[np.ndarray, ...]:
    """Threshold groups ``G_i = {j : shortest-path length(i, j) <= r}`` on an undirected graph.

    Paper: *Privacy Implications of Shuffling*, Sec. 4.2 (path length on a social graph; with
    ``r = 2`` the group of a user holds their friends and friends of friends). Edges are treated
    as undirected; repeated edges keep the smallest weight.

    Args:
        graph: Edge list (rows ``(i, j)`` or ``(i, j, weight)``, weights >= 0) or a square scipy
            sparse matrix of edge weights (a stored entry is an edge).
        r: Path-length threshold (finite, >= 0).
        n: Number of users; required for an edge list, checked for a matrix.

    Returns:
        Tuple of ``n`` sorted int64 arrays.

    Raises:
        ParameterError: On a malformed graph, a negative weight, a bad ``r`` or ``n``.

    Example:
        >>> groups_from_graph([(0, 1), (1, 2), (2, 3)], r=1, n=4)
        (array([0, 1]), array([0, 1, 2]), array([1, 2, 3]), array([2, 3]))
    """
    r = check_real("r", r, low=0.0)
    if n is not None:
        n = check_int("n", n, minimum=1)
    n, r0, c0, v0 = _graph_edges(graph, n)
    if n == 0:
        raise ParameterError("graph must have at least one node, got 0")
    # Symmetrise keeping the smallest weight of a repeated/opposite edge.
    rows = np.concatenate([r0, c0])
    cols = np.concatenate([c0, r0])
    vals = np.concatenate([v0, v0])
    keep = rows != cols
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    unweighted = vals.size == 0 or bool(np.all(vals == 1.0))
    eye = sp.identity(n, dtype=bool, format="csr")
    if unweighted:
        adj = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(n, n))
        reach = eye.copy()
        frontier = eye.copy()
        for _ in range(int(math.floor(r))):
            frontier = (frontier @ adj).astype(bool)
            new = reach + frontier
            if new.nnz == reach.nnz:
                break
            reach = new.astype(bool)
        reach = reach.tocsr()
        reach.sort_indices()
        return _ValidGroups(
            reach.indices[reach.indptr[i] : reach.indptr[i + 1]].astype(np.int64) for i in range(n)
        )
    order = np.lexsort((vals, cols, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    first = np.ones(rows.size, dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    # Zero-weight edges must stay edges: shift weights by nothing but store explicitly.
    wmat = sp.csr_matrix((vals[first], (rows[first], cols[first])), shape=(n, n))
    out: list[np.ndarray] = []
    chunk = max(1, min(n, 2_000_000 // max(n, 1)))
    for start in range(0, n, chunk):
        idx = np.arange(start, min(n, start + chunk))
        dist = dijkstra(wmat, directed=False, indices=idx, limit=r * (1 + 1e-12) + 1e-300)
        for row in np.atleast_2d(dist):
            out.append(np.flatnonzero(row <= r).astype(np.int64))
    return _ValidGroups(out)
