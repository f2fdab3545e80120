"""Tight composition of shuffled k-RR (and dp_accounting's own events) through privacy-loss distributions.

Two public objects, both usable directly by dp_accounting users:

* :class:`ShuffledKRRDpEvent` — a frozen ``dp_accounting.DpEvent`` for one release of a shuffled
  k-RR histogram (``n`` users, ``k`` categories, local ``eps0``; neighbouring = replace one user's
  value).
* :class:`ShuffleAccountant` — a subclass of ``dp_accounting.pld.PLDAccountant`` that also accepts
  :class:`ShuffledKRRDpEvent`, so one ledger can hold shuffled collections next to Gaussian, Laplace,
  randomized-response and composed / self-composed events.

**Why a subclass, not a wrapper.** ``PLDAccountant`` already implements everything that is not
shuffle-specific: the ledger (``dp_event_builder``), ``supports``, the recursion through
``ComposedDpEvent`` / ``SelfComposedDpEvent`` (it calls ``self._maybe_compose``, so nested shuffled
events reach our override), the native mechanisms' PLDs, and the non-private flag. Subclassing keeps
all of that — and keeps ``isinstance(acc, PrivacyAccountant)`` true, so the accountant drops into
code written against dp_accounting — while we only add a dispatch registry for the event types we
handle ourselves.

**The PLD of a shuffled k-RR release** (:func:`shuffled_krr_pld`). Let ``f(alpha)`` be the hockey-
stick curve ``H_alpha(P||Q)`` of the privacy-blanket pair of Balle, Bell, Gascón, Nissim, *The
Privacy Blanket of the Shuffle Model* (CRYPTO 2019). That pair dominates every pair of neighbouring
datasets (the blanket view does not depend on the other users' values) and is symmetric (swapping
``x0, x1`` swaps ``P`` and ``Q``), so for ``alpha = e^-eps < 1``,
``f(alpha) = 1 - alpha + alpha * delta(eps)`` with ``delta(eps) = H_{e^eps}(P||Q)``. The certified
upper bound ``delta_c >= delta`` of :func:`shuffle_accounting.shuffled_krr.blanket.certified_log_delta`
is evaluated on a grid ``0 = e_0 < ... < e_m`` of multiples of ``value_discretization_interval``
(``e_m >= eps0``, where the loss is bounded by ``eps0`` and ``delta_c = 0``). The construction:

1. Points ``(alpha_i, y_i)`` at ``alpha_i = e^{+-e_j}``: ``y = delta_c(e)`` for ``alpha >= 1`` and
   ``y = 1 - alpha + alpha delta_c(e)`` for ``alpha < 1``, every ``delta_c`` inflated by a relative
   ``1e-9`` (this covers the floating-point error of steps 2–3) and clamped up to ``e^-700`` where
   it would underflow (an exact ``0`` is kept as ``0``). Each ``y_i >= f(alpha_i)``.
2. ``g`` = the greatest convex minorant (lower convex hull) of these points and ``(0, 1)``. The true
   ``f`` is convex and lies below every point, so on a hull segment between vertices ``a < b``,
   ``f(alpha) <= chord_f(a, b) <= chord_y(a, b) = g(alpha)``: **g >= f everywhere** (beyond the last
   vertex ``g`` is its constant value, ``>= f`` since ``f`` is non-increasing). The hull only
   repairs tiny non-convexities of ``delta_c``; it never goes below the true curve.
3. ``g`` is convex, piecewise linear in ``alpha`` with ``g(0) = 1`` and initial slope ``>= -1``:
   it is the hockey-stick curve of a discrete pair whose privacy losses are the vertices'
   ``ln alpha`` — the "connect the dots" pessimistic discretisation of Doroshenko, Ghazi, Kamath,
   Kumar, Manurangsi, *Connect the Dots: Tighter Discrete Approximations of Privacy Loss
   Distributions* (PETS 2022), Algorithm 1. The mass at vertex ``v`` is ``alpha_v`` times the jump
   of the slope of ``g`` there; ``g``'s value after the last vertex is the mass at ``+infinity``.
   The vertices are multiples of the loss grid already, so rounding losses *up* onto dp_accounting's
   grid changes nothing (rounding up could only raise the curve).
4. Verification: the resulting PMF's delta is recomputed at every hull vertex, in both directions
   (``eps >= 0`` forward, the negative side through the reversed pair), and compared with the
   un-inflated certified values; any shortfall (never observed) is added to the mass at infinity,
   which raises the curve everywhere, also after composition.

Since the discrete pair dominates the blanket pair at every ``alpha``, it dominates (Blackwell) every
neighbouring pair of the shuffled mechanism in both directions, and dominance is preserved by
(adaptive) composition (Zhu, Dong, Wang, *Optimal Accounting of Differential Privacy via
Characteristic Function*, AISTATS 2022, Thm. 10). dp_accounting's own compositions round
pessimistically (truncated tails go to infinity, <= 1e-15 each). Hence every ``get_epsilon`` /
``get_delta`` of a :class:`ShuffleAccountant` is an **upper bound**; both are further inflated by a
relative ``1e-9`` to cover dp_accounting's floating-point summation.

**k = 2: the certified worst case (issue 11, item 4).** For ``k = 2`` and
``2 <= n <= 10 000`` the curve is the pointwise minimum of ``delta_c`` and the
certified exact worst case ``delta*(eps) = sup_{D ~ D'} H_{e^eps}(P_D || P_D')`` of
:mod:`~shuffle_accounting.shuffled_krr.worst_case` (smaller by factors 2-31 in delta). Composition
may use it, although ``delta*`` is a supremum over *many* pairs, not the curve of one pair: let
``T_D = T(P_D, P_D')`` be the tradeoff function of one neighbouring pair (Dong, Roth, Su, *Gaussian
Differential Privacy*, JRSS-B 2022, Def. 2.1) and ``f*`` the greatest convex minorant of
``inf_D T_D``. ``f*`` is a tradeoff function (convex by construction; continuous, non-increasing
and ``<= 1 - x`` because each ``T_D`` is and these survive the infimum and the minorant; Dong et
al. Prop. 2.2), every pair is ``f*``-DP (``T_D >= inf_D T_D >= f*``), and its privacy profile is
``delta*``: the profile is the convex conjugate ``delta_f(eps) = 1 + f^c(-e^eps)`` (Dong et al.
Prop. 2.12) and the conjugate of the convex minorant of an infimum is the supremum of the
conjugates. ``f*`` is symmetric since the set of pairs is closed under swapping ``D`` and ``D'``.
By the composition theorem of f-DP (Dong et al. Thm. 3.2, adaptive), ``r`` releases are
``f*^{(x) r}``-DP, and ``f*^{(x) r} = T(P*^r, Q*^r)`` for any pair with ``T(P*, Q*) = f*``. The
discrete pair built below from upper bounds of ``delta*`` dominates such a pair in both
directions (Blackwell), and dominance survives composition (Zhu, Dong, Wang 2022, below), so the
PLD composition stays an upper bound. (The same argument is what makes the blanket pair's curve
usable: it dominates every ``T_D`` pointwise.)

**Which points, and why fewer points stay sound.** The hull of step 2 is an upper bound for
*any* set of evaluated points: between two of them the chord of upper bounds lies above the
convex true curve, so a coarser grid only loosens the PLD (by the chords' excess), never makes
it optimistic. The points are chosen for tightness per cost (:class:`GridResolution`,
:data:`DEFAULT_RESOLUTION`): 65 evenly spread points (plus, when the curve falls below
``e^-120`` within the first quarter, as it does for large ``n``, 65 points over ``[0, that
point]``), then refinement passes, each evaluating in one call every point needed so that
``log delta_c`` drops by at most ``0.05`` between *evaluated* neighbours while ``delta_c >= 1e-6``
(the bulk of the loss distribution, which composition is most sensitive to), ``0.2`` down to
``1e-12``, ``0.6`` down to ``1e-30``, ``6.0`` below; a pair is split once its drop exceeds 1.3 allowed
steps), and no gap exceeds ``eps0 / 256``. Where the curve is smooth (large ``n``) a chord of
drop ``s`` overestimates delta by about ``s^2 / 8`` (0.5 % at 0.2), i.e. epsilon by
``5e-3 / |d log delta / d eps|`` — typically below one loss-grid step. For very small ``n`` the
certified curve itself has kinks (the blanket pair has few loss atoms) and a chord across a kink
can overestimate delta by a few per cent; still an upper bound. Each pass evaluates all its
points at once with the one-pass tables of
:class:`~shuffle_accounting.shuffled_krr.blanket_tables.BlanketTables` (built once per
``(k, eps0, n)`` and shared by every pass, by calibration steps and repeated questions; the
exact divergence to about ``1e-9`` where the rows are exact, within about ``1e-3`` where rows
are blocks of ``T``, every value certified; about 0.1-0.2 s for a whole grid at any ``n``).
Outside its range (``n = 1``, ``eps0 > 40`` or below ``1e-6``, a degenerate blanket) the
previous evaluators are used: below
:data:`~shuffle_accounting.shuffled_krr.mechanism.FAST_BLANKET_MIN_N` users the exact one-pass
:func:`~shuffle_accounting.shuffled_krr.blanket.certified_log_delta_grid`, from there on the
sub-linear ``blanket_fast`` (a point below ``e^-120`` located first with a few probes, every
later point taking its value). For ``k = 2`` the passes refine on the blanket curve and the
worst case lowers the final grid in one cover, where the curve is above ``e^-60``
(:func:`~shuffle_accounting.shuffled_krr.curve_grid.tighten_with_worst_case`). Every value is
checked against the one-outcome exhibited bound. A tqdm progress bar is shown for
curves of ``n >= 1e6`` users when stderr is a terminal. :data:`PLANNING_RESOLUTION` is a
cheaper, looser (still certified) grid that calibration brackets with before it verifies with
the default one. The certified grid of each ``(k, eps0, n, h, resolution)`` is memoised (64
entries), so calibration and repeated composition do not recompute it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import attr
import numpy as np
from dp_accounting import dp_event, privacy_accountant
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

from .._validation import ParameterError, check_delta, check_int, check_real
from .blanket import check_krr_parameters
from .curve_grid import (
    DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
    WINDOW_LOG_FLOOR,
    certified_grid_log_delta,
    tighten_with_worst_case,
)
from .curve_grid import progress_bar as progress_bar  # re-exported: calibration and tests use it from here

__all__ = [
    "ShuffledKRRDpEvent",
    "ShuffleAccountant",
    "UnsupportedShuffleEventError",
    "shuffled_krr_pld",
    "MAX_LOSS_GRID",
    "GridResolution",
    "DEFAULT_RESOLUTION",
    "PLANNING_RESOLUTION",
]
# DEFAULT_VALUE_DISCRETIZATION_INTERVAL is importable from here too; it is defined (and documented,
# once) in curve_grid.

NeighboringRelation = privacy_accountant.NeighboringRelation

#: Largest number of loss-grid steps ``eps0 / value_discretization_interval`` of one release's PLD
#: (its dense PMF has twice as many entries, 32 MB; composition works on arrays of that size).
MAX_LOSS_GRID: int = 2**21

_RELATIVE_INFLATION = 1e-9  # outward rounding of delta_c before the hull, and of returned eps/delta
_LOG_FLOOR = -700.0  # log(delta_c) below this is clamped UP to it (keeps exp() representable)


# --------------------------------------------------------------------------------------------
# The event
# --------------------------------------------------------------------------------------------


def _convert_k(value: Any) -> int:
    return check_krr_parameters(value, 1.0, 1)[0]


def _convert_eps0(value: Any) -> float:
    return check_krr_parameters(2, value, 1)[1]


def _convert_n(value: Any) -> int:
    return check_krr_parameters(2, 1.0, value)[2]


@attr.s(frozen=True, slots=True)
class ShuffledKRRDpEvent(dp_event.DpEvent):
    """One shuffled k-RR release: ``n`` users each apply k-RR(``eps0``), the shuffled reports are published.

    Neighbouring datasets differ in one user's value (replace-one). The event is a frozen ``attrs``
    class like every dp_accounting event (so ``to_named_tuple`` / ``from_named_tuple`` work); the
    fields are validated and normalised at construction.

    Args:
        k: Number of categories, an integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, an integer >= 1.

    Raises:
        ParameterError: If a field is out of range, NaN/inf, boolean or of the wrong type.

    Example:
        >>> e = ShuffledKRRDpEvent(k=3, eps0=1, n=1e4)
        >>> e
        ShuffledKRRDpEvent(k=3, eps0=1.0, n=10000)
        >>> ShuffledKRRDpEvent(k=3, eps0=1.0, n=0)
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: n must be an integer in [1, 10**15], got 0
    """

    k: int = attr.ib(converter=_convert_k)
    eps0: float = attr.ib(converter=_convert_eps0)
    n: int = attr.ib(converter=_convert_n)


# --------------------------------------------------------------------------------------------
# The PLD of one shuffled k-RR release
# --------------------------------------------------------------------------------------------


def _top_index(eps0: float, h: float) -> int:
    """Smallest integer i with i * h >= eps0 (checked in floating point)."""
    i = int(math.ceil(eps0 / h))
    while i * h < eps0:
        i += 1
    return max(i, 1)


class GridResolution(NamedTuple):
    """How finely the certified curve is sampled for a PLD (internal; see the module docstring).

    Any choice gives a pessimistic PLD (the hull of upper bounds at *any* set of points is an
    upper bound, step 2 of the construction); a finer one is tighter and costs more evaluations.

    Attributes:
        coarse_points: Points of the first pass, evenly spread over ``[0, eps0]``.
        log_step_fine: Largest drop of ``log delta_c`` between grid neighbours while
            ``log delta_c >= log_fine_limit`` (the chord then overestimates delta by at most
            about ``log_step_fine**2 / 8``, relatively).
        log_fine_limit: See ``log_step_fine``.
        log_step_mid: The same between ``log_fine_limit`` and ``log_mid_limit``.
        log_mid_limit: See ``log_step_mid``.
        log_step_tail: The same below ``log_mid_limit`` (down to ``e^WINDOW_LOG_FLOOR``).
        max_step_fraction: Largest grid gap, as a fraction of ``eps0``.
        fast_rtol: Certified relative tolerance of the sub-linear evaluator (n >= 1e5).
        refine_floor: No point is added between neighbours whose upper value is below
            ``e^refine_floor`` (at least ``e^WINDOW_LOG_FLOOR``): the chords there stay long.
        log_step_bulk: The largest drop while ``log delta_c >= log_bulk_limit`` (the bulk of the
            privacy-loss distribution, which composition is most sensitive to).
        log_bulk_limit: See ``log_step_bulk``.
    """

    coarse_points: int
    log_step_fine: float
    log_fine_limit: float
    log_step_mid: float
    log_mid_limit: float
    log_step_tail: float
    max_step_fraction: float
    fast_rtol: float
    refine_floor: float = WINDOW_LOG_FLOOR
    log_step_bulk: float = 0.05
    log_bulk_limit: float = math.log(1e-6)


#: The accountant's grid (every ShuffleAccountant): chords within about 0.03 % of the certified
#: curve down to delta = 1e-6 (the bulk, where composition is most sensitive), 0.5 % down to 1e-12,
#: 4.5 % down to 1e-30.
DEFAULT_RESOLUTION = GridResolution(65, 0.2, math.log(1e-12), 0.6, math.log(1e-30), 6.0, 1.0 / 256.0, 1e-3)
#: A cheap, looser grid (still certified): calibration brackets with it, then verifies with the
#: default grid.
PLANNING_RESOLUTION = GridResolution(
    17, 1.0, math.log(1e-30), 1.0, math.log(1e-30), 10.0, 1.0 / 16.0, 1e-2, math.log(1e-20), 1.0
)


_REFINE_PASSES = 5  # refinement passes after the coarse one (each one call of the grid evaluator)
_STEP_SLACK = 1.3  # a pair of neighbours is split once its drop exceeds 1.3 allowed steps


def _grid_indices(
    k: int, eps0: float, n: int, h: float, res: GridResolution = DEFAULT_RESOLUTION
) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive grid of loss indices in [0, i_top] and log delta_c on it (one call per pass).

    The coarse pass evaluates ``res.coarse_points`` evenly spread points (from 1e5 users on, a
    point below the floor ``e^WINDOW_LOG_FLOOR`` is located first with a few probes). Each
    refinement pass then splits every pair of grid neighbours above the floor whose *evaluated*
    drop of ``log delta_c`` exceeds the step allowed at the lower one's level (or whose gap
    exceeds ``res.max_step_fraction * eps0``) and evaluates all new points in one call; it stops
    when no pair needs splitting (or after ``_REFINE_PASSES`` passes: any grid is sound, only
    looser). New points between two points above the floor are evaluated without a floor search.
    """
    i_top = _top_index(eps0, h)
    from .blanket import BlanketEvaluator, blanket_degenerate
    from .mechanism import FAST_BLANKET_MIN_N

    # shared by every pass (windows, CDF table); None: the closed form (n = 1, degenerate blanket)
    bl = BlanketEvaluator(k, eps0, n) if n > 1 and not blanket_degenerate(k, eps0) else None
    fast = None
    if bl is not None and n >= FAST_BLANKET_MIN_N:
        from .blanket_fast import FastBlanketEvaluator

        fast = FastBlanketEvaluator(k, eps0, n)  # shared by every pass: tables, learnt block widths
    # the one-pass tables resolve values down to the grid's refinement floor (every value is
    # certified; below it only bounded), a little further for margin
    table_floor = max(WINDOW_LOG_FLOOR, min(res.refine_floor, WINDOW_LOG_FLOOR / 2) - 15.0)
    # k = 2: the passes refine on the blanket curve; the worst case lowers the final grid in one
    # cover (each pass used to run its own branch and bound)
    kw = {
        "blanket": bl,
        "fast_rtol": res.fast_rtol,
        "fast": fast,
        "table_floor": table_floor,
        "worst_case": False,
    }
    grid = np.unique(np.rint(np.linspace(0, i_top, res.coarse_points)).astype(np.int64))
    log_delta = np.asarray(certified_grid_log_delta(grid * h, k, eps0, n, **kw), dtype=float)
    below = np.nonzero(log_delta < WINDOW_LOG_FLOOR)[0]
    top = int(grid[below[0]]) if below.size else i_top
    if below.size and below[0] <= res.coarse_points // 4 and top > 4 * res.coarse_points:
        # the curve falls below the floor early (large n): zoom, coarse points over [0, top]
        zoom = np.setdiff1d(np.unique(np.rint(np.linspace(0, top, res.coarse_points)).astype(np.int64)), grid)
        if zoom.size:
            zv = np.asarray(certified_grid_log_delta(zoom * h, k, eps0, n, **kw), dtype=float)
            grid, first = np.unique(np.concatenate([grid, zoom]), return_index=True)
            log_delta = np.concatenate([log_delta, zv])[first]
    max_gap = max(1, int(math.floor(eps0 * res.max_step_fraction / h)))

    def step_at(level: float) -> float:
        if level >= res.log_bulk_limit:
            return min(res.log_step_bulk, res.log_step_fine)
        if level >= res.log_fine_limit:
            return res.log_step_fine
        return res.log_step_mid if level >= res.log_mid_limit else res.log_step_tail

    def cuts(a: int, b: int, la: float, lb: float) -> np.ndarray:
        """Indices strictly inside (a, b): each level step of the linearly interpolated curve."""
        levels, lv = [], la
        while len(levels) < 10_000:
            lv -= step_at(lv - 1e-9)
            if lv <= lb:
                break
            levels.append(lv)
        pts = np.rint(a + (la - np.asarray(levels)) / (la - lb) * (b - a)).astype(np.int64)
        return pts[(pts > a) & (pts < b)]

    for _ in range(_REFINE_PASSES):
        inner, crossing = [], []
        for j in range(grid.size - 1):
            a, b = int(grid[j]), int(grid[j + 1])
            la, lb = float(log_delta[j]), float(log_delta[j + 1])
            if b - a <= 1 or la < max(WINDOW_LOG_FLOOR, res.refine_floor):
                continue
            parts = min(math.ceil((b - a) / max_gap), b - a)
            pts = [np.rint(np.linspace(a, b, parts + 1)).astype(np.int64)[1:-1]] if parts > 1 else []
            if lb >= WINDOW_LOG_FLOOR:
                # split where the evaluated drop exceeds the allowed step by 30 % (the chord then
                # overestimates delta by at most about 1.7 times the nominal step**2 / 8)
                if la - lb > _STEP_SLACK * step_at(lb):
                    pts.append(cuts(a, b, la, lb))
                if pts:
                    inner.extend(pts)
            else:  # the floor (or eps0, where the curve vanishes) lies inside: 16 parts per pass
                crossing.append(
                    np.rint(np.linspace(a, b, min(max(parts, 16), b - a) + 1)).astype(np.int64)[1:-1]
                )
        if not inner and not crossing:
            break
        new_idx, new_val = [grid], [log_delta]
        for pieces, search in ((inner, False), (crossing, None)):
            if pieces:
                extra = np.unique(np.concatenate(pieces))
                new_idx.append(extra)
                new_val.append(
                    np.asarray(
                        certified_grid_log_delta(extra * h, k, eps0, n, floor_search=search, **kw),
                        dtype=float,
                    )
                )
        idx = np.concatenate(new_idx)
        val = np.concatenate(new_val)
        grid, first = np.unique(idx, return_index=True)
        log_delta = val[first]
    return grid, tighten_with_worst_case(grid * h, log_delta, k, eps0, n)


