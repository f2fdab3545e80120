"""Exact samplers and closed forms for the Mallows model under Kendall's tau and Hamming distance.

The Mallows model with dispersion ``theta >= 0`` around the identity is
``P_theta(delta) = exp(-theta d(delta, id)) / psi(theta, d)`` on permutations of ``range(n)``
(Meehan, Roy-Chowdhury, Chaudhuri, Jha, *Privacy Implications of Shuffling*, ICLR 2022, Def. 3.2).
``theta = 0`` is the uniform distribution, ``theta = inf`` the point mass on the identity.

Kendall (``d = number of inversions``): the right Lehmer code ``c_p = #{q > p : delta[q] < delta[p]}``
has independent coordinates, ``c_p`` truncated-geometric on ``{0, ..., n-1-p}`` with ratio
``e^{-theta}``, and ``inv(delta) = sum_p c_p``. The sampler draws the code exactly and decodes it
with a bottom-up divide-and-conquer over the equivalent sequence of list insertions: ``log2 n``
vectorised rounds of O(n) array work plus one sorted ``searchsorted`` each (O(n log^2 n)
comparisons in the worst case; no O(n^2) repeated insertion; about 0.5-1 s for n = 1e6). Normaliser
``psi = prod_{j=1}^n (1 - e^{-j theta}) / (1 - e^{-theta})``.

Hamming (``d = number of non-fixed points``): ``P(d = h) = C(n, h) D_h e^{-theta h} / psi`` with
``D_h`` the number of derangements of ``h`` items. The sampler draws ``h`` from this law, picks
``h`` positions uniformly and puts a *uniform derangement* on them (rejection from uniform
permutations, expected ``e`` tries) -- not a single cycle, which would not be Mallows.

Randomness and exactness
------------------------
``rng=None`` (the default) draws every random bit from :mod:`secrets` (the OS CSPRNG): use it for
real releases. An ``int`` seed or a ``numpy.random.Generator`` makes runs reproducible and is for
**simulation only -- NOT private**: its bits are predictable from the seed, and a
:class:`~shuffle_accounting._rng.PrivacyLeakWarning` is emitted (the package's one RNG policy,
:mod:`shuffle_accounting._rng`; anything else raises).

Every discrete draw is an *exact* inversion of the target CDF by a lazily extended uniform
variate: 64 random bits give an interval for ``U``; the float CDF (whose relative error is
bounded by a generous margin) decides the outcome when the whole interval lies strictly inside
one bucket, and otherwise -- with probability about 1e-12 per draw -- more random bits are drawn
and the bucket is decided with :mod:`mpmath` at rising precision. Uniform permutations are the
``argsort`` of 64-bit random keys, redrawn if two keys tie, so they are exactly uniform.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
from scipy.special import gammaln

from .._logmath import UNIT_ROUNDOFF, log1mexp, logsumexp
from .._rng import check_rng
from .._validation import ParameterError, check_choice, check_int, check_real, check_work

__all__ = [
    "sample_mallows",
    "kendall_distance",
    "hamming_distance",
    "kendall_log_normalizer",
    "hamming_log_normalizer",
    "mallows_log_pmf",
    "kendall_distance_mean",
    "kendall_distance_variance",
    "hamming_distance_pmf",
    "decode_insertion_code",
]

_DISTANCES = ("kendall", "hamming")

#: Largest n of the functions that build O(n) arrays (normalisers, moments, pmfs): 1e7 items.
MAX_ITEMS = 10**7
_TWO64 = float(2.0**64)


# --------------------------------------------------------------------------------------------
# random bits
# --------------------------------------------------------------------------------------------
class RandomBits:
    """Source of uniform 64-bit words: secrets (rng=None) or a numpy Generator (simulation)."""

    def __init__(self, rng: Any) -> None:
        # The package's one RNG policy: None = OS CSPRNG; seed/Generator = simulation (warned).
        self.gen = check_rng(rng, stacklevel=4)

    @property
    def private(self) -> bool:
        return self.gen is None

    def u64(self, k: int) -> np.ndarray:
        if k == 0:
            return np.zeros(0, dtype=np.uint64)
        if self.gen is None:
            return np.frombuffer(secrets.token_bytes(8 * k), dtype="<u8").astype(np.uint64)
        return self.gen.integers(0, 2**64 - 1, size=k, dtype=np.uint64, endpoint=True)

    def word(self) -> int:
        return int(self.u64(1)[0])


def _uniform_permutation(n: int, bits: RandomBits) -> np.ndarray:
    """Exactly uniform permutation of range(n): argsort of distinct 64-bit keys (redraw on a tie)."""
    return _uniform_permutation_rows(1, n, bits)[0]


# --------------------------------------------------------------------------------------------
# exact inverse-CDF sampling with lazy uniforms
# --------------------------------------------------------------------------------------------
def _u_interval(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Float point estimate and an enclosing interval of U in [u 2^-64, (u+1) 2^-64]."""
    uf = u.astype(np.float64) / _TWO64
    return uf, uf - (2.0 * UNIT_ROUNDOFF), uf + (2.0 * UNIT_ROUNDOFF)


