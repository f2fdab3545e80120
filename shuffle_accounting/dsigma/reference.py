"""The BFS reference permutation sigma_0 and group widths.

Paper: Meehan, Roy-Chowdhury, Chaudhuri, Jha, *Privacy Implications of Shuffling* (ICLR 2022),
Alg. 1 steps 2-4 and Sec. 4.4 ("width"). The reference permutation is returned as ``order``: the
list of user indices in BFS order, so ``order[p]`` is the user at position ``p``; ``pos`` is its
inverse (``pos[order[p]] == p``).

Deterministic tie-breaking (documented choice; the paper does not fix one):

* the graph has an undirected edge ``{i, j}`` whenever ``j`` is in ``G_i``;
* each BFS starts at the unvisited user with the largest group (smallest index on ties) and the
  search is restarted the same way on every remaining connected component;
* the neighbours of a dequeued user ``v`` are enqueued in this order: first the members of
  ``groups[v]`` *in the order they were given* (sets and the library's builders give increasing
  index), then the users ``i`` whose group contains ``v``, in increasing index.

With this rule the worked example of the paper's Appendix A.10 reproduces
``sigma_0 = [5, 2, 3, 8, 4, 1, 6, 7]`` (1-based).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import ParameterError
from .groups import SymmetricGroups as _SymmetricGroups
from .groups import validate_groups

__all__ = ["reference_permutation", "inverse_order", "group_widths", "width", "validate_order"]


def _given_order(groups: Any, i: int) -> list[int]:
    g = groups[i]
    if isinstance(g, (set, frozenset)):
        return sorted(int(v) for v in g)
    if isinstance(g, np.ndarray):
        return g.ravel().tolist()
    return [int(v) for v in g]


#: Groups up to this size are enqueued by a Python loop in :func:`reference_permutation`.
SMALL_GROUP_LOOP: int = 24


def reference_permutation(groups: Any) -> np.ndarray:
    """BFS reference permutation sigma_0 of Alg. 1 (steps 2-4), as the list of users in order.

    Runs in ``O(n + sum |G_i|)`` time after sorting the reverse adjacency.

    Args:
        groups: Group assignment (see :func:`~shuffle_accounting.dsigma.groups.validate_groups`).

    Returns:
        ``order``: int64 array, a permutation of ``range(n)``; ``order[p]`` is the user placed
        at position ``p`` of sigma_0.

    Raises:
        ParameterError: If ``groups`` is invalid.

    Example:
        >>> reference_permutation([[0, 2], [1], [2, 0]]).tolist()
        [0, 2, 1]
    """
    checked = validate_groups(groups)
    n = len(checked)
    sizes = np.array([g.size for g in checked], dtype=np.int64)
    # Reverse adjacency: users i whose group contains v, grouped by v in increasing i. For
    # symmetric groups (distance thresholds) it is the group itself, all of which is already
    # visited when it would be read, so it is not built (it costs a sort of every member).
    symmetric = isinstance(checked, _SymmetricGroups)
    if symmetric:
        rev_owner = np.empty(0, dtype=np.int64)
        rev_ptr = np.zeros(n + 1, dtype=np.int64)
    else:
        owners = np.repeat(np.arange(n, dtype=np.int64), sizes)
        members = np.concatenate(checked)
        rev = np.argsort(members, kind="stable")  # owners increase along the concatenation
        rev_owner = owners[rev]
        del owners, rev
        rev_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(members, minlength=n), out=rev_ptr[1:])
        del members
    # Roots in order: largest group first, smallest index on ties.
    roots = np.lexsort((np.arange(n), -sizes))
    visited = np.zeros(n, dtype=bool)
    # ``out`` is also the BFS queue: users are placed in the order they are enqueued; ``head``
    # is the next user to expand and ``tail`` the next free slot. Each expansion is a handful
    # of numpy operations on the user's group and reverse list (no per-member Python work).
    out = np.empty(n, dtype=np.int64)
    head = tail = 0
    given_arrays = (
        all(isinstance(g, np.ndarray) for g in groups) if not isinstance(groups, np.ndarray) else False
    )

    def enqueue(cand: np.ndarray, tail: int) -> int:
        # small lists: a Python loop is cheaper than the numpy calls; large: vectorised
        if cand.size <= SMALL_GROUP_LOOP:
            for w in cand.tolist():
                if not visited[w]:
                    visited[w] = True
                    out[tail] = w
                    tail += 1
            return tail
        new = cand[~visited[cand]]  # no repeats inside a (validated) group or reverse list
        visited[new] = True
        out[tail : tail + new.size] = new
        return tail + new.size

    for root in roots.tolist():
        if visited[root]:
            continue
        visited[root] = True
        out[tail] = root
        tail += 1
        while head < tail:
            v = int(out[head])
            head += 1
            g = groups[v] if given_arrays else np.asarray(_given_order(groups, v), dtype=np.int64)
            tail = enqueue(np.asarray(g, dtype=np.int64).ravel(), tail)
            if not symmetric:
                tail = enqueue(rev_owner[rev_ptr[v] : rev_ptr[v + 1]], tail)
    return out


def validate_order(order: Any, n: int) -> np.ndarray:
    """Check that ``order`` is a permutation of ``range(n)``; return it as int64.

    Raises:
        ParameterError: If it is not.

    Example:
        >>> validate_order([2, 0, 1], 3).tolist()
        [2, 0, 1]
    """
    if isinstance(order, np.ndarray):
        if order.ndim != 1:
            raise ParameterError(f"order must be a flat permutation of range({n}), got shape {order.shape}")
        items = order.tolist()
    else:
        try:
            items = list(order)
        except TypeError:
            raise ParameterError(
                f"order must be a permutation of range({n}) (a sequence of integers), got {order!r}"[:200]
            ) from None
    for v in items:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ParameterError(f"order must be a permutation of range({n}), got element {v!r}")
    arr = np.asarray(items, dtype=np.int64)
    if arr.size != n or not np.array_equal(np.sort(arr), np.arange(n)):
        raise ParameterError(f"order must be a permutation of range({n}), got {arr.tolist()[:20]}")
    return arr


def inverse_order(order: Any) -> np.ndarray:
    """``pos`` with ``pos[order[p]] == p``.

    Raises:
        ParameterError: If ``order`` is not a permutation of ``range(len(order))``.

    Example:
        >>> inverse_order([2, 0, 1]).tolist()
        [1, 2, 0]
    """
    try:
        n = len(order)
    except TypeError:
        raise ParameterError(f"order must be a permutation of range(n), got {order!r}"[:200]) from None
    arr = validate_order(order, n)  # anything else would leave entries of pos uninitialised
    pos = np.empty_like(arr)
    pos[arr] = np.arange(arr.size, dtype=np.int64)
    return pos


def group_widths(groups: Any, order: Any) -> np.ndarray:
    """Width of every group in sigma_0: ``omega_i = max_{j,k in G_i} |pos[j] - pos[k]|``.

    Paper: *Privacy Implications of Shuffling*, Sec. 4.4 (width omega_{G_i}^{sigma_0}).

    Args:
        groups: Group assignment.
        order: The reference permutation as a list of users (see :func:`reference_permutation`).

    Returns:
        int64 array of the ``n`` widths.

    Raises:
        ParameterError: If ``groups`` or ``order`` is invalid.

    Example:
        >>> group_widths([[0, 1], [0, 1], [2]], [0, 2, 1]).tolist()
        [2, 2, 0]
    """
    checked = validate_groups(groups)
    arr = validate_order(order, len(checked))
    pos = inverse_order(arr)
    sizes = np.array([g.size for g in checked], dtype=np.int64)
    p = pos[np.concatenate(checked)]
    starts = np.zeros(len(checked), dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    return (np.maximum.reduceat(p, starts) - np.minimum.reduceat(p, starts)).astype(np.int64)


def width(groups: Any, order: Any) -> int:
    """Overall width ``omega = max_i omega_i``.

    Example:
        >>> width([[0, 1], [0, 1], [2]], [0, 2, 1])
        2
    """
    return int(group_widths(groups, order).max())