def _lower_hull(alpha: np.ndarray, y_pos: np.ndarray, g_neg: np.ndarray, zero: int) -> list[int]:
    """Indices of the lower convex hull of the points (alpha_i, curve_i), ascending alpha.

    Points ``i < zero`` (alpha < 1) are given by ``g_neg = curve - (1 - alpha)``, points ``i >= zero``
    by ``y_pos = curve``; slopes are compared in the representation that is exact on each side (a
    linear term does not change convexity), so tiny values deep in either tail keep their precision.
    """
    log_alpha = np.log(alpha)

    def slope(a: int, b: int) -> tuple[float, bool]:
        """Slope of the segment a->b; the flag says it is expressed for g (= curve slope + 1)."""
        den = alpha[a] * math.expm1(log_alpha[b] - log_alpha[a])
        if b <= zero and a < zero:
            gb = g_neg[b] if b < zero else y_pos[b]  # at alpha = 1 both representations agree
            return (gb - g_neg[a]) / den, True
        if a >= zero:
            return (y_pos[b] - y_pos[a]) / den, False
        # straddles alpha = 1: curve_b - curve_a = y_b - g_a - (1 - alpha_a)
        return (y_pos[b] - g_neg[a] + math.expm1(log_alpha[a])) / den, False

    def not_convex(s1: tuple[float, bool], s2: tuple[float, bool]) -> bool:
        if s1[1] and s2[1]:
            return s1[0] >= s2[0]
        v1 = s1[0] - 1.0 if s1[1] else s1[0]
        v2 = s2[0] - 1.0 if s2[1] else s2[0]
        return v1 >= v2

    stack: list[int] = []
    for i in range(alpha.size):
        while len(stack) >= 2 and not_convex(slope(stack[-2], stack[-1]), slope(stack[-1], i)):
            stack.pop()
        stack.append(i)
    return stack


