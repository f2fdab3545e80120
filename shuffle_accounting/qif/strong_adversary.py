"""Single-target vulnerability of k-RR + shuffle against the strong (all-but-one) adversary.

Jurado, Gonze, Alvim, Palamidessi, *Analyzing the Shuffle Model through the Lens of
Quantitative Information Flow* (CSF 2023), Sec. V, eq. (10): the adversary knows the values of
the other ``n - 1`` users, has a uniform prior on the target's value, sees the shuffled k-RR
reports (equivalently their histogram, Prop. 12) and guesses the target's value:

    V_ABO = (1/k) sum_z max_a Pr(z | x_0 = a).

Write ``H`` for the histogram of the other users' reports and ``q = (1-p)/(k-1)``. Since the
target's report is ``e_a`` with probability ``p`` and each other ``e_j`` with probability ``q``,
``Pr(z | a) = (p - q) Pr(H = z - e_a) + q sum_j Pr(H = z - e_j)`` and the second term sums to
``k`` over ``z``; hence

    V_ABO = q + (p - q)/k * sum_z max_a Pr(H = z - e_a).

``H`` is a sum of independent multinomial groups (one per known value ``v``, with ``c_v`` users
reporting ``v`` w.p. ``p``), so its law is built from the closed-form multinomial pmf of the largest
group, then the other users are added one at a time on a ``(k-1)``-dimensional grid (``k = 2``:
direct convolution of binomials). All operations are on non-negative numbers, hence
well-conditioned. The cost is about ``n k (n+1)^(k-1)``, not ``k^n``: ``k = 2`` with thousands
of users takes milliseconds, ``k = 3`` with a few hundred users well under a second. Beyond
:data:`MAX_WORK` (``k >= 3`` with several groups) the groups' exact pmfs are convolved by FFT on the
full grid (up to :data:`MAX_FFT_CELLS` cells, e.g. ``k = 3`` with 4000 users or ``k = 4`` with 250),
with a rigorous round-off bound folded into the returned interval (about 1e-10). Users whose values the adversary does *not* know (the "knows a subset" prior,
parameter ``unknown``) have a uniform prior, so their reports are uniform on ``K``: one more
multinomial group. With every other user unknown this reduces to the uninformed ``V[NS]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import gammaln, xlogy

from .._logmath import UNIT_ROUNDOFF
from .._validation import ParameterError, check_int
from ._common import Estimate, check_p

__all__ = ["all_but_one_vulnerability", "all_but_one_vulnerability_bounds", "MAX_WORK", "MAX_FFT_CELLS"]

_U = UNIT_ROUNDOFF  # the error analysis below counts unit roundoffs u = 2^-53
#: Largest number of array operations (roughly multiply-adds) of the direct evaluation.
MAX_WORK = 300_000_000
#: Largest histogram grid ``(n + 1)^(k - 1)`` of the FFT evaluation used beyond :data:`MAX_WORK`.
MAX_FFT_CELLS = 1 << 24


def _check_counts(known_counts: Any) -> list[int]:
    if isinstance(known_counts, (str, bytes)) or not hasattr(known_counts, "__iter__"):
        raise ParameterError(
            f"known_counts must be a sequence of k >= 2 non-negative integers, got {known_counts!r}"
        )
    counts = [check_int("known_counts", c, minimum=0) for c in known_counts]
    if len(counts) < 2:
        raise ParameterError(f"known_counts must have length k >= 2 (one count per value), got {len(counts)}")
    return counts


def _group_pmf(c: int, probs: np.ndarray) -> tuple[np.ndarray, float]:
    """pmf of Multinomial(c, probs) on the grid of its first k-1 counts, and a relative error bound."""
    k = probs.size
    shape = (c + 1,) * (k - 1)
    if k - 1 == 0:  # pragma: no cover - k >= 2
        raise ParameterError("k must be >= 2")
    idx = np.indices(shape, dtype=float) if k > 2 else np.arange(c + 1, dtype=float)[None, :]
    last = c - idx.sum(axis=0)
    valid = last >= 0
    last_c = np.where(valid, last, 0.0)
    logp = gammaln(c + 1) - gammaln(idx + 1).sum(axis=0) - gammaln(last_c + 1)
    logp = logp + sum(xlogy(idx[u], probs[u]) for u in range(k - 1)) + xlogy(last_c, probs[-1])
    with np.errstate(under="ignore"):
        pmf = np.where(valid, np.exp(np.where(valid, logp, -np.inf)), 0.0)
    logs = np.abs(np.log(probs[probs > 0]))
    mag = 2 * float(gammaln(c + 1)) + c * float(logs.max() if logs.size else 0.0) + 4
    return pmf, 8 * _U * mag + 2 * _U


def _direct_histogram_pmf(groups, total: int, dims: int, k: int) -> tuple[np.ndarray, float]:
    """Law of ``H`` on the ``(total + 1)^dims`` grid, exactly: the largest group's closed-form pmf,
    then (``k = 2``) direct convolution with the other groups or (``k >= 3``) the other users added
    one at a time. Returns ``(pmf grid, relative error bound)``."""
    big_c, big_probs = groups[0]
    pmf, rel = _group_pmf(big_c, big_probs)
    if k == 2:
        h = pmf
        for c, probs in groups[1:]:
            other, r = _group_pmf(c, probs)
            rel += r + (min(h.size, other.size) + 2) * _U
            h = np.convolve(h, other)
        return h, rel
    h = np.zeros((total + 1,) * dims)
    h[tuple(slice(0, big_c + 1) for _ in range(dims))] = pmf
    for c, probs in groups[1:]:
        for _ in range(c):
            new = h * probs[-1]
            for ax in range(dims):
                dst = tuple(slice(1, None) if d == ax else slice(None) for d in range(dims))
                src = tuple(slice(0, -1) if d == ax else slice(None) for d in range(dims))
                new[dst] += probs[ax] * h[src]
            h = new
        rel += c * (k + 2) * _U
    return h, rel


def _fft_histogram_pmf(groups, total: int, dims: int, k: int) -> tuple[np.ndarray, float, float]:
    """Law of ``H`` on the ``(total + 1)^dims`` grid by FFT convolution of the groups' pmfs.

    Each group's multinomial pmf is exact (closed form, relative error ``rel``); the product of
    their zero-padded real FFTs has no wrap-around because the grid holds the full support. The
    FFT round-off is bounded in the 2-norm by the usual floating-point analysis of FFT-based
    convolution, ``||c_hat - c||_2 <= C u log2(N) ||a||_2 ||b||_2`` per convolution (Higham,
    *Accuracy and Stability of Numerical Algorithms*, Sec. 24.1), taken generously with
    ``C = 8`` and with ``||a * b||_2 <= ||a||_2`` (a pmf has 1-norm 1); the 1-norm error is at
    most ``sqrt(N)`` times that, and ``W = sum_z max_a Pr(H = z - e_a)`` moves by at most ``k``
    times the 1-norm error. Negative round-off values are clipped to 0 (this only reduces the
    error).

    Returns:
        ``(pmf grid, relative error bound of the group pmfs, absolute error bound on W)``.
    """
    from scipy import fft as _fft

    shape = (total + 1,) * dims
    spec = None
    rel = 0.0
    norm2 = 0.0
    for c, probs in groups:
        pmf, r = _group_pmf(c, probs)
        rel += r
        norm2 = max(norm2, float(np.sqrt(np.sum(pmf * pmf))))
        f = _fft.rfftn(pmf, s=shape)
        spec = f if spec is None else spec * f
    h = _fft.irfftn(spec, s=shape)
    np.maximum(h, 0.0, out=h)
    n_cells = float(np.prod(shape))
    l2 = 8.0 * _U * math.log2(n_cells + 2.0) * (len(groups) + 1) * norm2
    abs_err = k * math.sqrt(n_cells) * l2 + k * n_cells * _U
    return h, rel, abs_err


def all_but_one_vulnerability_bounds(p: Any, known_counts: Sequence[int], *, unknown: Any = 0) -> Estimate:
    """Strong-adversary single-target vulnerability of k-RR + shuffle (eq. (10)), with error bound.

    Args:
        p: k-RR keep probability in ``[1/k, 1]`` (``p = 1``: shuffle alone, vulnerability 1).
        known_counts: ``known_counts[v]`` = number of *other* users the adversary knows to hold
            value ``v``; its length is ``k``.
        unknown: Number of other users whose values the adversary does not know (uniform prior on
            them); ``n = sum(known_counts) + unknown + 1``.

    Returns:
        An :class:`~shuffle_accounting.qif.vulnerability.Estimate`; the true value is in
        ``[lower, upper]`` (``upper`` is the privacy-pessimistic end). Errors are ~1e-12.

    Raises:
        ParameterError: On invalid arguments, or if the exact evaluation would exceed
            :data:`MAX_WORK` operations (many users spread over ``k >= 3`` values).

    Example:
        >>> e = all_but_one_vulnerability_bounds(0.8, [0, 200])
        >>> round(e.value, 5), e.error < 1e-9
        (0.52111, True)
    """
    counts = _check_counts(known_counts)
    k = len(counts)
    pp = float(check_p(p, k))
    unknown = check_int("unknown", unknown, minimum=0)
    q = (1.0 - pp) / (k - 1)
    if pp == q:  # p = 1/k: the target's report is independent of its value
        return Estimate(pp, 0.0, pp, pp)
    if pp == 1.0 and unknown == 0:  # shuffle alone: the histogram minus the known counts is x_0
        return Estimate(1.0, 0.0, 1.0, 1.0)
    groups: list[tuple[int, np.ndarray]] = []
    for v, c in enumerate(counts):
        if c > 0:
            probs = np.full(k, q)
            probs[v] = pp
            groups.append((c, probs))
    if unknown > 0:
        groups.append((unknown, np.full(k, 1.0 / k)))
    total = sum(c for c, _ in groups)
    groups.sort(key=lambda g: g[0], reverse=True)
    dims = k - 1
    cells = (total + 1) ** dims
    rest = sum(c for c, _ in groups[1:])
    if k == 2:
        work = sum((groups[0][0] + 1) * (c + 1) for c, _ in groups[1:]) * len(groups) + 2 * cells
    else:
        work = (groups[0][0] + 1) ** dims + rest * k * cells + k * (total + 2) ** dims if groups else 0
    use_fft = work > MAX_WORK and k > 2 and len(groups) > 1
    if work > MAX_WORK and not (use_fft and (total + 2) ** dims <= MAX_FFT_CELLS):
        raise ParameterError(
            f"known_counts/unknown need about {work:.3g} operations (> MAX_WORK = {MAX_WORK}) for the exact "
            f"all-but-one vulnerability with k = {k}, n = {total + 1}, and the histogram grid "
            f"{(total + 2) ** dims:.3g} exceeds MAX_FFT_CELLS = {MAX_FFT_CELLS}; use fewer users or fewer "
            "distinct values"
        )
    if total == 0:
        # n = 1: the adversary sees only the target's report.
        return Estimate(pp, 0.0, pp, pp)
    if use_fft:
        h, rel, abs_err = _fft_histogram_pmf(groups, total, dims, k)
    else:
        h, rel = _direct_histogram_pmf(groups, total, dims, k)
        abs_err = 0.0
    # W = sum_z max_a Pr(H = z - e_a), z over histograms of total + 1 (first k-1 coords).
    grid = (total + 2,) * dims
    best = np.zeros(grid)
    base = tuple(slice(0, total + 1) for _ in range(dims))
    best[base] = h  # a = k-1 (implicit last coordinate): Pr(H = z') where z'_last = z_last - 1
    for a in range(dims):
        sl = tuple(slice(1, total + 2) if d == a else slice(0, total + 1) for d in range(dims))
        np.maximum(best[sl], h, out=best[sl])
    w = float(best.sum())
    rel += (best.size + 4) * _U
    value = q + (pp - q) / k * w
    err = (pp - q) / k * (w * rel + abs_err) + 4 * _U
    lower = max(1.0 / k, value - err)
    upper = min(1.0, value + err)
    value = min(max(value, lower), upper)
    return Estimate(value, max(value - lower, upper - value), lower, upper)


def all_but_one_vulnerability(p: Any, known_counts: Sequence[int], *, unknown: Any = 0) -> float:
    """Strong (all-but-one) adversary's single-target vulnerability of k-RR + shuffle (eq. (10)).

    See :func:`all_but_one_vulnerability_bounds` (this returns its ``value``). ``k`` is
    ``len(known_counts)`` and ``n = sum(known_counts) + unknown + 1``. Published values
    (Jurado et al., Sec. V, Fig. 3; ``k = 2``, ``n = 201``, ``p = 0.8``): about 0.52111 when the
    other 200 users all hold ``b`` and about 0.52116 when 100 hold ``a`` and 100 hold ``b``.

    Args:
        p: k-RR keep probability in ``[1/k, 1]``.
        known_counts: Counts of each value among the other users known to the adversary.
        unknown: Number of other users with unknown (uniformly distributed) values.

    Returns:
        The posterior vulnerability (absolute error about 1e-12 or less).

    Raises:
        ParameterError: On invalid arguments or a too expensive instance.

    Example:
        >>> round(all_but_one_vulnerability(0.8, [100, 100]), 5)
        0.52116
        >>> all_but_one_vulnerability(1.0, [3, 4])  # shuffle alone does not help here
        1.0
    """
    return all_but_one_vulnerability_bounds(p, known_counts, unknown=unknown).value
