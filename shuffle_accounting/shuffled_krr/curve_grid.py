"""The certified log delta of shuffled k-RR on an ascending grid of eps, without dp_accounting.

This is the dp_accounting-free half of :mod:`~shuffle_accounting.shuffled_krr.accountant`: the
certified curve that the accountant turns into a pessimistic PLD, and that single-round
calibration (:mod:`~shuffle_accounting.shuffled_krr.calibration`) searches directly. Keeping it
here lets the single-round paths (``shuffle-accounting report`` with defaults, ``calibrate_eps0``
with ``rounds = 1``) run without importing dp_accounting (about a second of start-up: it pulls
in ``scipy.signal`` and ``scipy.stats``).

:func:`certified_grid_log_delta` returns an upper bound on ``log delta(eps)`` at every grid
point (see its docstring for the floor at ``e^-120``, the k = 2 worst case and the fast
evaluator). :func:`progress_bar` is the tqdm bar shown only on a terminal.

Example:
    >>> import numpy as np
    >>> v = certified_grid_log_delta(np.array([0.0, 0.5, 1.0]), 3, 1.0, 100)
    >>> bool(v[0] > v[1] > v[2]), float(v[2])
    (True, -inf)
"""

from __future__ import annotations

import functools
import math
import sys
from typing import Any

import numpy as np

__all__ = [
    "certified_grid_log_delta",
    "blanket_tables",
    "clear_tables_cache",
    "tighten_with_worst_case",
    "progress_bar",
    "DEFAULT_VALUE_DISCRETIZATION_INTERVAL",
    "WINDOW_LOG_FLOOR",
]

#: dp_accounting's default loss-grid step.
DEFAULT_VALUE_DISCRETIZATION_INTERVAL: float = 1e-4
#: :func:`certified_grid_log_delta` resolves values down to about ``e^WINDOW_LOG_FLOOR`` exactly;
#: from the first grid point below it on, every point below ``eps0`` takes that point's value.
WINDOW_LOG_FLOOR: float = -120.0

#: :func:`tighten_with_worst_case` applies the k = 2 worst case where the curve is above this.
WORST_CASE_LOG_FLOOR: float = -60.0
#: Smallest eps0 the one-pass grid evaluator takes (below, the one-point evaluators).
GRID_EPS0_MIN: float = 1e-6
_GRID_CHUNK = 16  # grid points per progress-bar step (large n only)
_FAST_RTOL = 1e-3  # blanket_fast: certified within 1e-3 (relative) of the exact blanket curve
_PROGRESS_MIN_N = 10**6  # curve builds from this many users on show a progress bar on a terminal
_WC_GRID_MAX_N = 10_000  # k = 2: the PLD uses the worst-case grid up to this many users (cost)
_WC_MAX_EVALS = 400  # k = 2 worst case: work budget of the one-pass cover (then the blanket value)


def progress_bar(total: int, desc: str, enabled: bool | None):
    """A tqdm bar on stderr when ``enabled`` (``None``: only when stderr is a terminal); else inert."""
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = bool(getattr(sys.stderr, "isatty", lambda: False)())
    return tqdm(total=total, desc=desc, disable=not enabled, leave=False, file=sys.stderr)


def blanket_tables(
    k: int, eps0: float, n: int, block_rtol: float = _FAST_RTOL, log_floor: float = WINDOW_LOG_FLOOR
) -> Any:
    """The one-pass grid evaluator of ``(k, eps0, n)`` (memoised), or ``None`` where it does not apply.

    :class:`~shuffle_accounting.shuffled_krr.blanket_tables.BlanketTables` covers ``n >= 2``,
    ``GRID_EPS0_MIN <= eps0 <= EPS0_GRID_MAX`` and a non-degenerate blanket; elsewhere the
    one-point evaluators are used. The tables are kept (four entries), so the passes of one PLD
    build, calibration steps at the same ``(k, eps0, n)`` and repeated questions share them.
    ``block_rtol`` and ``log_floor`` are the tables' tightness settings (any values are sound):
    values above ``e^log_floor`` are resolved, lower ones are only bounded.
    """
    from .blanket import blanket_degenerate
    from .blanket_tables import EPS0_GRID_MAX

    if n < 2 or not (GRID_EPS0_MIN <= eps0 <= EPS0_GRID_MAX) or blanket_degenerate(k, eps0):
        return None
    return _blanket_tables_cached(k, float(eps0), int(n), float(block_rtol), float(log_floor))


@functools.lru_cache(maxsize=4)
def _blanket_tables_cached(k: int, eps0: float, n: int, block_rtol: float, log_floor: float) -> Any:
    from .blanket_tables import BlanketTables

    return BlanketTables(k, eps0, n, block_rtol=block_rtol, log_floor=log_floor)