def _connect_the_dots(
    idx: np.ndarray, h: float, y_pos: np.ndarray, g_neg: np.ndarray, zero: int, vertices: list[int]
) -> tuple[np.ndarray, np.ndarray, float]:
    """Masses of the discrete PLD whose curve is the piecewise-linear hull (Connect the Dots, Alg. 1).

    Returns (loss indices, P-masses, mass at +infinity).
    """
    v = np.asarray(vertices)
    loss = idx[v] * h
    alpha = np.exp(loss)
    # Segment slopes in both representations (g-slope = curve-slope + 1).
    seg_s = np.empty(v.size - 1)
    seg_is_g = np.zeros(v.size - 1, dtype=bool)
    for t in range(v.size - 1):
        a, b = int(v[t]), int(v[t + 1])
        den = alpha[t] * math.expm1(loss[t + 1] - loss[t])
        if b <= zero and a < zero:
            gb = g_neg[b] if b < zero else y_pos[b]
            seg_s[t], seg_is_g[t] = (gb - g_neg[a]) / den, True
        elif a >= zero:
            seg_s[t] = (y_pos[b] - y_pos[a]) / den
        else:
            seg_s[t] = (y_pos[b] - g_neg[a] + math.expm1(loss[t])) / den
    # Incoming slope at the first vertex: from (0, 1), i.e. g-slope g_0 / alpha_0 = delta_c(e_top).
    first_g = (g_neg[v[0]] if v[0] < zero else y_pos[v[0]]) / alpha[0]
    in_s = np.concatenate([[first_g], seg_s])
    in_g = np.concatenate([[True], seg_is_g])
    last_val = y_pos[v[-1]] if v[-1] >= zero else 1.0 - alpha[-1] + g_neg[v[-1]]
    out_s = np.concatenate([seg_s, [0.0]])  # flat after the last vertex (curve slope 0)
    out_g = np.concatenate([seg_is_g, [False]])
    both_g = in_g & out_g
    jump = np.where(
        both_g,
        out_s - in_s,
        np.where(out_g, out_s - 1.0, out_s) - np.where(in_g, in_s - 1.0, in_s),
    )
    masses = np.maximum(alpha * jump, 0.0)  # a clipped tiny negative only raises the curve
    return idx[v], masses, float(max(last_val, 0.0))


