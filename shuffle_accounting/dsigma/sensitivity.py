"""Sensitivity Delta(sigma_0 : d, G) of the Kendall and Hamming distances.

Paper: Meehan, Roy-Chowdhury, Chaudhuri, Jha, *Privacy Implications of Shuffling* (ICLR 2022),
Sec. 4.4 and Property 3/4 (App. A.8). For the private composition used by this library (draw
``delta`` around the identity on BFS *positions*, release ``y[order[delta[pos]]]``), two
neighbouring inputs w.r.t. ``G_i`` lead to sampled position permutations ``delta`` and
``tau o delta`` where ``tau`` permutes only the positions ``P_i = pos[G_i]``. Hence

* Kendall: ``Delta = max_i max_{delta, tau} |inv(tau o delta) - inv(delta)|``. Rearranging the
  entries of ``delta^{-1}`` at the positions ``P_i`` changes at most the ``C(m, 2)`` pairs inside
  ``P_i`` and, for every non-member position ``f`` strictly inside the span of ``P_i``, at most
  ``2 min(#P_i below f, #P_i above f)`` pairs with ``f``; all these bounds are attained together
  (take ``delta`` = identity and ``tau`` = reversal of ``P_i``). So the **exact** value is

      Delta_i = C(m, 2) + 2 * sum_{f in span(P_i) \\ P_i} min(#{p in P_i: p < f}, #{p in P_i: p > f}),

  and ``Delta = max_i Delta_i``. The paper's ``omega (omega + 1) / 2`` (Property 4) is only an upper
  bound (13 vs 28 in the App. A.10 example).
* Hamming: ``Delta = max_i |G_i|`` when some group has two or more members (``delta`` = identity,
  ``tau`` a derangement of ``P_i``), else 0; it does not depend on sigma_0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_choice
from .groups import validate_groups
from .reference import group_widths, inverse_order, validate_order

__all__ = [
    "exact_sensitivity",
    "group_sensitivities",
    "kendall_width_bound",
    "hamming_sensitivity",
    "sensitivity",
]


def group_sensitivities(groups: Any, order: Any) -> np.ndarray:
    """Exact Kendall sensitivity ``Delta_i`` of every group (see the module docstring).

    Vectorised: O(S log S) for ``S = sum |G_i|``.

    Args:
        groups: Group assignment (``groups[i]`` contains ``i``).
        order: Reference permutation as the BFS list of users.

    Returns:
        int64 array of the ``n`` per-group sensitivities.

    Raises:
        ParameterError: If ``groups`` or ``order`` is invalid.

    Example:
        >>> group_sensitivities([[0, 2], [1], [0, 2]], [0, 1, 2]).tolist()
        [3, 0, 3]
    """
    checked = validate_groups(groups)
    n = len(checked)
    pos = inverse_order(validate_order(order, n))
    sizes = np.array([g.size for g in checked], dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    # Consecutive blocks of groups with at most CHUNK_MEMBERS members: bounded temporaries.
    ends = np.cumsum(sizes)
    lo = 0
    while lo < n:
        base = int(ends[lo - 1]) if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, base + CHUNK_MEMBERS, side="right")))
        out[lo:hi] = _group_sensitivities_block(checked[lo:hi], sizes[lo:hi], pos)
        lo = hi
    return out


#: Members per block of :func:`group_sensitivities` (bounds its temporaries to ~100 MB).
CHUNK_MEMBERS: int = 2_000_000


def _group_sensitivities_block(groups: tuple, sizes: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The closed form of the module docstring for one block of groups (see the caller)."""
    n = len(groups)
    npos = pos.size
    gid = np.repeat(np.arange(n, dtype=np.int64), sizes)
    # sort each group's positions: one key (group, position), ordered as lexsort((p, gid))
    key = gid * npos + pos[np.concatenate(groups)]
    key.sort()
    p = key - gid * npos
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    rank = np.arange(p.size, dtype=np.int64) - starts[gid]  # j: members at or below this one, minus one
    m = sizes[gid]
    same = np.zeros(p.size, dtype=bool)
    same[:-1] = gid[:-1] == gid[1:]
    gaps = np.zeros(p.size, dtype=np.int64)
    gaps[:-1] = np.where(same[:-1], p[1:] - p[:-1] - 1, 0)
    below = rank + 1
    contrib = gaps * np.minimum(below, m - below)
    total = np.bincount(gid, weights=contrib, minlength=n)
    # bincount returns float64; the values are integers < 2^53 for any realistic n.
    return sizes * (sizes - 1) // 2 + 2 * np.rint(total).astype(np.int64)


def exact_sensitivity(groups: Any, order: Any) -> int:
    """Exact Kendall's tau sensitivity ``Delta(sigma_0 : d_tau, G) = max_i Delta_i``.

    Paper: *Privacy Implications of Shuffling*, Sec. 4.4 / Property 3; exact closed form derived
    in the module docstring (the paper only gives the upper bound of Property 4).

    Args:
        groups: Group assignment.
        order: BFS list of users (sigma_0).

    Returns:
        The sensitivity as an ``int`` (0 when every group is a singleton).

    Raises:
        ParameterError: If ``groups`` or ``order`` is invalid.

    Example:
        >>> exact_sensitivity([[0, 2], [1], [0, 2]], [0, 1, 2])
        3
        >>> kendall_width_bound([[0, 2], [1], [0, 2]], [0, 1, 2])
        3
    """
    return int(group_sensitivities(groups, order).max())


def kendall_width_bound(groups: Any, order: Any) -> int:
    """The paper's upper bound ``omega (omega + 1) / 2`` on the Kendall sensitivity (Property 4).

    Example:
        >>> kendall_width_bound([[0, 3], [1], [2], [0, 3]], [0, 1, 2, 3])
        6
    """
    w = int(group_widths(groups, order).max())
    return w * (w + 1) // 2


def hamming_sensitivity(groups: Any) -> int:
    """Hamming sensitivity: ``max_i |G_i|`` if some group has >= 2 members, else 0.

    Example:
        >>> hamming_sensitivity([[0, 1, 2], [0, 1], [0, 2]])
        3
        >>> hamming_sensitivity([[0], [1]])
        0
    """
    checked = validate_groups(groups)
    m = max(g.size for g in checked)
    return m if m >= 2 else 0


def sensitivity(groups: Any, order: Any, distance: str = "kendall") -> int:
    """Exact sensitivity for ``distance`` in ``{"kendall", "hamming"}``.

    Example:
        >>> sensitivity([[0, 2], [1], [0, 2]], [0, 1, 2], "hamming")
        2
    """
    distance = check_choice("distance", distance, ("kendall", "hamming"))
    if distance == "kendall":
        return exact_sensitivity(groups, order)
    return hamming_sensitivity(groups)
