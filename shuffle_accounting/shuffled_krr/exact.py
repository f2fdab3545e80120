"""Exact hockey-stick divergence of shuffled k-RR for one concrete pair of neighbouring datasets.

Setting: ``n`` users apply k-ary randomized response (local privacy ``eps0``) and a shuffler
releases their outputs. The ``n - 1`` *other* users hold values with counts ``others`` (a length-k
vector of non-negative integers summing to ``n - 1``); the *target* user holds value ``0`` in the
dataset ``D`` and value ``1`` in the neighbour ``D'``. With ``P`` and ``Q`` the output
distributions on ``D`` and ``D'``,

    delta_D(eps) = max( H_{e^eps}(P || Q), H_{e^eps}(Q || P) ),
    H_a(P || Q)  = sum_y max(0, P(y) - a Q(y)),

the smallest ``delta`` for which this pair satisfies ``(eps, delta)``-indistinguishability in both
directions. Two releases are supported:

* ``output="histogram"`` — the full histogram of the ``n`` outputs (what the shuffle model
  releases; Balle, Bell, Gascón, Nissim, *The Privacy Blanket of the Shuffle Model*, CRYPTO 2019).
* ``output="count"`` — only the number of outputs equal to value ``0`` (the setting of Biswas,
  Jung, Palamidessi, *Tight Differential Privacy Guarantees for the Shuffle Model with
  k-Randomized Response*, Sec. IV, computed here exactly: the divergence of the two count
  distributions, not their printed Theorem IV.1 closed form). The count is a post-processing of
  the histogram, so its delta is never larger.

Within the exact limits every number is the exact divergence up to floating-point rounding
(about ``1e-12`` relative): a *lower* bound on the worst case over all datasets (see
:mod:`shuffle_accounting.shuffled_krr.lower`) and never an upper bound on it. Beyond them the
point value is the upper end of a certified bracket (below).

How the histogram is computed. Output values ``y >= 2`` that no other user holds form a set ``Z``
of ``m`` values; only blanket (uniform) outputs fall in ``Z`` and, given how many do, their split
inside ``Z`` is uniform and the same under ``P`` and ``Q`` (an ancillary statistic). So the
histogram restricted to ``{0, 1}``, the values held by some other user, and the total in ``Z`` is
an exact sufficient statistic (e.g. all others at value 2 -> ``(h0, h1, h2)``). Proof: nobody
(the target included, who holds 0 or 1) holds a value of ``Z``, so every user, whatever it
holds, reports each ``z in Z`` with the same probability ``pbar``; given the set of users whose
report falls in ``Z``, those reports are independent and uniform on ``Z``. Writing ``h = (g,
s)`` with ``g`` the kept counts plus the total ``h_Z`` and ``s`` the split of ``h_Z`` inside
``Z``, ``P(h) = P~(g) M(s | h_Z)`` and ``Q(h) = Q~(g) M(s | h_Z)`` with the *same* uniform
multinomial ``M``, hence ``sum_h (P(h) - a Q(h))_+ = sum_g (P~(g) - a Q~(g))_+ sum_s M(s | h_Z)
= H_a(P~ || Q~)``: the merged ``Z`` loses nothing, in both directions. Its distribution
is built user by user in log space on a dense grid with ``B - 1`` axes of length ``n + 1``, ``B``
the number of kept bins (at most ``k`` and at most ``3 + #{y >= 2 : others[y] > 0}``). The work is
about ``n * B * (n + 1)^(B - 1)``; above :data:`MAX_HISTOGRAM_WORK` it is not attempted (it
would run for minutes) and the windowed paths below answer. Feasible
examples: all others at one value ``>= 2`` (``B = 4`` for ``k >= 4``) up to ``n ~ 65``; ``k = 3``
or others at values ``{0, 1}`` only (``B <= 3``) up to ``n ~ 270``. Above that, for ``k >= 3``
(histogram output), two windowed paths take over (:func:`dataset_log_delta_bounds`, internal
module :mod:`~shuffle_accounting.shuffled_krr._krr_grid`): every other user at one value (any
``k``, e.g. ``k = 10``, ``n = 1000`` with all others at ``x2``: 0.4 s; ``n = 1e6``: a few seconds),
and ``k = 3`` with any counts while the two smaller classes can be added to the largest one by
direct 2-D convolution (below ``1e9`` terms) or one user at a time (below ``4e9`` cell updates:
e.g. ``(100, 100, 799)`` at ``n = 1000`` in 0.3 s, ``(1000, 1000, 999)`` in about 2 s, three
classes of ~2000 users refused), and ``k >= 4`` with every other user at the target's two values
0 and 1: all of ``{2, ..., k - 1}`` is then ``Z``, the sufficient statistic is the
three-category ``(h0, h1, h_Z)`` whose ``Z`` cell has probability ``(k - 2) pbar`` for every
user, and the ``k = 3`` machinery runs with those rows
(:func:`~shuffle_accounting.shuffled_krr._krr_grid.dataset_log_hockey_rest`; e.g. ``k = 4``,
``(1500, 1499)`` at ``n = 3000`` in about 3-5 s), and ``k >= 4`` with the other users at 0 (or
at 1) and at one value ``v >= 2``: nobody else holds 1 (resp. 0), so for the other users 1 is
exchangeable with the values held by nobody, their law is three-category on ``(0, v, {1} u
Z)``, and the split of ``{1} u Z`` is summed in closed form (two binomial tails per cell,
:func:`~shuffle_accounting.shuffled_krr._krr_grid.dataset_log_hockey_zero_v`; ``k = 4``,
``(1500, 0, 1499, 0)`` at ``n = 3000``: about 5-8 s); each
returns a certified bracket (dropped mass bounded and added to the upper end) about ``1e-9``
relative wide for deltas above ``1e-300`` (up to ``1e-5`` in log for deltas far below).

Every other dataset beyond the exact limit (for ``k >= 4``: other users at three or more values,
or at two values ``>= 2``; any family over its own budget, e.g. ``k = 3`` with three classes of a
few thousand users) gets the *general certified bracket* of the internal module
:mod:`~shuffle_accounting.shuffled_krr._krr_spread` (proofs there), within the work budget
``max_work`` (:data:`MAX_SPREAD_WORK` by default, about ten seconds;
:class:`~shuffle_accounting._validation.WorkBudgetExceeded` before any work when even its
cheapest routes would exceed it). Lower end: the exact divergence of a post-processing of the
histogram (the values ``>= 2`` merged into one symbol, a two-dimensional grid; or a linear
statistic ``a h0 - b h1``, one dimension, any ``n``). Upper end: the adversary is also shown
the coins (truth or uniform blanket) of the users at values ``>= 2`` (two-dimensional), or,
where that does not fit, users at 0 are paired with users at 1 and each pair's "both truthful"
event and the other users' coins are shown (one dimension), or every coin but one class's (one
dimension), averaged over the revealed counts. Measured (``k = 10``, ``eps0 = 2``, others
spread evenly; ``benchmarks/README.md``): ``n = 1000`` about ``6e-5`` wide in log at
``delta ~ 7e-3`` and ``0.07`` at ``delta ~ 2e-9`` (both ends two-dimensional, under 1 s);
``n = 1e4`` ``1e-3`` with the default budget (1 s); ``n = 1e5`` and ``1e6`` about ``1e-2`` and
``4e-3`` at ``delta ~ e^-22 .. e^-25`` (pairs, a few seconds); with the counts at 0 and 1 far
apart (proportional to ``1 / (j + 1)``) ``1.6e-3 - 6.0e-3`` up to ``n = 5e4`` (1-5 s),
``5.4e-3`` to ``8.4e-3`` at ``7e4 - 2e5`` (U2 swept on :data:`MAX_SPREAD_WORK_WIDE`, 15-37 s)
and ``2.4e-2`` at ``1e6`` (U2 without its sweep, two builds on the wide budget, about 40 s and
5 GB; ``1.2e-2`` with ``max_work = 3e12``, about 12 minutes and 7 GB); other shapes far from
even at ``n = 1e6`` (``k = 3 - 20``, ``eps0 = 0.1 - 4``) ``3e-3`` to ``8e-2`` in 10-90 s.
Nothing valid is refused for its shape.

Which value the point functions return: within the exact limits, the exact divergence; beyond
them (every windowed path, ``k = 2`` included), the certified **upper** end of the bracket
(:func:`dataset_log_delta_bounds` gives both ends). That value is never below the pair's exact
delta, so it is not a lower bound on the worst case over datasets; exhibited lower bounds use
the lower end (:mod:`~shuffle_accounting.shuffled_krr.lower`).

For ``k = 2`` the histogram is ``h0`` itself and the count path below is used (exactly up to
``n ~ 20000``; above it from concentration windows with bounded dropped mass, a certified bracket
about 1e-8 relative wide, up to ``n ~ 1e7``). The count output is a convolution of two
binomials, ``O(n^2)`` in log space, up to ``n ~ 20000`` (:data:`MAX_COUNT_WORK`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._binomial import log_binom_pmf
from .._deprecation import keyword_only_now
from .._logmath import UNIT_ROUNDOFF, logsumexp
from .._validation import ParameterError, check_choice, check_int, check_real, check_real_array, check_work
from ..randomizers import KRR
from . import _krr_grid as _grid
from . import _krr_spread as _spread

__all__ = [
    "dataset_delta",
    "dataset_log_delta",
    "dataset_log_delta_bounds",
    "histogram_bins",
    "MAX_HISTOGRAM_WORK",
    "MAX_COUNT_WORK",
    "MAX_SPREAD_WORK",
    "MAX_SPREAD_WORK_WIDE",
]

#: Largest accepted ``n * B * (n + 1)^(B - 1)`` for ``output="histogram"`` (a few seconds).
MAX_HISTOGRAM_WORK: int = 60_000_000
#: Largest accepted ``others[0] * (n - 1 - others[0])`` for ``output="count"``.
MAX_COUNT_WORK: int = 100_000_000
#: Default ``max_work`` of the general at-scale bracket (units of about one nanosecond of one
#: core, measured 0.5-1.3 ns: ``8e9`` is at most about ten seconds unloaded); its
#: one-dimensional routes must fit, the two-dimensional ones run when what is left allows.
MAX_SPREAD_WORK: int = 8_000_000_000
#: Default budget of U2 alone (``max_work=None``; a sweep where one fits it, else builds) where the general bracket's
#: one-dimensional upper routes are expected loose (the counts at the target's two values far
#: apart, :data:`~shuffle_accounting.shuffled_krr._krr_spread.UP_NEAR_EXACT`, or their expected excess
#: over U2 at the lower end's depth above
#: :data:`~shuffle_accounting.shuffled_krr._krr_spread.BUILDS_EXCESS`) and no sweep of U2
#: fits :data:`MAX_SPREAD_WORK`: a sweep up to about n = 2e5 (k = 10, counts proportional to
#: ``1 / (j + 1)``: 8.4e-3 in log in 37 s at n = 2e5), one or two builds at n = 1e6 (the same
#: counts: 2.4e-2 in about 40 s and 5 GB at eps0 = 2, where UP's width is 3.1; k = 4: 1.6e-2
#: where UP's is 1.2) and n = 2e6 (7.1e-2 in about 60 s and 7 GB).
MAX_SPREAD_WORK_WIDE: int = 80_000_000_000
#: Initial truncation level (log of the dropped mass) of the general bracket (lowered as needed).
_SPREAD_TOL = -85.0

_OUTPUTS = ("histogram", "count")


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------


def _check_others(others: Any, k: int) -> tuple[int, ...]:
    """Validate ``others`` as a length-``k`` vector of non-negative integer counts."""
    if isinstance(others, np.ndarray):
        if others.ndim != 1:
            raise ParameterError(f"others must be a 1-D sequence of {k} counts, got shape {others.shape}")
        seq = list(others.tolist())
    elif isinstance(others, Sequence) and not isinstance(others, (str, bytes)):
        seq = list(others)
    else:
        raise ParameterError(
            f"others must be a sequence (list, tuple, 1-D array) of {k} non-negative integer "
            f"counts, got {others!r}"
        )
    if len(seq) != k:
        raise ParameterError(f"others must have length k = {k} (one count per value), got length {len(seq)}")
    out = []
    for i, v in enumerate(seq):
        out.append(check_int(f"others[{i}]", v, minimum=0))
    return tuple(out)


def _check_common(eps: Any, k: Any, eps0: Any, others: Any, output: Any):
    k = check_int("k", k, minimum=2)
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True)
    eps_arr = check_real_array("eps", eps, low=0.0)
    counts = _check_others(others, k)
    output = check_choice("output", output, _OUTPUTS)
    return eps_arr, k, eps0, counts, output


# ---------------------------------------------------------------------------------------------
# shared divergence core
# ---------------------------------------------------------------------------------------------


def log_hockey_sorted(loss: np.ndarray, logw: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``log sum_{loss > e} exp(logw) * (1 - exp(e - loss))`` for each ``e`` in ``eps``.

    ``loss`` must be sorted in decreasing order (``logw`` aligned with it). Each term is computed
    as ``exp(logw + log(-expm1(e - loss)))`` so no cancellation occurs.
    """
    eps = np.asarray(eps, dtype=float)
    flat = eps.ravel()
    out = np.full(flat.shape, -np.inf)
    neg = -loss  # increasing
    for i, e in enumerate(flat):
        m = int(np.searchsorted(neg, -e, side="left"))  # entries with loss > e
        if m == 0:
            continue
        lw = logw[:m]
        mx = float(lw.max())
        if mx == -np.inf:
            continue
        tot = float(np.dot(np.exp(lw - mx), -np.expm1(e - loss[:m])))
        out[i] = mx + math.log(tot) if tot > 0 else -np.inf
    return out.reshape(eps.shape)