def _pmf_delta_forward(loss: np.ndarray, mass: np.ndarray, inf_mass: float, eps: np.ndarray) -> np.ndarray:
    """``inf + sum_j mass_j (1 - e^{eps - loss_j})_+`` evaluated directly (no cancellation)."""
    out = np.full(eps.size, inf_mass)
    for start in range(0, eps.size, 256):
        e = eps[start : start + 256, None]
        with np.errstate(over="ignore"):
            term = -np.expm1(np.minimum(e - loss[None, :], 0.0))
        out[start : start + 256] += term @ mass
    return out


def _pmf_delta_reverse(loss: np.ndarray, mass: np.ndarray, rev_inf: float, eps: np.ndarray) -> np.ndarray:
    """Hockey-stick ``H_{e^eps}(Q||P)`` of the discrete pair: Q-masses ``mass e^-loss`` at losses ``-loss``."""
    q = mass * np.exp(-loss)
    return _pmf_delta_forward(-loss, q, rev_inf, eps)


@functools.lru_cache(maxsize=64)
def _certified_grid(
    k: int, eps0: float, n: int, h: float, res: GridResolution = DEFAULT_RESOLUTION
) -> tuple[np.ndarray, np.ndarray]:
    """Memoised :func:`_grid_indices` (a pure function of its arguments; arrays are read-only).

    Calibration and repeated composition ask for the same release many times; the certified
    evaluation is the expensive step, so its result is kept (at most 64 entries, a few MB).
    """
    grid, log_delta = _grid_indices(k, eps0, n, h, res)
    grid.flags.writeable = False
    log_delta.flags.writeable = False
    return grid, log_delta