def clear_tables_cache() -> None:
    """Forget the memoised tables of :func:`blanket_tables` (benchmarks time cold builds)."""
    _blanket_tables_cached.cache_clear()


def _worst_case_log_delta_grid(eps: np.ndarray, eps0: float, n: int) -> np.ndarray:
    """Certified worst-case log delta of shuffled binary RR (k = 2) on a grid (``+inf``: unknown).

    One branch-and-bound cover certifies the whole grid
    (:func:`~shuffle_accounting.shuffled_krr.worst_case.certified_log_delta_grid`): every value is
    ``>= sup_D log delta_D(eps)`` at its point. ``+inf`` (no information: the caller keeps the
    blanket value) where the branch and bound exceeds its work budget.
    """
    from .worst_case import WorkBudgetExceeded, certified_log_delta_grid

    try:
        return np.asarray(certified_log_delta_grid(eps, eps0, n, max_evals=_WC_MAX_EVALS), dtype=float)
    except WorkBudgetExceeded:
        return np.full(eps.shape, np.inf)


def _blanket_points(
    x: np.ndarray, mech: Any, bl: Any, rtol: float = _FAST_RTOL, fast: Any = None
) -> np.ndarray:
    """Certified blanket log delta on an ascending array of eps < eps0 (one pass).

    Below :data:`~shuffle_accounting.shuffled_krr.mechanism.FAST_BLANKET_MIN_N` users: the exact
    one-pass grid evaluator (:func:`~shuffle_accounting.shuffled_krr.blanket.certified_log_delta_grid`).
    From there on: the sub-linear :func:`~shuffle_accounting.shuffled_krr.blanket_fast.certified_log_delta_grid`,
    (certified, and within ``rtol`` (default ``_FAST_RTOL`` = 1e-3) of the exact curve,
    relatively: below the accountant hull's 0.5 % chords; 2.5 times faster than 1e-4 at
    n = 1e6), every value of which is checked against the closed-form one-outcome
    exhibited lower bound
    (``ShuffledKRR._one_outcome_log_delta``); where it is below it (a known defect of that module
    near ``eps0``), NaN, or the module fails, the exact evaluator recomputes that point.
    """
    from . import blanket_fast
    from .blanket import certified_log_delta, certified_log_delta_grid
    from .mechanism import FAST_BLANKET_MIN_N

    k, eps0, n = mech.k, mech.eps0, mech.n
    if x.size == 0:
        return np.zeros(0)
    if bl is None:  # n = 1 or a degenerate blanket (blanket.blanket_degenerate): the closed form
        return certified_log_delta_grid(x, k, eps0, n, log_delta_floor=WINDOW_LOG_FLOOR)
    if n < FAST_BLANKET_MIN_N:
        return bl.certified_many(x, WINDOW_LOG_FLOOR)  # x ascending, < eps0: the grid's core
    try:
        v = np.asarray(
            blanket_fast.certified_log_delta_grid(x, k, eps0, n, rtol=rtol, evaluator=fast), dtype=float
        )
    except (ValueError, ArithmeticError):
        v = np.full(x.shape, np.nan)
    bad = ~(v >= mech._one_outcome_log_delta(x))  # NaN included
    if np.any(bad):
        v = v.copy()
        v[bad] = certified_log_delta(x[bad], k, eps0, n, log_delta_floor=WINDOW_LOG_FLOOR)
    return v


def _probe(x: float, mech: Any, bl: Any, rtol: float, fast: Any) -> float:
    """Certified log delta at one eps; a cheap Chernoff bound when that already shows it is tiny.

    ``delta(eps) = sum (P - e^eps Q)_+ <= P(L > e^eps)`` (every positive term is at most its
    ``P`` mass), and the blanket's joint Chernoff bound with an always-true side constraint
    (``T >= 0``) bounds ``P(L > e^eps)``: when it is below ``e^WINDOW_LOG_FLOOR`` it is returned
    (a certified upper bound, as good as any below the floor), else the full evaluation.
    """
    cb = bl._log_joint_chernoff(x, "T>", 0.0) if bl is not None else math.inf
    if cb < WINDOW_LOG_FLOOR:
        return float(cb)
    return float(_blanket_points(np.array([x]), mech, bl, rtol, fast)[0])