def pld_atoms(log_p: np.ndarray, log_q: np.ndarray, cap: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """Privacy-loss states of ``P`` vs ``Q`` with positive loss, sorted by decreasing loss.

    ``cap`` is a proven upper bound on the true loss (``eps0`` for shuffled k-RR: the release is
    a post-processing of ``eps0``-LDP reports); rounding above it is clipped to it, so that
    ``delta(eps) = 0`` exactly for ``eps >= eps0``, and computed losses within ``1e-12 + 8u
    (|log P| + |log Q|)`` below it are set to it (the states at the maximal loss, e.g. every
    report equal to the target's value, keep their mass for eps just below ``eps0``). Returns ``(loss, log_p)``; states where ``P = 0`` are dropped; ``Q = 0 < P`` would give an
    infinite loss, which cannot happen for k-RR (full support) and is rejected.
    """
    log_p = np.asarray(log_p, dtype=float).ravel()
    log_q = np.asarray(log_q, dtype=float).ravel()
    keep = np.isfinite(log_p)
    if np.any(keep & ~np.isfinite(log_q)):  # pragma: no cover - k-RR has full support
        raise ParameterError("Q has zero mass where P is positive; the divergence is not finite")
    lp = log_p[keep]
    lq = log_q[keep]
    loss = np.minimum(lp - lq, cap)
    if math.isfinite(cap):
        # A state whose true loss is the maximum ``cap`` can come out a few ulps below it, which
        # loses that state's whole mass for eps within those ulps of ``cap`` (an under-estimate
        # by up to e^13 measured). Losses within the rounding of ``lp - lq`` of ``cap`` are
        # counted at ``cap`` (tolerance kept below the error margin that ``lower`` adds to eps).
        tol = 1e-12 + 8.0 * (2.0 * UNIT_ROUNDOFF) * (np.abs(lp) + np.abs(lq))
        loss = np.where(loss >= cap - tol, cap, loss)
    pos = loss > 0
    loss = loss[pos]
    lp = lp[pos]
    order = np.argsort(-loss, kind="stable")
    return loss[order], lp[order]


def _log_delta_both(log_p: np.ndarray, log_q: np.ndarray, eps: np.ndarray, cap: float) -> np.ndarray:
    """``log max(H(P||Q), H(Q||P))`` at every ``eps`` (loss clipped at ``cap``)."""
    l1, w1 = pld_atoms(log_p, log_q, cap)
    l2, w2 = pld_atoms(log_q, log_p, cap)
    return np.maximum(log_hockey_sorted(l1, w1, eps), log_hockey_sorted(l2, w2, eps))


# ---------------------------------------------------------------------------------------------
# full histogram (exact sufficient statistic)
# ---------------------------------------------------------------------------------------------


def _reduced_bins(k: int, counts: tuple[int, ...]) -> tuple[list[int], int]:
    """Kept output values (0, 1, held values >= 2) and the size ``m`` of the merged set ``Z``."""
    held = [y for y in range(2, k) if counts[y] > 0]
    m = k - 2 - len(held)
    return [0, 1] + held, m


def histogram_work(n: int, n_bins: int) -> int:
    """Work of the exact histogram enumeration: ``n * bins * (n + 1)^(bins - 1)`` operations."""
    return n * n_bins * (n + 1) ** (n_bins - 1)


def histogram_bins(k: int, others: Any) -> int:
    """Number ``B`` of bins of the exact sufficient statistic used for ``output="histogram"``.

    Args:
        k: Number of categories (integer >= 2).
        others: Length-``k`` counts of the other users' values.

    Returns:
        ``B = 2 + #{y >= 2 : others[y] > 0} + (1 if some value >= 2 is held by nobody else)``.

    Raises:
        ParameterError: On invalid ``k`` or ``others``.

    Example:
        >>> histogram_bins(10, [0, 0, 6, 0, 0, 0, 0, 0, 0, 0])
        4
        >>> histogram_bins(3, [1, 2, 3])
        3
    """
    k = check_int("k", k, minimum=2)
    counts = _check_others(others, k)
    kept, m = _reduced_bins(k, counts)
    return len(kept) + (1 if m > 0 else 0)


def _log_rows(krr: KRR, kept: list[int], m: int) -> dict[int, np.ndarray]:
    """Log output probabilities over the reduced bins for each input value in ``kept``."""
    lp, lq = krr.log_p, krr.log_pbar
    rows = {}
    for v in kept:
        r = [lp if y == v else lq for y in kept]
        if m > 0:
            r.append(math.log(m) + lq)
        rows[v] = np.array(r)
    return rows


def _add_user(log_s: np.ndarray, log_r: np.ndarray) -> np.ndarray:
    """Convolve the grid distribution with one user's output (last bin is implicit)."""
    d = log_s.ndim
    new = log_s + log_r[-1]
    for ax in range(d):
        dst = [slice(None)] * d
        src = [slice(None)] * d
        dst[ax] = slice(1, None)
        src[ax] = slice(None, -1)
        dst_t, src_t = tuple(dst), tuple(src)
        new[dst_t] = np.logaddexp(new[dst_t], log_s[src_t] + log_r[ax])
    return new


def histogram_log_pq(k: int, eps0: float, counts: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Exact log-pmfs of the sufficient statistic of the histogram under ``D`` and ``D'``."""
    n = sum(counts) + 1
    kept, m = _reduced_bins(k, counts)
    n_bins = len(kept) + (1 if m > 0 else 0)
    work = histogram_work(n, n_bins)
    if work > MAX_HISTOGRAM_WORK:
        raise ParameterError(
            f"others = {counts} (n = {n} users) needs an exact histogram over {n_bins} bins, about "
            f"{work:.3g} operations, above the limit {MAX_HISTOGRAM_WORK:.3g}; use output='count', "
            "or shuffle_accounting.shuffled_krr.lower for marginal lower bounds at this size"
        )
    krr = KRR(k, eps0)
    rows = _log_rows(krr, kept, m)
    log_s = np.full((n + 1,) * (n_bins - 1), -np.inf)
    log_s[(0,) * (n_bins - 1)] = 0.0
    for v in kept:
        for _ in range(counts[v]):
            log_s = _add_user(log_s, rows[v])
    with np.errstate(invalid="ignore"):
        return _add_user(log_s, rows[0]), _add_user(log_s, rows[1])


# ---------------------------------------------------------------------------------------------
# count of value-0 outputs (Biswas et al. setting)
# ---------------------------------------------------------------------------------------------


def _log_binom_pmf(c: int, log_pi: float, log_1mpi: float) -> np.ndarray:
    return log_binom_pmf(np.arange(c + 1, dtype=float), float(c), log_pi, log_1mpi)


def _log_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact log-space convolution of two log-pmfs (chunked ``O(len(a) * len(b))``)."""
    if a.size > b.size:
        a, b = b, a
    out_len = a.size + b.size - 1
    out = np.full(out_len, -np.inf)
    # out[t] = logsumexp_i a[i] + b[t - i]; loop over the short one in blocks.
    block = max(1, 4_000_000 // max(b.size, 1))
    for start in range(0, a.size, block):
        ai = a[start : start + block]
        mat = np.full((ai.size, out_len), -np.inf)
        for r, val in enumerate(ai):
            mat[r, start + r : start + r + b.size] = val + b
        out = np.logaddexp(out, logsumexp(mat, axis=0))
    return out


def _count_log_pq(k: int, eps0: float, counts: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Exact log-pmfs of ``h0`` (number of value-0 outputs) under ``D`` and ``D'``."""
    n = sum(counts) + 1
    c0 = counts[0]
    rest = n - 1 - c0
    if c0 * rest > MAX_COUNT_WORK:
        raise ParameterError(
            f"others = (n = {n} users, others[0] = {c0}) needs a count convolution of "
            f"{c0 * rest:.3g} terms, above the limit {MAX_COUNT_WORK:.3g}"
        )
    krr = KRR(k, eps0)
    lp, lq = krr.log_p, krr.log_pbar
    l1mp = math.log(k - 1) + lq  # log(1 - p) = log((k - 1) pbar), exact for k-RR
    l1mq = math.log1p(-krr.pbar)
    s = _log_convolve(_log_binom_pmf(c0, lp, l1mp), _log_binom_pmf(rest, lq, l1mq))
    shifted = np.concatenate(([-np.inf], s))
    unshifted = np.concatenate((s, [-np.inf]))
    log_p = np.logaddexp(lp + shifted, l1mp + unshifted)
    log_q = np.logaddexp(lq + shifted, l1mq + unshifted)
    return log_p, log_q


_LOG_PQ = {"histogram": histogram_log_pq, "count": _count_log_pq}


def _binary_at_scale(eps: float, eps0: float, counts: tuple[int, ...]) -> tuple[float, float]:
    """``k = 2`` above :data:`MAX_COUNT_WORK`: concentration windows with bounded dropped mass.

    ``delta = max(h_c, h_{n-1-c})`` with ``c = others[0]`` (mirror symmetry, see
    :mod:`~shuffle_accounting.shuffled_krr.worst_case`); each direction comes as a certified
    bracket (:func:`~shuffle_accounting.shuffled_krr.worst_case.leaf_log_delta`: windows whose
    dropped mass is bounded and counted, typically 1e-8 relative wide). Returns ``(lower,
    upper)`` on ``log delta``. The truncation level follows the value (re-run when the value is
    far below the first level).
    """
    from .worst_case import leaf_log_delta

    n = counts[0] + counts[1] + 1
    level = -60.0
    low = -math.inf
    for _ in range(7):
        pairs = [leaf_log_delta(eps, eps0, n, c, log_level=level) for c in (counts[0], counts[1])]
        up, low = max(u for u, _ in pairs), max(lo for _, lo in pairs)
        if up == -math.inf or (low > -math.inf and low >= level - 1.0):
            break
        # the value is far below the level (or hidden by the dropped mass): go deeper
        level = min(up, 2.0 * level) if low == -math.inf else low
    return low, up


def family_bounds(eps: float, k: int, eps0: float, counts: tuple[int, ...]) -> tuple[float, float] | None:
    """``(lower, upper)`` on ``log delta`` from the exact windowed families, or ``None``.

    ``None`` when the dataset is in none of the families of :func:`scaled_bounds` or its path is
    over its work budget.
    """
    n = sum(counts) + 1
    held = [y for y in range(k) if counts[y] > 0]
    level = -60.0
    up = low = -math.inf
    for _ in range(7):
        tol = level - 25.0
        if len(held) == 1:
            v = held[0]
            res = _grid.single_class_log_hockey(k, eps0, n, 0 if v < 2 else 2, eps, tol)
        elif k == 3:
            res = _grid.dataset_log_hockey_k3(eps0, (counts[0], counts[1], counts[2]), eps, tol)
        elif held == [0, 1]:  # k >= 4: three categories (0, 1, rest), module docstring
            res = _grid.dataset_log_hockey_rest(k, eps0, counts[0], counts[1], eps, tol)
        elif len(held) == 2 and held[0] == 0:  # k >= 4, others at 0 and at v >= 2
            res = _grid.dataset_log_hockey_zero_v(k, eps0, counts[0], counts[held[1]], eps, tol)
        elif len(held) == 2 and held[0] == 1:  # the mirror (relabel 0 <-> 1): directions swap
            res = _grid.dataset_log_hockey_zero_v(k, eps0, counts[1], counts[held[1]], eps, tol)
            res = None if res is None else (res[1], res[0])
        else:
            res = None
        if res is None:
            return None
        (fu, fl), (ru, rl) = res
        up, low = max(fu, ru), max(fl, rl)
        if up == -math.inf or (low > -math.inf and low >= level - 1.0):
            break
        level = min(up, 2.0 * level) if low == -math.inf else low
    return low, up


def _spread_bounds(
    eps: np.ndarray, k: int, eps0: float, counts: tuple[int, ...], max_work: Any
) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` arrays on ``log delta`` for any dataset (:mod:`._krr_spread`), ``k >= 3``.

    Raises :class:`~shuffle_accounting._validation.WorkBudgetExceeded` when even its
    one-dimensional routes would exceed ``max_work`` (``None``: :data:`MAX_SPREAD_WORK`).
    """
    budget = MAX_SPREAD_WORK if max_work is None else check_int("max_work", max_work, minimum=1)
    lo = np.full(eps.shape, -math.inf)
    up = np.full(eps.shape, -math.inf)
    live = eps < eps0
    if not np.any(live):
        return lo, up
    n = sum(counts) + 1
    work = _spread.spread_work(k, eps0, counts, int(np.sum(live)), _SPREAD_TOL)
    check_work(
        f"dataset_log_delta_bounds(k={k}, others={_short(counts)}, n={n})",
        work,
        max_work=budget,
        alternative="pass fewer eps values at once, or use output='count'",
    )
    wide = MAX_SPREAD_WORK_WIDE if max_work is None else None
    low, high, _ = _spread.spread_log_bounds(
        k, eps0, counts, eps[live].tolist(), _SPREAD_TOL, budget, wide_budget=wide
    )
    lo[live], up[live] = low, high
    return lo, up


def scaled_bounds(
    eps: float, k: int, eps0: float, counts: tuple[int, ...], *, max_work: Any = None
) -> tuple[float, float]:
    """``(lower, upper)`` on ``log delta`` of one large dataset, ``k >= 3`` (histogram release).

    Two families are computed at scale, from concentration windows whose dropped mass is bounded
    and added to the upper end (the lower end just omits non-negative terms):

    * every other user at one value (any ``k``):
      :func:`~shuffle_accounting.shuffled_krr._krr_grid.single_class_log_hockey`, two binomial
      tails per ``N`` (``k = 3``) or per ``(N, h1)`` (``k >= 4``);
    * ``k = 3``, any counts: the pivot grid of the largest class plus the other two classes,
      by direct convolution of their windowed trinomials or one user at a time with the trimmed
      mass measured and added (:func:`~shuffle_accounting.shuffled_krr._krr_grid.dataset_log_hockey_k3`),
      while that work stays within ``MAX_DATASET_WORK`` / ``MAX_SEQUENTIAL_WORK``;
    * ``k >= 4``, every other user at 0 or 1: the same on the three categories ``(0, 1, Z)``,
      ``Z = {2, ..., k - 1}`` merged (module docstring;
      :func:`~shuffle_accounting.shuffled_krr._krr_grid.dataset_log_hockey_rest`), same budgets;
    * ``k >= 4``, the other users at 0 and at one ``v >= 2`` (or at 1 and ``v``: the mirror):
      the others' law on ``(0, v, W)``, ``W = {1} u Z``, by the same grid, and the split of
      ``W`` into 1 and ``Z`` (binomial, the same for every other user) summed in closed form from
      two binomial tails per cell
      (:func:`~shuffle_accounting.shuffled_krr._krr_grid.dataset_log_hockey_zero_v`).

    The windows follow the value (truncation level re-run when the value is far below it), so
    the bracket is about ``1e-9`` relative wide (``1e-7`` for ``eps`` near ``eps0``). Every other
    dataset (or a family over its budget) goes to the general bracket of
    :mod:`~shuffle_accounting.shuffled_krr._krr_spread` (within ``max_work``), whose width is
    reported by :func:`dataset_log_delta_bounds`.
    """
    res = family_bounds(eps, k, eps0, counts)
    if res is not None:
        return res
    lo, up = _spread_bounds(np.array([float(eps)]), k, eps0, counts, max_work)
    return float(lo[0]), float(up[0])


def _short(counts: tuple[int, ...]) -> str:
    return str(counts) if len(counts) <= 12 else f"({', '.join(map(str, counts[:12]))}, ...)"


def _needs_scale(k: int, counts: tuple[int, ...]) -> bool:
    n = sum(counts) + 1
    kept, m = _reduced_bins(k, counts)
    return k >= 3 and histogram_work(n, len(kept) + (1 if m > 0 else 0)) > MAX_HISTOGRAM_WORK


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------


def _scale_bounds_flat(
    flat: np.ndarray, k: int, eps0: float, counts: tuple[int, ...], max_work: Any
) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` arrays for a dataset beyond the exact limits (``k = 2`` or ``k >= 3``)."""
    if k == 2:
        pairs = [_binary_at_scale(float(e), eps0, counts) for e in flat]
        return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
    lo = np.full(flat.shape, -math.inf)
    up = np.full(flat.shape, -math.inf)
    rest = np.zeros(flat.shape, dtype=bool)
    for i, e in enumerate(flat):
        res = family_bounds(float(e), k, eps0, counts)
        if res is None:
            rest[i] = True
        else:
            lo[i], up[i] = res
    if np.any(rest):
        lo[rest], up[rest] = _spread_bounds(flat[rest], k, eps0, counts, max_work)
    return lo, up


def _at_scale(k: int, counts: tuple[int, ...]) -> bool:
    return _needs_scale(k, counts) or (k == 2 and counts[0] * counts[1] > MAX_COUNT_WORK)


def dataset_log_delta_bounds(
    eps: Any, k: Any, eps0: Any, others: Any, *, max_work: Any = None
) -> tuple[Any, Any]:
    """Certified ``(lower, upper)`` bounds on the ``log delta(eps)`` of one concrete dataset (histogram).

    ``lower <= log delta(eps) <= upper`` for the exact histogram delta of the pair (module
    docstring), both ends certified (every dropped mass bounded and added to the upper end,
    roundings pushed outward). Which computation answers:

    * below :data:`MAX_HISTOGRAM_WORK` (``k >= 3``) or :data:`MAX_COUNT_WORK` (``k = 2``): the
      exact enumeration / count convolution; the bracket is its value widened by
      ``1e-10 (1 + |value|)`` (its floating-point error is about ``1e-12``);
    * above it, the exact windowed families (module docstring: ``k = 2`` to ``n ~ 1e7``; every
      other user at one value; ``k = 3`` within a work budget; ``k >= 4`` with the other users
      at 0 and 1, or at 0 (or 1) and one ``v >= 2``): a bracket about ``1e-9`` relative wide in
      log;
    * every other dataset (any ``k >= 3``, any spread of the other users over the values, ``n``
      up to ``1e6`` and beyond), and a family over its own budget: the general bracket of
      :mod:`~shuffle_accounting.shuffled_krr._krr_spread` (proofs there). Its lower end is the
      exact divergence of a post-processing of the histogram (the values ``>= 2`` merged into
      one symbol, or a linear statistic ``a h0 - b h1``); its upper end reveals to the adversary
      the coins (truth or uniform blanket) of the users at values ``>= 2``, or pairs the users
      at 0 with those at 1 and reveals each pair's "both truthful" event and the other coins,
      or reveals every coin but one class's, and averages over the revealed counts. Measured
      widths (log scale, ``k = 10``, ``eps0 = 2``, others spread evenly): ``6e-5`` to ``0.07``
      at ``n = 1e3`` (``delta`` from ``7e-3`` down to ``2e-9``; both ends two-dimensional,
      under 1 s); at ``n = 1e4`` ``1e-3`` with the default budget (1 s; ``6e-4`` with
      ``max_work = 3e10``); about ``1e-2`` at ``n = 1e5`` and ``4e-3`` at ``1e6`` for
      ``delta ~ e^-22 .. e^-25`` (pairs, one dimension, a few seconds). With the counts at 0
      and 1 far apart (proportional to ``1 / (j + 1)``): ``1.6e-3`` to ``3.4e-3`` at
      ``n = 1e4 - 3e4`` (1-4 s), ``6.0e-3`` at ``5e4``, ``5.4e-3`` to ``8.4e-3`` at
      ``7e4 - 2e5`` (15-37 s by default: :data:`MAX_SPREAD_WORK_WIDE`) and ``2.4e-2`` at
      ``1e6`` (about 40 s; ``1.2e-2`` with ``max_work = 3e12``, about 12 minutes and 7 GB of
      memory); ``benchmarks/README.md`` has the tables, other shapes at ``1e6`` included. Deltas below about
      ``e^-600`` (``eps`` near ``eps0``) come out as
      ``(-inf, ~ -700)``: sound, not informative (the scaled laws flush entries below
      ``e^-700`` of their maximum into the dropped mass).

    :func:`dataset_log_delta` and :func:`dataset_delta` return the *upper* end beyond the exact
    limits.

    Args:
        eps: Scalar or array of ``eps >= 0`` (finite).
        k: Number of categories (integer >= 2).
        eps0: Local privacy of k-RR (finite, > 0).
        others: Length-``k`` non-negative integer counts of the other users' values.
        max_work: Work budget of the general bracket (keyword only; integer >= 1, ``None``:
            :data:`MAX_SPREAD_WORK`, about ten seconds, and where the one-dimensional upper
            routes are expected loose (e.g. the counts at the target's two values far apart)
            and no sweep of U2 fits it, :data:`MAX_SPREAD_WORK_WIDE` for U2, swept where that
            fits, else by its builds: 15-40 s at n = 7e4 - 2e5, 10-90 s at n = 1e6, up to about
            5 GB of memory). Units of about a nanosecond of one core
            for all the eps values together; its one-dimensional routes must fit (else
            :class:`~shuffle_accounting._validation.WorkBudgetExceeded`, raised before any work),
            the tighter two-dimensional ones run when what is left allows. Unused by the exact
            paths and families (they have their own fixed budgets).

    Returns:
        ``(lower, upper)``: floats for scalar ``eps``, else arrays of ``eps``'s shape.

    Raises:
        ParameterError: On invalid inputs (naming the parameter).
        WorkBudgetExceeded: When the general bracket would exceed ``max_work``.

    Example:
        >>> lo, up = dataset_log_delta_bounds(0.1, 10, 2.0, [0, 0, 999, 0, 0, 0, 0, 0, 0, 0])
        >>> bool(lo <= up <= lo + 1e-6), round(math.exp(up), 6)
        (True, 0.002616)
        >>> others = [100, 100, 100, 100, 100, 100, 100, 100, 100, 99]  # spread: general bracket
        >>> lo, up = dataset_log_delta_bounds(0.1, 10, 2.0, others)
        >>> round(math.exp(lo), 6), round(math.exp(up), 6)
        (0.001229, 0.00123)
    """
    eps_arr, k, eps0, counts, _ = _check_common(eps, k, eps0, others, "histogram")
    if max_work is not None:
        check_int("max_work", max_work, minimum=1)
    flat = eps_arr.ravel()
    if _at_scale(k, counts):
        lo, up = _scale_bounds_flat(flat, k, eps0, counts, max_work)
    else:
        # k = 2: h1 = n - h0, the count is the full histogram (its exact path is the cheap one)
        val = np.ravel(_exact_log_delta(flat, k, eps0, counts, "count" if k == 2 else "histogram"))
        fin = np.isfinite(val)
        pad = 1e-10 * (1.0 + np.abs(np.where(fin, val, 0.0)))
        lo, up = np.where(fin, val - pad, val), np.where(fin, np.minimum(val + pad, 0.0), val)
    lo, up = lo.reshape(eps_arr.shape), up.reshape(eps_arr.shape)
    if eps_arr.ndim == 0:
        return float(lo), float(up)
    return lo, up


def _exact_log_delta(eps_arr: np.ndarray, k: int, eps0: float, counts: tuple[int, ...], output: str):
    log_p, log_q = _LOG_PQ[output](k, eps0, counts)
    return _log_delta_both(log_p, log_q, eps_arr, eps0)


@keyword_only_now(4, ("output",))  # issue 13: output keyword-only, positional deprecated
def dataset_log_delta(
    eps: Any, k: Any, eps0: Any, others: Any, *, output: str = "histogram", max_work: Any = None
):
    """Natural log of the exact ``delta(eps)`` of one neighbouring pair of shuffled k-RR datasets.

    ``log max(H_{e^eps}(P || Q), H_{e^eps}(Q || P))`` where ``P`` / ``Q`` are the release
    distributions when the target holds value 0 / value 1 and the other ``n - 1`` users hold
    values with counts ``others`` (module docstring). ``-inf`` means ``delta = 0`` exactly (e.g.
    ``eps >= eps0``); values far below ``log(1e-300)`` are returned without underflow.

    Which value is returned. Within the exact limits (:data:`MAX_HISTOGRAM_WORK`,
    :data:`MAX_COUNT_WORK`) the exact divergence (floating-point error about ``1e-12``).
    Beyond them (histogram output, or ``k = 2``) the value is the certified **upper** end of
    :func:`dataset_log_delta_bounds`: never below the exact delta of this pair, within about
    ``1e-9`` of it (relative, in log) for the exact windowed families and within the reported
    bracket width otherwise. Being an upper bound on *this pair's* delta, it is not a lower
    bound on the worst case over datasets; a value meant as an exhibited lower bound should be
    the lower end of :func:`dataset_log_delta_bounds`.

    Args:
        eps: Scalar or array of ``eps >= 0`` (finite).
        k: Number of categories (integer >= 2).
        eps0: Local privacy of k-RR (finite, > 0).
        others: Length-``k`` non-negative integer counts of the other users' values
            (``n = sum(others) + 1``).
        output: ``"histogram"`` (full histogram released) or ``"count"`` (only the number of
            value-0 outputs, Biswas et al.). Keyword only (issue 13); passing it positionally
            still works with a ``DeprecationWarning``.
        max_work: Work budget of the general at-scale bracket (keyword only; see
            :func:`dataset_log_delta_bounds`).

    Returns:
        A float for scalar ``eps``, else a float array of ``eps``'s shape.

    Raises:
        ParameterError: On invalid inputs (naming the parameter), or when ``output="count"``
            exceeds :data:`MAX_COUNT_WORK` (message names ``others`` and ``n``).
        WorkBudgetExceeded: When the general at-scale bracket would exceed ``max_work``.

    Example:
        >>> import math
        >>> round(math.exp(dataset_log_delta(0.5, 4, 1.0, [0, 0, 6, 0])), 10)
        0.0189457458
        >>> dataset_log_delta([0.5, 1.0], 3, 1.0, [1, 0, 3])
        array([-2.95..., -inf])
    """
    eps_arr, k, eps0, counts, output = _check_common(eps, k, eps0, others, output)
    if max_work is not None:
        check_int("max_work", max_work, minimum=1)
    if k == 2:  # h1 = n - h0: the count is the full histogram
        output = "count"
    if output == "histogram" or k == 2:
        if _at_scale(k, counts):
            # beyond the exact limits: the certified UPPER end of dataset_log_delta_bounds
            out = _scale_bounds_flat(eps_arr.ravel(), k, eps0, counts, max_work)[1].reshape(eps_arr.shape)
            return float(out) if out.ndim == 0 else out
    out = _exact_log_delta(eps_arr, k, eps0, counts, output)
    return float(out) if out.ndim == 0 else out


@keyword_only_now(4, ("output",))  # issue 13: output keyword-only, positional deprecated
def dataset_delta(
    eps: Any, k: Any, eps0: Any, others: Any, *, output: str = "histogram", max_work: Any = None
):
    """Exact ``delta(eps)`` of one neighbouring pair of shuffled k-RR datasets.

    ``max(H_{e^eps}(P || Q), H_{e^eps}(Q || P))`` for the target moving from value 0 to value 1
    while the other users hold counts ``others``; ``exp`` of :func:`dataset_log_delta` (which
    see for the arguments). Beyond the exact limits the value is the certified *upper* end of
    :func:`dataset_log_delta_bounds` (never below the exact delta; use that function for the
    lower end and the bracket's width). Deltas below ``1e-308`` underflow to ``0.0`` here; use
    :func:`dataset_log_delta` for them.

    Args:
        eps: Scalar or array of ``eps >= 0`` (finite).
        k: Number of categories (integer >= 2).
        eps0: Local privacy of k-RR (finite, > 0).
        others: Length-``k`` non-negative integer counts of the other users' values.
        output: ``"histogram"`` or ``"count"`` (keyword only; positional deprecated).
        max_work: Work budget of the general at-scale bracket (keyword only).

    Returns:
        A float for scalar ``eps``, else a float array of ``eps``'s shape.

    Raises:
        ParameterError: As :func:`dataset_log_delta`.
        WorkBudgetExceeded: As :func:`dataset_log_delta`.

    Example:
        >>> round(dataset_delta(0.5, 4, 1.0, [0, 0, 6, 0], output="histogram"), 10)
        0.0189457458
        >>> round(dataset_delta(0.5, 4, 1.0, [0, 0, 6, 0], output="count"), 6)
        0.0...
    """
    out = dataset_log_delta(eps, k, eps0, others, output=output, max_work=max_work)
    with np.errstate(under="ignore"):
        return float(math.exp(out)) if isinstance(out, float) else np.exp(out)