def shuffled_krr_pmf(
    k: int, eps0: float, n: int, h: float, res: GridResolution = DEFAULT_RESOLUTION
) -> pld_pmf.DensePLDPmf:
    """The pessimistic dense PMF of one shuffled k-RR release (see the module docstring)."""
    grid, log_delta = _certified_grid(k, eps0, n, h, res)
    # Step 1: points, each >= the true curve.
    finite = np.isfinite(log_delta)
    clamped = np.where(finite, np.maximum(log_delta, _LOG_FLOOR), -np.inf)
    with np.errstate(under="ignore"):
        d_pos = np.minimum(np.exp(clamped) * (1.0 + _RELATIVE_INFLATION), 1.0)
    e_pos = grid * h
    m = grid.size
    # Full point list, ascending alpha: negative side (reversed, without 0) then positive side.
    idx = np.concatenate([-grid[:0:-1], grid])
    zero = m - 1
    alpha = np.exp(idx * h)
    y_pos = np.zeros(idx.size)
    y_pos[zero:] = d_pos
    g_neg = np.zeros(idx.size)
    with np.errstate(under="ignore"):
        g_neg[:zero] = np.exp(-e_pos[:0:-1]) * d_pos[:0:-1]  # alpha * delta_c(-ln alpha)
    g_neg[zero] = d_pos[0]
    # Step 2: greatest convex minorant.
    vertices = _lower_hull(alpha, y_pos, g_neg, zero)
    # Step 3: connect the dots.
    v_idx, masses, inf_mass = _connect_the_dots(idx, h, y_pos, g_neg, zero, vertices)
    # Step 4: verify against the un-inflated certified values at the vertices, both directions.
    with np.errstate(under="ignore"):
        cert = np.exp(clamped)
    loss = v_idx * h
    vpos = np.asarray([t for t in vertices if t >= zero])
    vneg = np.asarray([t for t in vertices if t <= zero])
    fwd = _pmf_delta_forward(loss, masses, inf_mass, idx[vpos] * h)
    # Q-mass where P = 0 (reverse loss +infinity): 1 - sum(q) = delta_c(e_top) by construction;
    # take the smaller of the two expressions so that the check below is the stricter one.
    rev_inf = min(max(0.0, 1.0 - float(np.sum(masses * np.exp(-loss)))), float(d_pos[-1]))
    rev = _pmf_delta_reverse(loss, masses, rev_inf, -idx[vneg] * h)
    shortfall = max(
        0.0,
        float(np.max(cert[vpos - zero] - fwd)),
        float(np.max(cert[zero - vneg] - rev)),
    )
    inf_mass += shortfall
    lower = int(idx[0])
    probs = np.zeros(int(idx[-1]) - lower + 1)
    probs[v_idx - lower] = masses
    return pld_pmf.DensePLDPmf(h, lower, probs, inf_mass, True)


