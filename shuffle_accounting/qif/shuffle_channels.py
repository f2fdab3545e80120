"""Explicit channel matrices of Jurado, Gonze, Alvim, Palamidessi on datasets in ``K^n``.

*Analyzing the Shuffle Model through the Lens of Quantitative Information Flow* (CSF 2023):

* :func:`krr_channel` — full k-RR channel ``N`` (Def. 10), ``K^n -> K^n``;
* :func:`shuffle_channel` — full shuffle ``S`` (Def. 7), ``K^n -> K^n``;
* :func:`reduced_shuffle_channel` — ``S^r`` (Def. 8), datasets -> histograms;
* :func:`reduced_krr_channel` — ``N^r`` (Def. 23), histograms -> histograms;
* :func:`single_target_gain` — ``g_T`` (Def. 13);
* :func:`all_but_one_prior` — the strong adversary's prior (Sec. V).

Datasets are ordered lexicographically (``itertools.product``, user 0 most significant) and
histograms as returned by :func:`histograms`. These are for small ``n`` (``k^n`` rows): they
are the ground truth against which the closed forms are tested. With a ``Fraction`` ``p`` (or
``exact=True``) the matrices hold Fractions and all QIF computations on them are exact.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._deprecation import old_positional_order
from .._validation import ParameterError, check_bool, check_int, check_work
from ._common import check_nk, check_p, old_nkp_call

__all__ = [
    "MAX_DATASETS",
    "datasets",
    "histograms",
    "histogram_of",
    "krr_channel",
    "shuffle_channel",
    "reduced_shuffle_channel",
    "reduced_krr_channel",
    "single_target_gain",
    "all_but_one_prior",
]

#: Largest ``k^n`` accepted by the explicit constructors (matrices are ``k^n x k^n``).
MAX_DATASETS = 4096


def _check_size(n: Any, k: Any) -> tuple[int, int]:
    n, k = check_nk(n, k)
    # compare n log k first: k**n itself is astronomically large for huge k and n
    if n * math.log(k) > math.log(MAX_DATASETS) + 1e-9 or k**n > MAX_DATASETS:
        size = f"{k**n}" if n * math.log(k) < 60 else f"e^{n * math.log(k):.4g}"
        raise ParameterError(
            f"k^n must be <= {MAX_DATASETS} for explicit channel matrices, got k={k}, n={n} (k^n = {size}); "
            "use the closed forms in shuffle_accounting.qif.vulnerability for large n"
        )
    return n, k


@old_positional_order(("n", "k"))
def datasets(*, k: Any, n: Any) -> list[tuple[int, ...]]:
    """All datasets in ``K^n`` with ``K = {0..k-1}``, lexicographic (user 0 most significant).

    Arguments are keyword-only (issue 13): ``k=`` and ``n=``. The former positional order
    ``(n, k)`` is still accepted, with a ``DeprecationWarning``; the library's order ``(k, n)``
    cannot be told apart from it positionally (two integers), hence keywords.

    Example:
        >>> datasets(k=2, n=2)
        [(0, 0), (0, 1), (1, 0), (1, 1)]
    """
    n, k = _check_size(n, k)
    return list(itertools.product(range(k), repeat=n))


def histogram_of(dataset: tuple[int, ...], k: int) -> tuple[int, ...]:
    """Histogram ``h(x)``: the count of each value ``0..k-1`` in ``dataset``.

    Example:
        >>> histogram_of((0, 0, 1), 2)
        (2, 1)
    """
    counts = [0] * k
    for v in dataset:
        counts[v] += 1
    return tuple(counts)


def _compositions(n: int, k: int):
    """Tuples of ``k`` non-negative integers summing to ``n``, in decreasing lexicographic order."""
    if k == 1:
        yield (n,)
        return
    for first in range(n, -1, -1):
        for rest in _compositions(n - first, k - 1):
            yield (first,) + rest


@old_positional_order(("n", "k"))
def histograms(*, k: Any, n: Any, max_work: Any = None) -> list[tuple[int, ...]]:
    """All histograms of ``n`` users over ``k`` values, in decreasing lexicographic order.

    Arguments are keyword-only (issue 13): ``k=`` and ``n=``. The former positional order
    ``(n, k)`` is still accepted, with a ``DeprecationWarning``; the library's order ``(k, n)``
    cannot be told apart from it positionally (two integers), hence keywords.

    There are ``C(n + k - 1, k - 1)`` of them, each a ``k``-tuple; the work (``k`` times that
    count) is checked against ``max_work`` before any is built.

    Args:
        k: Number of values (integer >= 2).
        n: Number of users (integer >= 1).
        max_work: Work budget (``None``: ``DEFAULT_MAX_WORK`` = 1e8).

    Returns:
        The list of histograms.

    Raises:
        ParameterError: On invalid ``n`` or ``k``.
        WorkBudgetExceeded: If ``k C(n + k - 1, k - 1) > max_work``.

    Example:
        >>> histograms(k=2, n=3)
        [(3, 0), (2, 1), (1, 2), (0, 3)]
    """
    n, k = check_nk(n, k)
    r = min(n, k - 1)
    if r <= 200:  # exact and fast: math.comb multiplies r factors
        work: float = k * math.comb(n + k - 1, r)
    else:  # C(N, r) >= (N / r)^r >= 2^r > 1e60: far above any budget
        work = k * math.exp(min(r * math.log((n + k - 1) / r), 700.0))
    check_work(
        f"histograms(n={n}, k={k})",
        work,
        max_work=max_work,
        alternative="use the closed forms of shuffle_accounting.qif.vulnerability, which need no enumeration",
    )
    return list(_compositions(n, k))


def _entry_type(p: Any, k: int, exact: bool) -> tuple[Any, Any, bool]:
    pp = check_p(p, k, exact=True)
    if isinstance(pp, Fraction) or exact:
        pp = Fraction(pp) if not isinstance(pp, Fraction) else pp
        return pp, (1 - pp) / (k - 1), True
    return float(pp), (1.0 - float(pp)) / (k - 1), False


@old_positional_order(("n", "k", "p"), detect=old_nkp_call)
def krr_channel(k: Any, p: Any, n: Any, *, exact: bool = False) -> np.ndarray:
    """Full k-RR channel ``N`` (Def. 10): ``N[x, y] = prod_i Pr(y_i | x_i)``.

    Argument order (issue 13): ``k``, the randomizer parameter ``p``, then ``n``, as everywhere in
    the library. The former order ``(n, k, p)`` is still accepted positionally, with a
    ``DeprecationWarning`` (told apart by the second argument: ``p <= 1`` versus ``k >= 2``).

    ``Pr(y_i | x_i) = p`` if equal, ``(1-p)/(k-1)`` otherwise; built as a Kronecker power.

    Args:
        k: Number of values (integer >= 2).
        p: Keep probability in ``[1/k, 1]``; a ``Fraction`` gives an exact matrix.
        n: Number of users (integer >= 1, ``k^n <= MAX_DATASETS``).
        exact: Force Fractions (``p`` is converted exactly).

    Returns:
        The ``k^n x k^n`` channel.

    Raises:
        ParameterError: On invalid arguments or a too large ``k^n``.

    Example:
        >>> krr_channel(2, Fraction(3, 4), 1)
        array([[Fraction(3, 4), Fraction(1, 4)],
               [Fraction(1, 4), Fraction(3, 4)]], dtype=object)
    """
    exact = check_bool("exact", exact)
    n, k = _check_size(n, k)
    pp, qq, is_exact = _entry_type(p, k, exact)
    one = np.empty((k, k), dtype=object if is_exact else float)
    for a in range(k):
        for b in range(k):
            one[a, b] = pp if a == b else qq
    out = one
    for _ in range(n - 1):
        out = np.kron(out, one)
    return out


@old_positional_order(("n", "k"))
def shuffle_channel(*, k: Any, n: Any, exact: bool = False) -> np.ndarray:
    """Full shuffle channel ``S`` (Def. 7): ``S[x, y] = 1/#h(x)`` if ``h(y) = h(x)``, else 0.

    Arguments are keyword-only (issue 13): ``k=`` and ``n=``. The former positional order
    ``(n, k)`` is still accepted, with a ``DeprecationWarning``; the library's order ``(k, n)``
    cannot be told apart from it positionally (two integers), hence keywords.

    Example:
        >>> shuffle_channel(k=2, n=2, exact=True)[1].tolist()
        [0, Fraction(1, 2), Fraction(1, 2), 0]
    """
    exact = check_bool("exact", exact)
    n, k = _check_size(n, k)
    ds = datasets(k=k, n=n)
    hs = [histogram_of(x, k) for x in ds]
    size = {h: hs.count(h) for h in set(hs)}
    out = np.zeros((len(ds), len(ds)), dtype=object if exact else float)
    for i, hx in enumerate(hs):
        val = Fraction(1, size[hx]) if exact else 1.0 / size[hx]
        for j, hy in enumerate(hs):
            if hy == hx:
                out[i, j] = val
    return out


@old_positional_order(("n", "k"))
def reduced_shuffle_channel(*, k: Any, n: Any, exact: bool = False) -> np.ndarray:
    """Reduced shuffle ``S^r`` (Def. 8): dataset ``x`` -> its histogram, deterministically.

    Arguments are keyword-only (issue 13): ``k=`` and ``n=``. The former positional order
    ``(n, k)`` is still accepted, with a ``DeprecationWarning``; the library's order ``(k, n)``
    cannot be told apart from it positionally (two integers), hence keywords.

    Columns follow :func:`histograms`.

    Example:
        >>> reduced_shuffle_channel(k=2, n=2)
        array([[1., 0., 0.],
               [0., 1., 0.],
               [0., 1., 0.],
               [0., 0., 1.]])
    """
    exact = check_bool("exact", exact)
    n, k = _check_size(n, k)
    hs = histograms(k=k, n=n)
    col = {h: j for j, h in enumerate(hs)}
    ds = datasets(k=k, n=n)
    out = np.zeros((len(ds), len(hs)), dtype=object if exact else float)
    for i, x in enumerate(ds):
        out[i, col[histogram_of(x, k)]] = Fraction(1) if exact else 1.0
    return out


@old_positional_order(("n", "k", "p"), detect=old_nkp_call)
def reduced_krr_channel(k: Any, p: Any, n: Any, *, exact: bool = False) -> np.ndarray:
    """Reduced k-RR ``N^r`` (Def. 23): histograms -> histograms.

    Argument order (issue 13): ``k``, the randomizer parameter ``p``, then ``n``, as everywhere in
    the library. The former order ``(n, k, p)`` is still accepted positionally, with a
    ``DeprecationWarning`` (told apart by the second argument: ``p <= 1`` versus ``k >= 2``).

    ``N^r[z1, z2] = sum_{x: h(x)=z1} sum_{y: h(y)=z2} N[x, y] / #z1``, i.e.
    ``diag(1/#z) (S^r)^T N S^r``.

    Example:
        >>> reduced_krr_channel(2, 0.75, 1)
        array([[0.75, 0.25],
               [0.25, 0.75]])
    """
    exact = check_bool("exact", exact)
    n, k = _check_size(n, k)
    pp, _, is_exact = _entry_type(p, k, exact)
    big_n = krr_channel(k=k, p=pp, n=n, exact=is_exact)
    sr = reduced_shuffle_channel(k=k, n=n, exact=is_exact)
    sizes = sr.sum(axis=0)
    if is_exact:
        out = np.dot(np.dot(sr.T, big_n), sr)
        for j in range(out.shape[0]):
            out[j] = out[j] / sizes[j]
        return out
    return (sr.T @ big_n @ sr) / sizes[:, None]


@old_positional_order(("n", "k"))
def single_target_gain(*, k: Any, n: Any, target: Any = 0) -> np.ndarray:
    """Single-target gain ``g_T(w, x) = [x_target == w]`` (Def. 13), shape ``(k, k^n)``.

    Arguments are keyword-only (issue 13): ``k=`` and ``n=``. The former positional order
    ``(n, k)`` is still accepted, with a ``DeprecationWarning``; the library's order ``(k, n)``
    cannot be told apart from it positionally (two integers), hence keywords.

    Example:
        >>> single_target_gain(k=2, n=2)
        array([[1, 1, 0, 0],
               [0, 0, 1, 1]])
    """
    n, k = _check_size(n, k)
    target = check_int("target", target, minimum=0, maximum=n - 1)
    ds = datasets(k=k, n=n)
    out = np.zeros((k, len(ds)), dtype=int)
    for j, x in enumerate(ds):
        out[x[target], j] = 1
    return out


@old_positional_order(("n", "k", "known"))
def all_but_one_prior(*, k: Any, n: Any, known: Any, exact: bool = False) -> np.ndarray:
    """Strong (all-but-one) adversary's prior (Sec. V): users ``1..n-1`` hold ``known``, user 0 uniform.

    Arguments are keyword-only (issue 13): ``k=`` and ``n=``. The former positional order
    ``(n, k)`` is still accepted, with a ``DeprecationWarning``; the library's order ``(k, n)``
    cannot be told apart from it positionally (two integers), hence keywords.

    Args:
        k: Number of values (integer >= 2).
        n: Number of users (integer >= 1).
        known: Sequence of ``n - 1`` values in ``0..k-1`` for users ``1..n-1``.
        exact: Use Fractions.

    Returns:
        A prior on :func:`datasets` with mass ``1/k`` on each ``(v, *known)``.

    Raises:
        ParameterError: On a wrong length or out-of-range value.

    Example:
        >>> all_but_one_prior(k=2, n=2, known=[1]).tolist()
        [0.0, 0.5, 0.0, 0.5]
    """
    exact = check_bool("exact", exact)
    n, k = _check_size(n, k)
    try:
        vals = list(known)
    except TypeError as exc:
        raise ParameterError(
            f"known must be a sequence of {n - 1} values in [0, {k - 1}], got {known!r}"
        ) from exc
    if len(vals) != n - 1:
        raise ParameterError(f"known must have length n - 1 = {n - 1}, got {len(vals)}")
    vals = [check_int("known", v, minimum=0, maximum=k - 1) for v in vals]
    ds = datasets(k=k, n=n)
    out = np.zeros(len(ds), dtype=object if exact else float)
    if exact:
        out[:] = Fraction(0)
    for j, x in enumerate(ds):
        if list(x[1:]) == vals:
            out[j] = Fraction(1, k) if exact else 1.0 / k
    return out