def _floor_index(
    x: np.ndarray, mech: Any, bl: Any, rtol: float, fast: Any
) -> tuple[int, float, dict[int, float]]:
    """``(j, value, probed)``: a point of the ascending ``x`` whose certified value is below the
    floor, the points before it not (as far as probed); ``(x.size, nan, probed)`` if none.

    Exponential then binary search over the indices (the certified curve is non-increasing up
    to rounding; any index found serves, see :func:`certified_grid_log_delta`). ``probed`` maps
    every probed index to its certified value: those before ``j`` are full evaluations, which
    the caller keeps instead of evaluating them again.
    """
    vals: dict[int, float] = {}

    def below(i: int) -> bool:
        if i not in vals:
            vals[i] = _probe(float(x[i]), mech, bl, rtol, fast)
        return vals[i] < WINDOW_LOG_FLOOR

    lo, hi, step = -1, None, 1
    while True:
        i = min(lo + step, x.size - 1)
        if below(i):
            hi = i
            break
        lo = i
        if i == x.size - 1:
            return x.size, math.nan, vals
        step *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if below(mid):
            hi = mid
        else:
            lo = mid
    return hi, vals[hi], vals


def certified_grid_log_delta(
    eps: np.ndarray,
    k: int,
    eps0: float,
    n: int,
    *,
    worst_case: bool = True,
    blanket: Any = None,
    floor_search: bool | None = None,
    fast_rtol: float = _FAST_RTOL,
    fast: Any = None,
    use_grid: bool = True,
    table_floor: float = WINDOW_LOG_FLOOR,
) -> np.ndarray:
    """Certified log delta on an ascending grid.

    Where the one-pass tables apply (:func:`blanket_tables`; ``use_grid=True``, the default) every
    live point is evaluated from them in one pass (``fast_rtol`` sets their block tolerance,
    ``table_floor`` their resolution floor), then the k = 2 worst case, the cap at 1 and the
    soundness check below follow; the rest of this docstring describes the fallback (and the
    former) path, used elsewhere, which stops once the curve is below e^WINDOW_LOG_FLOOR.

    ``delta`` is non-increasing in ``eps``, so once ``delta_c(e) <= e^WINDOW_LOG_FLOOR`` that value
    is an upper bound at every larger grid point below ``eps0`` (where delta is exactly 0): such
    points are filled with it instead of being evaluated. Masses this small move no practical
    epsilon, and the curve stays a pointwise upper bound. Such a point is located first
    (:func:`_floor_index`, a few single evaluations, most of them a cheap Chernoff bound), then
    every grid point before it is evaluated in one pass (:func:`_blanket_points`). For ``k = 2``
    and ``2 <= n <= 10 000`` (``_WC_GRID_MAX_N``: the one-pass cover's cost)
    the value at the points whose blanket value is at least ``e^WINDOW_LOG_FLOOR`` is the
    pointwise minimum with the certified worst case
    (:func:`_worst_case_log_delta_grid`; the module docstring says why composition may use it),
    unless ``worst_case=False`` (the privacy-blanket curve alone). ``blanket`` (a
    ``blanket.BlanketEvaluator`` of the same ``(k, eps0, n)``) lets successive calls share its windows.
    ``floor_search=False`` skips the search (every point is evaluated in the one pass: for a
    caller that knows the points lie above the floor); ``None`` (default) searches only from
    ``FAST_BLANKET_MIN_N`` users on: below, the exact one-pass evaluator takes the floor itself
    (its dropped-mass criterion is relative to ``max(value, e^WINDOW_LOG_FLOOR)``) and is about
    twice as fast on the whole grid as the probes (single evaluations) are; from there on the
    sub-linear evaluator is slow in large-deviation regimes, which the search avoids. The
    probes' full evaluations are kept, not repeated. ``fast_rtol`` is the certified relative
    tolerance of the sub-linear evaluator (``n >= FAST_BLANKET_MIN_N``): a larger one is faster
    and looser, never below the exact curve. ``fast`` (a ``blanket_fast.FastBlanketEvaluator``
    of the same ``(k, eps0, n)``) lets successive calls share its tables and learnt block
    widths. Every returned value is checked against the one-outcome exhibited lower bound
    (``SoundnessError`` if below: a bug).
    """
    from .blanket import BlanketEvaluator, blanket_degenerate
    from .mechanism import FAST_BLANKET_MIN_N, ShuffledKRR

    e = np.asarray(eps, dtype=float)
    if e.ndim != 1 or np.any(np.diff(e) < 0):
        raise RuntimeError("internal: the grid must be one-dimensional and ascending")  # pragma: no cover
    out = np.full(e.shape, -np.inf)
    live = np.nonzero(e < eps0)[0]  # delta is exactly 0 from eps0 on
    if live.size == 0:
        return out
    mech = ShuffledKRR(k, eps0, n)
    x = e[live]
    grid = blanket_tables(k, eps0, n, fast_rtol, table_floor) if use_grid else None
    if grid is not None:
        # one pass over the whole grid (every point evaluated: no floor search is needed)
        out[live] = grid.log_delta(x)
        return _finish(out, e, live, live, k, eps0, n, worst_case, mech)
    exact_sum = n > 1 and not blanket_degenerate(k, eps0)
    bl = (blanket if blanket is not None else BlanketEvaluator(k, eps0, n)) if exact_sum else None
    if fast is None and exact_sum and n >= FAST_BLANKET_MIN_N:
        from .blanket_fast import FastBlanketEvaluator

        fast = FastBlanketEvaluator(k, eps0, n)  # shared by the probes and the one pass
    if floor_search is None:
        floor_search = n >= FAST_BLANKET_MIN_N
    if floor_search:
        j, val_j, probed = _floor_index(x, mech, bl, fast_rtol, fast)
    else:
        j, val_j, probed = x.size, math.nan, {}
    if j < x.size:
        out[live[j:]] = val_j
    done = np.array(sorted(i for i in probed if i < j), dtype=np.int64)
    if done.size:  # full evaluations made by the probes: kept, not evaluated again
        out[live[done]] = [probed[int(i)] for i in done]
    todo = np.setdiff1d(live[:j], live[done], assume_unique=True)
    show = None if n >= _PROGRESS_MIN_N else False
    with progress_bar(todo.size, f"shuffled k-RR curve (n={n})", show) as bar:
        step = _GRID_CHUNK if n >= _PROGRESS_MIN_N else max(todo.size, 1)
        for start in range(0, todo.size, step):
            idx = todo[start : start + step]
            val = _blanket_points(e[idx], mech, bl, fast_rtol, fast)
            if np.any(np.isnan(val)) or np.any(val == np.inf):
                raise RuntimeError(  # pragma: no cover - guards the dependency's contract
                    f"certified blanket log delta is NaN or +inf for k={k}, eps0={eps0}, n={n}"
                )
            out[idx] = val
            bar.update(idx.size)
    sel = live[: j + 1] if j < x.size else live
    return _finish(out, e, live, sel, k, eps0, n, worst_case, mech)