def shuffled_krr_pld(
    k: int,
    eps0: float,
    n: int,
    value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
    *,
    resolution: GridResolution = DEFAULT_RESOLUTION,
) -> pld_lib.PrivacyLossDistribution:
    """Pessimistic dp_accounting ``PrivacyLossDistribution`` of one shuffled k-RR release.

    Built from the certified privacy-blanket curve by greatest convex minorant + connect-the-dots
    (construction and proof of pessimism in the module docstring). Its delta curve is ``>=`` the
    certified ``delta_c(eps)`` at every ``eps`` (and ``>=`` the true curve at every negative
    ``eps`` too), so anything dp_accounting computes from it is an upper bound. The PLD is
    symmetric (valid for both directions of the neighbouring relation).

    Args:
        k: Number of categories, an integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, an integer >= 1.
        value_discretization_interval: dp_accounting's loss-grid step, in (0, 1].
        resolution: Sampling of the certified curve (keyword only; see :class:`GridResolution`).

    Returns:
        A ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution`` with a dense
        pessimistic PMF (losses are multiples of ``value_discretization_interval``).

    Raises:
        ParameterError: If an argument is out of range or of the wrong type.

    Example:
        >>> pld = shuffled_krr_pld(k=3, eps0=2.0, n=50)
        >>> eps = pld.get_epsilon_for_delta(1e-3)
        >>> 0 < eps < 2.0
        True
    """
    k, eps0, n = check_krr_parameters(k, eps0, n)
    h = check_real(
        "value_discretization_interval", value_discretization_interval, low=0.0, high=1.0, low_open=True
    )
    if eps0 / h > MAX_LOSS_GRID:
        raise ParameterError(
            f"value_discretization_interval must be >= eps0 / {MAX_LOSS_GRID} = {eps0 / MAX_LOSS_GRID!r} "
            f"for eps0 = {eps0!r} (the dense loss grid has 2 eps0 / h + 1 entries), got {h!r}"
        )
    if not isinstance(resolution, GridResolution):
        raise ParameterError(f"resolution must be a GridResolution, got {resolution!r}")
    return pld_lib.PrivacyLossDistribution(shuffled_krr_pmf(k, eps0, n, h, resolution))


# --------------------------------------------------------------------------------------------
# The accountant
# --------------------------------------------------------------------------------------------


class UnsupportedShuffleEventError(ParameterError, privacy_accountant.UnsupportedEventError):
    """An event the :class:`ShuffleAccountant` cannot account for.

    Both a :class:`~shuffle_accounting.ParameterError` (a ``ValueError``) and dp_accounting's
    ``UnsupportedEventError``, so either ``except`` clause catches it.
    """


_Handler = Callable[["ShuffleAccountant", Any, int, bool], Any | None]
_HANDLERS: dict[type, _Handler] = {}


def _handles(event_type: type) -> Callable[[_Handler], _Handler]:
    """Register a composition handler for an event type (looked up along the event's MRO)."""

    def deco(fn: _Handler) -> _Handler:
        _HANDLERS[event_type] = fn
        return fn

    return deco


_ALLOWED_RELATIONS = {
    NeighboringRelation.REPLACE_ONE: "REPLACE_ONE",
    NeighboringRelation.REPLACE_SPECIAL: "REPLACE_SPECIAL",
}


