"""Internal numerics: windowed lattice laws of shuffled 3-RR histograms with rigorous error terms.

Shared by :mod:`~shuffle_accounting.shuffled_krr.worst_case_k` (the certified worst case for
``k = 3``) and :mod:`~shuffle_accounting.shuffled_krr.exact` (per-dataset deltas at scale). Not a
public API: the names here may change without notice.

Coordinates. For ``k = 3`` the shuffled release is the histogram ``(h0, h1, h2)`` with
``h0 + h1 + h2 = n``. Pick one value ``v`` (the *pivot*) and order the other two as ``d``
("designated") and ``o``; the histogram is in bijection with ``(N, j)``, ``N`` the number of
reports different from ``v`` and ``j`` the number of reports equal to ``d``. A report ``v`` moves
``(N, j)`` by ``(0, 0)``, a report ``d`` by ``(1, 1)``, a report ``o`` by ``(1, 0)``.

Pivot class plus uniform pool. ``c`` users holding ``v`` report ``v`` with probability ``p`` and
each other value with probability ``pbar``; ``b`` users reporting uniformly report each value
with probability ``1/3``. For both kinds a report different from ``v`` is ``d`` or ``o`` with
probability ``1/2`` each, independently of everything else, so their joint law is

    R(N, j) = P(N_o = N) * Bin(N, 1/2)(j),   N_o ~ Bin(c, 2 pbar) + Bin(b, 2/3)  (independent).

Other classes (users holding ``d`` or ``o``) are added by direct 2-D convolution with their
trinomial laws, one user at a time (:func:`add_users`), or, for a k-RR class at ``d`` joining a
pool whose reports different from ``v`` are ``d`` w.p. ``1/(k - 1)``, by its coins
(:func:`pivot_coins_grid`: a mixture over the number of its truthful users).

Error model (every quantity is an upper or lower bound, never an estimate):

* A :class:`Grid` holds non-negative numbers ``arr`` scaled by ``e^scale`` on a rectangle of
  ``(N, j)``; the true law ``R`` satisfies ``R(x) >= arr(x) e^scale (1 - rel)`` on the rectangle
  and ``sum_x (R(x) - arr(x) e^scale (1 + rel))_+ <= e^log_drop`` over the whole lattice (the
  *dropped mass*: binomial tails outside the windows, bounded by the upper-bounding tails of
  :mod:`~shuffle_accounting._binomial` and doubled, entries flushed below ``e^-700`` of the
  maximum, products that underflowed).
* Binomial log-pmfs are Loader's (:func:`~shuffle_accounting._binomial.log_binom_pmf`, relative
  error ~1e-13), counted as ``1e-10``.
* Convolutions are direct sums of non-negative products (``numpy.convolve`` /
  ``_logmath.convolve2d_direct``, never FFT): relative error at most ``(L + 2) u`` for ``L`` terms,
  and the dropped mass of a sum of independent variables is at most the sum of the dropped masses
  (each law has total mass ``<= 1``) plus the underflowed products.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._binomial import binom_window_range, log_binom_cdf, log_binom_pmf, log_binom_sf, logsumexp
from .._logmath import UNIT_ROUNDOFF, convolve2d_direct

__all__ = [
    "Law1D",
    "Grid",
    "binom_window",
    "conv1d",
    "pivot_grid",
    "binom_rows",
    "BINOM_ROWS_CELLS",
    "BINOM_SEGMENT",
    "class_grid",
    "pivot_coins_grid",
    "pivot_coins_work",
    "coins_sum",
    "window_z",
    "conv2d",
    "Hockey",
    "hockey_upper",
    "hockey_upper_many",
    "Workspace",
    "stencil3",
    "STENCIL_ROWS",
    "STENCIL_CELLS",
    "block_rows",
    "single_class_log_hockey",
    "TAIL_REL",
    "MAX_TAIL_WORK",
    "dataset_log_hockey_k3",
    "MAX_DATASET_WORK",
    "add_users",
    "sweep_users",
    "fixed_law_k3",
    "target_rows_k3",
    "k3_rows",
    "MAX_SEQUENTIAL_WORK",
    "PIVOT_COORDS",
    "add_classes",
    "add_classes_work",
    "hockey_bounds",
    "pivot0_terms",
    "rest_terms",
    "rest_coefs",
    "HalfTails",
    "trim_mass",
    "trim_law",
    "iid_sum_law",
]

_U = 2.0 * UNIT_ROUNDOFF  # machine epsilon 2^-52 (the budgets below are in units of 2u)
#: Relative error counted for each Loader log-pmf (measured ~1e-13).
REL_PMF = 1e-10
#: Bound on one product that fell below the normal range.
_TINY = 2.3e-308
#: Entries below ``e^-700`` of a window's maximum are moved into the dropped mass.
_FLUSH = -700.0
_LOG_HALF = -math.log(2.0)


class Law1D:
    """A 1-D windowed law: ``true(lo + i)`` in ``[arr_i e^scale (1 - rel), arr_i e^scale (1 + rel)]``
    up to a total dropped mass ``e^log_drop``."""

    __slots__ = ("lo", "arr", "scale", "log_drop", "rel")

    def __init__(self, lo: int, arr: np.ndarray, scale: float, log_drop: float, rel: float) -> None:
        self.lo, self.arr, self.scale, self.log_drop, self.rel = lo, arr, scale, log_drop, rel


class Grid:
    """A 2-D windowed law on ``N in [n_lo, n_lo + rows)``, ``j in [j_lo, j_lo + cols)`` (module doc)."""

    __slots__ = ("n_lo", "j_lo", "arr", "scale", "log_drop", "rel")

    def __init__(self, n_lo: int, j_lo: int, arr: np.ndarray, scale: float, log_drop: float, rel: float):
        self.n_lo, self.j_lo, self.arr, self.scale, self.log_drop, self.rel = (
            n_lo,
            j_lo,
            arr,
            scale,
            log_drop,
            rel,
        )


def _flush(lp: np.ndarray) -> tuple[np.ndarray, float, float]:
    """``(scaled values, scale, log of the flushed mass)`` of a log-pmf array."""
    mx = float(np.max(lp))
    if mx == -math.inf:  # nothing left (as the mask below would give: all zero, nothing flushed)
        return np.zeros(lp.shape), mx, -math.inf
    arr = lp - mx
    out = arr <= _FLUSH  # flushed (or -inf): exactly 0 in the result
    flushed = -math.inf
    if np.any(out):
        gone = lp[out]
        flushed = float(logsumexp(gone[np.isfinite(gone)])) + math.log1p(REL_PMF)
        arr[out] = -np.inf
    with np.errstate(under="ignore"):
        np.exp(arr, out=arr)
    return arr, mx, flushed


def window_z(log_tol: float) -> float:
    """Starting half-width, in standard deviations, of a window whose outside mass should be
    about ``e^log_tol``: ``max(8, sqrt(2 |log_tol|) + 2)`` (the Gaussian tail ``e^(-z^2 / 2)``
    with a margin; every window built from it is then widened until its bound is checked)."""
    return max(8.0, math.sqrt(2.0 * max(0.0, -log_tol)) + 2.0)


def _row_window(
    Ns: np.ndarray, lw: np.ndarray, log_r: float, log_tol: float, z: float
) -> tuple[int, int, float]:
    """``(j_lo, j_hi, log tail)``: one ``j`` window for the rows ``Bin(N, r)``, ``N`` in ``Ns``
    (consecutive integers), weighted by ``e^lw`` (upper bounds on the rows' weights).

    The window covers ``N r +- z sqrt(N_hi r (1 - r))`` for every ``N`` and widens (``z`` x1.5)
    until ``sum_N e^lw(N) P(Bin(N, r) outside)`` (doubled upper-bounding tails) is at most
    ``e^log_tol``, or the window is all of ``[0, N_hi]``; that sum is returned as the log tail.
    """
    n_lo, n_hi = int(Ns[0]), int(Ns[-1])
    r = math.exp(log_r)
    sdr = math.sqrt(max(n_hi, 1) * r * (1.0 - r))
    while True:
        j_lo = max(0, int(math.floor(n_lo * r - z * sdr)) - 2)
        j_hi = min(n_hi, int(math.ceil(n_hi * r + z * sdr)) + 2)
        with np.errstate(divide="ignore"):
            lt_lo = np.where(j_lo > 0, log_binom_cdf(np.full(Ns.shape, j_lo - 1.0), Ns, r), -np.inf)
            lt_hi = np.where(Ns > j_hi, log_binom_sf(np.full(Ns.shape, j_hi + 1.0), Ns, r), -np.inf)
        tails = np.logaddexp(lt_lo, lt_hi) + math.log(2.0)
        ltail = float(logsumexp(lw + tails))
        if ltail <= log_tol or (j_lo == 0 and j_hi == n_hi):
            return j_lo, j_hi, ltail
        z *= 1.5


def _trim_edges(
    arr: np.ndarray, budget: float, grow: float, scale: float, drops: list[float]
) -> tuple[np.ndarray, int, int]:
    """``arr`` without its leading and trailing rows, then columns, of computed mass at most
    ``budget / 2`` on each side (:func:`trim_mass`); ``(view, rows removed at the front,
    columns removed at the front)``. The removed masses, times ``grow`` (the caller's bound on
    the true mass per unit of computed mass), are appended to ``drops`` in logs, plus ``scale``.
    """
    f, b, dr = trim_mass(arr.sum(axis=1), budget)
    if dr > 0.0:
        drops.append(math.log(dr * grow) + scale)
    arr = arr[f : arr.shape[0] - b, :]
    f2, b2, dc = trim_mass(arr.sum(axis=0), budget)
    if dc > 0.0:
        drops.append(math.log(dc * grow) + scale)
    return arr[:, f2 : arr.shape[1] - b2], f, f2


def binom_window(N: int, log_pi: float, log_1mpi: float, log_tol: float) -> tuple[int, np.ndarray, float]:
    """``Bin(N, pi)`` on a window ``[lo, lo + len)``: ``(lo, log-pmf, log of the mass outside)``.

    The window ``mean +- z sd`` widens until the (doubled, upper-bounding) tail mass is at most
    ``e^log_tol``. Given in logs; for ``pi > 1/2`` the reflection ``N - Bin(N, 1 - pi)`` is used so
    every tail is computed on the smaller probability.
    """
    if N == 0:
        return 0, np.zeros(1), -math.inf
    if log_pi > log_1mpi:
        lo, lp, lt = binom_window(N, log_1mpi, log_pi, log_tol)
        return N - (lo + lp.size - 1), lp[::-1].copy(), lt
    lo, hi, ltail = binom_window_range(N, log_pi, log_1mpi, log_tol)  # exact tails, doubled
    x = np.arange(lo, hi + 1, dtype=float)
    return lo, log_binom_pmf(x, float(N), log_pi, log_1mpi), ltail


def law_from_binom(N: int, log_pi: float, log_1mpi: float, log_tol: float) -> Law1D:
    """:func:`binom_window` as a scaled :class:`Law1D`."""
    lo, lp, lt = binom_window(N, log_pi, log_1mpi, log_tol)
    arr, mx, fl = _flush(lp)
    return Law1D(lo, arr, mx, float(np.logaddexp(lt, fl)), REL_PMF + 4.0 * _U)


def conv1d(a: Law1D, b: Law1D) -> Law1D:
    """Law of the sum of two independent :class:`Law1D` (direct convolution)."""
    if a.arr.size == 1 and a.lo == 0 and a.log_drop == -math.inf and a.scale == 0.0 and a.arr[0] == 1.0:
        return b
    if b.arr.size == 1 and b.lo == 0 and b.log_drop == -math.inf and b.scale == 0.0 and b.arr[0] == 1.0:
        return a
    work = float(a.arr.size) * float(b.arr.size)
    arr = np.convolve(a.arr, b.arr)
    L = min(a.arr.size, b.arr.size)
    scale = a.scale + b.scale
    rel = a.rel + b.rel + a.rel * b.rel + (L + 2) * _U
    log_drop = float(logsumexp([a.log_drop, b.log_drop, math.log(work * _TINY) + scale]))
    return Law1D(a.lo + b.lo, arr, scale, log_drop, rel)


def trim_law(law: Law1D, log_budget: float) -> Law1D:
    """``law`` rescaled by its maximum, with far tails moved into the dropped mass.

    The leading and trailing entries whose computed mass sums to at most ``e^log_budget`` (half
    each side, :func:`trim_mass`) and entries below ``e^-700`` of the maximum are removed; their
    computed mass, rounded up by ``(1 + rel)(1 + (L + 4) 2u)``, is added to ``log_drop`` (the
    error model of :class:`Law1D`: dropping only removes non-negative parts, and the true law
    exceeds the kept part by at most the old dropped mass plus the new one). The division by the
    maximum adds one rounding, counted in ``rel``.
    """
    arr = law.arr
    mx = float(np.max(arr))
    if mx <= 0.0:  # pragma: no cover - every law keeps a positive maximum
        raise RuntimeError("internal: law underflowed to zero")
    arr = arr / mx
    scale = law.scale + math.log(mx)
    rel = law.rel + _U
    grow = (1.0 + rel) * (1.0 + (arr.size + 4) * _U)
    drops = [law.log_drop]
    tiny = arr < math.exp(_FLUSH)
    if np.any(tiny):
        fl = float(np.sum(arr[tiny]))
        if fl > 0.0:
            drops.append(math.log(fl * grow) + scale)
        arr = np.where(tiny, 0.0, arr)
    f, b, dr = trim_mass(arr, math.exp(min(log_budget - scale, 700.0)))
    if dr > 0.0:
        drops.append(math.log(dr * grow) + scale)
    arr = arr[f : arr.size - b]
    return Law1D(law.lo + f, arr, scale, float(logsumexp(drops)), rel)


def iid_sum_law(c: int, offsets: tuple[int, ...], log_probs: tuple[float, ...], log_tol: float) -> Law1D:
    """Law of the sum of ``c`` i.i.d. integer variables with ``P(X = offsets[i]) = e^log_probs[i]``.

    Binary powering: the laws of ``2^i`` copies by squaring (:func:`conv1d`, direct sums) and
    their product over the bits of ``c``, each result passed through :func:`trim_law` with an
    equal share of ``e^log_tol``; the dropped masses add (:func:`conv1d`: each law has total mass
    at most 1). The single variable's law carries relative error ``4 * 2u`` (``exp`` and the
    sums of coinciding offsets).
    """
    if c == 0:
        return Law1D(0, np.ones(1), 0.0, -math.inf, 0.0)
    lo = min(offsets)
    arr = np.zeros(max(offsets) - lo + 1)
    for o, lw in zip(offsets, log_probs):
        arr[o - lo] += math.exp(lw)
    base = trim_law(Law1D(lo, arr, 0.0, -math.inf, 4.0 * _U), -math.inf)
    nbits = c.bit_length()
    budget = log_tol - math.log(2.0 * nbits)
    result: Law1D | None = None
    power = base
    for i in range(nbits):
        if (c >> i) & 1:
            result = power if result is None else trim_law(conv1d(result, power), budget)
        if i < nbits - 1:
            power = trim_law(conv1d(power, power), budget)
    assert result is not None
    return result


def pivot_grid(no_law: Law1D, log_tol: float, log_r: float = _LOG_HALF, log_1mr: float = _LOG_HALF) -> Grid:
    """``R(N, j) = P(N_o = N) Bin(N, r)(j)`` on a rectangle (module docstring; ``r = 1/2`` by default).

    ``no_law`` is the law of ``N_o``; the ``j`` window covers ``N r +- z sqrt(N r (1 - r))`` for every
    ``N`` of that law's window, and the mass of ``Bin(N, r)`` outside it (doubled tail bounds, per
    ``N``, weighted by ``P(N_o = N)`` rounded up) is added to the dropped mass. Any class of
    users whose reports different from ``v`` are ``d`` with a fixed probability ``r`` has this form
    (a class holding ``d``: ``N_o ~ Bin(c, p + pbar)``, ``r = p / (p + pbar)``).
    """
    n_lo = no_law.lo
    n_hi = n_lo + no_law.arr.size - 1
    z = window_z(log_tol)
    Ns = np.arange(n_lo, n_hi + 1, dtype=float)
    with np.errstate(divide="ignore"):
        lpn = np.log(no_law.arr) + no_law.scale + math.log1p(no_law.rel)
    j_lo, j_hi, ltail = _row_window(Ns, lpn, log_r, log_tol, z)
    lb, extra = binom_rows(Ns, j_lo, j_hi, log_r, log_1mr)
    with np.errstate(divide="ignore"):
        lr = np.log(no_law.arr)[:, None] + lb
    arr, mx, fl = _flush(lr)
    log_drop = float(logsumexp([no_law.log_drop, ltail, fl + no_law.scale]))
    rel = no_law.rel + REL_PMF + 4.0 * _U + extra
    return Grid(n_lo, j_lo, arr, mx + no_law.scale, log_drop, rel)


#: Cells per block of rows in :func:`binom_rows` (bounds its temporaries: ~10 arrays of this size).
BINOM_ROWS_CELLS = 1 << 20
#: Columns per Loader anchor in :func:`binom_rows` (the running sums restart at each anchor).
BINOM_SEGMENT = 128


def binom_rows(
    Ns: np.ndarray, j_lo: int, j_hi: int, log_r: float, log_1mr: float
) -> tuple[np.ndarray, float]:
    """``log Bin(N, r)(j)`` for every ``N`` in ``Ns`` and ``j`` in ``[j_lo, j_hi]`` (``-inf`` for ``j > N``).

    A Loader log-pmf (relative error counted in :data:`REL_PMF`) at every :data:`BINOM_SEGMENT`-th
    column ``j_a`` (``j_lo``, ``j_lo + L``, ...), the other columns of its segment by the ratio
    recurrence ``log pmf(i + 1) - log pmf(i) = log(N - i) - log(i + 1) + log r - log(1 - r)``
    (``-inf`` from ``i = N`` on), summed by ``numpy.cumsum`` from the anchor. Returns the
    log-pmfs and a bound ``extra`` on the relative error the recurrence adds (``e^x - 1`` of its
    log error). In a segment of ``L`` columns each term has absolute error at most
    ``4 * 2u (|log(N - i)| + |log(i + 1)| + |lr|) <= 4 * 2u (log N + log(j_hi + L + 1) + |lr|)``
    (``N - i`` and ``i + 1`` lie in ``[1, max(N, j_hi + L)]``), the running sum of at most
    ``L - 1`` terms adds at most ``L * 2u * sum |terms|`` (Higham, *Accuracy and Stability of
    Numerical Algorithms*, Thm 4.4, ``gamma_(L-1)`` rounded up), and the final addition to the
    anchor ``2u (|anchor| + sum |terms|)``; ``extra`` is the largest segment's total. The
    anchors keep that at about ``L^2 u`` per segment whatever the row's width: one running sum
    over a whole row of ``K`` columns grows like ``K^2 u`` and, beyond a few thousand columns,
    needed a Loader log-pmf per cell (about 170 ns per cell at n = 1e6, eps0 = 0.5). The rows
    are computed in blocks of about :data:`BINOM_ROWS_CELLS` cells (each row on its own; the
    temporaries of a block, not of the
    whole grid: about ten arrays of the grid's size were alive at once, 16 GB at n = 1e6 in U2).
    """
    Ns = np.asarray(Ns, dtype=float)
    K = j_hi - j_lo + 1
    step = max(1, BINOM_ROWS_CELLS // max(K, 1))
    if Ns.size <= step:
        lb, err = _binom_rows_block(Ns, j_lo, j_hi, log_r, log_1mr)
        return lb, math.expm1(err)
    lb = np.empty((Ns.size, K))
    err = 0.0
    for i in range(0, Ns.size, step):
        lb[i : i + step], e = _binom_rows_block(Ns[i : i + step], j_lo, j_hi, log_r, log_1mr)
        err = max(err, e)
    return lb, math.expm1(err)


def _binom_rows_block(
    Ns: np.ndarray, j_lo: int, j_hi: int, log_r: float, log_1mr: float
) -> tuple[np.ndarray, float]:
    """:func:`binom_rows` on the rows ``Ns``: ``(log-pmfs, the largest segment's log error)``."""
    K = j_hi - j_lo + 1
    L = min(BINOM_SEGMENT, K)
    S = -(-K // L)
    rows = Ns.size
    starts = j_lo + L * np.arange(S, dtype=float)
    # V[row, segment, :] = (anchor, step terms): its running sum is the segment's log-pmfs
    V = np.empty((rows, S, L))
    V[:, :, 0] = log_binom_pmf(np.broadcast_to(starts[None, :], (rows, S)), Ns[:, None], log_r, log_1mr)
    la = V[:, :, 0]
    fla = np.where(np.isfinite(la), np.abs(la), 0.0)
    if L == 1:
        return np.ascontiguousarray(V[:, :, 0]), float(np.max(_U * fla, initial=0.0))
    lrat = log_r - log_1mr
    I = starts[:, None] + np.arange(L - 1, dtype=float)[None, :]  # (S, L - 1): the steps i -> i + 1
    c = np.log(I + 1.0) - lrat  # log(i + 1) - lrat
    steps = V[:, :, 1:]
    n0 = float(Ns[0])
    if rows > 1 and np.all(np.diff(Ns) == 1.0):
        # consecutive rows: log(N - i) for every cell is a table of log v, v = N - i, read with
        # strides (the table reversed, so that the rows are read in reverse order with
        # non-negative strides): row rows - 1 - r', column j_lo + s L + o reads entry r' + s L + o
        v_max = n0 + rows - 1 - j_lo
        v = v_max - np.arange(rows + S * L - 1, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            tab = np.where(v > 0.0, np.log(np.maximum(v, 1.0)), -np.inf)
        it = tab.itemsize
        view = np.lib.stride_tricks.as_strided(
            tab, shape=(rows, S, L - 1), strides=(it, L * it, it), writeable=False
        )
        np.subtract(view, c[None, :, :], out=steps[::-1])
    else:
        D = Ns[:, None, None] - I[None, :, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            steps[...] = np.where(D > 0.0, np.log(np.maximum(D, 1.0)), -np.inf) - c[None, :, :]
    # each row's steps log(N - i) - log(i + 1) + lrat decrease in i, so within a segment the
    # largest |step| is at its first or last finite step (i = min(start + L - 2, N - 1))
    NN = Ns[:, None]
    i_last = np.minimum(starts[None, :] + (L - 2), NN - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_first = np.log(np.maximum(NN - starts[None, :], 1.0)) - np.log(starts + 1.0)[None, :] + lrat
        t_last = np.log(np.maximum(NN - i_last, 1.0)) - np.log(np.maximum(i_last, 0.0) + 1.0) + lrat
    live = starts[None, :] < NN  # segments with at least one finite step
    big = np.where(live, np.maximum(np.abs(t_first), np.abs(t_last)), 0.0)
    np.cumsum(V, axis=2, out=V)
    # error of a segment's running sum (anchor first, at most L terms; Higham Thm 4.4,
    # gamma_L <= L * 2u rounded up): L * 2u (|anchor| + (L - 1) max|step|); each step's own
    # error 4 * 2u (|log(N - i)| + |log(i + 1)| + |lrat|), with N - i and i + 1 in
    # [1, max(N, j_hi + L)]; and the bound's own roundings (1 + 1e-6)
    logs = np.log(np.maximum(NN, 1.0)) + (math.log(j_hi + L + 1.0) + abs(lrat))
    seg = (L * _U) * (fla + (L - 1) * big) + (4.0 * _U * (L - 1)) * logs
    err = float(np.max(seg, initial=0.0)) * (1.0 + 1e-6)
    lb = V.reshape(rows, S * L)
    return (lb[:, :K] if S * L > K else lb), err


def class_grid(c: int, log_v: float, log_d: float, log_o: float, log_tol: float) -> Grid:
    """Windowed trinomial law in ``(N, j)`` of ``c`` users reporting ``v, d, o`` w.p. ``e^log_v, e^log_d, e^log_o``.

    ``N ~ Bin(c, pi_d + pi_o)`` and, given ``N``, ``j ~ Bin(N, pi_d / (pi_d + pi_o))``: the form of
    :func:`pivot_grid`, windowed the same way (dropped mass at most about ``2 e^log_tol``).
    """
    l_do = float(np.logaddexp(log_d, log_o))
    no = law_from_binom(c, l_do, log_v, log_tol)
    return pivot_grid(no, log_tol, log_d - l_do, log_o - l_do)


def _coins_dims(
    c_v_law: Law1D, pool_lo: int, c_d: int, log_fix: float, log_qu: float, log_r: float, z: float
) -> tuple[int, int, int, int]:
    """``(W_F, W_m, W_x, rows)``: estimated window sizes of :func:`pivot_coins_grid` and the
    number of rows of ``N`` it computes (no arrays built). ``rows`` is ``2 z sd(N)`` (measured
    ``1.6 z sd(N)``, k = 10, n = 1e4 - 3e5), ``N = X + F + Bin(pool_lo + c_d - F, q_u)``:
    ``Var N = Var X + E(pool_lo + c_d - F) q_u (1 - q_u) + (1 - q_u)^2 Var F``."""
    fix = math.exp(log_fix)
    sd_f = math.sqrt(c_d * fix * (1.0 - fix))
    w_f = int(2.0 * z * sd_f + 5.0) if c_d > 0 else 1
    qu = math.exp(log_qu)
    pool = pool_lo + c_d * (1.0 - fix) + z * sd_f
    w_m = int(c_v_law.arr.size + 2.0 * z * math.sqrt(max(pool, 1.0) * qu * (1.0 - qu)) + w_f + 5.0)
    r = math.exp(log_r)
    m_hi = c_v_law.lo + c_v_law.arr.size + pool * qu + z * math.sqrt(max(pool, 1.0) * qu)
    w_x = int(w_m * r + 2.0 * z * math.sqrt(max(m_hi, 1.0) * r * (1.0 - r)) + 5.0)
    wts = c_v_law.arr / max(float(np.sum(c_v_law.arr)), _TINY)
    x = np.arange(c_v_law.arr.size, dtype=float)
    var_x = float(np.sum(wts * (x - float(np.sum(wts * x))) ** 2))
    var_n = var_x + (pool_lo + c_d * (1.0 - fix)) * qu * (1.0 - qu) + (1.0 - qu) ** 2 * sd_f**2
    rows = min(w_m + w_f, int(2.0 * z * math.sqrt(var_n) + 10.0))
    return w_f, w_m, w_x, rows


def pivot_coins_work(
    c_v_law: Law1D, pool_lo: int, c_d: int, log_fix: float, log_qu: float, log_r: float, log_tol: float
) -> float:
    """The work estimated for :func:`pivot_coins_grid`, from the windows' sizes at ``z``
    standard deviations (no arrays built): the multiply-adds of :func:`coins_sum`'s matrix
    products over the rows of ``N`` it computes, counted at :data:`_COINS_PER_UNIT` per work
    unit, plus ``6 W_F W_m`` for the laws and ``40 (rows + W_F) W_x`` for the binomial rows
    and their scaling (calibrated on the 2-core development machine, whose BLAS runs the
    products on both cores at about 25 multiply-adds per nanosecond, so that a unit is at least
    about a nanosecond of the build: the estimates were 0.9-1.4 times the measured builds, first
    builds included, for the datasets with counts proportional to ``1 / (j + 1)`` at k = 10,
    n = 1e5 - 1e6, eps0 = 0.5 and 2, and k = 4, n = 3e5 and 1e6; e.g. 4.4e10 units for a
    31 s build at k = 4, n = 1e6)."""
    z = window_z(log_tol)
    w_f, w_m, w_x, rows = _coins_dims(c_v_law, pool_lo, c_d, log_fix, log_qu, log_r, z)
    width = _COINS_CHUNK + w_f
    fma = float(rows) * width * (width + w_x)
    return fma / _COINS_PER_UNIT + 6.0 * w_f * w_m + 40.0 * (rows + w_f) * w_x


#: Rows of ``N`` per matrix product in :func:`coins_sum` (measured fastest here among 64-1024).
_COINS_CHUNK = 256
#: Multiply-adds of :func:`coins_sum` counted as one work unit (measured about 25 per
#: nanosecond here: :func:`pivot_coins_work`).
_COINS_PER_UNIT = 24.0


def coins_sum(A: np.ndarray, B: np.ndarray, rows: tuple[int, int] | None = None) -> tuple[np.ndarray, int]:
    """``out[i + mi, i + xi] = sum_i A[i, mi] B[mi, xi]`` (the sum (*) of :func:`pivot_coins_grid`).

    ``A`` is ``W_F x W_m`` (row ``i``: ``P(F = f_lo + i) P_F(m_lo + mi)``), ``B`` is ``W_m x W_x``
    (``Bin(m, r)(x)``); the result is ``(W_m + W_F - 1) x (W_x + W_F - 1)`` in ``(N, j)`` offsets,
    or only its rows ``rows = (r0, r1)`` (``r0 <= N offset < r1``; row 0 of the result is ``r0``).
    In the coordinates ``(N, u = N - j)`` the shift by ``(F, F)`` moves ``N`` only, so a block of
    rows ``N`` is one matrix product ``C @ H`` with ``C[N, m] = A[N - m, m]`` (zero outside
    ``F``'s window) and ``H[m, u] = B[m, m - u]`` (zero outside ``x``'s window), scattered back
    to ``(N, j)``. Each cell is a sum of at most ``terms`` non-negative products (the block's
    width in ``m``; the zeros add nothing), in whatever order the BLAS takes: relative error at
    most ``gamma_terms <= terms * 2u`` (Higham, *Accuracy and Stability of Numerical Algorithms*,
    2nd ed., section 3.1: the inner-product bound holds for any order of the additions, with or
    without fused multiply-adds), counted by the caller. Each ``(N, j)`` cell is written by one
    block only. Returns ``(out, terms)``.
    """
    w_f, w_m = A.shape
    w_x = B.shape[1]
    n_rows, n_cols = w_m + w_f - 1, w_x + w_f - 1
    r0, r1 = (0, n_rows) if rows is None else rows
    out = np.zeros((r1 - r0, n_cols))
    terms = 0
    for n0 in range(r0, r1, _COINS_CHUNK):
        nn = np.arange(n0, min(r1, n0 + _COINS_CHUNK))
        a, b = max(0, n0 - (w_f - 1)), min(w_m - 1, int(nn[-1]))
        mi = np.arange(a, b + 1)
        terms = max(terms, mi.size)
        fi = nn[:, None] - mi[None, :]
        okf = (fi >= 0) & (fi < w_f)
        C = np.where(okf, A[np.clip(fi, 0, w_f - 1), mi[None, :]], 0.0)
        uu = np.arange(a, b + w_x)  # u index = mi - xi + w_x - 1
        # H[i, i + t] = B[a + i, w_x - 1 - t] for t < w_x, zero elsewhere: the rows of B reversed,
        # each shifted one column further (a sheared write into one zeroed array)
        H = np.zeros(mi.size * uu.size)
        sheared = np.lib.stride_tricks.as_strided(
            H, shape=(mi.size, w_x), strides=((uu.size + 1) * H.itemsize, H.itemsize)
        )
        sheared[...] = B[a : b + 1, ::-1]
        R = C @ H.reshape(mi.size, uu.size)
        jj = nn[:, None] - uu[None, :] + (w_x - 1)  # j index = xi + i = nn - u index + w_x - 1
        ok = (jj >= 0) & (jj < n_cols)
        at = np.broadcast_to(nn[:, None] - r0, jj.shape)
        out[at[ok], jj[ok]] += R[ok]  # (row, j) pairs are distinct within a block
    return out, terms


def pivot_coins_grid(
    c_v_law: Law1D,
    pool_lo: int,
    c_d: int,
    log_fix: float,
    log_unif: float,
    log_qu: float,
    log_1mqu: float,
    log_r: float,
    log_1mr: float,
    log_tol: float,
) -> Grid:
    """A pivot structure plus one class whose users are "truthful ``d``" or uniform, by their coins.

    Setting (the ``(N, j)`` coordinates of this module): ``N_o`` counts the reports different
    from ``v`` of a pivot structure whose reports different from ``v`` are ``d`` w.p. ``r``
    independently, ``N_o ~ X + Bin(u, q_u)`` with ``X ~ c_v_law`` (independent) and ``u``
    *uniform users* (pool), ``u = pool_lo`` here. Add ``c_d`` users of a class each of which,
    independently, reports ``d`` (its own value) with probability ``1 - gamma = e^log_fix``
    ("truthful") and otherwise (``gamma = e^log_unif``) behaves as one more uniform user: a report
    different from ``v`` w.p. ``q_u``, then ``d`` w.p. ``r``. (k-RR in the merged view of
    :mod:`~shuffle_accounting.shuffled_krr._krr_spread` with pivot ``v`` in ``{0, 1}``, ``d`` the
    other, ``o`` the values ``>= 2``: ``1 - gamma = p - pbar``, ``q_u = (k - 1)/k``,
    ``r = 1/(k - 1)``; the class at ``d`` reports ``d, v, o`` w.p. ``(1 - gamma) + gamma/k = p``,
    ``gamma/k = pbar``, ``gamma (k - 2)/k = (k - 2) pbar``, as k-RR does.)

    Law. Let ``F ~ Bin(c_d, 1 - gamma)`` be the number of truthful users of the class. Given
    ``F`` they move ``(N, j)`` by ``(F, F)`` and the other ``c_d - F`` join the pool, so with
    ``R_F(m, x) = P(N_o^(F) = m) Bin(m, r)(x)``, ``N_o^(F) ~ X + Bin(pool_lo + c_d - F, q_u)``:

        R(N, j) = sum_F P(F) R_F(N - F, j - F)                                  (*)

    (total probability over ``F``; given ``F`` the users are independent and the pool's
    reports different from ``v`` are ``d`` w.p. ``r`` each, as in :func:`pivot_grid`). This costs
    ``W_F W_m W_x`` products for the windows of ``F``, ``m`` and ``x``, against
    ``c_d W_m W_x`` when the class is added one user at a time (:func:`add_users`): a factor
    ``c_d / W_F ~ sqrt(c_d) / (2 z sqrt((1 - gamma) gamma))`` fewer.

    Computation and error model (:class:`Grid`; every step outward):

    * ``P(F)``: :func:`law_from_binom` on its window (outside mass and flushed entries in its
      dropped mass ``d_F``; relative error ``rel_F``).
    * ``N_o^(F)``: for the largest ``F`` of the window, ``c_v_law`` convolved with the windowed
      ``Bin(pool_lo + c_d - F, q_u)`` (:func:`conv1d`; dropped mass ``d_P``), divided by its
      maximum so that every factor below is at most 1 (relative error ``rel_P0``, the division
      included); each smaller ``F`` by one exact step ``P'(m) = (1 - q_u) P(m) + q_u P(m - 1)``
      (the law plus one independent ``Bern(q_u)``): two products of non-negative numbers, with
      ``q_u`` and ``1 - q_u`` each within ``2 * 2u`` relative of the exact values (one ``exp``),
      and one sum, so each step adds at most ``5 * 2u`` relative per entry and no dropped mass
      (a Markov kernel maps the true law's excess over the computed one to an excess of the same
      total). After ``S`` steps ``rel_P = rel_P0 + (1 + rel_P0)((1 + 5 * 2u)^S - 1)``.
    * ``Bin(m, r)(x)``: :func:`binom_rows` on one ``x`` window ``[j_lo, j_hi]`` for every ``m``
      (Loader anchors, ``REL_PMF``, and the recurrence's ``extra``), the window widened (as in
      :func:`pivot_grid`) until ``sum_m mix(m) P(Bin(m, r) outside)`` (doubled upper-bounding
      tails, ``mix(m) = sum_F P(F) P(N_o^(F) = m)`` computed and rounded up, a law of total mass
      at most 1 up to the dropped masses already counted) is at most ``e^log_tol / 4``; entries
      flushed below ``e^-700`` of the maximum are bounded by their log-sum (each row's weight
      ``mix(m) <= 1``).
    * (*) as a sum over ``F`` of non-negative products ``P~(F) P~_F(m) B~(m, x)`` (two
      roundings) placed at ``(m + F, x + F)``, by blocks of matrix products (:func:`coins_sum`):
      at most ``L`` terms per cell (``L`` the blocks' width in ``m``, zeros included), so the
      computed cell is within ``rel = (1 + rel_F)(1 + rel_P)(1 + rel_B)(1 + (L + 4) 2u) - 1`` of the
      windowed exact sum; the true sum is at least the windowed one (every window only removes
      non-negative terms), and its excess over the computed one times ``(1 + rel)`` sums to at
      most ``d_F + d_P + tails + flushed`` (each excess term times the other factors' true
      masses, at most 1). Products that underflow add ``_TINY`` each: ``2 W_F W_m W_x`` in the
      sum, and ``2 W_F W_m`` in the recurrence, each of which can reach ``W_F`` later laws and
      ``W_x`` cells per entry (counted as ``2 W_F W_m W_x (W_F + 1)`` in all).
    * Rows of ``N`` of small mass are not computed, nor the rows of ``Bin(m, r)`` that only they
      would use: the true mass of row ``N`` is at most ``sum_F P(F) P_F(N - F)`` (each row of
      the binomial is a law), so the leading and trailing rows whose computed sums
      ``rb[N] = sum_i P~(f_lo + i) P~_F(N - f_lo - i)`` total at most ``e^log_tol / 8`` on each
      side (:func:`trim_mass`) are skipped, and that total, rounded up by ``(1 + rel_F)(1 +
      rel_P)(1 + REL_PMF)(1 + (W_F + W_N + 8) 2u)`` (the products and sums of ``rb``), is added to
      the dropped mass. At n = 3e5 (k = 10, counts proportional to ``1 / (j + 1)``) this skips
      two thirds of the rows and a third of the binomial's: the build took 3.9 s instead of 9.5.
    * Finally the grid is divided by its maximum (one more rounding, in ``rel``) and the leading
      and trailing rows, then columns, whose computed mass is at most ``e^log_tol / 8`` on each
      side are removed (:func:`trim_mass`); their computed mass, rounded up by
      ``(1 + rel)(1 + (cells + 4) 2u)``, is added to the dropped mass (as in
      :func:`sweep_users`: removing non-negative parts keeps ``true >= computed (1 - rel)``).

    Args:
        c_v_law: Law of ``X`` (e.g. ``Bin(c_v, (k - 1) pbar)`` of the pivot class).
        pool_lo: Uniform users already in the pool (``>= 0``).
        c_d: Users of the added class (``>= 0``).
        log_fix: ``log(1 - gamma)``; ``log_unif``: ``log gamma``.
        log_qu: ``log q_u``; ``log_1mqu``: ``log(1 - q_u)``.
        log_r: ``log r``; ``log_1mr``: ``log(1 - r)``.
        log_tol: Log of the dropped mass allowed for the windows (about ``4 e^log_tol`` in all, plus at most ``e^log_tol / 4`` for the rows not computed).

    Returns:
        The :class:`Grid` of the pivot structure plus the class.
    """
    t4 = log_tol - math.log(4.0)
    if c_d > 0:
        wlaw = law_from_binom(c_d, log_fix, log_unif, t4)
    else:
        wlaw = Law1D(0, np.ones(1), 0.0, -math.inf, 0.0)
    f_lo, w_f = wlaw.lo, wlaw.arr.size
    f_hi = f_lo + w_f - 1
    start = conv1d(c_v_law, law_from_binom(pool_lo + c_d - f_hi, log_qu, log_1mqu, t4))
    s_max = float(np.max(start.arr))  # every entry of Pm, A and B is then <= 1 (underflow counts)
    start = Law1D(start.lo, start.arr / s_max, start.scale + math.log(s_max), start.log_drop, start.rel + _U)
    m_lo = start.lo
    w_m = start.arr.size + w_f - 1
    Pm = np.zeros((w_f, w_m))
    Pm[w_f - 1, : start.arr.size] = start.arr
    qu, q1 = math.exp(log_qu), math.exp(log_1mqu)
    cur = start.arr
    for i in range(w_f - 2, -1, -1):  # F = f_lo + i: one more uniform user than F + 1
        nxt = np.empty(cur.size + 1)
        nxt[:-1] = q1 * cur
        nxt[-1] = 0.0
        nxt[1:] += qu * cur
        cur = nxt
        Pm[i, : cur.size] = cur
    steps = w_f - 1
    rel_p = start.rel + (1.0 + start.rel) * math.expm1(steps * math.log1p(5.0 * _U))
    # mix(m) = sum_F P(F) P_F(m), rounded up (for the weight of the x-window tails)
    mix = (wlaw.arr @ Pm) * (1.0 + wlaw.rel) * (1.0 + rel_p) * (1.0 + (w_f + 4) * _U)
    with np.errstate(divide="ignore"):
        lmix = np.log(mix) + wlaw.scale + start.scale
    A = wlaw.arr[:, None] * Pm
    del Pm  # (the build's large arrays are freed as soon as they are used: its peak memory)
    # rows of N of small mass are not computed (nor the rows of B only they would use): the mass
    # of row N (offset i + mi) is sum_i A[i, N - i] times a binomial window's mass (<= 1), so
    # at most rb[N] = sum_i A[i, N - i] (times e^(scale of A)), a sum of at most W_F products
    rb = np.zeros(w_m + w_f - 1)
    for i in range(w_f):
        rb[i : i + w_m] += A[i]
    a_scale = wlaw.scale + start.scale
    r_front, r_back, r_drop = trim_mass(rb, math.exp(min(t4 - a_scale, 700.0)))
    r1 = rb.size - r_back
    m_a, m_b = max(0, r_front - (w_f - 1)), min(w_m - 1, r1 - 1)  # the m that reach those rows
    Ms = np.arange(m_lo + m_a, m_lo + m_b + 1, dtype=float)
    j_lo, j_hi, ltail = _row_window(Ms, lmix[m_a : m_b + 1], log_r, t4, window_z(log_tol))
    lb, extra = binom_rows(Ms, j_lo, j_hi, log_r, log_1mr)
    B, mxb, flb = _flush(lb)
    del lb
    w_x = B.shape[1]
    scale = a_scale + mxb
    rel_b = REL_PMF + 4.0 * _U + extra
    rel_in = (1.0 + wlaw.rel) * (1.0 + rel_p) * (1.0 + rel_b)
    out, terms = coins_sum(A[:, m_a : m_b + 1], B, (r_front - m_a, r1 - m_a))
    del A, B
    rel = rel_in * (1.0 + (terms + 4) * _U) - 1.0
    if r_drop > 0.0:  # their mass, rounded up (the inputs' rel, the sums' roundings), is dropped
        grow_pre = (1.0 + wlaw.rel) * (1.0 + rel_p) * (1.0 + REL_PMF) * (1.0 + (w_f + rb.size + 8) * _U)
        pre_drop = math.log(r_drop * grow_pre) + a_scale
    else:
        pre_drop = -math.inf
    # underflowed products: the main loop's, and the recurrence's (a mass lost there reaches every
    # later P_F, each of whose entries meets at most w_x values of B <= 1 and one weight <= 1)
    products = 2.0 * w_f * w_m * w_x * (w_f + 1.0)
    drops = [
        wlaw.log_drop,
        start.log_drop + math.log1p(wlaw.rel) + 1e-12,
        ltail,
        math.log(products * _TINY) + scale,
        pre_drop,
    ]
    if flb > -math.inf:
        drops.append(flb + math.log(2.0))
    # rescale by the maximum (one rounding, in rel) and trim rows and columns whose computed
    # mass is at most e^log_tol / 4 in all (measured, rounded up, added to the dropped mass)
    mx = float(np.max(out))
    if mx <= 0.0:  # pragma: no cover - the law keeps a positive maximum
        raise RuntimeError("internal: grid underflowed to zero")
    out /= mx
    scale += math.log(mx)
    rel = rel + (1.0 + rel) * _U
    budget = math.exp(min(t4 - scale, 700.0))
    grow = 1.0 + rel + (out.size + 4) * _U
    out, f, f2 = _trim_edges(out, budget, grow, scale, drops)
    out = np.ascontiguousarray(out)
    return Grid(m_lo + f_lo + r_front + f, j_lo + f_lo + f2, out, scale, float(logsumexp(drops)), rel)


def conv2d(a: Grid, b: Grid) -> Grid:
    """Law of the sum of two independent :class:`Grid` laws (direct 2-D convolution)."""
    if b.arr.size > a.arr.size:
        a, b = b, a
    work = float(a.arr.size) * float(b.arr.size)
    arr = convolve2d_direct(a.arr, b.arr)
    scale = a.scale + b.scale
    rel = a.rel + b.rel + a.rel * b.rel + (b.arr.size + 2) * _U
    log_drop = float(logsumexp([a.log_drop, b.log_drop, math.log(work * _TINY) + scale]))
    return Grid(a.n_lo + b.n_lo, a.j_lo + b.j_lo, arr, scale, log_drop, rel)


class Workspace:
    """Reusable scratch arrays for :func:`stencil3` (internal; not thread-safe: one per loop).

    A sweep over ``B`` (:func:`sweep_users`) steps a grid of up to ~5e7 cells thousands of times,
    and :func:`hockey_upper` runs at every stop; a fresh array per step or per sum is fresh memory
    from the system, faulted in page by page (a step and its sum measured ~20 % faster with
    reused arrays, at 5.7e6 and 5.7e7 cells).
    :meth:`array` hands out a C-contiguous view of a named buffer, grown (by a quarter more) when
    too small; its contents are undefined. Reusing memory changes no value: every entry is
    written before it is read, and the views are contiguous, so sums run in the same order as on
    a fresh array.
    """

    __slots__ = ("_bufs",)

    def __init__(self) -> None:
        self._bufs: dict[str, np.ndarray] = {}

    def array(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A C-contiguous ``(rows, cols)`` view of buffer ``name`` (contents undefined)."""
        size = rows * cols
        buf = self._bufs.get(name)
        if buf is None or buf.size < size:
            buf = np.empty(size + size // 4 + 1024)
            self._bufs[name] = buf
        return buf[:size].reshape(rows, cols)


#: Rows of :func:`stencil3`'s output computed together, at least (:func:`block_rows`): the five
#: array operations of a block then run on data in the cache (measured 1.9-2.1x faster than
#: whole-grid operations at 5.7e6 and 5.7e7 cells; 8 and 128 rows of 5760 cells were slower).
STENCIL_ROWS = 32
#: ... and at least this many cells per block (narrow grids: fewer, larger blocks, whose Python
#: overhead per call otherwise outweighed the gain on the small grids of the k = 3 boxes).
STENCIL_CELLS = 1 << 17


def block_rows(cols: int) -> int:
    """Rows per block of :func:`stencil3` and :func:`hockey_upper_many` for grids ``cols`` wide."""
    return max(STENCIL_ROWS, -(-STENCIL_CELLS // max(cols, 1)))


def _stencil_rows(arr: np.ndarray, c: Sequence[float], o: np.ndarray, tmp: np.ndarray, r0: int) -> np.ndarray:
    """Rows ``r0 .. r0 + len(o) - 1`` of :func:`stencil3`'s output, written into ``o`` (``tmp``:
    at least ``len(o)`` rows of ``arr``'s width). The one place the step's arithmetic is written."""
    rows = arr.shape[0]
    r1 = r0 + o.shape[0]
    m = min(r1, rows) - r0  # output rows with a (0, 0) move from arr
    np.multiply(arr[r0 : r0 + m], c[0], out=o[:m, :-1])
    o[m:, :-1] = 0.0
    o[:, -1] = 0.0
    s = 1 if r0 == 0 else 0  # output row 0 has no moved term
    prev = arr[r0 - 1 + s : r1 - 1]
    t = tmp[: prev.shape[0]]
    np.multiply(prev, c[1], out=t)
    np.add(o[s:, 1:], t, out=o[s:, 1:])
    np.multiply(prev, c[2], out=t)
    np.add(o[s:, :-1], t, out=o[s:, :-1])
    return o


def stencil3(arr: np.ndarray, c: Sequence[float], out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """``out = c0 arr(x) + c1 arr(x - (1, 1)) + c2 arr(x - (1, 0))`` on the grown grid (in place).

    The one step of the three moves ``(0, 0)``, ``(1, 1)``, ``(1, 0)`` of ``(N, j)`` (a report
    ``v``, ``d`` or ``o``): ``out`` is ``(rows + 1, cols + 1)`` for ``arr`` of ``(rows, cols)``,
    ``tmp`` has ``cols`` columns and at least ``min(rows, block_rows(cols))`` rows (neither may
    overlap ``arr``). Each cell is the three products summed in that order (the second and the
    third added to the first, a missing one being an exact 0), the arithmetic the error bounds
    of :func:`sweep_users` and :func:`hockey_upper` count; the rows are computed in blocks of
    :func:`block_rows`, which changes no value. Returns ``out``.
    """
    rows = arr.shape[0]
    rb = block_rows(arr.shape[1])
    for r0 in range(0, rows + 1, rb):
        r1 = min(rows + 1, r0 + rb)
        _stencil_rows(arr, c, out[r0:r1], tmp, r0)
    return out


class Hockey:
    """``H_E(P || Q)`` for ``P`` / ``Q`` = (target's report) + (others' law ``R``), with bounds.

    ``pi_p`` / ``pi_q`` are the log-probabilities of the target's report being ``(v, d, o)`` under
    the two datasets. ``P(N, j) = sum_y pi_p(y) R((N, j) - shift(y))`` (``shift(v) = (0, 0)``,
    ``shift(d) = (1, 1)``, ``shift(o) = (1, 0)``). With ``rho`` the relative error of the
    computed ``P~, Q~`` and ``d`` the dropped mass of ``R`` (hence of ``P`` and ``Q``):

        H <= sum_x (P~(1 + rho) - E Q~(1 - rho))_+ + d,
        H >= sum_x (P~(1 - rho) - E Q~(1 + rho))_+ - E d,

    since ``sum_x (P(x) - E Q(x))_+`` is monotone in ``P(x)`` and ``-Q(x)``, the mass ``P`` loses
    to the window is at most ``d`` (inside or outside it), and ``Q`` exceeds its window values
    by at most ``d`` in total. Each cell's arithmetic adds ``4u (P + E Q)``; the sum of ``M``
    non-negative terms adds ``M u`` relative.
    """

    __slots__ = ("P", "Q", "scale", "log_drop", "rho", "size")

    def __init__(self, R: Grid, pi_p: tuple[float, float, float], pi_q: tuple[float, float, float]) -> None:
        rows, cols = R.arr.shape
        z = np.zeros((rows + 1, cols + 1))
        s00, s11, s10 = z.copy(), z.copy(), z.copy()
        s00[:-1, :-1] = R.arr
        s11[1:, 1:] = R.arr
        s10[1:, :-1] = R.arr
        cp = [math.exp(x) for x in pi_p]
        cq = [math.exp(x) for x in pi_q]
        self.P = cp[0] * s00 + cp[1] * s11 + cp[2] * s10
        self.Q = cq[0] * s00 + cq[1] * s11 + cq[2] * s10
        self.scale = R.scale
        self.log_drop = R.log_drop
        self.rho = R.rel + 8.0 * _U
        self.size = self.P.size

    def bounds(self, eps: float) -> tuple[float, float]:
        """``(log upper, log lower)`` bounds on ``H_{e^eps}(P || Q)`` (upper capped at 0)."""
        return hockey_bounds(self.P, self.Q, self.scale, self.log_drop, self.rho, eps)


def hockey_bounds(
    P: np.ndarray, Q: np.ndarray, scale: float, log_drop: float, rho: float, eps: float
) -> tuple[float, float]:
    """``(log upper, log lower)`` of ``H_{e^eps}`` from computed ``P~, Q~`` (the :class:`Hockey` model).

    ``P~ e^scale`` and ``Q~ e^scale`` (arrays of any shape, the same cells) are within relative
    ``rho`` of the true ``P`` and ``Q`` up to a dropped mass ``e^log_drop`` (:class:`Hockey`'s
    docstring gives the two inequalities); the upper end is capped at 0.
    """
    E = math.exp(eps)
    EQ = E * Q
    err = 4.0 * _U * (P + EQ)
    up = float(np.sum(np.maximum(P * (1.0 + rho) - EQ * (1.0 - rho) + err, 0.0)))
    up *= 1.0 + (P.size + 4) * _U
    low = float(np.sum(np.maximum(P * (1.0 - rho) - EQ * (1.0 + rho) - err, 0.0)))
    low *= 1.0 - (P.size + 4) * _U
    log_up = float(np.logaddexp(math.log(up) + scale if up > 0 else -math.inf, log_drop))
    log_low = -math.inf
    if low > 0:
        ll = math.log(low) + scale
        corr = eps + log_drop
        if corr < ll:
            log_low = ll + math.log(-math.expm1(corr - ll))
    return min(log_up, 0.0), min(log_low, log_up)


def hockey_upper(
    R: Grid,
    pi_p: tuple[float, float, float],
    pi_q: tuple[float, float, float],
    eps: float,
    work: Workspace | None = None,
) -> float:
    """The upper end of :meth:`Hockey.bounds` in one pass (no ``P``, ``Q`` arrays kept).

    ``sum_x (P(1 + rho) - E Q(1 - rho) + 4 * 2u (P + E Q))_+ + d`` is computed as
    ``sum_x (sum_y c_y R(x - shift(y)))_+`` with ``c_y = pi_p(y)(1 + rho + 12 * 2u) - E pi_q(y)
    (1 - rho - 12 * 2u)``: the extra ``8 * 2u (P + E Q)`` per cell dominates the rounding of the
    coefficients (``exp``, two products, a difference: ``5u`` relative to ``a pi_p + b E pi_q``)
    and of the three products and two sums (``4u`` relative to ``sum |c_y| R``), so each
    computed cell is at least the exact term of :class:`Hockey`; the final sum of ``M``
    non-negative terms, in blocks of :func:`block_rows` rows (any order: the error of a sum of
    ``M`` non-negative terms is at most ``(M - 1) u`` relative, Higham, *Accuracy and Stability
    of Numerical Algorithms*, 2nd ed., section 4.2), is rounded up by ``(1 + (M + 4) 2u)``.
    ``log`` of the bound, capped at 0. ``work``: scratch memory to reuse across calls
    (:class:`Workspace`; ``None``: fresh arrays). :func:`hockey_upper_many` does several at once.
    """
    return hockey_upper_many(R, [(pi_p, pi_q, eps)], work)[0]


def hockey_upper_many(
    R: Grid,
    terms: Sequence[tuple[tuple[float, float, float], tuple[float, float, float], float]],
    work: Workspace | None = None,
) -> list[float]:
    """:func:`hockey_upper` for each ``(pi_p, pi_q, eps)`` of ``terms``, in one pass over ``R``.

    Each block of :func:`block_rows` rows of the grid is read once for all the terms (its
    cells computed, clipped at 0 and summed while in the cache; the same cells as
    :func:`hockey_upper`'s bound, summed in blocks); U2 (``_krr_spread``) asks both directions
    at every eps at each stop of its sweep.
    """
    rho = R.rel + 8.0 * _U
    a = 1.0 + rho + 12.0 * _U
    coefs = []
    for pi_p, pi_q, eps in terms:
        if eps < 0:  # pragma: no cover - callers pass eps >= 0
            raise ValueError(f"eps must be >= 0, got {eps}")
        b = math.exp(eps) * (1.0 - rho - 12.0 * _U)
        coefs.append([math.exp(x) * a - math.exp(y) * b for x, y in zip(pi_p, pi_q)])
    arr = R.arr
    rows, cols = arr.shape
    ws = Workspace() if work is None else work
    rb = block_rows(cols)
    block = ws.array("hockey", min(rows + 1, rb), cols + 1)
    tmp = ws.array("hockey_tmp", min(rows, rb), cols)
    sums = [0.0] * len(coefs)
    for r0 in range(0, rows + 1, rb):
        o = block[: min(rows + 1, r0 + rb) - r0]
        for i, c in enumerate(coefs):
            _stencil_rows(arr, c, o, tmp, r0)
            np.maximum(o, 0.0, out=o)
            sums[i] += float(np.sum(o))
    grow = 1.0 + ((rows + 1) * (cols + 1) + 4) * _U
    out = []
    for total in sums:
        up = total * grow
        log_up = float(np.logaddexp(math.log(up) + R.scale if up > 0 else -math.inf, R.log_drop))
        out.append(min(log_up, 0.0))
    return out


# ---------------------------------------------------------------------------------------------
# "every other user holds one value": any k, in O(window) binomial tails
# ---------------------------------------------------------------------------------------------

#: Relative error counted for each binomial tail (incomplete beta / rigorous series), as in ``lower``.
TAIL_REL = 1e-10
#: Largest number of ``(N, h1)`` tail pairs evaluated for ``k >= 4`` (about a few seconds).
MAX_TAIL_WORK = 20_000_000


def _log_upper_excess(
    M: np.ndarray, log_pi: float, log_1mpi: float, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``log E[(X - t)_+]``, ``X ~ Bin(M, pi)``, with the tails rounded up/down as ``sign`` asks.

    Returns a pair ``(log upper, log lower)`` of arrays. ``E[(X - t)_+] = M pi P(Bin(M - 1, pi) >=
    j - 1) - t P(Bin(M, pi) >= j)`` with ``j = floor(t) + 1`` (``t >= 0``), and ``M pi - t`` for
    ``t < 0``; each tail carries relative error :data:`TAIL_REL`.
    """
    pi = math.exp(log_pi)
    M = np.asarray(M, dtype=float)
    t = np.asarray(t, dtype=float)
    up = np.full(t.shape, -np.inf)
    low = np.full(t.shape, -np.inf)
    r_up, r_lo = math.log1p(TAIL_REL), math.log1p(-TAIL_REL)
    neg = (t < 0) & (M >= 0)
    if np.any(neg):
        val = np.log(M[neg] * pi - t[neg])
        up[neg], low[neg] = val + 1e-14, val - 1e-14
    pos = (t >= 0) & (M >= 1) & (np.floor(t) + 1 <= M)
    if np.any(pos):
        Mm, tt = M[pos], t[pos]
        j = np.floor(tt) + 1.0
        with np.errstate(divide="ignore"):
            la = np.log(Mm) + log_pi + log_binom_sf(j - 1.0, Mm - 1.0, pi)
            lb = np.log(tt) + log_binom_sf(j, Mm, pi)
        a_up, b_lo = la + r_up, lb + r_lo
        a_lo, b_up = la + r_lo, lb + r_up
        with np.errstate(invalid="ignore", divide="ignore"):
            u = np.where(a_up > b_lo, a_up + np.log(-np.expm1(np.minimum(b_lo - a_up, 0.0))), -np.inf)
            w = np.where(a_lo > b_up, a_lo + np.log(-np.expm1(np.minimum(b_up - a_lo, 0.0))), -np.inf)
        up[pos], low[pos] = u, w
    return up, low


def _log_lower_excess(M: np.ndarray, log_pi: float, log_1mpi: float, s: np.ndarray):
    """``(log upper, log lower)`` of ``E[(s - X)_+]``, ``X ~ Bin(M, pi)``: the mirror ``X -> M - X``."""
    return _log_upper_excess(M, log_1mpi, log_pi, np.asarray(M, dtype=float) - np.asarray(s, dtype=float))


def _up(t: np.ndarray) -> np.ndarray:
    """``t`` moved up by a bound on its floating-point error (``8u (|t| + 1)``)."""
    return t + 8.0 * _U * (np.abs(t) + 1.0)


def _down(t: np.ndarray) -> np.ndarray:
    """``t`` moved down by a bound on its floating-point error."""
    return t - 8.0 * _U * (np.abs(t) + 1.0)


def single_class_log_hockey(k: int, eps0: float, n: int, v: int, eps: float, log_tol: float):
    """``(log upper, log lower)`` of ``H_E(P || Q)`` and of ``H_E(Q || P)`` when all ``n - 1`` others hold ``v``.

    ``v = 0`` (the target's value in ``P``) or ``v >= 2`` (``v = 1`` is the mirror of ``v = 0``).
    Proof (the module docstring's pivot structure with no uniform users): with ``N`` the number of
    reports different from ``v`` in the release and ``N_o ~ Bin(n - 1, 1 - p)`` the others' part,
    the reports different from ``v`` are uniform over the ``k - 1`` other values, so with
    ``w = P(N_o = N)``, ``U = (k - 1) P(N_o = N - 1)`` and ``M_N`` the multinomial of the
    histogram given ``N``:

    * ``v >= 2``: ``P - E Q = M_N [(U / N)(p - pbar)(h0 - E h1) - (E - 1) pbar (w + U)]``, positive
      on a half-space in ``(h0, h1)``; given ``N`` and ``h1``, ``h0 ~ Bin(N - h1, 1/(k - 2))``
      (``k = 3``: ``h1 = N - h0``, ``h0 ~ Bin(N, 1/2)``, the symmetric rest-pivot structure of
      :func:`rest_terms` with ``V = U / 2``); both directions are equal (relabel ``0 <-> 1``).
    * ``v = 0``: ``P - E Q = M_N [(p - E pbar) w + (1 - E) pbar U - E (U / N)(p - pbar) h1]`` and
      ``Q - E P = M_N [(pbar - E p) w + (1 - E) pbar U + (U / N)(p - pbar) h1]``, with
      ``h1 ~ Bin(N, 1/(k - 1))`` given ``N``.

    Each half-space sum is ``coef * E[(X - t)_+]`` (or ``E[(t - X)_+]``) of a binomial ``X``, from
    two binomial tails. Rounding: ``w`` and ``U`` carry relative error ``rho``; the coefficients
    are moved to their unfavourable ends (upper bound) or favourable ends (lower bound), which
    keeps the linear form and only moves the threshold; thresholds are moved by ``8u (|t| + 1)``
    outward.
    The ``N`` window (``N_o`` within ``mean +- z sd``) drops a mass bounded by the doubled tails
    plus the two edge pmfs, added to the upper bound (the lower bound just omits cells, every
    omitted term being ``>= 0``). For ``k >= 4`` the ``h1`` window comes from the marginal
    ``h1 - (target) ~ Bin(n - 1, pbar)``, same treatment.

    Returns:
        ``((log up, log low) of H(P || Q), (log up, log low) of H(Q || P))``, or ``None`` when
        ``k >= 4`` would exceed :data:`MAX_TAIL_WORK` tail pairs.
    """
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    p, pbar = math.exp(lp), math.exp(lq)
    E = math.exp(eps)
    if eps >= eps0:
        return (-math.inf, -math.inf), (-math.inf, -math.inf)
    rho = REL_PMF + 16.0 * _U
    l1mp = math.log(k - 1) + lq  # log(1 - p)
    lo, lpn, ltail = binom_window(n - 1, l1mp, lp, log_tol)
    hi = lo + lpn.size - 1
    # view N in [lo + 1, hi] (and N = n when the window reaches N_o = n - 1, where w = 0 exactly):
    # w = P(N_o = N) and U = (k - 1) P(N_o = N - 1) are both known there
    top = hi + 1 if hi == n - 1 else hi
    N = np.arange(lo + 1, top + 1, dtype=float)
    lw = np.concatenate([lpn[1:], [-np.inf] * (top - hi)])
    lU = math.log(k - 1) + lpn[: N.size]
    edge = [ltail]
    if lo > 0:
        edge.append(float(lpn[0]))  # cells with N = lo
    if hi < n - 1:
        edge.append(float(lpn[-1]))  # cells with N = hi + 1
    # a scale e^mx per N (thresholds only involve ratios of w and U; w / U is a ratio of two
    # consecutive binomial probabilities, so neither underflows after scaling)
    mx = np.maximum(lw, lU)
    lw, lU = lw - mx, lU - mx
    drop = float(logsumexp(np.array(edge))) + math.log1p(rho)
    extra = []  # the N = 0 cell, exactly (v = 0 only; for v >= 2 it is <= 0)
    if lo == 0 and v == 0:
        # N = 0: every report is v = 0; P - E Q = (p - E pbar) P(N_o = 0) (the one-outcome cell),
        # with p - E pbar = pbar E expm1(eps0 - eps) > 0 (no cancellation as eps -> eps0)
        extra.append(float(lpn[0]) + lq + eps + math.log(math.expm1(eps0 - eps)))
    d = p - pbar
    with np.errstate(divide="ignore", invalid="ignore"):
        w_hi, w_lo = np.exp(lw) * (1 + rho), np.exp(lw) * (1 - rho)
        U_hi, U_lo = np.exp(lU) * (1 + rho), np.exp(lU) * (1 - rho)

    def fin(terms_up, terms_low, extra_terms):
        terms_up = (terms_up + (mx if np.ndim(terms_up) == 1 else mx[:, None])).ravel()
        terms_low = (terms_low + (mx if np.ndim(terms_low) == 1 else mx[:, None])).ravel()
        up = float(logsumexp(np.concatenate([np.ravel(terms_up), extra_terms + math.log1p(rho)])))
        up = float(np.logaddexp(up, drop)) + 4.0 * _U * (np.size(terms_up) + 4)
        low = float(logsumexp(np.concatenate([np.ravel(terms_low), extra_terms + math.log1p(-rho)])))
        low -= 4.0 * _U * (np.size(terms_low) + 4)
        return min(up, 0.0), min(low, up)

    ex = np.array(extra)
    if v >= 2:
        if k == 3:
            # the symmetric rest-pivot structure with V = P(N_o = N - 1) = U / 2 (rest_terms)
            tu, tl = rest_terms(3, eps0, eps, N, (w_lo, w_hi), (U_lo / 2.0, U_hi / 2.0))
            r = fin(tu, tl, ex)
            return r, r
        h_lo, h_lp, h_tail = binom_window(
            n - 1, lq, float(np.logaddexp(lp, l1mp - math.log(k - 1) + math.log(k - 2))), log_tol
        )
        H1 = np.arange(h_lo, h_lo + h_lp.size + 1, dtype=float)  # + the target's possible report 1
        if float(N.size) * H1.size > MAX_TAIL_WORK:
            return None
        drop = float(np.logaddexp(drop, h_tail + math.log(2.0)))
        NN, HH = np.meshgrid(N, H1, indexing="ij")
        ok = HH <= NN
        lwt = np.where(
            ok,
            log_binom_pmf(np.where(ok, HH, 0.0), NN, -math.log(k - 1), math.log((k - 2) / (k - 1))),
            -np.inf,
        )
        a_up, a_lo = (U_hi / N * d)[:, None], (U_lo / N * d)[:, None]
        b_up, b_lo = (U_lo / N * d * E)[:, None], (U_hi / N * d * E)[:, None]
        g_up = (math.expm1(eps) * pbar * (w_lo + U_lo))[:, None]
        g_lo = (math.expm1(eps) * pbar * (w_hi + U_hi))[:, None]
        t_up = _down((b_up * HH + g_up) / a_up)
        t_lo = _up((b_lo * HH + g_lo) / a_lo)
        Mx = np.where(ok, NN - HH, 0.0)
        l2, l2c = -math.log(k - 2), math.log((k - 3) / (k - 2)) if k > 3 else -math.inf
        xu, _ = _log_upper_excess(Mx, l2, l2c, t_up)
        _, xl = _log_upper_excess(Mx, l2, l2c, t_lo)
        tu = np.where(ok, lwt + math.log1p(rho) + np.log(a_up) + xu, -np.inf)
        tl = np.where(ok, lwt + math.log1p(-rho) + np.log(a_lo) + xl, -np.inf)
        r = fin(tu, tl, ex)
        return r, r
    # v = 0: h1 ~ Bin(N, 1/(k - 1)) given N
    fu, fl, ru, rl = pivot0_terms(k, eps0, eps, N, (w_lo, w_hi), (U_lo, U_hi))
    fwd = fin(fu, fl, ex)
    rev = fin(ru, rl, np.array([]))
    return fwd, rev


def pivot0_terms(
    k: int,
    eps0: float,
    eps: float,
    N: np.ndarray,
    w: tuple[np.ndarray, np.ndarray],
    U: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-``N`` log terms ``(fwd up, fwd low, rev up, rev low)`` of the pivot-0 hockey sums.

    The structure of :func:`single_class_log_hockey` with ``v = 0``: every other user's report
    different from 0 is uniform on the ``k - 1`` other values, ``N_o`` (the number of such
    reports) has *any* law, ``w = P(N_o = N)`` and ``U = (k - 1) P(N_o = N - 1)``; the target
    holds 0 (``P``) or 1 (``Q``). Then, summed over the histograms with ``N`` reports different
    from 0 (``h1 ~ Bin(N, 1/(k - 1))`` given ``N``),

        sum (P - E Q)_+ = E[((p - E pbar) w + (1 - E) pbar U - E (U / N)(p - pbar) h1)_+],
        sum (Q - E P)_+ = E[((pbar - E p) w + (1 - E) pbar U + (U / N)(p - pbar) h1)_+],

    each a coefficient times ``E[(s - h1)_+]`` or ``E[(h1 - s)_+]`` (two binomial tails). The
    first is non-decreasing in ``w`` and non-increasing in ``U``; the second is non-increasing
    in ``w`` and, as ``C E[(h1 - S)_+]`` with ``C = (U / N)(p - pbar)`` and ``S`` decreasing in
    ``U / w``, bounded above by the largest ``C`` and the smallest ``S``. So the true terms lie
    between the returned ones when the true ``w`` and ``U`` lie in ``[w_lo, w_hi]`` and
    ``[U_lo, U_hi]`` (the caller adds any mass in excess of ``w_hi`` / ``U_hi``: each unit of
    it adds at most one unit to a term). ``N >= 1``, ``U_lo > 0``, ``eps < eps0``.

    Args:
        k, eps0, eps: The mechanism and the divergence's ``log E``.
        N: The cells' ``N`` (float array, ``>= 1``).
        w: ``(w_lo, w_hi)``, arrays like ``N`` (any common per-cell scale).
        U: ``(U_lo, U_hi)``, same scale.

    Returns:
        Four arrays like ``N``: the log terms in that per-cell scale.
    """
    w_lo, w_hi = w
    U_lo, U_hi = U
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    p, pbar = math.exp(lp), math.exp(lq)
    E = math.exp(eps)
    d = p - pbar
    l1, l1c = -math.log(k - 1), math.log((k - 2) / (k - 1)) if k > 2 else -math.inf
    # Coefficients without cancellation (eps < eps0 here): p - E pbar = pbar E expm1(eps0 - eps),
    # E - 1 = expm1(eps), E p - pbar = pbar expm1(eps + eps0), each to a few units of rounding;
    # the difference of the two terms of A below carries an absolute margin of 8u times the sum
    # of their magnitudes (coefficient, product and subtraction roundings), so the thresholds
    # stay on their sound sides even where the two terms nearly cancel (eps -> eps0).
    c_fwd = pbar * E * math.expm1(eps0 - eps)
    em1 = math.expm1(eps)
    c_rev = pbar * math.expm1(eps + eps0)
    # forward: (p - E pbar) w + (1 - E) pbar U - E (U/N) d h1  =  B (s - h1)
    Bu, Bl = E * U_lo / N * d, E * U_hi / N * d
    margin_a = 8.0 * _U * (c_fwd * w_hi + em1 * pbar * U_hi)
    A_up = c_fwd * w_hi - em1 * pbar * U_lo + margin_a
    A_lo = c_fwd * w_lo - em1 * pbar * U_hi - margin_a
    s_up = _up(A_up / Bu)
    s_lo = _down(A_lo / Bl)
    xu, _ = _log_lower_excess(N, l1, l1c, s_up)
    _, xl = _log_lower_excess(N, l1, l1c, s_lo)
    fu, fl = np.log(Bu) + xu, np.log(Bl) + xl
    # reverse: (pbar - E p) w + (1 - E) pbar U + (U/N) d h1  =  C (h1 - s')
    Cu, Cl = U_hi / N * d, U_lo / N * d
    S_up = _down((c_rev * w_lo + em1 * pbar * U_lo) * (1.0 - 8.0 * _U) / Cu)
    S_lo = _up((c_rev * w_hi + em1 * pbar * U_hi) * (1.0 + 8.0 * _U) / Cl)
    xu_r, _ = _log_upper_excess(N, l1, l1c, S_up)
    _, xl_r = _log_upper_excess(N, l1, l1c, S_lo)
    return fu, fl, np.log(Cu) + xu_r, np.log(Cl) + xl_r


def rest_coefs(
    k: int, eps0: float, eps: float, N: np.ndarray, w: np.ndarray, V: np.ndarray, upper: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``(log a, threshold)`` of :func:`rest_terms` for given ``w``, ``V`` (``V > 0``), moved outward.

    ``a = 2 V (1 + E) d / N`` (``d = pbar expm1(eps0)``) and ``g / a = N [expm1(eps + eps0) +
    expm1(eps) (k - 2) w / (2 V)] / ((1 + E) expm1(eps0))``; ``upper``: ``log a`` up by
    ``32 * 2u`` and the threshold down by its rounding (:func:`_down` after a ``1 - 8 * 2u``
    factor); else the other way.
    """
    lq = -math.log1p((k - 1) * math.exp(-eps0)) - eps0
    E = math.exp(eps)
    em0, eme, emm = math.expm1(eps0), math.expm1(eps), math.expm1(eps + eps0)
    den = (1.0 + E) * em0
    t = N * (emm + eme * (k - 2) * w / (2.0 * V)) / den
    la = math.log(2.0 * den) + lq + np.log(V / N)  # log(2 (1 + E) d V / N)
    if upper:
        return la + 32.0 * _U, _down(t * (1.0 - 8.0 * _U))
    return la - 32.0 * _U, _up(t * (1.0 + 8.0 * _U))


def rest_terms(
    k: int,
    eps0: float,
    eps: float,
    N: np.ndarray,
    w: tuple[np.ndarray, np.ndarray],
    V: tuple[np.ndarray, np.ndarray],
    tails: HalfTails | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-``N`` log terms ``(up, low)`` of the hockey sum for the *symmetric rest-pivot* structure.

    Structure: the release is ``(h0, h1, h_R)`` with ``R = {2, ..., k - 1}`` merged (its split
    ancillary); the others' number ``N_o`` of reports in ``{0, 1}`` has *any* law, and given
    ``N_o`` their ``h0 ~ Bin(N_o, 1/2)``; the target reports ``(0, 1, R)`` w.p. ``(p, pbar, rho)``
    (``P``) or ``(pbar, p, rho)`` (``Q``), ``rho = (k - 2) pbar``. With ``N = h0 + h1`` in the
    release, ``w = P(N_o = N)``, ``V = P(N_o = N - 1)`` and ``M = Bin(N, 1/2)(h0)``:
    ``Bin(N - 1, 1/2)(h0 - 1) = M 2 h0 / N`` and ``Bin(N - 1, 1/2)(h0) = M 2 (N - h0) / N``, so

        P - E Q = M [V c(h0) - (E - 1) rho w],   c(h0) = (2 / N)((1 + E) d h0 - (E p - pbar) N),

    ``d = p - pbar``, and summed over ``h0`` (``X ~ Bin(N, 1/2)``)

        sum_h0 (P - E Q)_+ = E[(a X - g)_+] = a E[(X - g / a)_+],
        a = 2 V (1 + E) d / N,   g = 2 V (E p - pbar) + (E - 1) rho w

    (:func:`rest_coefs`). By the symmetry ``h0 <-> N - h0`` (relabel 0 <-> 1) ``sum (Q - E P)_+``
    is the same. Bounds from ``[w_lo, w_hi]``, ``[V_lo, V_hi]``: where ``c(h0) <= 0`` the true
    bracket is ``<= 0``, and where ``c(h0) > 0`` it is at most ``V_hi c - (E - 1) rho w_lo`` and
    at least ``V_lo c - (E - 1) rho w_hi``; so ``up`` uses ``(V_hi, w_lo)`` and ``low``
    ``(V_lo, w_hi)`` in the whole expression (the positive part of each is between the true
    one's bounds at every ``h0``). The excess is two binomial tails (:func:`_log_upper_excess`,
    relative error :data:`TAIL_REL` each) or, for ``up`` where it covers the threshold, a
    :class:`HalfTails` table. ``N >= 1``, ``V_lo > 0``, ``0 <= eps < eps0``; ``w`` and ``V`` in
    any common per-cell scale.
    """
    w_lo, w_hi = w
    V_lo, V_hi = V
    lh = -math.log(2.0)
    la_up, t_up = rest_coefs(k, eps0, eps, N, w_lo, V_hi, True)
    la_lo, t_lo = rest_coefs(k, eps0, eps, N, w_hi, V_lo, False)
    if tails is None:
        xu, _ = _log_upper_excess(N, lh, lh, t_up)
        _, xl = _log_upper_excess(N, lh, lh, t_lo)
        return la_up + xu, la_lo + xl
    xu, ok = tails.excess_up(N, t_up)
    if not np.all(ok):
        xu[~ok] = _log_upper_excess(N[~ok], lh, lh, t_up[~ok])[0]
    return la_up + xu, np.full(N.shape, -np.inf)


class HalfTails:
    """Upper bounds on ``log P(X >= j)`` and ``log E[(X - j)_+]``, ``X ~ Bin(N, 1/2)``, on a band of ``j``.

    Rows ``N = N0, N0 + 1, ...`` (``N0 >= 1``), columns ``j = j_lo(N) + c``, ``0 <= c <=
    width``. At the top column both come from the tails (:func:`_log_upper_excess`,
    ``log_binom_sf``, each rounded up by :data:`TAIL_REL`); below, by the exact recurrences
    ``P(X >= j) = P(X >= j + 1) + pmf(j)`` and ``E[(X - j)_+] = E[(X - j - 1)_+] + P(X >= j +
    1)`` (sums of non-negative upper bounds are upper bounds; the pmfs are Loader's, rounded up
    by :data:`REL_PMF`, at one column and from the exact ratio ``pmf(j) / pmf(j + 1) = (j + 1) /
    (N - j)`` below it, its rounding bounded and added; each ``logaddexp`` adds at most ``4u (1 +
    |x|)`` in logs, so a value
    ``c`` steps below the top carries at most ``(width + 4) 8u (1 + |x|)``, added at each
    query). For real ``t`` with ``j = ceil(t)``: ``(X - t)_+ = (X - j)_+ + (j - t) 1{X >= j}``
    (for integer ``X``: ``X <= j - 1 < t`` or ``X >= j``), so ``E[(X - t)_+] = E[(X - j)_+] +
    (j - t) P(X >= j)``.
    """

    __slots__ = ("N0", "j_lo", "width", "lP", "lE", "err")

    def __init__(self, N0: int, j_lo: np.ndarray, width: int) -> None:
        self.N0, self.width = N0, width
        self.j_lo = j_lo.astype(np.int64)
        N = np.arange(N0, N0 + j_lo.size, dtype=float)
        lh = -math.log(2.0)
        top = self.j_lo + width
        lP = np.full((N.size, width + 1), -np.inf)
        lE = np.full((N.size, width + 1), -np.inf)
        tf = top.astype(float)
        inside = (tf <= N) & (tf >= 1)
        with np.errstate(divide="ignore"):
            lP[inside, width] = log_binom_sf(tf[inside], N[inside], 0.5) + math.log1p(TAIL_REL)
        lP[tf < 1, width] = 0.0
        lE[:, width] = _log_upper_excess(N, lh, lh, np.maximum(tf, 0.0))[0]
        # pmfs: Loader's at the column j_lo + width - 1, then the exact ratio pmf(j) / pmf(j + 1)
        # = (j + 1) / (N - j) in logs on the rows where that column is <= N (each step adds at
        # most 4u (|log pmf| + 2 log(N + 1)) to the log; the total is added at each query);
        # Loader's everywhere on the other rows (near N = j, a few)
        rec = (self.j_lo + width - 1) <= N
        pm = np.full(N.shape, -np.inf)
        big = 0.0  # the largest |log pmf| met (the recurrence's rounding scales with it)
        for c in range(width - 1, -1, -1):
            j = (self.j_lo + c).astype(float)
            ok = (j >= 0) & (j <= N)
            if c == width - 1:
                pm[ok] = log_binom_pmf(j[ok], N[ok], lh, lh) + math.log1p(REL_PMF)
            else:
                pm = np.where(rec, pm + np.log(j + 1.0) - np.log(np.maximum(N - j, 1.0)), pm)
                lo_rows = ~rec & ok
                if np.any(lo_rows):
                    pm[lo_rows] = log_binom_pmf(j[lo_rows], N[lo_rows], lh, lh) + math.log1p(REL_PMF)
                pm[~ok] = -np.inf
            fin = np.isfinite(pm)
            if np.any(fin):
                big = max(big, float(np.max(np.abs(pm[fin]))))
            lE[:, c] = np.logaddexp(lE[:, c + 1], lP[:, c + 1])
            lP[:, c] = np.logaddexp(lP[:, c + 1], pm)
        self.err = width * 4.0 * _U * (big + 2.0 * math.log(float(N[-1]) + 2.0) + 1.0)
        self.lP, self.lE = lP, lE

    def excess_up(self, N: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(log upper E[(X - t)_+], covered)`` per cell; entries not covered are ``-inf``."""
        i = N.astype(np.int64) - self.N0
        j = np.ceil(t)
        ok = (i >= 0) & (i < self.j_lo.size) & (t >= 0)
        c = np.full(N.shape, -1, dtype=np.int64)
        c[ok] = j[ok].astype(np.int64) - self.j_lo[i[ok]]
        ok &= (c >= 0) & (c <= self.width)
        out = np.full(N.shape, -np.inf)
        if np.any(ok):
            ii, cc = i[ok], c[ok]
            with np.errstate(divide="ignore"):
                v = np.logaddexp(self.lE[ii, cc], np.log(j[ok] - t[ok]) + self.lP[ii, cc])
            fin = np.isfinite(v)
            v[fin] += (self.width + 4) * 8.0 * _U * (1.0 + np.abs(v[fin])) + self.err
            out[ok] = v
        return out, ok


#: Largest direct 2-D convolution work for one concrete ``k = 3`` dataset (a few seconds).
MAX_DATASET_WORK = 1_000_000_000
PIVOT_COORDS = {2: (0, 1), 0: (1, 2), 1: (0, 2)}


def k3_rows(eps0: float) -> tuple[float, float]:
    """``(log p, log pbar)`` of 3-RR with local privacy ``eps0``."""
    lp = -math.log1p(2.0 * math.exp(-eps0))
    return lp, lp - eps0


def fixed_law_k3(
    eps0: float, counts: tuple[int, int, int], log_tol: float, uniform: int = 0, *, check_only: bool = False
):
    """``(pivot v, Grid)``: the law of the reports of ``counts`` users of 3-RR, or ``None``.

    With ``uniform = b > 0``, also of ``b`` users reporting uniformly (they have the pivot form
    for every pivot: ``N_o`` gains an independent ``Bin(b, 2/3)`` term, module docstring).
    The value with the most users is the pivot (:func:`pivot_grid`; ties:
    2, then 0, then 1), in the coordinates ``(N, j)`` of ``v`` with ``(d, o)`` from
    ``{2: (0, 1), 0: (1, 2), 1: (0, 2)}``. The other two classes are added either as windowed
    trinomials (:func:`class_grid`) by direct 2-D convolution (while that work is below
    :data:`MAX_DATASET_WORK`) or one user at a time (:func:`add_users`, work about
    ``users x cells``, below :data:`MAX_SEQUENTIAL_WORK`), whichever is estimated cheaper; the
    dropped mass is at most about ``e^log_tol``. ``None`` when neither fits its budget (e.g.
    three classes of ~3000 users each). ``check_only``: decide only (the returned grid is then
    the pivot part alone, not the law).
    """
    lp, lq = k3_rows(eps0)
    v = max((2, 0, 1), key=lambda x: counts[x])
    d, o = PIVOT_COORDS[v]

    def row(x: int, y: int) -> float:
        return lp if x == y else lq

    t = log_tol - math.log(8.0)
    no = law_from_binom(counts[v], math.log(2.0) + lq, lp, t)
    if uniform > 0:
        no = conv1d(no, law_from_binom(uniform, math.log(2.0 / 3.0), -math.log(3.0), t))
    R = pivot_grid(no, t)
    rest = [u for u in (d, o) if counts[u] > 0]
    if not rest:
        return v, R
    grids = [class_grid(counts[u], row(u, v), row(u, d), row(u, o), t) for u in rest]
    classes = [(counts[u], (row(u, v), row(u, d), row(u, o))) for u in rest]
    out = add_classes(R, classes, grids, t, check_only=check_only)
    return None if out is None else (v, out)


def add_classes_work(
    R: Grid, classes: list[tuple[int, tuple[float, float, float]]], grids: list[Grid], t: float
) -> tuple[float, float]:
    """``(direct, sequential)``: the work estimates :func:`add_classes` compares with its budgets.

    ``direct``: products of the 2-D convolutions (the classes' grids with each other, then with
    ``R``); ``sequential``: users times cells of the grid as it grows (``z sqrt(c / 4)`` per side).
    """
    shapes = [g.arr.shape for g in grids]
    direct = float(grids[0].arr.size) * grids[1].arr.size if len(grids) == 2 else 0.0
    sr = sum(x[0] for x in shapes) - len(shapes) + 1
    sc = sum(x[1] for x in shapes) - len(shapes) + 1
    direct += float(R.arr.size) * sr * sc
    c_rest = sum(c for c, _ in classes)
    z = window_z(t)
    grow = 2.0 * z * math.sqrt(0.25 * c_rest) + 4.0
    sequential = float(c_rest) * (R.arr.shape[0] + grow) * (R.arr.shape[1] + grow)
    return direct, sequential


def add_classes(
    R: Grid,
    classes: list[tuple[int, tuple[float, float, float]]],
    grids: list[Grid],
    t: float,
    *,
    check_only: bool = False,
) -> Grid | None:
    """The law ``R`` convolved with fixed classes of users, or ``None`` when over budget.

    ``classes`` are ``(users, (log w_v, log w_d, log w_o))`` and ``grids`` their windowed
    trinomials (:func:`class_grid`, same order). Either the classes' grids are convolved with
    each other and then with ``R`` (direct 2-D convolution, while that work is below
    :data:`MAX_DATASET_WORK`) or the users are added one at a time (:func:`add_users`, work
    about ``users x cells``, below :data:`MAX_SEQUENTIAL_WORK`), whichever is estimated cheaper
    (the direct one unless it costs over 4x the other); dropped mass at most about ``e^t``.
    ``check_only``: decide only (``R`` itself is returned when a path fits).
    """
    direct, sequential = add_classes_work(R, classes, grids, t)
    if direct <= MAX_DATASET_WORK and direct <= 4.0 * sequential:
        if check_only:
            return R
        small = grids[0]
        for g in grids[1:]:
            small = conv2d(small, g)
        return conv2d(R, small)
    if sequential <= MAX_SEQUENTIAL_WORK:
        if check_only:
            return R
        for c, w in classes:
            R = add_users(R, c, w, t - math.log(2.0))
        return R
    return None


def target_rows_k3(eps0: float, v: int) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Log-probabilities of the target's report being ``(v, d, o)`` when it holds 0 / holds 1."""
    lp, lq = k3_rows(eps0)
    d, o = PIVOT_COORDS[v]

    def row(x: int, y: int) -> float:
        return lp if x == y else lq

    return (row(0, v), row(0, d), row(0, o)), (row(1, v), row(1, d), row(1, o))


def dataset_log_hockey_k3(eps0: float, counts: tuple[int, int, int], eps: float, log_tol: float):
    """``((up, low) of log H(P || Q), (up, low) of log H(Q || P))`` for one ``k = 3`` dataset.

    The others' law comes from :func:`fixed_law_k3` and :class:`Hockey` sums both directions
    cell by cell. ``None`` when :func:`fixed_law_k3` is over budget.
    """
    if eps >= eps0:
        return (-math.inf, -math.inf), (-math.inf, -math.inf)
    res = fixed_law_k3(eps0, counts, log_tol)
    if res is None:
        return None
    v, R = res
    pi0, pi1 = target_rows_k3(eps0, v)
    return Hockey(R, pi0, pi1).bounds(eps), Hockey(R, pi1, pi0).bounds(eps)


# ---------------------------------------------------------------------------------------------
# one user at a time: k = 3 datasets with two or three large classes
# ---------------------------------------------------------------------------------------------

#: Largest ``(users added) x (grid cells)`` of :func:`add_users` accepted by
#: :func:`dataset_log_hockey_k3` (about ten seconds on one core).
MAX_SEQUENTIAL_WORK = 4_000_000_000
#: Steps between two trims (and rescalings) of the grid in :func:`add_users`.
_TRIM_EVERY = 8


def trim_mass(sums: np.ndarray, budget: float) -> tuple[int, int, float]:
    """Longest prefix and suffix of ``sums`` (non-negative) whose totals are each ``<= budget / 2``.

    Returns ``(number dropped at the front, number dropped at the back, total dropped)``, never
    dropping everything (at least the largest entry stays).
    """
    half = 0.5 * budget
    cs = np.cumsum(sums)
    front = int(np.searchsorted(cs, half, side="right"))
    rs = np.cumsum(sums[::-1])
    back = int(np.searchsorted(rs, half, side="right"))
    keep_at = int(np.argmax(sums))
    front = min(front, keep_at)
    back = min(back, sums.size - 1 - keep_at)
    dropped = (float(cs[front - 1]) if front else 0.0) + (float(rs[back - 1]) if back else 0.0)
    return front, back, dropped


def sweep_users(R: Grid, stops, log_w: tuple[float, float, float], log_tol: float, *, fresh: bool = True):
    """Laws of ``R`` plus ``b`` independent users, added one at a time, for each ``b`` in ``stops``.

    A generator: yields ``(b, Grid)`` for the increasing non-negative integers ``stops`` (the
    users are identical; the grid after ``b`` users is the law of ``R`` plus ``b`` of them).

    Each added user moves ``(N, j)`` by ``(0, 0)``, ``(1, 1)`` or ``(1, 0)`` (a report ``v``,
    ``d`` or ``o``) with probabilities ``e^log_w`` (summing to 1); a user holding ``d`` has
    ``(pbar, p, pbar)``, one holding ``o`` has ``(pbar, pbar, p)``. One step is
    ``R'(x) = sum_s w_s R(x - s)``: three non-negative products summed, so the computed grid
    is the exact step of the previous computed grid times ``(1 + theta)`` cell by cell,
    ``|theta| <= 6.5 * 2u`` (three products and two sums, ``2.5 * 2u``; the weights ``e^log_w``
    within ``4 * 2u`` of the exact probabilities, ``log_w`` being computed from ``eps0`` in a few
    operations), plus ``0.5 * 2u`` for the rescaling below; after ``S`` steps the relative error
    is at most ``R.rel + (1 + R.rel)((1 + 7 * 2u)^S - 1)``, bounded by
    ``R.rel + 1.001 (1 + R.rel) * 7 * 2u * S`` while ``7 * 2u * S < 1e-3``.

    Truncation, with the dropped mass *measured*, not estimated: every :data:`_TRIM_EVERY`
    steps (and at the end) the grid is rescaled by its maximum (one more rounding, counted in the
    step budget above as the seventh unit) and the leading and trailing rows and columns whose
    summed mass stays below ``e^log_tol / (number of trims)`` are removed; their computed mass,
    rounded up by ``(1 + rel)(1 + cells * 2u)``, is added to ``log_drop``. This is sound for the
    :class:`Grid` error model: the true law is the computed one plus the transported images of
    every dropped part (and of ``R``'s own dropped mass), each step being a Markov kernel that
    preserves total mass, so ``sum_x (true(x) - computed(x)(1 + rel))_+`` is at most the sum of
    every mass ever dropped; and ``true >= computed (1 - rel)`` cell by cell because dropping only
    removes non-negative contributions. Products that underflowed add at most ``_TINY`` each.

    Args:
        R: The law so far (e.g. :func:`pivot_grid` of the pivot class).
        stops: Increasing non-negative integers: the numbers of added users to yield at.
        log_w: Log-probabilities of the moves ``(0, 0)``, ``(1, 1)``, ``(1, 0)``.
        log_tol: Log of the total mass the trims may drop (over all ``max(stops)`` steps).
        fresh: With ``False`` (keyword only), a grid yielded between two trims shares its memory
            with the sweep and holds its values only until the generator resumes (no copy: at
            n = 1e6, copying a grid costs more than a step), for callers that use each grid at
            once; with ``True`` every yielded grid is its own.

    Yields:
        ``(b, Grid)`` for each ``b`` in ``stops``.
    """
    stops = sorted({int(x) for x in stops})
    c = stops[-1] if stops else 0
    if 7.0 * _U * c >= 1e-3:  # pragma: no cover - c would have to exceed 1e12
        raise RuntimeError("internal: too many steps for the first-order error bound")
    k_stop = 0
    while k_stop < len(stops) and stops[k_stop] == 0:
        yield 0, R
        k_stop += 1
    if k_stop == len(stops):
        return
    w0, w1, w2 = (math.exp(x) for x in log_w)
    arr = R.arr
    ws = Workspace()  # two grids (the step's source and target, alternating) and the products
    side = 0
    scale, n_lo, j_lo = R.scale, R.n_lo, R.j_lo
    rel = R.rel
    drops = [R.log_drop]
    n_trims = c // _TRIM_EVERY + 1
    budget_log = log_tol - math.log(n_trims)
    products = 0.0
    top_scale = scale  # products are bounded in units of e^scale; track the largest scale
    done = 0
    while done < c:
        steps = min(_TRIM_EVERY - done % _TRIM_EVERY, stops[k_stop] - done)
        for _ in range(steps):
            rows, cols = arr.shape
            side = 1 - side  # never the buffer arr is in
            new = ws.array(f"grid{side}", rows + 1, cols + 1)
            with np.errstate(under="ignore"):
                stencil3(arr, (w0, w1, w2), new, ws.array("tmp", min(rows, block_rows(cols)), cols))
            products += 3.0 * arr.size
            arr = new  # the lower corner does not move: every move is >= (0, 0)
        done += steps
        if done % _TRIM_EVERY and done < c:  # a stop between two trims: yield the untrimmed grid
            rel_now = R.rel + (1.0 + R.rel) * 7.0 * _U * done * 1.001
            tiny = math.log(products * _TINY) + top_scale
            out = arr.copy() if fresh else arr
            yield done, Grid(n_lo, j_lo, out, scale, float(logsumexp(drops + [tiny])), rel_now)
            k_stop += 1
            continue
        # rescale by the maximum, then trim rows and columns (measured mass)
        mx = float(np.max(arr))
        if mx <= 0.0:  # pragma: no cover - every step keeps the total mass positive
            raise RuntimeError("internal: grid underflowed to zero")
        arr = arr / mx
        scale += math.log(mx)
        top_scale = max(top_scale, scale)
        budget = math.exp(budget_log - scale)
        grow = 1.0 + rel + (arr.size + 4) * _U
        arr, f, f2 = _trim_edges(arr, budget, grow, scale, drops)
        n_lo += f
        j_lo += f2
        rel = R.rel + (1.0 + R.rel) * 7.0 * _U * done * 1.001
        if done == stops[k_stop]:
            tiny = math.log(products * _TINY) + top_scale
            yield done, Grid(n_lo, j_lo, arr, scale, float(logsumexp(drops + [tiny])), rel)
            k_stop += 1


def add_users(R: Grid, c: int, log_w: tuple[float, float, float], log_tol: float) -> Grid:
    """Law of ``R`` plus ``c`` independent identical users (:func:`sweep_users`, one stop at ``c``).

    Args:
        R: The law so far (e.g. :func:`pivot_grid` of the pivot class).
        c: Number of users to add (``>= 0``).
        log_w: Log-probabilities of the moves ``(0, 0)``, ``(1, 1)``, ``(1, 0)``.
        log_tol: Log of the total mass the trims may drop.

    Returns:
        The :class:`Grid` of the sum.
    """
    out = R
    for _, g in sweep_users(R, [c], log_w, log_tol):
        out = g
    return out


# ---------------------------------------------------------------------------------------------
# k >= 4, every other user at the target's two values: three categories (0, 1, rest)
# ---------------------------------------------------------------------------------------------


def rest_rows(k: int, eps0: float) -> dict[int, tuple[float, float, float]]:
    """Log-probabilities of a report in ``(0, 1, rest)`` for a user holding 0 (key 0) or 1 (key 1).

    ``k``-RR with ``p = e^eps0 / (e^eps0 + k - 1)``, ``pbar = p e^-eps0``: a user holding 0
    reports 0 w.p. ``p``, 1 w.p. ``pbar`` and a value of ``rest = {2, ..., k - 1}`` w.p.
    ``(k - 2) pbar`` (and symmetrically for 1). ``k >= 3``.
    """
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    lr = math.log(k - 2) + lq
    return {0: (lp, lq, lr), 1: (lq, lp, lr)}


def fixed_law_rest(k: int, eps0: float, c0: int, c1: int, log_tol: float):
    """``(pivot v, Grid)``: the ``(0, 1, rest)`` law of ``c0`` users at 0 and ``c1`` at 1, or ``None``.

    The three-category analogue of :func:`fixed_law_k3` for ``k >= 4`` (``k = 3`` included: there
    ``rest = {2}``): the class with more users is the pivot ``v`` (ties: 0), in the coordinates
    ``(N, j)`` of ``v`` with ``(d, o) = (1, rest)`` for ``v = 0`` and ``(0, rest)`` for ``v = 1``.
    Both classes have the form of :func:`pivot_grid` (a report different from ``v`` is ``d``
    with a fixed probability, ``pbar / ((k - 1) pbar) = 1 / (k - 1)`` for the pivot class and
    ``p / (p + (k - 2) pbar)`` for the other), so the pivot class is :func:`class_grid` and the
    other class is added by :func:`add_classes` (direct 2-D convolution of its
    :func:`class_grid` or one user at a time, whichever is cheaper), with the error model of the module docstring (dropped mass at
    most about ``e^log_tol``). ``None`` when neither fits its budget.
    """
    rows = rest_rows(k, eps0)
    counts = (c0, c1)
    v = 0 if c0 >= c1 else 1
    d = 1 - v
    t = log_tol - math.log(8.0)

    def row(x: int) -> tuple[float, float, float]:  # (v, d, o) coordinates of a user holding x
        r = rows[x]
        return r[v], r[d], r[2]

    R = class_grid(counts[v], *row(v), t)
    c_rest = counts[d]
    if c_rest == 0:
        return v, R
    out = add_classes(R, [(c_rest, row(d))], [class_grid(c_rest, *row(d), t)], t)
    return None if out is None else (v, out)


def dataset_log_hockey_rest(k: int, eps0: float, c0: int, c1: int, eps: float, log_tol: float):
    """``((up, low) of log H(P || Q), (up, low) of log H(Q || P))``: ``k >= 4``, others only at 0 and 1.

    ``P`` / ``Q``: the release when the target holds 0 / 1 and ``c0`` / ``c1`` other users hold 0
    / 1. The release is the full histogram; the values of ``rest = {2, ..., k - 1}`` are held by
    nobody, every user reports each of them with the same probability ``pbar`` whatever it
    holds, so given the total ``h_rest`` in ``rest`` the split inside it is uniform multinomial
    under both ``P`` and ``Q``: ``P(h) = P3(h0, h1, h_rest) Mult(split | h_rest)``, likewise for
    ``Q`` with the *same* factor, hence ``sum_h (P(h) - E Q(h))_+ = sum (P3 - E Q3)_+`` (the factor
    sums to 1 over the splits). The divergence is that of the three-category law (the exact
    sufficient statistic of :mod:`~shuffle_accounting.shuffled_krr.exact`), computed from
    :func:`fixed_law_rest` and :class:`Hockey` with the target's rows from :func:`rest_rows`.
    ``None`` when :func:`fixed_law_rest` is over budget.
    """
    if eps >= eps0:
        return (-math.inf, -math.inf), (-math.inf, -math.inf)
    res = fixed_law_rest(k, eps0, c0, c1, log_tol)
    if res is None:
        return None
    v, R = res
    rows = rest_rows(k, eps0)
    d = 1 - v
    pi0 = (rows[0][v], rows[0][d], rows[0][2])
    pi1 = (rows[1][v], rows[1][d], rows[1][2])
    return Hockey(R, pi0, pi1).bounds(eps), Hockey(R, pi1, pi0).bounds(eps)


# ---------------------------------------------------------------------------------------------
# k >= 4, other users at the target's value 0 and at one value v >= 2 (nobody at 1)
# ---------------------------------------------------------------------------------------------


def dataset_log_hockey_zero_v(k: int, eps0: float, c0: int, cv: int, eps: float, log_tol: float):
    """``((up, low) of log H(P || Q), (up, low) of log H(Q || P))``: ``c0`` others at 0, ``cv`` at ``v >= 2``.

    ``k >= 4``; nobody else holds 1 (the target's value in ``D'``). Let ``W = {1} u Z`` with ``Z``
    the ``k - 3`` values held by nobody. Every *other* user reports each value of ``W`` with
    probability ``pbar`` (it holds 0 or ``v``), so the others' reports give the three-category
    law ``O(h0, hv, M)`` (``M`` = their reports in ``W``, probability ``(k - 2) pbar`` each) of
    :func:`fixed_law_rest` (``0 -> 0``, ``1 -> v``, ``rest -> W``), and given ``M`` their split
    inside ``W`` is uniform: ``h1 ~ Bin(M, 1/(k - 2))`` (=: ``b_M``) and the rest of ``W``
    uniform on ``Z`` (ancillary, the same under ``P`` and ``Q``; merged as in
    :mod:`~shuffle_accounting.shuffled_krr.exact`). Add the target. With ``O_0, O_v, O_W`` the
    others' law at the histogram minus a report ``0``, ``v`` or one in ``W``, and the identities
    ``b_{M-1}(h1 - 1) = b_M(h1) (k - 2) h1 / M``, ``b_{M-1}(h1) = b_M(h1) (k - 2)(M - h1) / ((k - 3) M)``:

        P(h0, h1, hv, M) = b_M(h1) [p O_0 + pbar O_v + (k - 2) pbar O_W]            =: b_M(h1) Pp
        Q(h0, h1, hv, M) = b_M(h1) [pbar O_0 + pbar O_v + (k - 2) O_W (p h1 + pbar (M - h1)) / M]
                         = b_M(h1) [Qc + beta h1],   Qc = pbar (O_0 + O_v + (k - 2) O_W),
                                                     beta = (k - 2)(p - pbar) O_W / M

    (the target holding 0 reports 0 w.p. ``p`` and each other value w.p. ``pbar``; holding 1, it
    reports 1 w.p. ``p``). So, summed over ``h1`` for one ``(h0, hv, M)``,

        sum_h1 (P - E Q)_+ = E[(Pp - E Qc - E beta X)_+],   sum_h1 (Q - E P)_+ = E[(Qc - E Pp + beta X)_+],

    ``X ~ Bin(M, 1/(k - 2))``: ``E beta E[(s - X)_+]`` and ``beta E[(X - t)_+]`` with
    ``s = (Pp - E Qc)/(E beta)``, ``t = (E Pp - Qc)/beta``, from two binomial tails each
    (:func:`_log_lower_excess`, :func:`_log_upper_excess`; ``M = 0`` or ``O_W = 0``: the positive
    part of the constant). Both are non-decreasing in ``Pp`` (resp. ``Qc``), non-increasing in
    ``Qc`` and ``beta`` (resp. ``Pp``) and non-decreasing in ``beta`` for the second, so the
    error model of :class:`Hockey` applies cell by cell: the upper bound puts ``O~ (1 + rho)``
    where a term grows and ``O~ (1 - rho)`` where it shrinks (``rho`` the grid's relative error
    plus ``16 * 2u`` for the coefficients), moves the threshold outward by its rounding, and adds
    the dropped mass ``d`` (the mass ``P`` loses to the window; the ``h1`` split carries no
    truncation); the lower bound takes the other ends and subtracts ``E d`` (``Q``'s excess over
    its window values sums to at most ``d``: the weights of ``O_0, O_v, O_W`` in ``Q``, summed
    over ``h1``, are ``pbar, pbar, p + (k - 3) pbar``). Tails carry :data:`TAIL_REL`; the final
    sums of ``L`` non-negative terms are rounded outward by ``(L + 4) 4u``. Cells whose terms are
    negligible skip their tails: each cell's exact term, in both directions, is at most
    ``Pp + Qc + (p - pbar) O_W`` at the upper ends (``E[(a - b X)_+] <= a_+`` and
    ``E[(c + b X)_+] <= c_+ + b E X``), so the smallest such caps whose sum stays below
    ``e^log_tol`` are replaced by that sum in the upper bounds and omitted from the lower ones.

    Returns ``None`` when :func:`fixed_law_rest` is over budget.
    """
    if k < 4:  # pragma: no cover - callers pass k >= 4 (k = 3 is dataset_log_hockey_k3)
        raise ValueError(f"k must be >= 4 here, got {k}")
    if eps >= eps0:
        return (-math.inf, -math.inf), (-math.inf, -math.inf)
    res = fixed_law_rest(k, eps0, c0, cv, log_tol)
    if res is None:
        return None
    piv, R = res  # pivot 0: (d, o) = (v, W); pivot 1 (= v): (d, o) = (0, W)
    rows, cols = R.arr.shape
    s00 = np.zeros((rows + 1, cols + 1))
    s11, s10 = s00.copy(), s00.copy()
    s00[:-1, :-1] = R.arr
    s11[1:, 1:] = R.arr
    s10[1:, :-1] = R.arr
    O0, Ov = (s00, s11) if piv == 0 else (s11, s00)
    OW = s10
    N = R.n_lo + np.arange(rows + 1, dtype=float)
    J = R.j_lo + np.arange(cols + 1, dtype=float)
    M = N[:, None] - J[None, :]  # reports in W (= o) of the full histogram
    lp = -math.log1p((k - 1) * math.exp(-eps0))
    lq = lp - eps0
    p, pbar = math.exp(lp), math.exp(lq)
    E = math.exp(eps)
    rho = R.rel + 16.0 * _U
    # cells whose terms are negligible skip the tails: each term (both directions) is at most
    # cap = ((1 + p) O_0 + 2 pbar O_v + ((k - 2) 2 pbar + p) O_W)(1 + rho) + err >= Pp + Qc + p O_W
    # (up to rounding, hence the (1 + 64u)); the smallest caps summing to <= e^log_tol are skipped,
    # their sum added to the upper bounds (the lower bounds just omit them)
    cap = ((1.0 + p) * O0 + 2.0 * pbar * Ov + ((k - 2) * 2.0 * pbar + p) * OW) * (1.0 + rho + 64.0 * _U)
    cap = cap * (1.0 + 16.0 * _U * (1.0 + E))
    live = (M >= 0) & (cap > 0)
    O0, Ov, OW, M, cap = O0[live], Ov[live], OW[live], M[live], cap[live]
    order = np.argsort(cap, kind="stable")
    cs = np.cumsum(cap[order]) * (1.0 + (cap.size + 4) * _U)
    n_skip = int(np.searchsorted(cs, math.exp(min(log_tol - R.scale, 700.0)), side="right"))
    n_skip = min(n_skip, cap.size - 1)
    log_skip = math.log(float(cs[n_skip - 1])) + R.scale if n_skip > 0 else -math.inf
    keep = order[n_skip:]
    O0, Ov, OW, M = O0[keep], Ov[keep], OW[keep], M[keep]
    Pp = p * O0 + pbar * Ov + (k - 2) * pbar * OW
    Qc = pbar * (O0 + Ov + (k - 2) * OW)
    err = 16.0 * _U * (Pp + E * Qc)
    slope = (k - 2) * pbar * math.expm1(eps0)  # (k - 2)(p - pbar), no cancellation
    has_x = (OW > 0) & (M >= 1)
    Mx = np.where(has_x, M, 1.0)
    b_hi = np.where(has_x, slope * OW / Mx * (1.0 + rho), 0.0)
    b_lo = np.where(has_x, slope * OW / Mx * (1.0 - rho), 0.0)
    l2, l2c = -math.log(k - 2), math.log((k - 3) / (k - 2))
    r_up, r_lo = math.log1p(rho), math.log1p(-rho)

    def finish(up_terms: np.ndarray, low_terms: np.ndarray) -> tuple[float, float]:
        L = up_terms.size
        up = float(logsumexp(up_terms)) if L else -math.inf
        up = float(logsumexp([up + R.scale + 4.0 * _U * (L + 4), R.log_drop, log_skip]))
        low = float(logsumexp(low_terms)) if low_terms.size else -math.inf
        log_low = -math.inf
        if low > -math.inf:
            ll = low + R.scale - 4.0 * _U * (L + 4)
            corr = eps + R.log_drop
            if corr < ll:
                log_low = ll + math.log(-math.expm1(corr - ll))
        return min(up, 0.0), min(log_low, up)

    with np.errstate(divide="ignore", invalid="ignore"):
        # forward: E[(A - E beta X)_+], A = Pp - E Qc
        A_up = Pp * (1.0 + rho) - E * Qc * (1.0 - rho) + err
        A_lo = Pp * (1.0 - rho) - E * Qc * (1.0 + rho) - err
        Bu, Bl = E * b_lo, E * b_hi  # the upper bound uses the smaller slope
        const_up = np.where(~has_x & (A_up > 0), np.log(np.maximum(A_up, 0.0)), -np.inf)
        const_lo = np.where(~has_x & (A_lo > 0), np.log(np.maximum(A_lo, 0.0)), -np.inf)
        s_up = _up(np.where(has_x, A_up / np.where(has_x, Bu, 1.0), 0.0))
        s_lo = _down(np.where(has_x, A_lo / np.where(has_x, Bl, 1.0), 0.0))
        xu, _ = _log_lower_excess(Mx, l2, l2c, s_up)
        _, xl = _log_lower_excess(Mx, l2, l2c, s_lo)
        fu = np.where(has_x, np.log(Bu) + xu + r_up, const_up)
        fl = np.where(has_x, np.log(Bl) + xl + r_lo, const_lo)
        fwd = finish(fu, fl)
        # reverse: E[(C + beta X)_+], C = Qc - E Pp
        C_up = Qc * (1.0 + rho) - E * Pp * (1.0 - rho) + err
        C_lo = Qc * (1.0 - rho) - E * Pp * (1.0 + rho) - err
        const_up = np.where(~has_x & (C_up > 0), np.log(np.maximum(C_up, 0.0)), -np.inf)
        const_lo = np.where(~has_x & (C_lo > 0), np.log(np.maximum(C_lo, 0.0)), -np.inf)
        t_up = _down(np.where(has_x, -C_up / np.where(has_x, b_hi, 1.0), 0.0))
        t_lo = _up(np.where(has_x, -C_lo / np.where(has_x, b_lo, 1.0), 0.0))
        xu, _ = _log_upper_excess(Mx, l2, l2c, t_up)
        _, xl = _log_upper_excess(Mx, l2, l2c, t_lo)
        ru = np.where(has_x, np.log(b_hi) + xu + r_up, const_up)
        rl = np.where(has_x, np.log(b_lo) + xl + r_lo, const_lo)
        rev = finish(ru, rl)
    return fwd, rev