def tighten_with_worst_case(
    eps: np.ndarray, log_delta: np.ndarray, k: int, eps0: float, n: int
) -> np.ndarray:
    """``log_delta`` (blanket upper bounds on an ascending grid) lowered to the k = 2 worst case.

    Where it applies (``k = 2``, ``2 <= n <= 10 000``) and where the value is at least
    ``e^WORST_CASE_LOG_FLOOR``: the pointwise minimum with the certified worst case, one
    branch-and-bound cover for all those points (the accountant's module docstring says why
    composition may use it). Elsewhere the values are returned unchanged. Both are upper bounds,
    so the minimum is one. (The floor: the cover's cost is mostly in the far tail, and values
    below e^-60 do not move a composed epsilon: k = 2, eps0 = 1, 100 rounds, delta = 1e-9 at
    n = 1000 and 1e4 agree with the e^-120 floor to 1e-7, in a third of the time.)
    """
    out = np.array(log_delta, dtype=float)
    if k == 2 and 2 <= n <= _WC_GRID_MAX_N:
        e = np.asarray(eps, dtype=float)
        sel = np.nonzero((out >= WORST_CASE_LOG_FLOOR) & (e < eps0))[0]
        if sel.size:
            out[sel] = np.minimum(out[sel], _worst_case_log_delta_grid(e[sel], eps0, n))
    return out


def _finish(
    out: np.ndarray,
    e: np.ndarray,
    live: np.ndarray,
    sel: np.ndarray,
    k: int,
    eps0: float,
    n: int,
    worst_case: bool,
    mech: Any,
) -> np.ndarray:
    """The k = 2 worst case where it applies (at ``sel``), the cap at 1 and the soundness check."""
    if worst_case and k == 2 and 2 <= n <= _WC_GRID_MAX_N:
        # only where the blanket value is above the floor: below it the value is already
        # negligible for composition, and there the worst case's windows (sized for the smallest
        # delta on its grid) cost most of the cover (n = 1e4, eps0 = 1: 10 s of 12 s)
        sel = sel[out[sel] >= WINDOW_LOG_FLOOR]
        if sel.size:
            out[sel] = np.minimum(out[sel], _worst_case_log_delta_grid(e[sel], eps0, n))
    # delta <= 1 always holds, so capping an upper bound at 1 keeps it an upper bound.
    out = np.minimum(out, 0.0)
    mech._check_log_delta(e[live], out[live])
    return out