class ShuffleAccountant(PLDAccountant):
    """dp_accounting PLD accountant that also composes shuffled k-RR releases, tightly.

    A subclass of ``dp_accounting.pld.PLDAccountant`` (see the module docstring for why):
    ``compose(event, count=1)`` returns ``self``; ``ledger`` is the composed ``DpEvent`` of
    everything composed so far; ``get_epsilon(delta)`` / ``get_delta(epsilon)`` are **upper bounds**
    (pessimistic PLDs throughout, results inflated outward by a relative 1e-9);
    ``privacy_loss_distribution()`` returns the composed dp_accounting PLD.

    Events: :class:`ShuffledKRRDpEvent` (through :func:`shuffled_krr_pld`, built once per event
    and cached on the accountant), plus every event ``PLDAccountant`` supports — Gaussian, Laplace,
    discrete Laplace, randomized response, Poisson-subsampled Gaussian/Laplace, mixtures of
    Gaussians, ``ComposedDpEvent``, ``SelfComposedDpEvent``, ``NoOpDpEvent``,
    ``NonPrivateDpEvent``.

    Neighbouring relation: shuffled k-RR is analysed for *replace one user's value*, so only
    ``REPLACE_ONE`` (default) and ``REPLACE_SPECIAL`` (a special case of it: the special record is
    one of the k categories) are allowed. dp_accounting refuses ``LaplaceDpEvent`` and
    ``DiscreteLaplaceDpEvent`` under ``REPLACE_ONE``; this accountant accepts them there with the
    sensitivity doubled (``||v_i||_1 <= C`` means that replacing a record moves the sum by at most
    ``2C``), which is the correct replace-one analysis. Under ``REPLACE_SPECIAL`` they are
    dp_accounting's own (sensitivity ``C``).

    Args:
        neighboring_relation: ``NeighboringRelation.REPLACE_ONE`` or ``REPLACE_SPECIAL``.
        value_discretization_interval: dp_accounting's loss-grid step, in (0, 1].
        resolution: How finely each shuffled release's certified curve is sampled (keyword
            only): :data:`DEFAULT_RESOLUTION`, or e.g. :data:`PLANNING_RESOLUTION` (cheaper and
            looser). Every :class:`GridResolution` gives upper bounds.

    Raises:
        ParameterError: For a bad argument; from ``compose``, an
            :class:`UnsupportedShuffleEventError` for an event it cannot account for, or a bad
            ``count``.

    Example:
        >>> import dp_accounting
        >>> acc = ShuffleAccountant()
        >>> _ = acc.compose(ShuffledKRRDpEvent(k=3, eps0=2.0, n=50), count=2)
        >>> _ = acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=20.0))
        >>> eps = acc.get_epsilon(1e-3)
        >>> 0 < eps < 2 * 2.0 + 1
        True
        >>> acc.get_delta(eps) <= 1e-3 * (1 + 1e-6)
        True
    """

    def __init__(
        self,
        neighboring_relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE,
        value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
        *,
        resolution: GridResolution = DEFAULT_RESOLUTION,
    ) -> None:
        if not isinstance(resolution, GridResolution):
            raise ParameterError(
                f"resolution must be a GridResolution (e.g. DEFAULT_RESOLUTION), got {resolution!r}"
            )
        self._resolution = resolution
        if not isinstance(neighboring_relation, NeighboringRelation) or (
            neighboring_relation not in _ALLOWED_RELATIONS
        ):
            raise ParameterError(
                "neighboring_relation must be NeighboringRelation.REPLACE_ONE or REPLACE_SPECIAL "
                f"(shuffled k-RR is analysed for replace-one), got {neighboring_relation!r}"
            )
        h = check_real(
            "value_discretization_interval",
            value_discretization_interval,
            low=0.0,
            high=1.0,
            low_open=True,
        )
        super().__init__(neighboring_relation=neighboring_relation, value_discretization_interval=h)
        self._shuffle_plds: dict[ShuffledKRRDpEvent, pld_lib.PrivacyLossDistribution] = {}

    @property
    def value_discretization_interval(self) -> float:
        """The loss-grid step of every PLD in this accountant."""
        return self._value_discretization_interval

    # -- composition --------------------------------------------------------------------------

    def _maybe_compose(self, event: dp_event.DpEvent, count: int, do_compose: bool):
        for cls in type(event).__mro__:
            handler = _HANDLERS.get(cls)
            if handler is not None:
                return handler(self, event, count, do_compose)
        return super()._maybe_compose(event, count, do_compose)

    def _compose_pld(self, pld: pld_lib.PrivacyLossDistribution, count: int) -> None:
        if count <= 0:
            return
        self._pld = self._pld.compose(pld if count == 1 else pld.self_compose(count))

    def compose(self, event: dp_event.DpEvent, count: int = 1) -> ShuffleAccountant:
        """Account for ``count`` (adaptive) applications of ``event``; returns ``self``.

        Args:
            event: A dp_accounting ``DpEvent`` (e.g. :class:`ShuffledKRRDpEvent`,
                ``GaussianDpEvent``, ``ComposedDpEvent``).
            count: Number of repetitions, an integer >= 1.

        Returns:
            This accountant, for chaining.

        Raises:
            ParameterError: If ``count`` is not an integer >= 1.
            UnsupportedShuffleEventError: If ``event`` is not a ``DpEvent`` or is not supported
                (the message names the offending sub-event).

        Example:
            >>> acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(2, 1.0, 20), count=3)
            >>> acc.ledger
            SelfComposedDpEvent(event=ShuffledKRRDpEvent(k=2, eps0=1.0, n=20), count=3)
        """
        count = check_int("count", count, minimum=1)
        if not isinstance(event, dp_event.DpEvent):
            raise UnsupportedShuffleEventError(
                f"event must be a dp_accounting DpEvent, got {type(event).__name__} {event!r}"
            )
        error = self._maybe_compose(event, count, False)
        if error is not None:
            raise UnsupportedShuffleEventError(
                f"event {event!r} is not supported by ShuffleAccountant: {error.error_message} "
                f"(offending sub-event: {error.invalid_event!r})"
            )
        return super().compose(event, count)

    # -- queries ------------------------------------------------------------------------------

    def get_epsilon(self, target_delta: float) -> float:
        """Upper bound on the composed epsilon at ``target_delta`` (``inf`` if non-private).

        Args:
            target_delta: In (0, 1).

        Returns:
            dp_accounting's answer on the pessimistic composed PLD, inflated by a relative 1e-9.

        Raises:
            ParameterError: If ``target_delta`` is not in (0, 1).

        Example:
            >>> ShuffleAccountant().get_epsilon(1e-6)
            0.0
        """
        target_delta = check_delta("target_delta", target_delta)
        eps = float(super().get_epsilon(target_delta))
        if not math.isfinite(eps):
            return math.inf
        return max(eps, 0.0) * (1.0 + _RELATIVE_INFLATION)

    def get_delta(self, target_epsilon: float) -> float:
        """Upper bound on the composed delta at ``target_epsilon`` (1 if non-private).

        Args:
            target_epsilon: Finite and >= 0.

        Returns:
            dp_accounting's answer on the pessimistic composed PLD, inflated by a relative 1e-9,
            capped at 1.

        Raises:
            ParameterError: If ``target_epsilon`` is negative, NaN or infinite.

        Example:
            >>> ShuffleAccountant().get_delta(0.5)
            0.0
        """
        target_epsilon = check_real("target_epsilon", target_epsilon, low=0.0)
        delta = float(super().get_delta(target_epsilon))
        return min(1.0, max(delta, 0.0) * (1.0 + _RELATIVE_INFLATION))

    def privacy_loss_distribution(self) -> pld_lib.PrivacyLossDistribution:
        """The composed pessimistic dp_accounting ``PrivacyLossDistribution``.

        If the ledger holds a ``NonPrivateDpEvent`` the result has all its mass at infinity
        (delta = 1 at every epsilon).

        Example:
            >>> acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(3, 2.0, 50))
            >>> pld = acc.privacy_loss_distribution()
            >>> pld.get_epsilon_for_delta(1e-3) <= acc.get_epsilon(1e-3)
            True
        """
        if self._contains_non_dp_event:
            return pld_lib.PrivacyLossDistribution(
                pld_pmf.DensePLDPmf(self._value_discretization_interval, 0, np.zeros(1), 1.0, True)
            )
        return self._pld

    def shuffled_pld(self, event: ShuffledKRRDpEvent) -> pld_lib.PrivacyLossDistribution:
        """The (cached) single-release PLD this accountant uses for ``event``."""
        pld = self._shuffle_plds.get(event)
        if pld is None:
            h = self._value_discretization_interval
            pld = shuffled_krr_pld(event.k, event.eps0, event.n, h, resolution=self._resolution)
            self._shuffle_plds[event] = pld
        return pld