def _threshold_bounds(F: np.ndarray, S: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Enclosure of a CDF value from float F (=P(X<=k)) and S (=P(X>k)), both with relative error <= tol."""
    lo = np.maximum(F * (1 - tol), 1.0 - S * (1 + tol) - (2.0 * UNIT_ROUNDOFF))
    hi = np.minimum(F * (1 + tol), 1.0 - S * (1 - tol) + (2.0 * UNIT_ROUNDOFF))
    return lo, hi


def resolve_lazy(
    u: int, nbits: int, kmax: int, cdf_hp: Callable[[int], Callable[[int], Any]], bits: RandomBits
) -> int:
    """Decide X = min{k : U < F(k)} exactly by extending U's random bits and mpmath precision.

    ``cdf_hp`` is called once per precision: ``cdf_hp(prec)`` returns ``F`` with
    ``F(k) = P(X <= k)`` evaluated at working precision ``prec`` bits (``F(kmax) == 1``).
    """
    while True:
        prec = nbits + 64
        with mpmath.workprec(prec):
            F = cdf_hp(prec)
            lo = mpmath.mpf(u) / mpmath.mpf(2) ** nbits
            hi = mpmath.mpf(u + 1) / mpmath.mpf(2) ** nbits
            err = mpmath.mpf(2) ** (-(prec - 24))
            a, b = 0, kmax  # smallest k with F(k) > lo
            while a < b:
                mid = (a + b) // 2
                if F(mid) > lo:
                    b = mid
                else:
                    a = mid + 1
            k = a
            below = mpmath.mpf(0) if k == 0 else F(k - 1) + err
            above = mpmath.mpf(1) if k == kmax else F(k) - err
            if below <= lo and hi <= above:
                return k
        u = (u << 64) | bits.word()
        nbits += 64


def truncated_geometric(m: np.ndarray, theta: float, bits: RandomBits) -> np.ndarray:
    """Exact draws X_i with P(X_i = k) = e^{-theta k}(1 - e^{-theta}) / (1 - e^{-theta m_i}), k < m_i.

    Requires theta > 0 finite and m_i >= 1.
    """
    m = np.asarray(m, dtype=np.int64)
    u = bits.u64(m.size)
    uf, ulo, uhi = _u_interval(u)
    mf = m.astype(np.float64)
    den = np.expm1(-theta * mf)  # -(1 - q^m) < 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        k = np.floor(np.log1p(uf * den) / (-theta))
    k = np.clip(np.nan_to_num(k, nan=0.0, posinf=0.0), 0, mf - 1).astype(np.int64)

    def bounds(j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        jf = j.astype(np.float64)
        with np.errstate(under="ignore"):
            F = np.expm1(-theta * (jf + 1)) / den
            S = np.exp(-theta * (jf + 1)) * np.expm1(-theta * (mf - jf - 1)) / den
        return _threshold_bounds(F, S, 1e-12)

    _, hi_prev = bounds(k - 1)
    lo_cur, _ = bounds(k)
    ok_low = (k == 0) | (ulo >= hi_prev)
    ok_high = (k == m - 1) | (uhi < lo_cur)
    ok = ok_low & ok_high
    for i in np.flatnonzero(~ok).tolist():
        mi = int(m[i])

        def cdf_hp(prec: int, mi: int = mi) -> Callable[[int], Any]:
            th = mpmath.mpf(theta)
            d = mpmath.expm1(-th * mi)
            return lambda j: mpmath.mpf(1) if j >= mi - 1 else mpmath.expm1(-th * (j + 1)) / d

        k[i] = resolve_lazy(int(u[i]), 64, mi - 1, cdf_hp, bits)
    return k


def discrete_from_log_weights(
    log_w: np.ndarray, bits: RandomBits, tol: float, hp_weights: Callable[[int], list], count: int = 1
) -> np.ndarray:
    """Exact draws of ``count`` indices with probability proportional to exp(log_w).

    The float CDF/survival values are trusted to relative error ``tol``; draws whose 64-bit
    uniform falls within that margin of a bucket boundary are resolved in high precision with
    ``hp_weights(prec)`` (the exact weights as mpmath numbers).
    """
    kmax = log_w.size - 1
    w = np.exp(log_w - np.max(log_w))
    tot = w.sum()
    F = np.cumsum(w) / tot
    S = np.concatenate([np.cumsum(w[::-1])[::-1][1:], [0.0]]) / tot
    lo, hi = _threshold_bounds(F, S, tol)
    u = bits.u64(count)
    uf, ulo, uhi = _u_interval(u)
    k = np.minimum(np.searchsorted(F, uf, side="right"), kmax)
    ok_low = (k == 0) | (ulo >= hi[np.maximum(k - 1, 0)])
    ok_high = (k == kmax) | (uhi < lo[k])
    bad = np.flatnonzero(~(ok_low & ok_high))
    if bad.size:

        def cdf_hp(prec: int) -> Callable[[int], Any]:
            cum = []
            acc = mpmath.mpf(0)
            for v in hp_weights(prec):
                acc += v
                cum.append(acc)
            total = cum[-1]
            return lambda j: mpmath.mpf(1) if j >= kmax else cum[j] / total

        for i in bad.tolist():
            k[i] = resolve_lazy(int(u[i]), 64, kmax, cdf_hp, bits)
    return k.astype(np.int64)


def _uniform_permutation_rows(rows: int, n: int, bits: RandomBits) -> np.ndarray:
    """``rows`` independent exactly uniform permutations of range(n) (argsort of 64-bit keys)."""
    out = np.empty((rows, n), dtype=np.int64)
    todo = np.arange(rows)
    while todo.size:
        keys = bits.u64(todo.size * n).reshape(todo.size, n)
        order = np.argsort(keys, axis=1, kind="stable")
        sk = np.take_along_axis(keys, order, axis=1)
        tie = np.any(sk[:, 1:] == sk[:, :-1], axis=1) if n > 1 else np.zeros(todo.size, dtype=bool)
        out[todo[~tie]] = order[~tie]
        todo = todo[tie]
    return out


# --------------------------------------------------------------------------------------------
# decoding
# --------------------------------------------------------------------------------------------
def decode_insertion_code(idx: Any) -> np.ndarray:
    """Final list positions after inserting items ``t = 0, 1, ...`` at list index ``idx[t]``.

    Item ``t`` is inserted into a list that holds items ``0..t-1``, at index ``idx[t]`` in
    ``[0, t]``. Computed bottom-up in ``ceil(log2 n)`` vectorised rounds: when two consecutive
    blocks A (earlier) and B (later) are merged, B's positions are final for the merged block and
    each A item moves to the ``x``-th slot not taken by B, i.e. ``x + #{j : b_j - j <= x}`` for the
    sorted B positions ``b_j``. ``ceil(log2 n)`` rounds of O(n) array work and one binary search
    per item (O(n log^2 n) comparisons worst case), O(n) memory.

    Args:
        idx: Integer array with ``0 <= idx[t] <= t``.

    Returns:
        int64 array: ``out[t]`` is item ``t``'s index in the final list (a permutation).

    Raises:
        ParameterError: If an index is out of range.

    Example:
        >>> decode_insertion_code([0, 0, 1]).tolist()  # [0] -> [1, 0] -> [1, 2, 0]
        [2, 0, 1]
    """
    P0 = np.array(idx, dtype=np.int64)
    if P0.ndim != 1:
        raise ParameterError(f"idx must be a 1-D integer array, got shape {P0.shape}")
    n = P0.size
    if n and (np.any(P0 < 0) or np.any(P0 > np.arange(n))):
        raise ParameterError("idx must satisfy 0 <= idx[t] <= t for every t")
    return _decode_rows(P0[None, :])[0]


def _decode_rows(codes: np.ndarray) -> np.ndarray:
    """Row-wise :func:`decode_insertion_code` of a ``(R, n)`` array (rows are independent)."""
    R, n = codes.shape
    if n <= 1:
        return np.zeros((R, n), dtype=np.int64)
    # Pad each row to a power of two with items appended at the end (idx[t] = t): they never
    # move the real items, which keep positions in [0, n). Rows are laid out one after another,
    # so a block of a row is simply a block of the flat array.
    N = 1 << (n - 1).bit_length()
    Q2 = np.tile(np.arange(N, dtype=np.int64), (R, 1))
    Q2[:, :n] = codes
    Q = Q2.ravel()
    total = R * N
    # Invariant at block size s: block k holds the items k*s .. k*s+s-1; ``items`` lists them
    # sorted by current position within each block and ``Q`` holds those positions (sorted
    # within blocks); positions are indices in the row's list after the block's last insertion.
    items = np.arange(total, dtype=np.int64)
    base = N + 1
    s = 1
    while s < N:
        nb = total // (2 * s)
        Qv = Q.reshape(nb, 2, s)
        blk = np.arange(nb, dtype=np.int64)[:, None]
        key2 = (blk * base + (Qv[:, 1, :] - np.arange(s, dtype=np.int64))).ravel()
        x = Qv[:, 0, :]
        # B entries of earlier (full) pair blocks: blk * s of them precede this block in key2
        cnt = np.searchsorted(key2, (blk * base + x).ravel(), side="right").reshape(nb, s) - blk * s
        new_slot = (blk * (2 * s) + np.arange(s, dtype=np.int64) + cnt).ravel()
        taken = np.zeros(total, dtype=bool)
        taken[new_slot] = True
        iv = items.reshape(nb, 2, s)
        newQ = np.empty_like(Q)
        new_items = np.empty_like(items)
        newQ[new_slot] = (x + cnt).ravel()
        new_items[new_slot] = iv[:, 0, :].ravel()
        free = ~taken
        newQ[free] = Qv[:, 1, :].ravel()
        new_items[free] = iv[:, 1, :].ravel()
        Q, items = newQ, new_items
        s *= 2
    P = np.empty(total, dtype=np.int64)
    P[items] = Q
    return P.reshape(R, N)[:, :n]


# --------------------------------------------------------------------------------------------
# samplers
# --------------------------------------------------------------------------------------------
def sample_kendall_rows(n: int, theta: float, bits: RandomBits, rows: int) -> np.ndarray:
    if theta == 0.0:
        return _uniform_permutation_rows(rows, n, bits)
    if math.isinf(theta) or n == 1:
        return np.tile(np.arange(n, dtype=np.int64), (rows, 1))
    # insertion time t has m = t + 1 choices; time t inserts position p = n - 1 - t and its
    # final list index is delta[p]
    m = np.tile(np.arange(1, n + 1, dtype=np.int64), rows)
    idx = truncated_geometric(m, theta, bits).reshape(rows, n)
    return _decode_rows(idx)[:, ::-1].copy()


def _sample_kendall(n: int, theta: float, bits: RandomBits) -> np.ndarray:
    return sample_kendall_rows(n, theta, bits, 1)[0]


def _small_derangement_logs() -> np.ndarray:
    out = np.empty(41)
    acc = Fraction(0)
    fact = 1
    for i in range(41):
        if i > 0:
            fact *= i
        acc += Fraction((-1) ** i, fact)
        out[i] = -np.inf if acc == 0 else math.log(acc.numerator) - math.log(acc.denominator)
    return out


_LOG_DER_SMALL = _small_derangement_logs()


def _log_derangement_fraction(h: np.ndarray) -> np.ndarray:
    """log(D_h / h!) with D_h/h! = sum_{i<=h} (-1)^i / i!: exact rationals for h <= 40, -1 beyond
    (the remainder is below 1/41! < 1e-49, far below double precision)."""
    h = np.asarray(h, dtype=np.int64)
    return np.where(h <= 40, _LOG_DER_SMALL[np.minimum(h, 40)], -1.0)


def hamming_distance_pmf(n: int, theta: float) -> np.ndarray:
    """Law of the Hamming distance ``h`` of a Hamming-Mallows(theta) permutation from the identity.

    ``P(h) = C(n, h) D_h e^{-theta h} / psi`` with ``D_h`` the derangement numbers (so ``P(1) = 0``).

    Args:
        n: Number of items (integer >= 1).
        theta: Dispersion in ``[0, inf]``.

    Returns:
        float array of length ``n + 1``.

    Example:
        >>> [round(float(p), 6) for p in hamming_distance_pmf(3, 0.0)]  # uniform on S_3
        [0.166667, 0.0, 0.5, 0.333333]
    """
    n = check_int("n", n, minimum=1, maximum=MAX_ITEMS)
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    if math.isinf(theta):
        out = np.zeros(n + 1)
        out[0] = 1.0
        return out
    lw = hamming_log_weights(n, theta)
    return np.exp(lw - logsumexp(lw))


def hamming_log_weights(n: int, theta: float) -> np.ndarray:
    h = np.arange(n + 1, dtype=np.int64)
    return gammaln(n + 1.0) - gammaln(n - h + 1.0) + _log_derangement_fraction(h) - theta * h


def hamming_hp_weights(n: int, theta: float) -> Callable[[int], list]:
    def weights(prec: int) -> list:
        q = mpmath.exp(-mpmath.mpf(theta))
        out = []
        term = mpmath.mpf(1)  # n!/(n-h)! q^h / n!^0, built by recursion
        e_h = mpmath.mpf(0)
        inv_fact = mpmath.mpf(1)
        for hv in range(n + 1):
            if hv > 0:
                term *= q * (n - hv + 1)
                inv_fact /= hv
            e_h += inv_fact if hv % 2 == 0 else -inv_fact
            out.append(term * e_h)
        return out

    return weights


def _sample_hamming_rows(n: int, theta: float, bits: RandomBits, rows: int) -> np.ndarray:
    out = np.tile(np.arange(n, dtype=np.int64), (rows, 1))
    if theta == 0.0:
        return _uniform_permutation_rows(rows, n, bits)
    if math.isinf(theta) or n == 1:
        return out
    lw = hamming_log_weights(n, theta)
    # gammaln(n + 1) ~ n log n carries an absolute error of a few ulps of that magnitude, the
    # cumulative sums a relative n * eps: the float CDF is trusted to this (generous) margin.
    tol = 1e-9 + 1e-14 * (n + 1) * (math.log(n + 2) + 1)
    hs = discrete_from_log_weights(lw, bits, tol, hamming_hp_weights(n, theta), count=rows)
    for h in np.unique(hs).tolist():
        if h == 0:
            continue
        sel = np.flatnonzero(hs == h)
        # h positions chosen uniformly, then a uniform derangement of them (rejection sampling)
        chosen = np.sort(_uniform_permutation_rows(sel.size, n, bits)[:, :h], axis=1)
        der = np.empty((sel.size, h), dtype=np.int64)
        todo = np.arange(sel.size)
        ar = np.arange(h)
        while todo.size:
            d = _uniform_permutation_rows(todo.size, h, bits)
            good = ~np.any(d == ar, axis=1)
            der[todo[good]] = d[good]
            todo = todo[~good]
        out[sel[:, None], chosen] = np.take_along_axis(chosen, der, axis=1)
    return out


def _sample_hamming(n: int, theta: float, bits: RandomBits) -> np.ndarray:
    return _sample_hamming_rows(n, theta, bits, 1)[0]


_ROW_SAMPLERS: dict[str, Callable[[int, float, RandomBits, int], np.ndarray]] = {
    "kendall": sample_kendall_rows,
    "hamming": _sample_hamming_rows,
}

SAMPLERS: dict[str, Callable[[int, float, RandomBits], np.ndarray]] = {
    "kendall": _sample_kendall,
    "hamming": _sample_hamming,
}


def sample_mallows(
    n: int,
    theta: float,
    distance: str = "kendall",
    size: int | None = None,
    rng: Any = None,
    *,
    max_work: int | None = None,
) -> np.ndarray:
    """Draw permutations of ``range(n)`` from the Mallows model around the identity.

    ``P(delta) proportional to exp(-theta d(delta, id))`` (Def. 3.2 of *Privacy Implications of
    Shuffling*, with sigma_0 = identity); see the module docstring for the exact algorithms.

    Args:
        n: Number of items (integer >= 1).
        theta: Dispersion in ``[0, inf]``; 0 = uniform, ``inf`` = identity.
        distance: ``"kendall"`` or ``"hamming"``.
        size: ``None`` for one permutation (shape ``(n,)``) or a count ``>= 1`` (shape
            ``(size, n)``).
        rng: ``None`` (default): cryptographically secure bits from :mod:`secrets` -- use this for
            real releases. A seed or ``numpy.random.Generator``: reproducible, for simulation
            only, **NOT private**.
        max_work: Work budget (``None``: ``DEFAULT_MAX_WORK`` = 1e8); the work (and the output
            size) is ``n`` times the number of permutations.

    Returns:
        int64 array of permutation(s); ``delta[p]`` is the image of position ``p``.

    Raises:
        ParameterError: On an invalid argument.
        WorkBudgetExceeded: If ``n * size > max_work`` (checked before any sampling).

    Example:
        >>> sample_mallows(5, float("inf")).tolist()
        [0, 1, 2, 3, 4]
        >>> sorted(sample_mallows(6, 0.5, rng=1).tolist())
        [0, 1, 2, 3, 4, 5]
        >>> sample_mallows(4, 1.0, distance="hamming", size=3, rng=7).shape
        (3, 4)
    """
    n = check_int("n", n, minimum=1)
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    distance = check_choice("distance", distance, _DISTANCES)
    count = 1 if size is None else check_int("size", size, minimum=1)
    check_work(
        f"sample_mallows(n={n}, size={count})",
        n * count,
        max_work=max_work,
        alternative="draw fewer permutations per call",
    )
    bits = RandomBits(rng)
    fn = SAMPLERS[distance]
    if size is None:
        return fn(n, theta, bits)
    size = check_int("size", size, minimum=1)
    rows_fn = _ROW_SAMPLERS[distance]
    chunk = max(1, 2_000_000 // n)
    return np.concatenate([rows_fn(n, theta, bits, min(chunk, size - i)) for i in range(0, size, chunk)])


# --------------------------------------------------------------------------------------------
# distances, normalisers, moments
# --------------------------------------------------------------------------------------------
def _check_perm(perm: Any) -> np.ndarray:
    if isinstance(perm, np.ndarray):
        arr = perm
    else:
        try:
            items = list(perm)
        except TypeError:
            raise ParameterError(f"perm must be a permutation of range(n), got {perm!r}"[:200]) from None
        if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in items):
            raise ParameterError(f"perm must be a permutation of range(n) as integers, got {perm!r}"[:200])
        arr = np.asarray(items, dtype=np.int64) if items else np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu" or not np.array_equal(np.sort(arr), np.arange(arr.size)):
        raise ParameterError(
            f"perm must be a permutation of range(n) as an integer array, got {perm!r}"[:200]
        )
    return arr.astype(np.int64)


def kendall_distance(perm: Any) -> int:
    """Number of inversions of ``perm`` (Kendall's tau distance to the identity), O(n log^2 n).

    Example:
        >>> kendall_distance([2, 0, 1])
        2
    """
    a = _check_perm(perm)
    n = a.size
    total = 0
    s = 1
    base = n + 1
    idx = np.arange(n, dtype=np.int64)
    vals = a.copy()  # sorted within blocks of size s
    while s < n:
        pb = idx // (2 * s)
        in_b = ((idx // s) & 1) == 1
        left_key = pb[~in_b] * base + vals[~in_b]  # sorted (blocks sorted, in block order)
        right_blk = pb[in_b]
        nblocks = int(pb[-1]) + 1
        left_counts = np.bincount(pb[~in_b], minlength=nblocks)
        left_end = np.cumsum(left_counts)
        # left elements greater than b in the same pair block
        greater = left_end[right_blk] - np.searchsorted(left_key, right_blk * base + vals[in_b], side="right")
        total += int(greater.sum())
        vals = np.sort(pb * base + vals, kind="stable") - pb * base
        s *= 2
    return total


def hamming_distance(perm: Any) -> int:
    """Number of non-fixed points of ``perm``.

    Example:
        >>> hamming_distance([1, 0, 2])
        2
    """
    a = _check_perm(perm)
    return int(np.count_nonzero(a != np.arange(a.size)))


def kendall_log_normalizer(n: int, theta: float) -> float:
    """``log psi = sum_{j=1}^n [log(1 - e^{-j theta}) - log(1 - e^{-theta})]`` (``log n!`` at 0).

    Example:
        >>> round(kendall_log_normalizer(3, 0.0), 12) == round(math.log(6), 12)
        True
    """
    n = check_int("n", n, minimum=1, maximum=MAX_ITEMS)
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    if theta == 0.0:
        return float(gammaln(n + 1.0))
    if math.isinf(theta):
        return 0.0
    j = np.arange(1, n + 1, dtype=np.float64)
    return float(np.sum(log1mexp(-j * theta) - log1mexp(-theta)))


def hamming_log_normalizer(n: int, theta: float) -> float:
    """``log psi = log sum_h C(n, h) D_h e^{-theta h}``.

    Example:
        >>> round(hamming_log_normalizer(4, 0.0), 12) == round(math.log(24), 12)
        True
    """
    n = check_int("n", n, minimum=1, maximum=MAX_ITEMS)
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    if math.isinf(theta):
        return 0.0
    return float(logsumexp(hamming_log_weights(n, theta)))


def mallows_log_pmf(perm: Any, theta: float, distance: str = "kendall") -> float:
    """``log P_theta(perm)`` under the Mallows model around the identity.

    Example:
        >>> round(math.exp(mallows_log_pmf([0, 1, 2], 0.0)), 6)
        0.166667
    """
    distance = check_choice("distance", distance, _DISTANCES)
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    a = _check_perm(perm)
    d = kendall_distance(a) if distance == "kendall" else hamming_distance(a)
    if math.isinf(theta):
        return 0.0 if d == 0 else -math.inf
    norm = (
        kendall_log_normalizer(a.size, theta)
        if distance == "kendall"
        else hamming_log_normalizer(a.size, theta)
    )
    return -theta * d - norm


_B2K = [
    Fraction(1, 6),
    Fraction(-1, 30),
    Fraction(1, 42),
    Fraction(-1, 30),
    Fraction(5, 66),
    Fraction(-691, 2730),
    Fraction(7, 6),
    Fraction(-3617, 510),
    Fraction(43867, 798),
]


def _g(x: np.ndarray) -> np.ndarray:
    """g(x) = 1/expm1(x) - 1/x, stable for small x (series with Bernoulli numbers)."""
    x = np.asarray(x, dtype=np.float64)
    small = np.abs(x) < 0.5
    out = np.empty_like(x)
    xs = x[small]
    acc = np.full(xs.shape, -0.5)
    fact = 1
    for k, b in enumerate(_B2K, start=1):
        fact = math.factorial(2 * k)
        acc = acc + float(b / fact) * xs ** (2 * k - 1)
    out[small] = acc
    xl = x[~small]
    with np.errstate(over="ignore"):
        out[~small] = 1.0 / np.expm1(xl) - 1.0 / xl
    return out


def _h(x: np.ndarray) -> np.ndarray:
    """h(x) = 1/(4 sinh^2(x/2)) - 1/x^2 = -g'(x), stable for small x."""
    x = np.asarray(x, dtype=np.float64)
    small = np.abs(x) < 0.5
    out = np.empty_like(x)
    xs = x[small]
    acc = np.zeros(xs.shape)
    for k, b in enumerate(_B2K, start=1):
        acc = acc - float(b * (2 * k - 1) / math.factorial(2 * k)) * xs ** (2 * k - 2)
    out[small] = acc
    xl = x[~small]
    with np.errstate(over="ignore", under="ignore"):
        out[~small] = 0.25 / np.sinh(xl / 2) ** 2 - 1.0 / xl**2
    return out


def kendall_distance_mean(n: int, theta: float) -> float:
    """Mean number of inversions under Kendall-Mallows(theta), stable at small theta.

    ``E = sum_{j=1}^n [1/expm1(theta) - j/expm1(j theta)] = n g(theta) - sum_j j g(j theta)`` with
    ``g(x) = 1/expm1(x) - 1/x`` evaluated by its Bernoulli series near 0 (the textbook form
    ``n e^{-t}/(1-e^{-t}) - sum j e^{-jt}/(1-e^{-jt})`` cancels catastrophically as ``theta -> 0``).

    Example:
        >>> kendall_distance_mean(4, 0.0)  # n(n-1)/4
        3.0
        >>> round(kendall_distance_mean(4, 1e-9), 6)
        3.0
    """
    n = check_int("n", n, minimum=1, maximum=MAX_ITEMS)
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    if theta == 0.0:
        return n * (n - 1) / 4.0
    if math.isinf(theta):
        return 0.0
    j = np.arange(1, n + 1, dtype=np.float64)
    return float(n * _g(np.array([theta]))[0] - np.sum(j * _g(j * theta)))


def kendall_distance_variance(n: int, theta: float) -> float:
    """Variance of the number of inversions under Kendall-Mallows(theta).

    Sum of the truncated-geometric variances ``1/(4 sinh^2(theta/2)) - j^2/(4 sinh^2(j theta/2))``,
    written as ``h(theta) - j^2 h(j theta)`` with ``h(x) = 1/(4 sinh^2(x/2)) - 1/x^2`` (series near
    0) so that nothing cancels at small theta; at theta = 0 it is ``n(n-1)(2n+5)/72``.

    Example:
        >>> kendall_distance_variance(4, 0.0)
        2.1666666666666665
        >>> round(kendall_distance_variance(4, 1e-9), 9)
        2.166666667
    """
    n = check_int("n", n, minimum=1, maximum=MAX_ITEMS)
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    if theta == 0.0:
        return n * (n - 1) * (2 * n + 5) / 72.0
    if math.isinf(theta):
        return 0.0
    j = np.arange(1, n + 1, dtype=np.float64)
    return float(n * _h(np.array([theta]))[0] - np.sum(j**2 * _h(j * theta)))
