"""One privacy-curve type: the protocol, one epsilon-from-delta root finder, one calibration, one interval.

Every (eps, delta) number of the library comes from a *privacy curve* ``eps -> delta(eps)``
(non-increasing in ``eps``) and says which way it is sound:

* ``"upper"`` — **certified**: ``delta(eps)`` is at least the true worst-case delta (every
  truncation bounded and added, rounding outward), so ``(eps, delta(eps))``-DP holds;
* ``"lower"`` — **exhibited**: ``delta(eps)`` is reached by concrete neighbouring datasets, so no
  accountant can certify a smaller delta at ``eps``;
* ``"estimate"`` — neither (e.g. a quadrature value or a Monte-Carlo estimate);
* ``"as-printed"`` — a published formula reproduced as printed, known or suspected to be wrong;
  no soundness claim at all (kept only to reproduce a paper's tables).

:class:`PrivacyCurve` is the protocol (``delta``, ``log_delta``, ``epsilon`` and ``bound``), after
``dp_accounting``'s ``MonotonePrivacyLoss`` and ``prv_accountant``'s (lower, estimate, upper).
:class:`CurveBase` derives ``delta`` and ``epsilon`` from one scalar ``log delta`` with the one
root finder :func:`epsilon_from_delta`; :func:`calibrate` finds the largest (or smallest) value of
any monotone parameter whose certified curve meets a target, after
``dp_accounting.mechanism_calibration.calibrate_dp_mechanism``; :class:`Interval` is the one
result shape for two-sided results (``lower``, ``upper``, an optional ``estimate`` and whether
the interval is ``certified``).

:func:`epsilon_from_delta` is the library's one epsilon-from-delta search (bisection, Illinois
false position, or Newton/secant steps, always bracketed and ending on the sound side, with an
optional final check by another evaluation, :func:`step_up_until`, or :func:`step_up_secant` where
each check is costly). ``ShuffledKRR.epsilon`` (Newton
on the blanket's log delta with its exact slope), ``blanket_fast.certified_epsilon`` (two secant
phases, cheap then tight evaluations), the clone pair's search (``literature._clones``: Illinois
on the coarse bound, secant on the fine one) and every :class:`CurveBase` call it. Searches that
stay specialised, and why: the worst-case certificates (``shuffled_krr.worst_case*``: a branch and
bound over covers of datasets, whose epsilon comes out of refining the cover, not from one curve);
the exhibited lower bound's scan over a family of datasets (``shuffled_krr.lower``: the maximum
of each dataset's root, each found by this finder on its lower side); the blanket's grid
inversion (many targets at once, vectorised); starting guesses on approximations (speed only,
never an answer); the calibrations in ``eps0`` or ``n`` (:func:`calibrate` and
``shuffled_krr.calibration``: roots in the mechanism's parameter, not in eps).

This module sits in the numerics layer: it imports only numpy, :mod:`._validation` and
:mod:`._logmath`, so every subpackage may build on it.

Example:
    >>> import math
    >>> class Laplace(CurveBase):
    ...     '''The exact curve of the eps0-DP Laplace mechanism (sensitivity 1):
    ...     delta(eps) = 1 - e^((eps - eps0)/2) for eps < eps0 (zero above).'''
    ...     bound = "upper"
    ...     def __init__(self, eps0):
    ...         self.eps0 = eps0
    ...     @property
    ...     def eps_max(self):
    ...         return self.eps0
    ...     def _log_delta(self, eps):
    ...         return math.log(-math.expm1((eps - self.eps0) / 2)) if eps < self.eps0 else -math.inf
    >>> c = Laplace(1.0)
    >>> isinstance(c, PrivacyCurve), round(c.delta(0.0), 6), c.delta(2.0)
    (True, 0.393469, 0.0)
    >>> e = c.epsilon(0.1)
    >>> round(e, 6), c.delta(e) <= 0.1
    (0.789279, True)
    >>> round(calibrate(Laplace, low=0.1, high=10.0, epsilon=0.5, delta=0.1, monotone="increasing"), 4)
    0.7107
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from ._logmath import bisect_bracket
from ._validation import (
    ParameterError,
    check_bool,
    check_choice,
    check_delta,
    check_int,
    check_real,
    check_real_array,
)

__all__ = [
    "Bound",
    "BOUNDS",
    "PrivacyCurve",
    "CurveBase",
    "Interval",
    "epsilon_from_delta",
    "EpsilonSearch",
    "SEARCH_METHODS",
    "step_up_until",
    "step_up_secant",
    "SECANT_MAX_JUMP",
    "log_target",
    "calibrate",
    "prob_from_log",
    "check_bound",
]

#: Which way a curve is sound (see the module docstring).
Bound = Literal["upper", "lower", "estimate", "as-printed"]
#: The allowed values of :data:`Bound`, in that order.
BOUNDS: tuple[str, ...] = ("upper", "lower", "estimate", "as-printed")


def check_bound(value: Any) -> str:
    """Validate a :data:`Bound` value (``"upper"``, ``"lower"``, ``"estimate"`` or ``"as-printed"``).

    Example:
        >>> check_bound("upper")
        'upper'
    """
    return check_choice("bound", value, BOUNDS)


@runtime_checkable
class PrivacyCurve(Protocol):
    """A privacy curve ``eps -> delta(eps)`` and which way it is sound.

    Attributes:
        bound: ``"upper"`` (certified), ``"lower"`` (exhibited), ``"estimate"`` or
            ``"as-printed"`` (see the module docstring).

    Contract (tested for every curve class of the library in ``tests/test_curves_protocol.py``):

    * ``delta(eps)`` / ``log_delta(eps)`` accept ``eps >= 0`` (a scalar gives a ``float``, an array
      an array of the same shape); ``delta`` is in ``[0, 1]`` and non-increasing in ``eps`` (up to
      the rounding of the evaluation), ``log_delta = log(delta)`` with ``-inf`` for an exact zero.
    * ``epsilon(delta)`` for ``delta`` in ``(0, 1)`` is non-increasing in ``delta``. For an
      ``"upper"`` curve the returned ``eps`` satisfies ``delta(eps) <= delta`` as evaluated (the
      round trip ``epsilon(delta(e)) <= e`` holds up to the root finder's resolution); for a
      ``"lower"`` curve ``delta(eps) > delta`` at the returned ``eps`` (or it is 0).

    Example:
        >>> from shuffle_accounting import ShuffledKRR
        >>> isinstance(ShuffledKRR(k=4, eps0=1.0, n=100), PrivacyCurve)
        True
    """

    @property
    def bound(self) -> str:
        """Which way the curve is sound."""
        ...

    def delta(self, eps: Any) -> Any:
        """``delta(eps)``."""
        ...

    def log_delta(self, eps: Any) -> Any:
        """Natural log of ``delta(eps)``."""
        ...

    def epsilon(self, delta: float) -> float:
        """``epsilon(delta)``, on the curve's sound side."""
        ...


def prob_from_log(log_value: float, *, bound: str = "upper") -> float:
    """``exp(log_value)`` capped at 1, rounded towards the curve's sound side.

    For an ``"upper"`` curve an upper bound stays an upper bound: where ``exp`` lands in the
    subnormal range (below ~2.2e-308, accurate only to 5e-324 absolute) one subnormal step is
    added, so a finite log (a positive bound) never comes back as 0.0; a delta >= 1 is capped at
    1 (trivially valid). For a ``"lower"`` curve the value is rounded one float down (``exp`` is
    within one ulp). ``-inf`` (an exact zero) gives 0.0 for every bound.

    Args:
        log_value: Natural log of delta (``-inf`` allowed; NaN is rejected).
        bound: ``"upper"``, ``"lower"``, ``"estimate"`` or ``"as-printed"`` (the last two: plain exp).

    Returns:
        The probability in ``[0, 1]``.

    Raises:
        ParameterError: If ``log_value`` is NaN or ``bound`` is unknown.

    Example:
        >>> prob_from_log(-800.0) > 0.0, prob_from_log(0.5), prob_from_log(-math.inf)
        (True, 1.0, 0.0)
    """
    bound = check_bound(bound)
    log_value = float(log_value)
    if math.isnan(log_value):
        raise ParameterError("log_value must be a real number or -inf, got nan")
    if log_value >= 0.0:
        return 1.0
    if log_value == -math.inf:
        return 0.0
    value = math.exp(log_value)
    if bound == "upper":
        if value < 2.3e-308:
            value += 5e-324
    elif bound == "lower" and value > 0.0:
        value = math.nextafter(value, 0.0)
    return value


#: Largest epsilon :func:`epsilon_from_delta` searches when the curve names no ``hi``.
MAX_SEARCH_EPS = 2.0**20

#: Root-finding methods of :func:`epsilon_from_delta`.
SEARCH_METHODS: tuple[str, ...] = ("bisect", "illinois", "newton")


@dataclass(frozen=True)
class EpsilonSearch:
    """What :func:`epsilon_from_delta` found (``full_output=True``).

    Attributes:
        epsilon: The answer on the sound side (what ``full_output=False`` returns).
        lo: Final bracket's lower end: ``delta_at(lo) > delta`` was evaluated (or ``lo`` was vouched
            for by the caller, ``check_lo=False``).
        hi: Final bracket's upper end: ``delta_at(hi) <= delta`` was evaluated, or ``hi`` is the
            caller's vouched end (``eps0``).
        estimate: The method's last prediction of the root (unverified; a starting point for a
            tighter search, never an answer).
        slope: Last slope of the value (log delta when ``log=True``) in eps, or NaN.
        evaluations: Calls of ``delta_at`` made by the search (``verify`` calls not counted).
    """

    epsilon: float
    lo: float
    hi: float
    estimate: float
    slope: float
    evaluations: int


def log_target(delta: float, *, bound: str = "upper") -> float:
    """The log of a delta target, rounded so that a comparison in log space is sound in delta.

    ``bound="upper"``: the largest float ``l <= log(delta)`` with ``exp(l) <= delta`` in floating
    point, so that ``log_delta(eps) <= l`` implies ``delta(eps) = exp(log_delta(eps)) <= delta``
    (not even the one ulp of ``exp(log(delta))`` above it; found at ``k = 6,
    eps0 = 6.25390625, n = 218, delta = 0.35317312596329503``). ``bound="lower"``: the smallest
    float ``l >= log(delta)`` with ``exp(l) >= delta``, so that ``log_delta(eps) > l`` implies an
    exhibited delta above ``delta``.

    Args:
        delta: Target in ``(0, 1)``.
        bound: ``"upper"`` or ``"lower"`` (keyword only).

    Returns:
        The rounded log target.

    Example:
        >>> math.exp(log_target(0.35317312596329503)) <= 0.35317312596329503
        True
    """
    delta = check_delta("delta", delta)
    bound = check_choice("bound", bound, ("upper", "lower"))
    lt = math.log(delta)
    if bound == "upper":
        while math.exp(lt) > delta:
            lt = math.nextafter(lt, -math.inf)
    else:
        while math.exp(lt) < delta:
            lt = math.nextafter(lt, math.inf)
    return lt


def step_up_until(ok: Callable[[float], bool], eps: float, *, cap: float, step: float = 1e-9) -> float:
    """The smallest of ``eps, eps (1 + step) + tiny, ...`` (relative step doubling each time) with ``ok``.

    The one "step up until certified" loop: a candidate epsilon found with one evaluation is
    re-checked with another (the public evaluation, whose truncation windows may differ slightly,
    or a delta-query certificate after an epsilon-query one) and moved up until that accepts it.
    ``cap`` is returned unchecked once reached: the caller vouches for it (e.g. ``eps0``: shuffled
    ``eps0``-LDP reports are ``eps0``-DP). Every returned value below ``cap`` was checked.

    Args:
        ok: ``eps -> True`` where the checking evaluation certifies ``eps``.
        eps: The candidate.
        cap: The vouched value (returned when reached).
        step: First relative step (doubles after each rejection).

    Returns:
        The first accepted candidate, or ``cap``.

    Example:
        >>> step_up_until(lambda e: e >= 1.0, 0.999, cap=2.0, step=1e-4) >= 1.0
        True
    """
    while eps < cap and not ok(eps):
        eps = min(cap, eps * (1.0 + step) + 1e-300)
        step *= 2.0
    return float(min(eps, cap)) if eps >= cap else float(eps)


#: Largest relative jump of one secant step of :func:`step_up_secant` (a noisy slope estimate
#: cannot throw the candidate far; the doubling step still grows without limit).
SECANT_MAX_JUMP = 1e-2


def step_up_secant(excess: Callable[[float], float], eps: float, *, cap: float, step: float = 1e-9) -> float:
    """:func:`step_up_until` with ``ok(e) = excess(e) <= 0``, moving by secant steps where it can.

    For a check whose rejections are costly and whose excess falls smoothly as ``eps`` grows
    (the worst-case round trip of ``ShuffledKRR.epsilon``: ``excess`` = certified ``log delta``
    of the delta query minus the target, about ``tol`` at the start, one branch and bound per
    call). The candidates are those of :func:`step_up_until` (relative step doubling after each
    rejection), except that after two rejections whose excess fell from ``x'`` at ``e'`` to
    ``x > 0`` at ``e``, the next one is ``e + 1.25 x (e - e') / (x' - x)`` (the secant's root,
    a quarter further), kept between the doubling candidate and ``e (1 + SECANT_MAX_JUMP)``
    (never below the doubling candidate, so the loop ends as :func:`step_up_until` does). Only
    which candidates are tried changes: every returned value below ``cap`` has
    ``excess <= 0``; ``cap`` is returned unchecked once reached (the caller vouches for it).

    Args:
        excess: ``eps -> float``; a candidate is accepted where it is ``<= 0``.
        eps: The first candidate.
        cap: The vouched value (returned when reached).
        step: First relative step (doubles after each rejection).

    Returns:
        The first accepted candidate, or ``cap``.

    Example:
        >>> calls = []
        >>> e = step_up_secant(lambda e: calls.append(e) or 1.001 - e, 1.0, cap=2.0, step=1e-6)
        >>> 1.001 <= e < 1.0013, len(calls)  # step_up_until: 11 checks, up to 1.00102
        (True, 3)
    """
    prev: tuple[float, float] | None = None
    while eps < cap:
        x = float(excess(eps))
        if x <= 0.0:
            return float(eps)
        nxt = eps * (1.0 + step) + 1e-300
        if prev is not None and math.isfinite(x) and prev[1] > x and eps > prev[0]:
            jump = 1.25 * x * (eps - prev[0]) / (prev[1] - x)
            nxt = max(nxt, min(eps + jump, eps * (1.0 + SECANT_MAX_JUMP)))
        prev = (eps, x)
        eps = min(cap, nxt)
        step *= 2.0
    return float(cap)


def epsilon_from_delta(
    delta_at: Callable[[float], Any],
    delta: float,
    *,
    bound: str,
    lo: float = 0.0,
    hi: float = math.inf,
    rtol: float = 1e-12,
    atol: float = 1e-12,
    max_iter: int = 80,
    method: str = "bisect",
    log: bool = False,
    derivative: bool = False,
    guess: float | None = None,
    slope: float | None = None,
    aim: float = 0.0,
    settle: bool = True,
    check_lo: bool = True,
    verify: Callable[[float], bool] | None = None,
    verify_step: float = 1e-9,
    full_output: bool = False,
) -> Any:
    """The one "epsilon from delta" root finder, kept on the curve's sound side.

    ``delta_at`` must be the curve's own evaluation (non-increasing in eps; with ``log=True`` it
    returns ``log delta`` with ``-inf`` for 0; with ``derivative=True`` a pair ``(value, d value /
    d eps)``). The search keeps a bracket ``[lo, hi]`` with ``delta_at(lo) > delta`` and
    ``delta_at(hi) <= delta`` (each end evaluated, or vouched for by the caller: ``hi`` is never
    evaluated, ``lo`` is checked first unless ``check_lo=False``) and shrinks it by

    * ``method="bisect"`` (default): bisection (:func:`shuffle_accounting._logmath.bisect_bracket`)
      until the bracket is narrower than ``max(rtol * hi, atol)``;
    * ``method="illinois"``: false position on the bracket ends' values with the Illinois rule
      (halve the stored value of an end kept twice; Dowell and Jarratt, BIT 1971): superlinear
      without derivatives, ~10 evaluations to ``rtol = 1e-9`` on a smooth ``log delta``;
    * ``method="newton"``: Newton steps with the slope from ``derivative=True`` (e.g. the blanket's
      ``-e^eps Q(L > e^eps) / delta``), else secant steps from the last two evaluations, starting
      from ``slope`` (an approximation's slope: it only steers the steps). Every step outside the
      bracket is replaced by the midpoint. It stops once the bracket is narrower than
      ``max(rtol * hi, atol)``, or once the point just evaluated is on the sound side and the next
      prediction lies within ``rtol`` of it on the other side (the root is then within ``rtol``
      of a verified point) by a *local* slope: the derivative, the caller's ``slope`` at the first
      point, or a secant over two points within 1 % of each other (a chord between distant points
      steers the next step but cannot end the search: on a linear ``delta`` scale it can be off
      by orders of magnitude); a prediction within ``rtol`` on the unsound side is replaced by a point
      ``rtol`` beyond it, so that the last steps land on the sound side (``settle=False``: the
      search stops there instead, for a coarse first phase whose ``estimate`` seeds a tighter
      search). ``aim`` biases every other prediction by that relative amount towards the sound
      side (a last step then tends to land on it: one evaluation fewer).

    ``guess`` (illinois, newton) is the first point evaluated (inside the bracket; else the
    midpoint). The search stops after ``max_iter`` evaluations in any case: the answer is then
    still on the sound side, only less tight. Then

    * ``bound="upper"`` (also ``"estimate"``, ``"as-printed"``): the upper end ``hi`` is returned,
      a point at which ``delta_at`` was *evaluated* and found ``<= delta`` (or the caller's ``hi``).
      It is sound even where ``delta_at`` is not monotone (then it may just not be the smallest).
      ``lo`` is returned if ``delta_at(lo) <= delta``. With ``verify`` (upper only), the answer is
      then moved up by :func:`step_up_until` (first relative step ``verify_step``) until
      ``verify(eps)`` holds or the caller's ``hi`` is reached: the way a search run on a cheaper
      or internal evaluation ends with the public evaluation's check.
    * ``bound="lower"``: the lower end is returned, a point at which the exhibited ``delta_at`` was
      evaluated and found ``> delta`` (so no ``(eps, delta)`` guarantee holds below it), or ``lo``
      if ``delta_at(lo) <= delta``; ``hi`` if ``delta_at(hi) > delta`` (``hi`` is then evaluated).

    A NaN value counts as "not certified" for an upper curve and "not exhibited" for a lower one
    (it never becomes the answer). With ``hi = inf`` the search first doubles ``hi`` from 1 until ``delta_at(hi) <= delta`` (at
    most up to :data:`MAX_SEARCH_EPS`, then it raises).

    Searches that stay specialised (and why): the worst-case certificates' epsilons
    (``shuffled_krr.worst_case*``: a branch and bound over covers of datasets, where each bound's
    epsilon is a by-product of refining the cover, not a root of one curve), the blanket's
    vectorised grid inversion (``blanket``: many targets at once), and the calibrations
    (``shuffled_krr.calibration``: roots in ``eps0`` or ``n``, not in ``eps``; see
    :func:`calibrate`). The exhibited lower bound (``shuffled_krr.lower``) takes the largest of
    its datasets' roots, each found here on the lower side.

    Args:
        delta_at: ``eps -> delta(eps)`` (the curve's evaluation, not a surrogate), or
            ``log delta(eps)`` with ``log=True``, or a ``(value, slope)`` pair with
            ``derivative=True``.
        delta: Target delta in ``(0, 1)``.
        bound: Which side to keep (see above).
        lo: Lower end of the search (default 0).
        hi: Upper end of the search (an epsilon known to be valid), or ``inf``.
        rtol: Relative resolution of the bracket.
        atol: Absolute resolution of the bracket.
        max_iter: Largest number of evaluations of the search (bisection: steps).
        method: ``"bisect"``, ``"illinois"`` or ``"newton"`` (see above).
        log: ``delta_at`` returns ``log delta``.
        derivative: ``delta_at`` returns ``(value, slope)`` (newton uses the slope).
        guess: First point of an illinois or newton search.
        slope: Initial slope of the value in eps for secant steps (newton without derivative).
        aim: Relative bias of newton predictions towards the sound side, in ``[0, 1e-3]``.
        settle: Newton only: end on a verified point near the root (see above).
        check_lo: Evaluate ``lo`` first (``False``: the caller vouches ``delta_at(lo) > delta``).
        verify: ``eps -> bool``, a final check of the answer (upper curves only; see above).
        verify_step: First relative step of the ``verify`` step-up.
        full_output: Return an :class:`EpsilonSearch` instead of the epsilon.

    Returns:
        The epsilon on the sound side (an :class:`EpsilonSearch` with ``full_output=True``).

    Raises:
        ParameterError: If an argument is invalid (``delta`` not in ``(0, 1)``, ``bound`` or
            ``method`` unknown, ``hi < lo``, a negative tolerance, ``verify`` with a lower curve,
            ...), or (``hi = inf``) no epsilon up to :data:`MAX_SEARCH_EPS` meets ``delta``.

    Example:
        >>> f = lambda e: math.exp(-e)  # delta(eps) = e^-eps
        >>> up = epsilon_from_delta(f, 1e-3, bound="upper")
        >>> low = epsilon_from_delta(f, 1e-3, bound="lower")
        >>> f(up) <= 1e-3 < f(low), round(up, 9)
        (True, 6.907755279)
        >>> r = epsilon_from_delta(lambda e: (-e, -1.0), 1e-3, bound="upper", hi=50.0, log=True,
        ...                        derivative=True, method="newton", guess=1.0, rtol=1e-12,
        ...                        full_output=True)
        >>> -r.epsilon <= math.log(1e-3), r.evaluations, round(r.epsilon, 9)
        (True, 3, 6.907755279)
    """
    delta = check_delta("delta", delta)
    bound = check_bound(bound)
    method = check_choice("method", method, SEARCH_METHODS)
    lo = check_real("lo", lo, low=0.0)
    hi = check_real("hi", hi, low=lo, allow_inf=True)
    rtol = check_real("rtol", rtol, low=0.0, high=1.0, high_open=True)
    atol = check_real("atol", atol, low=0.0)
    max_iter = check_int("max_iter", max_iter, minimum=1)
    log = check_bool("log", log)
    derivative = check_bool("derivative", derivative)
    check_lo = check_bool("check_lo", check_lo)
    settle = check_bool("settle", settle)
    aim = check_real("aim", aim, low=0.0, high=1e-3)
    full_output = check_bool("full_output", full_output)
    verify_step = check_real("verify_step", verify_step, low=0.0, high=1.0, low_open=True)
    if not callable(delta_at):
        raise ParameterError(f"delta_at must be a callable eps -> delta, got {type(delta_at).__name__}")
    lower = bound == "lower"
    if verify is not None:
        if not callable(verify):
            raise ParameterError(
                f"verify must be a callable eps -> bool or None, got {type(verify).__name__}"
            )
        if lower:
            raise ParameterError("verify is for upper curves (a step up); got bound = 'lower'")
    if guess is not None:
        guess = check_real("guess", guess, low=0.0)
    if slope is not None:
        slope = check_real("slope", slope)
    target = log_target(delta, bound="lower" if lower else "upper") if log else delta
    calls = 0

    def value(e: float) -> tuple[float, float]:
        nonlocal calls
        calls += 1
        out = delta_at(e)
        if derivative:
            v, s = (float(x) for x in out)
        else:
            v, s = float(out), math.nan
        if math.isnan(v):  # never evidence for the sound side: not certified, not exhibited
            v = -math.inf if lower else math.inf
        return v, s

    def finish(eps: float, lo_: float, hi_: float, est: float, sl: float) -> Any:
        if verify is not None and not math.isinf(hi_user):
            eps = step_up_until(verify, eps, cap=hi_user, step=verify_step)
        eps = float(eps)
        if full_output:
            return EpsilonSearch(eps, float(lo_), float(hi_), float(est), float(sl), calls)
        return eps

    hi_user = hi
    g_lo = math.nan  # value - target at lo, once evaluated (illinois uses it)
    if check_lo:
        v_lo, _ = value(lo)
        if not v_lo > target:
            return finish(lo, lo, lo, lo, math.nan)
        g_lo = v_lo - target
    if math.isinf(hi):
        hi = max(1.0, 2.0 * lo)
        while (v_hi := value(hi)[0]) > target:
            lo, hi, g_lo = hi, 2.0 * hi, v_hi - target
            if hi > MAX_SEARCH_EPS:
                raise ParameterError(
                    f"no epsilon up to {MAX_SEARCH_EPS:g} meets delta = {delta!r} on this curve"
                )
        hi_user = hi
    elif lower and hi > lo and value(hi)[0] > target:
        return finish(hi, hi, hi, hi, math.nan)
    if method == "bisect":

        def above(e: float) -> bool:
            return value(e)[0] > target

        left, right = bisect_bracket(above, lo, hi, rtol=rtol, atol=atol, max_iter=max_iter)
        return finish(left if lower else right, left, right, 0.5 * (left + right), math.nan)
    return _root_search(
        value,
        target,
        lo,
        hi,
        g_lo=g_lo,
        lower=lower,
        rtol=rtol,
        atol=atol,
        max_iter=max_iter,
        method=method,
        guess=guess,
        slope=slope,
        aim=aim,
        settle=settle,
        finish=finish,
    )


#: A secant slope counts as the local slope at ``x`` (and may end a Newton search by a
#: predicted step under ``rtol``) only if its two points are this close, relative to ``x``.
_LOCAL_SECANT = 1e-2


#: Newton's early stop (a sound point whose prediction is within ``rtol``) is refused where the
#: other end of the bracket, evaluated within this relative distance, lies below the tangent:
#: the curve is concave there (near ``eps0``, ``log delta ~ log(eps0 - eps)``) and the root may
#: be further than the prediction. Only a near end is read, as a far one says little of the
#: curvature at the point (each refusal costs an evaluation).
_CONCAVE_NEAR = 1e-6

#: Newton without a derivative: after this many evaluations in a row that each left the bracket
#: wider than half its width three evaluations earlier, the next point is the midpoint (secant
#: steps can crawl: on a linear delta scale they alternated between both sides for 100 steps).
_STALL_BISECT = 4


def _root_search(
    value, target, lo, hi, *, g_lo, lower, rtol, atol, max_iter, method, guess, slope, aim, settle, finish
):
    """Illinois / Newton-secant body of :func:`epsilon_from_delta` (bracket kept, see there)."""
    g_hi = math.nan  # values of value - target at the ends (NaN: vouched, not evaluated)
    side = 0  # which end moved last (illinois): -1 lo, +1 hi
    sl = math.nan if slope is None else float(slope)
    local = slope is not None  # whether sl is the slope at (or next to) the current point
    prev: tuple[float, float] | None = None
    x = guess if guess is not None and lo < guess <= hi else 0.5 * (lo + hi)
    nx = x
    widths: list[float] = []  # bracket width after each evaluation (the stall guard)
    stalled = 0
    for _ in range(max_iter):
        fx, sx = value(x)
        gx = fx - target
        if gx > 0:
            lo, g_lo = x, gx
            if method == "illinois" and side == -1 and math.isfinite(g_hi):
                g_hi *= 0.5
            side = -1
        else:
            hi, g_hi = x, gx
            if method == "illinois" and side == 1 and math.isfinite(g_lo):
                g_lo *= 0.5
            side = 1
        if math.isfinite(sx):
            sl, local = sx, True
        elif prev is not None and math.isfinite(fx) and math.isfinite(prev[1]) and fx != prev[1]:
            sl = (fx - prev[1]) / (x - prev[0])  # secant slope of the last two evaluations
            # a chord between distant points says little about the slope at x (on a linear delta
            # scale it can be off by orders of magnitude), so it may steer the next step but not
            # declare convergence
            local = abs(x - prev[0]) <= _LOCAL_SECANT * abs(x)
        else:
            local = local and prev is None  # the caller's ``slope`` at the first point only
        width = hi - lo
        mid = 0.5 * (lo + hi)
        if width <= max(rtol * hi, atol):
            nx = mid
            break
        stalled = stalled + 1 if len(widths) >= 3 and width > 0.5 * widths[-3] else 0
        widths.append(width)
        if method == "illinois":
            if math.isfinite(g_lo) and math.isfinite(g_hi) and g_lo > g_hi:
                nx = lo + width * (g_lo / (g_lo - g_hi))
                nx = min(max(nx, lo + 1e-4 * width), hi - 1e-4 * width)
            else:
                nx = mid
            prev = (x, fx)
            x = nx
            continue
        ok = math.isfinite(fx) and math.isfinite(sl) and sl < 0
        sound = (gx > 0) if lower else (gx <= 0)
        if ok:
            nx = x - gx / sl
            if local and abs(nx - x) <= rtol * x:
                # a sound x whose prediction is within rtol ends the search where the curve is
                # convex (a decreasing convex curve lies above its tangent, so its root is between
                # the prediction and x); where a near evaluated other end of the bracket lies below
                # the tangent (concave, see _CONCAVE_NEAR) the root may be further: step past the
                # prediction, so that the bracket closes
                concave = (
                    not lower
                    and math.isfinite(g_lo)
                    and x - lo <= _CONCAVE_NEAR * x
                    and g_lo < gx + sl * (lo - x)
                )
                if sound and concave:
                    nx = x - max(2.0 * (x - nx), rtol * x)
                elif sound or not settle:
                    break  # the predicted root is within rtol of x (verified if sound)
                else:  # step just past the predicted root, onto the sound side
                    nx = (
                        max(x * (1.0 - rtol), 0.5 * (x + lo))
                        if lower
                        else min(x * (1.0 + rtol), 0.5 * (x + hi))
                    )
            elif aim:
                nx *= (1.0 - aim) if lower else (1.0 + aim)  # aim a hair onto the sound side
        else:
            nx = mid
        if not lo < nx < hi or (not math.isfinite(sx) and stalled >= _STALL_BISECT):
            nx = mid
            stalled = 0
        prev = (x, fx)
        x = nx
    return finish(lo if lower else hi, lo, hi, nx, sl)


def _scalar_or_array(eps: Any) -> tuple[np.ndarray, bool]:
    """(flat array of validated eps values, whether the input was a scalar)."""
    if np.ndim(eps) == 0 and not isinstance(eps, (str, bytes)):
        return np.array([check_real("eps", eps, low=0.0)]), True
    arr = check_real_array("eps", eps, low=0.0)
    return arr, arr.ndim == 0


class CurveBase:
    """Mixin: a :class:`PrivacyCurve` from one scalar evaluation.

    A subclass sets ``bound`` (class attribute or property) and implements ``_log_delta(eps)``
    for one validated ``eps >= 0`` (``-inf`` for an exact zero); ``_delta`` defaults to its
    exponential rounded towards the sound side (:func:`prob_from_log`). A curve whose formula gives
    delta directly implements ``_delta`` instead (``_log_delta`` then defaults to its log). It may
    set ``eps_max``: an epsilon at which the curve is known to hold with ``delta = 0`` (e.g.
    ``eps0``, the local guarantee); :meth:`epsilon` searches ``[0, eps_max]`` (``inf``: unbounded)
    with :func:`epsilon_from_delta` on ``_search_delta`` (by default ``_delta``; a curve undefined
    at ``eps = 0`` may answer the trivial ``1.0`` there). A curve with a closed-form inverse, or a
    specialised search that ends with the same sound-side check, may override :meth:`epsilon`.

    Example:
        >>> class Flat(CurveBase):
        ...     bound = "upper"
        ...     eps_max = 1.0
        ...     def _log_delta(self, eps):
        ...         return math.log(0.5) if eps < 1.0 else -math.inf
        >>> Flat().delta([0.0, 2.0]).tolist(), Flat().epsilon(0.6), Flat().epsilon(0.4)
        ([0.5, 0.0], 0.0, 1.0)
    """

    bound: ClassVar[str] = "upper"
    eps_max: float = math.inf

    def _log_delta(self, eps: float) -> float:
        d = float(self._delta(eps))
        return math.log(d) if d > 0.0 else -math.inf

    def _delta(self, eps: float) -> float:
        if type(self)._log_delta is CurveBase._log_delta:  # pragma: no cover - a subclass bug
            raise NotImplementedError(f"{type(self).__name__} implements neither _log_delta nor _delta")
        return prob_from_log(self._log_delta(eps), bound=self.bound)

    def _search_delta(self, eps: float) -> float:
        return self._delta(eps)

    def log_delta(self, eps: Any) -> Any:
        """Natural log of ``delta(eps)`` (``-inf`` where delta is exactly 0).

        Args:
            eps: Scalar or array of ``eps >= 0`` (finite).

        Returns:
            A ``float`` for a scalar, else an ``ndarray`` of the same shape.

        Raises:
            ParameterError: If ``eps`` is negative, NaN, infinite or not numeric (and whatever the
                curve raises outside its regime, e.g. ``BoundNotApplicable``).
        """
        arr, scalar = _scalar_or_array(eps)
        out = np.array([float(self._log_delta(float(e))) for e in arr.ravel()], dtype=float)
        return float(out[0]) if scalar else out.reshape(arr.shape)

    def delta(self, eps: Any) -> Any:
        """``delta(eps)`` (by default :meth:`log_delta` exponentiated towards the sound side).

        Args:
            eps: Scalar or array of ``eps >= 0`` (finite).

        Returns:
            A ``float`` for a scalar, else an ``ndarray`` of the same shape.

        Raises:
            ParameterError: As :meth:`log_delta`.
        """
        arr, scalar = _scalar_or_array(eps)
        out = np.array([float(self._delta(float(e))) for e in arr.ravel()], dtype=float)
        return float(out[0]) if scalar else out.reshape(arr.shape)

    def epsilon(self, delta: float) -> float:
        """``epsilon(delta)`` by :func:`epsilon_from_delta` on ``[0, eps_max]``, on the sound side.

        Args:
            delta: Target delta in ``(0, 1)``.

        Returns:
            For an upper curve an epsilon at which :meth:`delta` is ``<= delta`` (or ``eps_max``);
            for a lower curve one at which it is ``> delta`` (or 0).

        Raises:
            ParameterError: If ``delta`` is not in ``(0, 1)``.
        """
        delta = check_delta("delta", delta)
        return epsilon_from_delta(self._search_delta, delta, bound=self.bound, hi=float(self.eps_max))


_MONOTONE = ("increasing", "decreasing")


def calibrate(
    make_curve: Callable[[Any], PrivacyCurve],
    *,
    low: float,
    high: float,
    epsilon: float,
    delta: float,
    monotone: str,
    integer: bool = False,
    rtol: float = 1e-9,
    max_iter: int = 200,
) -> float | int:
    """The one calibration: the extreme parameter whose certified curve meets ``(epsilon, delta)``.

    For any parameter ``x`` on which the curve's privacy loss is monotone (after
    ``dp_accounting.mechanism_calibration.calibrate_dp_mechanism``): ``monotone="increasing"``
    when a larger ``x`` is *less* private (e.g. the local ``eps0``, a number of rounds): the
    **largest** ``x`` in ``[low, high]`` is returned; ``"decreasing"`` when a larger ``x`` is more
    private (e.g. the number of users, a noise scale): the **smallest** one. "Meets" means
    ``make_curve(x).delta(epsilon) <= delta`` as evaluated; the returned value is always one at
    which that was evaluated and held (it is verified, never interpolated). Bisection by
    :func:`shuffle_accounting._logmath.bisect_bracket` (reals, to ``rtol``) or on the integers.

    Args:
        make_curve: ``x -> curve``; every curve must have ``bound == "upper"`` (calibrating on a
            lower or estimated curve would not give a guarantee).
        low: Lower end of the parameter range (finite).
        high: Upper end (finite, ``>= low``).
        epsilon: Target epsilon, finite and ``>= 0``.
        delta: Target delta in ``(0, 1)``.
        monotone: ``"increasing"`` or ``"decreasing"`` (how the privacy loss moves with ``x``).
        integer: Search the integers in ``[low, high]`` (e.g. a number of users).
        rtol: Relative resolution for a real parameter, in ``(0, 1)``.
        max_iter: Largest number of bisection steps (integer >= 1).

    Returns:
        The calibrated parameter (``int`` when ``integer``).

    Raises:
        ParameterError: On invalid arguments, if a curve is not an upper curve, or if no value in
            ``[low, high]`` meets the target.

    Example:
        >>> from shuffle_accounting import ShuffledKRR
        >>> n = calibrate(lambda n: ShuffledKRR(k=3, eps0=1.0, n=n), low=2, high=2000,
        ...               epsilon=0.5, delta=1e-6, monotone="decreasing", integer=True)
        >>> ShuffledKRR(3, 1.0, n).delta(0.5) <= 1e-6 < ShuffledKRR(3, 1.0, n - 1).delta(0.5)
        True
    """
    epsilon = check_real("epsilon", epsilon, low=0.0)
    delta = check_delta("delta", delta)
    monotone = check_choice("monotone", monotone, _MONOTONE)
    low = check_real("low", low)
    high = check_real("high", high, low=low)
    rtol = check_real("rtol", rtol, low=0.0, high=1.0, low_open=True, high_open=True)
    max_iter = check_int("max_iter", max_iter, minimum=1)
    integer = check_bool("integer", integer)
    if not callable(make_curve):
        raise ParameterError(
            f"make_curve must be a callable parameter -> curve, got {type(make_curve).__name__}"
        )
    if integer:
        if low != math.floor(low) or high != math.floor(high):
            raise ParameterError(
                f"low and high must be integers when integer=True, got low = {low!r}, high = {high!r}"
            )
        low, high = int(low), int(high)

    def meets(x: Any) -> bool:
        curve = make_curve(int(x) if integer else x)
        if getattr(curve, "bound", None) != "upper":
            raise ParameterError(
                f"calibrate needs certified curves (bound == 'upper'), got bound = "
                f"{getattr(curve, 'bound', None)!r} from make_curve({x!r})"
            )
        return float(curve.delta(epsilon)) <= delta

    # the private end of the range must meet the target; the other end may already meet it
    private_end, loose_end = (low, high) if monotone == "increasing" else (high, low)
    if not meets(private_end):
        raise ParameterError(
            f"no parameter in [{low!r}, {high!r}] meets (epsilon, delta) = ({epsilon!r}, {delta!r}): "
            f"even {private_end!r} does not"
        )
    if meets(loose_end):
        return loose_end

    def above(x: float) -> bool:
        # true below the switch point: "meets" for increasing, "fails" for decreasing
        return meets(x) if monotone == "increasing" else not meets(x)

    if integer:
        lo_i, hi_i = int(low), int(high)  # above(lo_i) and not above(hi_i)
        for _ in range(max(int(max_iter), 64)):
            if hi_i - lo_i <= 1:
                break
            mid = (lo_i + hi_i) // 2
            if above(mid):
                lo_i = mid
            else:
                hi_i = mid
        return lo_i if monotone == "increasing" else hi_i
    lo_r, hi_r = bisect_bracket(above, float(low), float(high), rtol=rtol, max_iter=int(max_iter))
    return lo_r if monotone == "increasing" else hi_r


@dataclass(frozen=True)
class Interval:
    """The one result shape for two-sided results: ``lower <= true value <= upper``.

    Attributes:
        lower: Lower end (``-inf`` allowed; never NaN).
        upper: Upper end (``>= lower``; ``inf`` allowed).
        certified: Keyword only, required: ``True`` when the interval is proven to contain the true
            value (every rounding outward); ``False`` for an estimate (quadrature error estimate,
            confidence interval, a theorem's bounds evaluated in plain floating point).
        estimate: Keyword only: a point estimate inside ``[lower, upper]``, or ``None``.

    Raises:
        ParameterError: If an end is NaN or not a real number, ``lower > upper``, ``certified`` is
            not a bool or ``estimate`` lies outside the interval.

    Example:
        >>> iv = Interval(0.1, 0.3, certified=True, estimate=0.2)
        >>> 0.25 in iv, iv.width, iv.certified
        (True, 0.19999999999999998, True)
        >>> Interval(0.3, 0.1, certified=False)
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: an interval needs lower <= upper, got lower = 0.3, upper = 0.1
    """

    lower: float
    upper: float
    _: KW_ONLY
    certified: bool
    estimate: float | None = None

    def __post_init__(self) -> None:
        self._check_interval()

    def _init_interval(
        self, lower: float, upper: float, *, certified: bool, estimate: float | None, **extra: Any
    ) -> None:
        """Set the fields of a subclass that keeps its own (legacy) constructor signature, then validate.

        A subclass declared ``@dataclass(frozen=True, init=False)`` with extra fields calls this
        from its ``__init__``: every result type of the library is then an :class:`Interval` with
        its old attribute names kept (as extra fields or properties).
        """
        values = {"lower": lower, "upper": upper, "certified": certified, "estimate": estimate, **extra}
        for name, value in values.items():
            object.__setattr__(self, name, value)
        self._check_interval()

    def _check_interval(self) -> None:
        for name in ("lower", "upper"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ParameterError(f"{name} must be a real number (inf allowed), got {value!r}")
            if math.isnan(value):
                raise ParameterError(f"{name} must be a real number (inf allowed), got nan")
        if not self.lower <= self.upper:
            raise ParameterError(
                f"an interval needs lower <= upper, got lower = {self.lower!r}, upper = {self.upper!r}"
            )
        if not isinstance(self.certified, (bool, np.bool_)):
            raise ParameterError(f"certified must be True or False, got {self.certified!r}")
        est = self.estimate
        if est is not None:
            if (
                isinstance(est, bool)
                or not isinstance(est, (int, float, np.integer, np.floating))
                or math.isnan(est)
            ):
                raise ParameterError(f"estimate must be a real number or None, got {est!r}")
            if not self.lower <= est <= self.upper:
                raise ParameterError(
                    f"estimate must lie in [lower, upper] = [{self.lower!r}, {self.upper!r}], got {est!r}"
                )

    def __contains__(self, value: object) -> bool:
        return bool(
            isinstance(value, (int, float, np.integer, np.floating)) and self.lower <= value <= self.upper
        )

    @property
    def width(self) -> float:
        """``upper - lower``."""
        return self.upper - self.lower