@_handles(ShuffledKRRDpEvent)
def _compose_shuffled_krr(acc: ShuffleAccountant, event: ShuffledKRRDpEvent, count: int, do_compose: bool):
    if do_compose:
        acc._compose_pld(acc.shuffled_pld(event), count)
    return None


def _doubled_sensitivity(
    build: Callable[[ShuffleAccountant, Any], pld_lib.PrivacyLossDistribution],
) -> _Handler:
    """Handler for an L1-sensitivity event: replace-one doubles the sensitivity; else dp_accounting's own."""

    def handler(acc: ShuffleAccountant, event: Any, count: int, do_compose: bool):
        if acc.neighboring_relation != NeighboringRelation.REPLACE_ONE:
            return PLDAccountant._maybe_compose(acc, event, count, do_compose)
        if do_compose:
            pld = build(acc, event)
            if pld is None:  # zero noise: not private (as in PLDAccountant)
                acc._contains_non_dp_event = True
            else:
                acc._compose_pld(pld, count)
        return None

    return handler


def _laplace_replace_one(acc: ShuffleAccountant, event: dp_event.LaplaceDpEvent):
    if event.noise_multiplier == 0:
        return None
    return pld_lib.from_laplace_mechanism(
        parameter=event.noise_multiplier,
        sensitivity=2,
        value_discretization_interval=acc.value_discretization_interval,
    )


def _discrete_laplace_replace_one(acc: ShuffleAccountant, event: dp_event.DiscreteLaplaceDpEvent):
    if event.noise_parameter == 0:
        return None
    return pld_lib.from_discrete_laplace_mechanism(
        parameter=event.noise_parameter,
        sensitivity=2 * event.sensitivity,
        value_discretization_interval=acc.value_discretization_interval,
    )


_HANDLERS[dp_event.LaplaceDpEvent] = _doubled_sensitivity(_laplace_replace_one)
_HANDLERS[dp_event.DiscreteLaplaceDpEvent] = _doubled_sensitivity(_discrete_laplace_replace_one)


# Shared with other modules and the tests under public names (issue 13: no module imports
# another module's private name). Internal: not in __all__.
# certified_grid_log_delta and progress_bar (from curve_grid) stay importable from here too.
certified_grid = _certified_grid  # the memoised certified grid (benchmarks)
