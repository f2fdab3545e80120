"""Calibration of shuffled k-RR deployments against a central (epsilon, delta) target.

* :func:`calibrate_eps0` — the largest local ``eps0`` whose certified central epsilon at ``delta``
  (after ``rounds`` releases) is at most ``epsilon``.
* :func:`min_users` — the smallest population ``n`` that meets the target.

Both answers are **verified**: the returned value is one at which the target was certified, either
by an evaluation of the certified bound or by the pure-DP argument below. They are sound
(``eps0`` rounded down, ``n`` rounded up) whatever the shape of the certified curve; they are also
optimal (to the bisection tolerance, resp. exactly) when the certified bound is monotone in the
searched parameter, which holds for the exact privacy-blanket divergence:

* in ``n``: one more user is, in the blanket view, with probability ``gamma`` one more uniform
  report and otherwise a report the adversary already knows — an independent addition the
  adversary could simulate, i.e. a post-processing — so ``delta(eps)`` is non-increasing in ``n``;
* in ``eps0``: the search assumes the (numerically observed) monotonicity; if it failed the answer
  would still be certified, only possibly not the largest.

Certificates used. ``rounds == 1``: ``certified_log_delta(epsilon) <= log(delta)`` (the
single-shot privacy-blanket bound, Balle, Bell, Gascón, Nissim, *The Privacy Blanket of the Shuffle
Model*, CRYPTO 2019, evaluated exactly — no composition loss). ``rounds > 1``: the pessimistic PLD
composition of :class:`~shuffle_accounting.shuffled_krr.accountant.ShuffleAccountant`. In both cases
also the pure-DP fact: shuffled k-RR is ``eps0``-DP (post-processing of local DP), so ``rounds``
releases are ``(rounds * eps0, 0)``-DP by basic composition.

Work (``rounds > 1``; each evaluation is a PLD build, memoised per parameter): the searches
first bracket the answer with the accountant's ``PLANNING_RESOLUTION`` PLD (the certified curve
sampled at fewer points: still an upper bound, about 1 % looser in epsilon, several times
cheaper), to about 1 %; then they continue with the default PLD from that bracket, starting at
the root predicted from the planning values' slope, and take secant/bisection steps until the
default PLD's own evaluations bracket the answer. Only default-PLD evaluations (or pure DP)
decide the returned value, so it is the one a default ``ShuffleAccountant`` certifies; a planning
PLD far off would cost steps, never soundness (tested).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validation import ParameterError, check_delta, check_int, check_real
from .blanket import EPS0_MIN, K_MAX, N_MAX, certified_log_delta, check_krr_parameters
from .curve_grid import DEFAULT_VALUE_DISCRETIZATION_INTERVAL, WINDOW_LOG_FLOOR
from .curve_grid import certified_grid_log_delta as _certified_log_delta
from .curve_grid import progress_bar as _progress_bar
from .mechanism import FAST_BLANKET_MIN_N

__all__ = ["calibrate_eps0", "min_users", "EPS0_CAP", "N_CAP"]

#: Largest local eps0 :func:`calibrate_eps0` searches; if even this meets the target it says so.
EPS0_CAP: float = 30.0
#: Largest population :func:`min_users` searches.
N_CAP: int = 10**8

_MAX_BISECTIONS = 200  # more than the 64 halvings that exhaust any bracket of doubles
_DELTA_MARGIN = 1e-9  # certify delta_c <= delta * (1 - 1e-9): outward against log/exp rounding
_MIN_STEP = 0.02  # a secant trial stays this fraction of the bracket inside it


def single_round_epsilon(k: int, eps0: float, n: int, delta: float) -> float:
    """Smallest grid-searched eps with certified blanket delta_c(eps) <= delta, rounded UP (an evaluated point).

    Vectorised bracketing search: each call evaluates 65 points of the bracket, so four or five
    calls bring it below ``1e-9 * eps``; the returned value is the upper end, where the bound was
    evaluated and met (``0.0`` if it is met at ``eps = 0``).
    """
    log_target = math.log(delta) + math.log1p(-_DELTA_MARGIN)
    if _certified_log_delta(np.zeros(1), k, eps0, n, worst_case=False)[0] <= log_target:
        return 0.0
    lo, hi = 0.0, eps0  # delta_c(eps0) = 0: the loss of the blanket pair is at most eps0
    if _certified_log_delta(np.array([hi]), k, eps0, n, worst_case=False)[0] > log_target:  # pragma: no cover
        raise RuntimeError("certified_log_delta must vanish at eps0")
    for _ in range(12):
        if hi - lo <= max(1e-12, 1e-10 * hi):
            break
        grid = np.linspace(lo, hi, 65)[1:-1]
        ok = _certified_log_delta(grid, k, eps0, n, worst_case=False) <= log_target
        if np.any(ok):
            first = int(np.argmax(ok))
            hi = float(grid[first])
            lo = float(grid[first - 1]) if first > 0 else lo
        else:
            lo = float(grid[-1])
    return hi


@functools.lru_cache(maxsize=512)
def composed_epsilon(
    k: int, eps0: float, n: int, delta: float, rounds: int, h: float, planning: bool = False
) -> float:
    """Certified epsilon of ``rounds`` releases (the accountant's PLD composition); memoised.

    A pure function of its arguments (the PLD of each release is itself memoised by the
    accountant), kept in a bounded cache so that the searches below, and repeated planning
    questions, never compose the same release twice. The accountant (and with it dp_accounting,
    about a second to import) is imported here, only when ``rounds > 1`` needs it. ``planning``:
    the accountant's cheaper, looser ``PLANNING_RESOLUTION`` grid (still an upper bound).
    """
    from .accountant import (  # noqa: PLC0415 - dp_accounting is slow to import
        DEFAULT_RESOLUTION,
        PLANNING_RESOLUTION,
        ShuffleAccountant,
        ShuffledKRRDpEvent,
    )

    res = PLANNING_RESOLUTION if planning else DEFAULT_RESOLUTION
    acc = ShuffleAccountant(value_discretization_interval=h, resolution=res)
    acc.compose(ShuffledKRRDpEvent(k=k, eps0=eps0, n=n), count=rounds)
    return acc.get_epsilon(delta)


def _excess(
    k: int, eps0: float, n: int, epsilon: float, delta: float, rounds: int, h: float, planning: bool = False
) -> float:
    """How far the target is missed at ``(eps0, n)``: ``<= 0`` iff (epsilon, delta) is certified.

    ``rounds * eps0 - epsilon`` where pure DP already certifies it (basic composition); else
    ``log delta_c(epsilon) - log(delta (1 - 1e-9))`` for one release (the certified blanket bound
    at one point) and ``epsilon_c - epsilon`` (the accountant's composed epsilon) for several.
    Non-decreasing in ``eps0`` and non-increasing in ``n`` wherever the certified curve is; only
    its sign certifies, its size only steers the search. ``planning``: the cheaper, looser PLD
    (a negative sign certifies too; the searches only bracket with it).
    """
    if rounds * eps0 <= epsilon:  # pure DP + basic composition
        return rounds * eps0 - epsilon
    if rounds == 1:
        log_target = math.log(delta) + math.log1p(-_DELTA_MARGIN)
        val = math.inf
        if n >= FAST_BLANKET_MIN_N:
            # the sub-linear certified curve (a Chernoff bound where that is already below
            # e^WINDOW_LOG_FLOOR): an upper bound, so a value <= the target certifies it; above
            # the target it decides unless both lie below the floor (the Chernoff value is not
            # tight there). The O(n) exact sum took 1-3 s per step at n = 1e6.
            val = float(_certified_log_delta(np.array([epsilon]), k, eps0, n, worst_case=False)[0])
            if val > log_target and val < WINDOW_LOG_FLOOR:
                val = math.inf
        if val == math.inf:
            val = float(certified_log_delta(np.array([epsilon]), k, eps0, n)[0])
        return val - log_target if val > -math.inf else -math.inf
    return (
        composed_epsilon(k, eps0, n, delta, rounds, h, planning) - epsilon
    )  # the public alias (tests patch it)


def feasible(k: int, eps0: float, n: int, epsilon: float, delta: float, rounds: int, h: float) -> bool:
    """True iff (epsilon, delta) is certified for ``rounds`` releases of shuffled k-RR(eps0) on n users."""
    return _excess(k, eps0, n, epsilon, delta, rounds, h) <= 0.0


def _next_point(lo: float, hi: float, f_lo: float | None, f_hi: float | None, nudge: float) -> float:
    """Next trial inside ``(lo, hi)``: the secant root of the bracket (bisection without values),
    moved by ``nudge`` towards the farther end so that the bracket closes from both sides.

    Only steers the search (every end of the bracket is certified by its own evaluation).
    """
    span = hi - lo
    x = 0.5 * (lo + hi)
    if f_lo is not None and f_hi is not None and math.isfinite(f_lo) and math.isfinite(f_hi) and f_hi > f_lo:
        x = lo + span * (-f_lo) / (f_hi - f_lo)
        x += nudge if hi - x > x - lo else -nudge
    return min(max(x, lo + _MIN_STEP * span), hi - _MIN_STEP * span)


def _check_common(epsilon, delta, rounds, h) -> tuple[float, float, int, float]:
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    delta = check_delta("delta", delta)
    rounds = check_int("rounds", rounds, minimum=1)
    h = check_real("value_discretization_interval", h, low=0.0, high=1.0, low_open=True)
    return epsilon, delta, rounds, h


def calibrate_eps0(
    k: int,
    n: int,
    epsilon: float,
    delta: float,
    rounds: int = 1,
    *,
    rtol: float = 1e-6,
    value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
    progress: bool | None = None,
) -> float:
    """Largest local ``eps0`` such that ``rounds`` shuffled k-RR releases on ``n`` users are (epsilon, delta)-DP.

    Bracketing search on ``eps0`` (secant steps on the certified excess, every third step a
    bisection) between a certified value (initially ``epsilon / rounds``, certified by pure DP)
    and an uncertified one, to relative width ``rtol``; the **certified end is returned**
    (rounded down). See the module docstring for the certificates.

    Args:
        k: Number of categories, an integer >= 2.
        n: Number of users, an integer >= 1.
        epsilon: Central target epsilon, finite and > 0.
        delta: Central target delta, in (0, 1).
        rounds: Number of releases composed, an integer >= 1.
        rtol: Relative bisection tolerance on ``eps0``, in (0, 0.1].
        value_discretization_interval: Loss-grid step of the PLD used when ``rounds > 1``.
        progress: Show a tqdm progress bar on stderr (keyword only; ``None``: only when stderr is
            a terminal, ``False``: never).

    Returns:
        ``eps0`` (a float in ``[epsilon / rounds, EPS0_CAP)``) at which the target is certified.

    Raises:
        ParameterError: For bad arguments, or if even ``eps0 = EPS0_CAP`` (30) meets the target
            (then local privacy is not what limits this deployment: pick eps0 for utility).

    Example:
        >>> eps0 = calibrate_eps0(k=2, n=100, epsilon=0.5, delta=1e-4)
        >>> 0.5 <= eps0 < 3.0
        True
        >>> from shuffle_accounting.shuffled_krr.calibration import single_round_epsilon
        >>> single_round_epsilon(2, eps0, 100, 1e-4) <= 0.5
        True
    """
    k = check_int("k", k, minimum=2, maximum=K_MAX)
    n = check_int("n", n, minimum=1, maximum=N_MAX)
    epsilon, delta, rounds, h = _check_common(epsilon, delta, rounds, value_discretization_interval)
    rtol = check_real("rtol", rtol, low=0.0, high=0.1, low_open=True)

    def excess(e0: float, planning: bool = False) -> float:
        if e0 < EPS0_MIN:  # below the supported range: certified only by pure DP
            return rounds * e0 - epsilon
        return _excess(k, e0, n, epsilon, delta, rounds, h, planning)

    lo0 = epsilon / rounds  # certified: rounds * lo <= epsilon
    unbounded = ParameterError(
        f"every eps0 up to EPS0_CAP = {EPS0_CAP} meets epsilon = {epsilon!r}, delta = {delta!r} "
        f"with k = {k}, n = {n}, rounds = {rounds}: local privacy does not limit this "
        "deployment; choose eps0 for utility"
    )
    if lo0 >= EPS0_CAP:
        raise unbounded
    with _progress_bar(_MAX_BISECTIONS, "calibrate eps0", progress) as bar:
        if rounds == 1:  # one release: the certified blanket bound at one point is cheap
            return _search_eps0(excess, lo0, rtol, bar, unbounded)
        # several releases: bracket with the cheap planning PLD, then search with the default
        # PLD from that bracket; only default evaluations decide the returned value
        plan = _search_eps0(
            lambda e0: excess(e0, True), lo0, max(rtol, _PLANNING_RTOL), bar, unbounded, full=True
        )
        return _search_eps0(excess, lo0, rtol, bar, unbounded, hint=plan)


_PLANNING_RTOL = 1e-2  # relative width of the planning bracket (the planning PLD is ~1 % looser)


def _search_eps0(excess, lo0: float, rtol: float, bar, unbounded: ParameterError, *, full=False, hint=None):
    """Largest ``eps0`` with ``excess(eps0) <= 0`` (evaluated), to relative width ``rtol``.

    ``lo0`` is certified (pure DP). Without ``hint``: a doubling search for an uncertified upper
    end, then bracketing secant steps (every third a bisection). With ``hint`` (a bracket
    ``(lo, f_lo, hi, f_hi)`` of another, looser certified excess): the search starts at the
    hint's certified end and steps outward along the hint's slope until this excess changes sign,
    then brackets as before. Returns the certified end, or with ``full`` the whole final bracket.
    """
    lo, f_lo = lo0, None
    hi = f_hi = None
    if hint is None:
        trial = min(2.0 * lo, EPS0_CAP)
        prev = None
        while True:  # doubling search for an uncertified upper end, extrapolating when it can
            f = excess(trial)
            bar.update(1)
            if f > 0.0:
                hi, f_hi = trial, f
                break
            if trial >= EPS0_CAP:
                raise unbounded
            if lo > lo0 and f_lo is not None:
                prev = (lo, f_lo)
            lo, f_lo = trial, f
            nxt = 2.0 * trial
            if prev is not None and math.isfinite(prev[1]) and math.isfinite(f) and f > prev[1]:
                root = lo - f * (lo - prev[0]) / (f - prev[1])  # secant root of the last two
                nxt = min(nxt, max(1.1 * root, 1.05 * lo))
            trial = min(nxt, EPS0_CAP)
    else:
        h_lo, h_flo, h_hi, h_fhi = hint
        slope = None
        if h_flo is not None and h_fhi is not None and math.isfinite(h_flo) and math.isfinite(h_fhi):
            slope = (h_fhi - h_flo) / (h_hi - h_lo) if h_fhi > h_flo else None
        x = h_lo
        if x > lo0:
            f = excess(x)
            bar.update(1)
            if f > 0.0:  # this excess is above the hint's here (never observed): search below
                hi, f_hi = x, f
        if hi is None:
            lo, f_lo = x, (f if x > lo0 else None)
            # just past the root predicted from the hint's slope (the two excesses differ by a
            # nearly constant shift): a bracket of width ~rtol when the prediction is good
            step = max(0.6 * rtol * lo, 1e-12)
            while hi is None:
                guess = lo - f_lo / slope if (slope and f_lo is not None and math.isfinite(f_lo)) else lo
                trial = min(max(guess, lo) + step, EPS0_CAP)  # just past the predicted root
                f = excess(trial)
                bar.update(1)
                if f > 0.0:
                    hi, f_hi = trial, f
                elif trial >= EPS0_CAP:
                    raise unbounded
                else:
                    lo, f_lo = trial, f
                    step *= 4.0
    # Bracketing secant steps (bisection while a value is missing) to relative width rtol; it
    # also stops when the bracket holds no double strictly inside it or after _MAX_BISECTIONS
    # steps. lo stays certified (its own evaluation, or pure DP).
    for step_no in range(_MAX_BISECTIONS):
        if hi - lo <= rtol * lo:
            break
        # every third step bisects: the bracket at least halves every three steps
        mid = _next_point(lo, hi, f_lo, f_hi, 0.4 * rtol * lo) if step_no % 3 != 2 else 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        f = excess(mid)
        bar.update(1)
        if f <= 0.0:
            lo, f_lo = mid, f
        else:
            hi, f_hi = mid, f
    return (lo, f_lo, hi, f_hi) if full else lo


def min_users(
    k: int,
    eps0: float,
    epsilon: float,
    delta: float,
    rounds: int = 1,
    *,
    value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
    progress: bool | None = None,
) -> int:
    """Smallest number of users ``n`` for which ``rounds`` shuffled k-RR(eps0) releases are (epsilon, delta)-DP.

    Doubling search for a certified ``n`` followed by an integer bracketing search (secant steps
    in ``log n``, every third step a bisection); the returned ``n`` is
    one at which the target was certified, and every smaller ``n`` tried failed (the certified
    bound is non-increasing in ``n``, see the module docstring). If ``rounds * eps0 <= epsilon``
    the answer is 1 (pure DP).

    Args:
        k: Number of categories, an integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        epsilon: Central target epsilon, finite and > 0.
        delta: Central target delta, in (0, 1).
        rounds: Number of releases composed, an integer >= 1.
        value_discretization_interval: Loss-grid step of the PLD used when ``rounds > 1``.
        progress: Show a tqdm progress bar on stderr (keyword only; ``None``: only when stderr is
            a terminal, ``False``: never).

    Returns:
        The smallest ``n`` (an ``int`` in ``[1, N_CAP]``) meeting the target.

    Raises:
        ParameterError: For bad arguments, or if more than ``N_CAP`` (1e8) users would be needed.

    Example:
        >>> n = min_users(k=2, eps0=1.0, epsilon=0.3, delta=1e-3)
        >>> from shuffle_accounting.shuffled_krr.calibration import single_round_epsilon
        >>> single_round_epsilon(2, 1.0, n, 1e-3) <= 0.3 < single_round_epsilon(2, 1.0, n - 1, 1e-3)
        True
    """
    k, eps0, _ = check_krr_parameters(k, eps0, 1)
    epsilon, delta, rounds, h = _check_common(epsilon, delta, rounds, value_discretization_interval)

    def excess(n: int, planning: bool = False) -> float:
        return _excess(k, eps0, n, epsilon, delta, rounds, h, planning)

    too_many = ParameterError(
        f"more than N_CAP = {N_CAP} users are needed for epsilon = {epsilon!r}, "
        f"delta = {delta!r} with k = {k}, eps0 = {eps0!r}, rounds = {rounds}; "
        "lower eps0 or relax the target"
    )
    with _progress_bar(_MAX_BISECTIONS, "minimum users", progress) as bar:
        if rounds == 1:
            f1 = excess(1)
            return 1 if f1 <= 0.0 else _search_n(excess, f1, bar, too_many)
        if rounds * eps0 <= epsilon or excess(1, True) <= 0.0:  # pure DP, or a planning certificate
            f1 = excess(1)  # only a default evaluation decides
            if f1 <= 0.0:
                return 1
        else:
            f1 = excess(1, True)  # > 0: n = 1 is below the answer (steers the search only)
        # several releases: bracket with the cheap planning PLD (to about 1 %), then the exact
        # integer search with the default PLD from there; only default evaluations decide
        plan = _search_n(lambda m: excess(m, True), f1, bar, too_many, rel=_PLANNING_RTOL)
        return _search_n(excess, f1, bar, too_many, hint=plan)


def _search_n(excess, f1: float, bar, too_many: ParameterError, *, rel: float = 0.0, hint=None):
    """Smallest ``n`` with ``excess(n) <= 0`` (evaluated); ``excess(1) = f1 > 0``.

    Without ``hint``: doubling search for a certified ``n``, then an integer bracketing search
    (secant steps in ``log n``, every third a bisection) until the bracket is ``(n - 1, n]``, or
    with ``rel > 0`` until its width is at most ``rel * n``; then the bracket
    ``(lo, f_lo, hi, f_hi)`` is returned. With ``hint`` (such a bracket of a looser certified
    excess) the search starts at the hint's ends and steps outward until this excess changes
    sign there.
    """
    lo, f_lo = 1, f1  # lo: not certified; hi: candidate
    if hint is None:
        hi = 2
        while True:
            f_hi = excess(hi)
            bar.update(1)
            if f_hi <= 0.0:
                break
            prev = (lo, f_lo)
            lo, f_lo = hi, f_hi
            if hi >= N_CAP:
                raise too_many
            nxt = 2 * hi
            if prev[0] > 1 and math.isfinite(prev[1]) and math.isfinite(f_hi) and prev[1] > f_hi:
                # secant root in log n of the last two points, overshot by 25 % (at most x16)
                root = math.log(lo) + f_hi * (math.log(lo) - math.log(prev[0])) / (prev[1] - f_hi)
                nxt = int(min(max(nxt, 1.25 * math.exp(min(root, 50.0))), 16 * hi))
            hi = min(nxt, N_CAP)
    else:
        h_lo, h_flo, h_hi, h_fhi = hint
        f_hi = excess(h_hi)
        bar.update(1)
        hi = h_hi
        while f_hi > 0.0:  # looser than this excess there (never observed): step up
            lo, f_lo = hi, f_hi
            if hi >= N_CAP:
                raise too_many
            hi = min(hi + max(2 * (h_hi - h_lo), 1), N_CAP, 2 * hi)
            f_hi = excess(hi)
            bar.update(1)
        width = max(h_hi - h_lo, 1)
        cand = h_lo
        if hi == h_hi and h_hi > h_lo and math.isfinite(h_flo) and math.isfinite(h_fhi) and h_flo > h_fhi:
            # predicted root of this excess: the hint's slope in log n through (h_hi, f_hi), one
            # user below it so that the trial lands on the uncertified side
            slope = (h_fhi - h_flo) / (math.log(h_hi) - math.log(h_lo))
            root = math.exp(math.log(h_hi) - f_hi / slope)
            cand = max(1, min(h_lo, int(math.floor(root)) - 1))
            width = max(1, h_hi - cand)
        while cand > 1:  # an uncertified lower end, stepping down from the hint's
            f = excess(cand)
            bar.update(1)
            if f > 0.0:
                lo, f_lo = cand, f
                break
            hi, f_hi = cand, f
            width *= 2
            cand = max(1, hi - width)
    # integer bracketing secant in log n (bisection without usable values): lo uncertified,
    # hi certified; the trial is moved by one user towards the farther end
    step = 0
    while hi - lo > max(1, int(rel * hi)):
        step += 1
        if step % 3 == 0:  # every third step bisects: the bracket at least halves every three
            mid = (lo + hi) // 2
        else:
            x = _next_point(math.log(lo), math.log(hi), -f_lo, -f_hi, 0.0)
            mid = min(max(int(round(math.exp(x))), lo + 1), hi - 1)
            mid = min(mid + 1, hi - 1) if hi - mid > mid - lo else max(mid - 1, lo + 1)
        f = excess(mid)
        bar.update(1)
        if f <= 0.0:
            hi, f_hi = mid, f
        else:
            lo, f_lo = mid, f
    return (lo, f_lo, hi, f_hi) if rel > 0.0 else hi
