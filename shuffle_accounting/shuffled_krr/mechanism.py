"""The shuffled k-RR mechanism and its certified privacy curve.

:class:`ShuffledKRR` is ``n`` users applying k-ary randomized response with local privacy ``eps0``
followed by a uniformly random shuffle; neighbouring datasets differ in one user's value. Its
``delta(eps)`` is a certified upper bound on ``sup_{D ~ D'} H_{e^eps}(P_D || P_D')``: the exact
privacy-blanket divergence of Balle, Bell, Gascón, Nissim (*The Privacy Blanket of the Shuffle
Model*, CRYPTO 2019), computed by :func:`shuffle_accounting.shuffled_krr.blanket.certified_log_delta`
with every truncation bounded and every rounding outward (from :data:`FAST_BLANKET_MIN_N` users on
by the sub-linear certified evaluator :mod:`~shuffle_accounting.shuffled_krr.blanket_fast`, never
below that sum and within ``1e-6`` relative of it), and for ``k = 2`` also the certified exact
worst case (:mod:`~shuffle_accounting.shuffled_krr.worst_case`), for ``k = 3`` the certified
worst case by branch and bound over boxes (:mod:`~shuffle_accounting.shuffled_krr.worst_case_k`),
for ``k >= 4`` the certified bound that keeps the largest class exact
(:mod:`~shuffle_accounting.shuffled_krr.worst_case_multi`), the smaller one returned.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr

from .._logmath import bisect_bracket
from .._validation import ParameterError, check_choice, check_delta, check_real, check_real_array
from ..curves import epsilon_from_delta, log_target, step_up_secant, step_up_until
from ..randomizers import KRR
from . import blanket_fast as _fast
from . import worst_case as _wc
from . import worst_case_k as _wck
from . import worst_case_multi as _wcm
from .blanket import (
    BlanketEvaluator,
    SoundnessError,
    blanket_degenerate,
    certified_log_delta,
    check_krr_parameters,
)
from .lower import WorstDataset, lower_epsilon, lower_log_delta, worst_dataset

#: ``method="auto"`` uses the certified worst case (k = 2) up to this many users when
#: ``eps0 >= AUTO_WORST_CASE_SMALL_EPS0`` (measured on the shared 2-core box under load 4-8 at
#: n = 1e6: 1-2 s per ``epsilon(1e-6)`` or ``delta(eps)`` at eps0 = 2, 0.1 s at eps0 = 10), and up to
#: :data:`AUTO_WORST_CASE_SMALL_EPS0_MAX_N` users below that eps0 (at n = 1e6 and eps0 in
#: [0.05, 1] a ``delta(eps)`` needs 600-800 interval bounds, 8-18 s; at n = 1e5, 0.4-2.4 s); above
#: it ``auto`` returns the blanket bound (pass ``method="worst-case"`` to force it). See
#: :func:`auto_uses_worst_case` and benchmarks/README.md.
AUTO_WORST_CASE_MAX_N: int = 1_000_000
#: The eps0 below which ``auto`` keeps the k = 2 worst case to smaller deployments.
AUTO_WORST_CASE_SMALL_EPS0: float = 2.0
#: The largest n at which ``auto`` uses the k = 2 worst case for ``eps0 < AUTO_WORST_CASE_SMALL_EPS0``.
AUTO_WORST_CASE_SMALL_EPS0_MAX_N: int = 100_000
#: ``method="auto"`` delta queries use the worst case only where the blanket's log delta is at
#: least this (delta >= e^-200 ~ 1.4e-87): deeper in the tail the branch and bound's cover grows
#: (k = 2, n = 1e4, eps = 1: 1100 evaluations for delta ~ e^-450; minutes at n = 1e5) while no
#: deployment budgets such a delta; the blanket value returned there is certified all the same.
AUTO_WORST_CASE_MIN_LOG_DELTA: float = -200.0
#: ``k = 3``: ``method="auto"`` uses the worst case only where the log delta (the blanket's for a
#: delta query, ``log(delta)`` for an epsilon query) is at least this. auto's k = 3 delta query
#: is the shallow one (``certify_k(deep=False)``: truncation down to e^-60, resolution about
#: e^-85), so below it the round trip cannot confirm a smaller epsilon than the blanket's, and
#: the epsilon query was spent in vain (n = 490, eps0 = 0.12, delta = 6.8e-60: 27 s for the
#: blanket's value; now 0.1 s). ``method="worst-case"`` goes deep.
AUTO_WORST_CASE_K3_MIN_LOG_DELTA: float = -85.0
#: ``method="auto"`` uses the certified worst case for ``k = 3``
#: (:mod:`~shuffle_accounting.shuffled_krr.worst_case_k`) up to this many users: the largest n at
#: which one default ``epsilon(delta)`` (certificate, then the round trip's delta query, read
#: from the bounds memo of ``worst_case_k``) stayed about <= 1 s of CPU on the shared 2-core
#: machine (autok, load 2-4; benchmarks/bench_auto_k.py, table in benchmarks/README.md): at
#: eps0 in {0.5, 1, 2, 4} and delta in {1e-6, 1e-9}, 0.1-0.3 s up to n = 200, 0.2-1.0 s at
#: n = 500, 1.2-2.6 s at n = 1000 (8.5 s at eps0 = 4, delta = 1e-9: the epsilon query alone).
#: The gain over the blanket: 0.1-3 % in epsilon at n <= 500. ``method="worst-case"`` goes further.
AUTO_WORST_CASE_K_MAX_N: int = 500
#: ``method="auto"`` uses the certified worst case for ``k >= 4`` (the type bounds of
#: :mod:`~shuffle_accounting.shuffled_krr.worst_case_multi`, no box search) up to this many users
#: (measured as for :data:`AUTO_WORST_CASE_K_MAX_N`: k = 4, 0.1-0.5 s per ``epsilon`` up to
#: n = 100, 0.8-1.1 s at n = 200, 7-7.5 s at n = 500; k = 5, 10 in benchmarks/README.md).
#: Where the type bounds lose to the blanket, ``epsilon`` skips the round trip's delta query.
AUTO_WORST_CASE_MULTI_MAX_N: int = 200
#: :meth:`ShuffledKRR.epsilon_lower` and :meth:`ShuffledKRR.worst_dataset` (k >= 4, where ``auto``
#: uses the worst case) take their witness from the box search of
#: :mod:`~shuffle_accounting.shuffled_krr.worst_case_boxes` up to this many users (the former
#: ``auto`` limit), from the type bounds' certificate above it (the box search: 5-20 s at
#: n = 100-200).
LOWER_BOX_SEARCH_MAX_N: int = 30
_METHODS = ("auto", "blanket", "worst-case")
#: From this many users on, the blanket bound (``log_delta`` / ``delta`` with ``method="blanket"``,
#: the blanket part of ``"auto"``, and ``epsilon``) is evaluated by the sub-linear certified
#: evaluator :mod:`~shuffle_accounting.shuffled_krr.blanket_fast` (within
#: :data:`~shuffle_accounting.shuffled_krr.blanket_fast.DEFAULT_RTOL` of the exact blanket sum, and
#: never below it); below it, by the exact sum of :mod:`~shuffle_accounting.shuffled_krr.blanket`,
#: which stays the reference path. Where the fast bracket is wider than its tolerance (its work
#: caps, deltas far below 1e-100 only), the exact sum is evaluated too and the smaller certified
#: value is returned.
FAST_BLANKET_MIN_N: int = 100_000

__all__ = [
    "ShuffledKRR",
    "auto_uses_worst_case",
    "AUTO_WORST_CASE_MAX_N",
    "AUTO_WORST_CASE_SMALL_EPS0",
    "AUTO_WORST_CASE_SMALL_EPS0_MAX_N",
    "AUTO_WORST_CASE_K_MAX_N",
    "AUTO_WORST_CASE_MIN_LOG_DELTA",
    "AUTO_WORST_CASE_K3_MIN_LOG_DELTA",
    "AUTO_WORST_CASE_MULTI_MAX_N",
    "FAST_BLANKET_MIN_N",
    "LOWER_BOX_SEARCH_MAX_N",
]

#: ``ShuffledKRR.epsilon``: a worst-case epsilon within this fraction of ``eps0`` below the
#: round trip's vouched cap (``eps0``, or auto's blanket epsilon) returns the cap without the
#: delta query (at most ``1e-8 eps0`` looser; see the comment there).
_ROUND_TRIP_SKIP: float = 1e-8

#: Answers kept by the memo of :meth:`ShuffledKRR.epsilon` / :meth:`ShuffledKRR.log_delta` (each).
MEMO_SIZE: int = 256


def _memoised_at_scale(fn):
    """Bounded memo (``functools.lru_cache``) of a pure method, for ``n >= FAST_BLANKET_MIN_N``.

    ``ShuffledKRR`` is a frozen (hashable) value, and ``epsilon(delta)`` / ``log_delta(eps)`` are
    pure functions of it, the scalar argument and ``method``: a repeated identical question at a
    scale where one answer costs seconds is answered from the memo (at most :data:`MEMO_SIZE`
    answers per method, least recently used dropped). Smaller ``n`` and array arguments are
    computed every time. Invalid arguments raise as before (exceptions are not memoised).
    """
    cached = functools.lru_cache(maxsize=MEMO_SIZE)(fn)

    @functools.wraps(fn)
    def wrapper(self, x, *, method: str = "auto"):
        if self.n >= FAST_BLANKET_MIN_N and isinstance(x, (float, int)) and not isinstance(x, bool):
            return cached(self, x, method=method)
        return fn(self, x, method=method)

    wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
    wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return wrapper


def _gaussian_guess(mu: float, log_target: float) -> float:
    """eps solving the Gaussian-mechanism curve ``Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2) = delta``.

    Only a starting point for the root finder (the CLT limit of the blanket divergence).
    """

    def logd(e: float) -> float:
        a = log_ndtr(-e / mu + mu / 2.0)
        b = e + log_ndtr(-e / mu - mu / 2.0)
        return a + math.log(-math.expm1(b - a)) if b < a else -math.inf

    lo, hi = 0.0, 1.0
    while logd(hi) > log_target and hi < 1e3:
        lo, hi = hi, hi * 2.0
    return bisect_bracket(lambda e: logd(e) > log_target, lo, hi)[1]


def _log_target(delta: float) -> float:
    """The largest float ``l <= log(delta)`` with ``exp(l) <= delta`` in floating point.

    ``epsilon`` accepts ``eps`` when ``log_delta(eps) <= l``; ``delta(eps) = exp(log_delta(eps))``
    then never exceeds ``delta``, not even by the one ulp of ``exp(log(delta))`` (found at
    ``k = 6, eps0 = 6.25390625, n = 218, delta = 0.35317312596329503``).
    """
    return log_target(delta, bound="upper")


def _checked(cert):
    """Standing invariant: a certified value below its own exhibited value is an internal error."""
    if cert.query == "delta":
        bad = cert.log_delta < cert.exhibited_log_delta
    else:
        bad = cert.epsilon < cert.epsilon_lower
    if bad:  # pragma: no cover - would be a bug in the certificate
        raise SoundnessError(f"internal error: certified value below the exhibited one in {cert!r}")
    return cert


def no_certified_below_exhibited(certified: float, exhibited: float, what: str) -> None:
    """Standing invariant (issue 10): a certified value below an exhibited one is a bug: raise."""
    if certified < exhibited:
        raise SoundnessError(
            f"internal error: the certified blanket {what} = {certified!r} is below the value "
            f"{exhibited!r} exhibited by a concrete dataset; refusing to return it"
        )


def auto_uses_worst_case(k: int, eps0: float, n: int) -> bool:
    """Whether ``method="auto"`` also runs the certified worst case (else the blanket bound alone).

    k = 2: ``2 <= n <=`` :data:`AUTO_WORST_CASE_MAX_N` when ``eps0 >=``
    :data:`AUTO_WORST_CASE_SMALL_EPS0`, else ``n <=`` :data:`AUTO_WORST_CASE_SMALL_EPS0_MAX_N`;
    k = 3: ``2 <= n <=`` :data:`AUTO_WORST_CASE_K_MAX_N`; k >= 4: ``2 <= n <=``
    :data:`AUTO_WORST_CASE_MULTI_MAX_N`. A choice of cost
    only: both answers are certified, and ``auto`` returns the smaller.

    Example:
        >>> auto_uses_worst_case(2, 0.1, 100_000), auto_uses_worst_case(2, 1.0, 500_000)
        (True, False)
        >>> auto_uses_worst_case(2, 4.0, 1_000_000)
        True
    """
    if n < 2:
        return False
    if k == 2:
        cap = (
            AUTO_WORST_CASE_MAX_N if eps0 >= AUTO_WORST_CASE_SMALL_EPS0 else AUTO_WORST_CASE_SMALL_EPS0_MAX_N
        )
        return n <= cap
    if k >= 4:
        return n <= AUTO_WORST_CASE_MULTI_MAX_N
    return k == 3 and n <= AUTO_WORST_CASE_K_MAX_N


@dataclass(frozen=True)
class ShuffledKRR:
    """Shuffled k-RR: ``n`` users, ``k`` categories, local privacy ``eps0``.

    ``delta(eps)`` / ``log_delta(eps)`` are certified upper bounds on the privacy curve over all
    neighbouring datasets (replace one user's value): the exact privacy-blanket divergence (Balle,
    Bell, Gascón, Nissim, *The Privacy Blanket of the Shuffle Model*, CRYPTO 2019), where the
    adversary also learns which users drew from the uniform blanket. ``epsilon(delta)`` inverts it,
    rounding up. For ``n = 1`` there is no amplification: the curve is the exact k-RR curve
    ``(p - e^eps pbar)_+`` and ``epsilon`` never exceeds ``eps0`` (shuffled k-RR is ``eps0``-DP).
    For ``k = 2`` (binary randomized response) ``method="auto"`` (the default) also certifies the
    exact worst case over datasets by branch and bound
    (:mod:`~shuffle_accounting.shuffled_krr.worst_case`, up to :data:`AUTO_WORST_CASE_MAX_N`
    users) and returns the smaller certified value; :meth:`certificate` returns its re-checkable
    cover and witness dataset. For ``k = 3`` the same holds with
    :mod:`~shuffle_accounting.shuffled_krr.worst_case_k` up to :data:`AUTO_WORST_CASE_K_MAX_N` users,
    and for ``k >= 4`` with the type bounds of
    :mod:`~shuffle_accounting.shuffled_krr.worst_case_multi` up to
    :data:`AUTO_WORST_CASE_MULTI_MAX_N` users.

    Args:
        k: Number of categories, an integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, an integer >= 1.

    Raises:
        ParameterError: If an argument is out of range, NaN, infinite, boolean or non-integer.

    Example:
        >>> m = ShuffledKRR(k=4, eps0=1.0, n=7)
        >>> round(m.delta(0.5), 9)
        0.019693203
        >>> m.delta(1.0)
        0.0
        >>> e = ShuffledKRR(k=10, eps0=2.0, n=10_000).epsilon(1e-6)
        >>> 0.0 < e < 2.0
        True
    """

    k: int
    eps0: float
    n: int

    def __post_init__(self) -> None:
        k, eps0, n = check_krr_parameters(self.k, self.eps0, self.n)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "eps0", eps0)
        object.__setattr__(self, "n", n)

    # ----- the standing soundness invariant ---------------------------------------------------
    def _one_outcome_log_delta(self, eps: np.ndarray) -> np.ndarray:
        """Closed-form exhibited lower bound on log delta(eps), rounded down.

        Datasets: every other user holds ``x0``; the target holds ``x0`` in ``D`` and ``x1`` in
        ``D'``. The outcome "every report is ``x0``" has ``P_D = p^n`` and ``P_D' = pbar p^(n-1)``,
        privacy loss exactly ``eps0``, so ``delta(eps) >= p^n (1 - e^(eps - eps0))``. Rounded down
        by ``1e-9`` (relative) against floating-point error.
        """
        log_p = self.krr.log_p
        with np.errstate(divide="ignore"):
            val = self.n * log_p + np.log(-np.expm1(np.minimum(eps, self.eps0) - self.eps0))
        return val - 1e-9 * (1.0 + np.abs(np.where(np.isfinite(val), val, 0.0)))

    def _one_outcome_epsilon(self, delta: float) -> float:
        """Exhibited lower bound on epsilon(delta) from the same outcome, rounded down (0 if none)."""
        log_p = self.krr.log_p
        r = math.log(delta) - self.n * log_p  # log(delta / p^n)
        if r >= 0.0:
            return 0.0
        # p^n (1 - e^(eps - eps0)) > delta  iff  eps < eps0 + log(1 - delta / p^n)
        return max(0.0, (self.eps0 + math.log(-math.expm1(r))) * (1.0 - 1e-9) - 1e-12)

    def _check_log_delta(self, eps: np.ndarray, certified: np.ndarray) -> np.ndarray:
        """Raise :class:`SoundnessError` if a certified log delta is NaN or below the exhibited one."""
        low = self._one_outcome_log_delta(eps)
        bad = np.isnan(certified) | (certified < low) | (certified > 0.0)
        if np.any(bad):
            i = int(np.argmax(bad))
            raise SoundnessError(
                f"internal: certified log delta {float(np.ravel(certified)[i])!r} is not in "
                f"[exhibited {float(np.ravel(low)[i])!r}, 0] at eps={float(np.ravel(eps)[i])!r} for "
                f"k={self.k}, eps0={self.eps0!r}, n={self.n}; please report this bug"
            )
        return certified

    @property
    def krr(self) -> KRR:
        """The local randomizer."""
        return KRR(self.k, self.eps0)

    @property
    def bound(self) -> str:
        """``"upper"``: :meth:`delta`, :meth:`log_delta` and :meth:`epsilon` are certified.

        ``ShuffledKRR`` satisfies :class:`shuffle_accounting.curves.PrivacyCurve`; its exhibited
        lower curve (``*_lower`` methods) is :class:`shuffle_accounting.shuffled_krr.curves.ExhibitedKRRCurve`
        (:meth:`lower_curve`).

        Example:
            >>> from shuffle_accounting.curves import PrivacyCurve
            >>> m = ShuffledKRR(k=3, eps0=1.0, n=50)
            >>> m.bound, isinstance(m, PrivacyCurve)
            ('upper', True)
        """
        return "upper"

    def lower_curve(self):
        """The exhibited lower curve (``bound == "lower"``) of the same mechanism.

        Returns:
            :class:`shuffle_accounting.shuffled_krr.curves.ExhibitedKRRCurve` whose ``delta``,
            ``log_delta`` and ``epsilon`` are :meth:`delta_lower`, :meth:`log_delta_lower` and
            :meth:`epsilon_lower`.

        Example:
            >>> low = ShuffledKRR(10, 2.0, 1000).lower_curve()
            >>> low.bound, low.epsilon(1e-6) == ShuffledKRR(10, 2.0, 1000).epsilon_lower(1e-6)
            ('lower', True)
        """
        from .curves import ExhibitedKRRCurve  # noqa: PLC0415 - curves imports this module

        return ExhibitedKRRCurve(self.k, self.eps0, self.n)

    @_memoised_at_scale
    def log_delta(self, eps, *, method: str = "auto"):
        """Certified upper bound on ``log delta(eps)`` (``-inf`` where delta is exactly 0).

        ``method`` (keyword only): ``"blanket"`` (the privacy-blanket divergence),
        ``"worst-case"`` (the certified exact worst case by branch and bound over datasets,
        :mod:`~shuffle_accounting.shuffled_krr.worst_case` for ``k = 2``,
        :mod:`~shuffle_accounting.shuffled_krr.worst_case_k` for ``k = 3``,
        :mod:`~shuffle_accounting.shuffled_krr.worst_case_multi` for ``k >= 4``: the largest class
        exact, the rest blanketed, then, where that misses its tolerance, boxes of datasets,
        :mod:`~shuffle_accounting.shuffled_krr.worst_case_boxes`; ``"auto"`` uses the first part
        only) or ``"auto"`` (the smaller of both where
        :func:`auto_uses_worst_case` and the blanket's log delta is at least
        :data:`AUTO_WORST_CASE_MIN_LOG_DELTA`, for ``k = 3`` at least
        :data:`AUTO_WORST_CASE_K3_MIN_LOG_DELTA`, else the blanket). Every choice is certified.

        Args:
            eps: Scalar or array of ``eps >= 0`` (finite).
            method: ``"auto"``, ``"blanket"`` or ``"worst-case"``.

        Returns:
            A ``float`` for scalar input, else an ``ndarray`` of the same shape.

        Raises:
            ParameterError: If ``eps`` is negative, NaN, infinite or not numeric, or ``method``
                is unknown or ``"worst-case"`` for ``n = 1``.
            WorkBudgetExceeded: ``method="worst-case"`` only, when the branch and bound exceeds
                its work budget.

        Example:
            >>> ld = ShuffledKRR(3, 1.0, 1000).log_delta([0.2, 1.0])
            >>> round(float(ld[0]), 4), float(ld[1])
            (-23.7058, -inf)
            >>> m = ShuffledKRR(2, 2.0, 1000)
            >>> bool(m.log_delta(0.3) < m.log_delta(0.3, method="blanket"))
            True
        """
        arr = check_real_array("eps", eps, low=0.0)
        use = self._method(method)
        out = self._check_log_delta(arr, self._blanket_log_delta(arr))
        if use != "blanket":
            flat = np.array(out, dtype=float).ravel()
            for i, e in enumerate(arr.ravel().tolist()):
                if use == "auto" and not flat[i] >= self._auto_min_log_delta:
                    continue  # the far tail: the blanket's value stands (see the constants)
                strict = use == "worst-case"  # k = 3: the deep delta query (see _certify)
                wc, shown = self._worst_case_log_delta(float(e), strict=strict, deep=strict)
                if use == "auto":
                    no_certified_below_exhibited(flat[i], shown, f"log_delta({e!r})")
                    flat[i] = min(flat[i], wc)
                else:
                    flat[i] = wc
            out = self._check_log_delta(arr, flat.reshape(arr.shape))
        return float(out) if arr.ndim == 0 else out

    # -- certified worst case (k = 2: worst_case, k = 3: worst_case_k) ----------------------

    @property
    def auto_method(self) -> str:
        """What ``method="auto"`` certifies with: ``"worst-case"`` (k = 2, ``2 <= n <=``
        :data:`AUTO_WORST_CASE_MAX_N`; k = 3, ``2 <= n <=`` :data:`AUTO_WORST_CASE_K_MAX_N`;
        k >= 4, ``2 <= n <=`` :data:`AUTO_WORST_CASE_MULTI_MAX_N`; the minimum with the blanket is
        taken) or ``"blanket"``.

        Example:
            >>> ShuffledKRR(2, 1.0, 100).auto_method, ShuffledKRR(3, 1.0, 1000).auto_method
            ('worst-case', 'blanket')
            >>> ShuffledKRR(3, 1.0, 100).auto_method, ShuffledKRR(10, 1.0, 100).auto_method
            ('worst-case', 'worst-case')
        """
        return "worst-case" if self._method("auto") == "auto" else "blanket"

    def _blanket_log_delta(self, arr: np.ndarray) -> np.ndarray:
        """Certified blanket log delta: the exact blanket sum with every truncation bounded, or
        from :data:`FAST_BLANKET_MIN_N` users on the sub-linear certified bracket's upper end
        (with the exact sum where that bracket is wider than its tolerance; the smaller is taken).
        """
        if self.n < FAST_BLANKET_MIN_N or self._degenerate_blanket:  # the latter: local k-RR curve
            return np.asarray(certified_log_delta(arr, self.k, self.eps0, self.n), dtype=float)
        up, lo = _fast.certified_log_delta_bounds(arr, self.k, self.eps0, self.n)
        up = np.array(up, dtype=float)
        wide = ~(up - lo <= math.log1p(_fast.DEFAULT_RTOL)) & np.isfinite(up)
        if np.any(wide):
            ex = certified_log_delta(arr[wide], self.k, self.eps0, self.n)
            up[wide] = np.minimum(up[wide], ex)
        return up

    @property
    def _degenerate_blanket(self) -> bool:
        """:func:`~shuffle_accounting.shuffled_krr.blanket.blanket_degenerate`: the blanket curve is
        the local k-RR curve here, so the fast evaluator and the root search use that closed form."""
        return blanket_degenerate(self.k, self.eps0)

    @property
    def _auto_min_log_delta(self) -> float:
        """Smallest log delta at which ``auto`` uses the worst case (see the two constants)."""
        if self.k == 3:
            return max(AUTO_WORST_CASE_MIN_LOG_DELTA, AUTO_WORST_CASE_K3_MIN_LOG_DELTA)
        return AUTO_WORST_CASE_MIN_LOG_DELTA

    def _auto_certifies(self, log_delta: Callable[[], float]) -> bool:
        """Whether ``auto``'s epsilon query, :meth:`epsilon_lower` and :meth:`worst_dataset` run
        the certificate, given that ``auto`` uses the worst case: always, except for ``k = 3``
        below :data:`AUTO_WORST_CASE_K3_MIN_LOG_DELTA` (``log_delta()``, called only for
        ``k = 3``: ``log(delta)``, or the blanket's at ``eps``), where the certificate costs tens
        of seconds for the blanket's value (the blanket, or the exhibited search, stands).
        """
        return self.k != 3 or log_delta() >= self._auto_min_log_delta

    def _method(self, method: str) -> str:
        """Resolve ``method`` to ``"blanket"``, ``"worst-case"`` or ``"auto"`` (both, min)."""
        method = check_choice("method", method, _METHODS)
        implemented = self.n >= 2
        if method == "worst-case":
            if not implemented:
                raise ParameterError(
                    "method='worst-case' is implemented for n >= 2 only, got "
                    f"k = {self.k}, n = {self.n}; use method='blanket' or 'auto'"
                )
            return method
        if method == "auto" and implemented and auto_uses_worst_case(self.k, self.eps0, self.n):
            return "auto"
        return "blanket"

    def _certify(self, *, boxes: bool = True, deep: bool = True, **query):
        """The worst-case certificate: k = 2 by :mod:`worst_case`, k = 3 by :mod:`worst_case_k`.

        ``k >= 4``: :func:`~shuffle_accounting.shuffled_krr.worst_case_multi.certify_multi`, with
        the box search of :mod:`~shuffle_accounting.shuffled_krr.worst_case_boxes` unless
        ``boxes=False`` (``method="auto"``, called in loops, keeps the faster type bounds).
        ``deep`` (k = 3 delta queries): see
        :func:`~shuffle_accounting.shuffled_krr.worst_case_k.certify_k` (``auto``'s curve
        evaluations pass ``False``: below about ``e^-85`` the blanket is kept, seconds cheaper).
        """
        if self.k == 2:
            return _wc.certify(self.eps0, self.n, **query)
        if self.k >= 4:  # k >= 4: type bounds, then boxes over (c0, c1) where they miss tol
            return _wcm.certify_multi(self.k, self.eps0, self.n, boxes=boxes, **query)
        return _wck.certify_k(self.k, self.eps0, self.n, deep=deep, **query)

    def _witness_certificate(self, **query):
        """The certificate whose witness :meth:`epsilon_lower` / :meth:`worst_dataset` report,
        and whether it converged (``(cert, True)``); ``(partial, False)`` where the branch and
        bound ran out of budget (its witness so far, k = 2; ``None`` where there is none).

        :meth:`certificate` (k >= 4: with the box search) up to :data:`LOWER_BOX_SEARCH_MAX_N`
        users; above it, for k >= 4, the type bounds' certificate (the ``auto`` path, whose witness
        is the best dataset "all others at one value"): the box search costs 5-20 s at
        n = 100-200 (benchmarks/README.md, autok), and the exhibited search
        (:func:`~shuffle_accounting.shuffled_krr.lower.lower_epsilon`) is kept beside it.
        """
        try:
            if self.k < 4 or self.n <= LOWER_BOX_SEARCH_MAX_N:
                return self.certificate(**query), True
            return _checked(self._certify(boxes=False, **query)), True
        except _wc.WorkBudgetExceeded as exc:
            return (None if exc.partial is None else _checked(exc.partial)), False

    def _worst_case_log_delta(self, eps: float, *, strict: bool, deep: bool) -> tuple[float, float]:
        """``(certified, exhibited)`` log delta of the branch and bound; over budget, k = 2: those
        of the cover reached so far (certified, looser than the tolerance), else ``(inf, -inf)``."""
        try:
            cert = self._certify(eps=eps, boxes=strict, deep=deep)
        except _wc.WorkBudgetExceeded as exc:
            if strict:
                raise
            if exc.partial is None:
                return math.inf, -math.inf
            cert = exc.partial  # k = 2: the cover reached so far, certified and complete
        except (ValueError, ArithmeticError):  # k = 3 numerics at extreme eps0: auto keeps the blanket
            if strict or self.k == 2:
                raise
            return math.inf, -math.inf
        cert = _checked(cert)
        return cert.log_delta, cert.exhibited_log_delta

    def certificate(
        self, *, delta=None, eps=None
    ) -> _wc.WorstCaseCertificate | _wck.WorstCaseKCertificate | _wcm.WorstCaseMultiCertificate:
        """Re-checkable certificate of the worst case: the cover (or type bounds) and the witness.

        Exactly one of ``eps`` (certifies ``delta(eps)``) or ``delta`` (certifies
        ``epsilon(delta)``); see :func:`shuffle_accounting.shuffled_krr.worst_case.certify` and
        :func:`~shuffle_accounting.shuffled_krr.worst_case.verify` (``k = 2``),
        :func:`~shuffle_accounting.shuffled_krr.worst_case_k.certify_k` and
        :func:`~shuffle_accounting.shuffled_krr.worst_case_k.verify` (``k = 3``; re-check with that
        module's ``verify``), :func:`~shuffle_accounting.shuffled_krr.worst_case_multi.certify_multi`
        and :func:`~shuffle_accounting.shuffled_krr.worst_case_multi.verify` (``k >= 4``).

        Args:
            delta: Target delta in ``(0, 1)`` (keyword only).
            eps: ``eps >= 0`` (keyword only).

        Returns:
            A :class:`~shuffle_accounting.shuffled_krr.worst_case.WorstCaseCertificate` (``k = 2``)
            or :class:`~shuffle_accounting.shuffled_krr.worst_case_k.WorstCaseKCertificate` (``k = 3``)
            or :class:`~shuffle_accounting.shuffled_krr.worst_case_multi.WorstCaseMultiCertificate`
            (``k >= 4``).

        Raises:
            ParameterError: If ``n = 1`` (not implemented), or on invalid input.
            WorkBudgetExceeded: If the branch and bound exceeds its work budget.

        Example:
            >>> from shuffle_accounting.shuffled_krr.worst_case import verify
            >>> c = ShuffledKRR(2, 2.0, 1000).certificate(delta=1e-6)
            >>> c.worst_others in ((2, 997), (997, 2)), round(c.epsilon_lower, 8), verify(c)
            (True, 0.32332355, True)
            >>> from shuffle_accounting.shuffled_krr import worst_case_k
            >>> c3 = ShuffledKRR(3, 1.0, 20).certificate(eps=0.5)
            >>> worst_case_k.verify(c3), bool(c3.exhibited_log_delta <= c3.log_delta)
            (True, True)
            >>> from shuffle_accounting.shuffled_krr import worst_case_multi
            >>> c4 = ShuffledKRR(10, 4.0, 100).certificate(eps=2.0)
            >>> worst_case_multi.verify(c4), c4.worst_others[2] == 99
            (True, True)
        """
        self._method("worst-case")
        return _checked(self._certify(eps=eps, delta=delta))

    def delta(self, eps, *, method: str = "auto"):
        """Certified upper bound on ``delta(eps) = sup_{D ~ D'} H_{e^eps}(P_D || P_D')``.

        ``exp(log_delta(eps, method=method))``; values below the double range underflow to 0
        here, use :meth:`log_delta` for them.

        Args:
            eps: Scalar or array of ``eps >= 0`` (finite).
            method: ``"auto"``, ``"blanket"`` or ``"worst-case"`` (see :meth:`log_delta`).

        Returns:
            A ``float`` for scalar input, else an ``ndarray`` of the same shape.

        Raises:
            ParameterError: If ``eps`` is negative, NaN, infinite or not numeric.

        Example:
            >>> round(ShuffledKRR(2, 1.0, 1).delta(0.0), 9)  # k-RR: p - pbar = tanh(1/2)
            0.462117157
        """
        ld = self.log_delta(eps, method=method)
        with np.errstate(under="ignore"):
            out = np.exp(ld)
        return float(out) if np.ndim(out) == 0 else out

    @_memoised_at_scale
    def epsilon(self, delta: float, *, method: str = "auto") -> float:
        """Smallest ``eps`` (rounded up) whose certified ``delta(eps)`` is ``<= delta``.

        Safeguarded Newton iteration on ``log delta(eps)`` (smooth and decreasing; its slope
        ``-e^eps Q(L > e^eps) / delta`` comes with each evaluation) from the Gaussian-limit guess,
        kept inside a bracket, by the library's one root finder
        (:func:`shuffle_accounting.curves.epsilon_from_delta`, ``method="newton"``); from
        ``FAST_BLANKET_MIN_N`` users the sub-linear evaluator's search
        (:func:`~shuffle_accounting.shuffled_krr.blanket_fast.certified_epsilon`, the same finder).
        The returned value is certified by a final evaluation of the public path (stepped up by
        :func:`shuffle_accounting.curves.step_up_until` until it holds). Returns 0
        when ``delta(0) <= delta`` and never more than ``eps0`` (the mechanism is ``eps0``-DP).

        With ``method="worst-case"`` the value is the branch-and-bound certificate's epsilon
        (``k = 2``: about ``1e-7`` relative above the exhibited worst dataset's; ``k = 3``: within
        :func:`~shuffle_accounting.shuffled_krr.worst_case_k.default_tol` ``(n)``, ``1e-5`` up to
        1000 users, ``1e-4`` from ``1e4``, where the search converges within its work budget,
        else a sound value with a somewhat larger gap), stepped up if needed (secant steps on the
        excess, :func:`shuffle_accounting.curves.step_up_secant`) so that
        ``delta(epsilon(d)) <= d`` also holds for the delta query; ``"auto"`` returns the smaller
        certified value of both methods (see :meth:`log_delta`; ``k = 3`` with ``log(delta)``
        below :data:`AUTO_WORST_CASE_K3_MIN_LOG_DELTA`: the blanket's).

        Args:
            delta: Target in ``(0, 1)``.
            method: ``"auto"``, ``"blanket"`` or ``"worst-case"`` (keyword only).

        Returns:
            The certified epsilon.

        Raises:
            ParameterError: If ``delta`` is not in ``(0, 1)`` or ``method`` is invalid.

        Example:
            >>> m = ShuffledKRR(4, math.log(13), 1000)
            >>> e = m.epsilon(1e-4)
            >>> round(e, 4), bool(m.delta(e) <= 1e-4)
            (0.3891, True)
        """
        delta = check_delta("delta", delta)
        use = self._method(method)
        if use == "auto" and not self._auto_certifies(lambda: math.log(delta)):
            use = "blanket"  # below auto's k = 3 resolution (AUTO_WORST_CASE_K3_MIN_LOG_DELTA)
        if use != "blanket":
            try:
                cert = _checked(self._certify(delta=delta, boxes=use == "worst-case"))
                wc, shown = cert.epsilon, cert.epsilon_lower
            except _wc.WorkBudgetExceeded as exc:
                if use == "worst-case":
                    raise
                wc, shown = math.inf, 0.0
                if exc.partial is not None:  # k = 2: the settled partial certificate, its witness
                    cert = _checked(exc.partial)
                    wc, shown = cert.epsilon, cert.epsilon_lower
            except (ValueError, ArithmeticError):  # k = 3 numerics at extreme eps0: keep the blanket
                if use == "worst-case" or self.k == 2:
                    raise
                wc, shown = math.inf, 0.0
            if use == "auto":
                bl = self.epsilon(delta, method="blanket")
                no_certified_below_exhibited(bl, shown, f"epsilon({delta!r})")
                if bl <= wc or getattr(cert, "used_blanket", False):
                    # delta(bl) <= delta_blanket(bl) <= delta: the round trip holds. k >= 4: where
                    # the type bounds lost to the blanket the certificate's epsilon is the blanket's
                    # own root (its finder, not this one: the two may differ by ~1e-13), so the
                    # round trip's delta query (type bounds again, seconds at n = 1000) is skipped
                    return bl
            # round trip: the delta-query certificate at the returned eps must be <= delta too
            # (both are certified, but they stop at different covers); step up until it is, by
            # secant steps on its excess (each check is a branch and bound: where the curve is
            # flat the doubling steps alone took ~12 of them, benchmarks/README.md)
            # auto: capped at the blanket's epsilon (certified above: delta(bl) <= delta_blanket(bl)
            # <= delta), which the steps could otherwise pass by up to a step where the delta
            # query's certificate is looser than the epsilon query's (k = 3 below about e^-85,
            # where auto's delta query stops at e^-60 and keeps the blanket: see _certify)
            lt = _log_target(delta)
            cap = min(self.eps0, bl) if use == "auto" else self.eps0
            if cap - wc <= _ROUND_TRIP_SKIP * self.eps0:
                # within 1e-8 eps0 of a vouched value: return it. Just below eps0 the exhibited
                # deltas round to 0 and the delta query cannot converge (k = 3, eps0 = 0.0727,
                # n = 101, delta = 6.4e-56: 4e-11 below eps0, 56 s of branch and bound)
                return self._checked_epsilon(cap, delta)
            wc = step_up_secant(lambda e: float(self.log_delta(e, method=use)) - lt, wc, cap=cap, step=1e-7)
            return self._checked_epsilon(wc, delta)
        lt = _log_target(delta)

        def certified_by_public_path(e: float) -> bool:
            return float(self.log_delta(e, method="blanket")) <= lt

        if self.n >= FAST_BLANKET_MIN_N and not self._degenerate_blanket:
            # root by the sub-linear evaluator, whose answer is certified by its own certified
            # upper bound; re-checked through the public blanket path (the same evaluator, plus
            # the exact sum where its bracket is wide) and stepped up until that accepts it
            # (eps0 itself is always valid); any failure falls back to the exact root search
            try:
                e = _fast.certified_epsilon(delta, self.k, self.eps0, self.n)
            except (ValueError, ArithmeticError):
                e = math.nan
            if 0.0 <= e <= self.eps0:
                e = step_up_until(
                    lambda x: float(self._blanket_log_delta(np.asarray(x))) <= lt, e, cap=self.eps0
                )
                return self._checked_epsilon(e, delta)
        if self.n == 1 or self._degenerate_blanket:
            evaluate = self._eval_n1
        else:
            engine = BlanketEvaluator(self.k, self.eps0, self.n)

            def evaluate(e: float) -> tuple[float, float]:
                return engine.certified(e, lt)

        # the one root finder: safeguarded Newton on log delta (its slope comes with each
        # evaluation) from the Gaussian-limit guess, bracket [0, eps0] (eps0 vouched: shuffled
        # k-RR is eps0-DP), then certified with the public evaluation (its truncation windows
        # may differ slightly) and stepped up until that accepts it
        result = epsilon_from_delta(
            evaluate,
            delta,
            bound="upper",
            lo=0.0,
            hi=self.eps0,
            rtol=1e-9,
            atol=0.0,
            max_iter=100,
            method="newton",
            log=True,
            derivative=True,
            guess=self._initial_guess(lt),
            verify=certified_by_public_path,
        )
        return self._checked_epsilon(result, delta)

    def _checked_epsilon(self, result: float, delta: float) -> float:
        """``result`` after the invariant check against the one-outcome exhibited epsilon."""
        low = self._one_outcome_epsilon(delta)
        if not low <= result <= self.eps0:
            raise SoundnessError(
                f"internal: certified epsilon {result!r} is not in [exhibited {low!r}, eps0] at "
                f"delta={delta!r} for k={self.k}, eps0={self.eps0!r}, n={self.n}; please report this bug"
            )
        return float(result)

    # -- helpers -------------------------------------------------------------------------

    # ----- exhibited lower bound (concrete datasets) ------------------------------------------
    def log_delta_lower(self, eps):
        """Largest exact ``log delta(eps)`` over the searched concrete neighbouring datasets.

        A *lower* bound on the worst case (rounded down): see
        :func:`shuffle_accounting.shuffled_krr.lower.lower_log_delta`.

        Example:
            >>> m = ShuffledKRR(4, 1.0, 7)
            >>> bool(m.log_delta_lower(0.5) <= m.log_delta(0.5))
            True
        """
        arr = check_real_array("eps", eps, low=0.0)
        out = lower_log_delta(arr, self.k, self.eps0, self.n)
        return float(out) if arr.ndim == 0 else out

    def delta_lower(self, eps):
        """``exp(log_delta_lower(eps))``: delta exhibited by a concrete pair of neighbouring datasets.

        Example:
            >>> m = ShuffledKRR(4, 1.0, 7)
            >>> round(m.delta_lower(0.5), 6) <= round(m.delta(0.5), 6)
            True
        """
        ld = self.log_delta_lower(eps)
        with np.errstate(under="ignore"):
            out = np.exp(ld)
        return float(out) if np.ndim(out) == 0 else out

    def epsilon_lower(self, delta: float) -> float:
        """Lower bound on the true worst-case ``epsilon(delta)`` (rounded down).

        The largest exact epsilon of the searched concrete datasets: no accountant can certify a
        smaller epsilon for this mechanism. See :func:`shuffle_accounting.shuffled_krr.lower.lower_epsilon`.

        Example:
            >>> m = ShuffledKRR(10, 2.0, 1000)
            >>> bool(m.epsilon_lower(1e-6) <= m.epsilon(1e-6))
            True
        """
        delta = check_delta("delta", delta)
        if self._method("auto") == "auto" and self._auto_certifies(lambda: math.log(delta)):
            # the certificate's witness (k = 2, 3: cannot be missed where it converged)
            cert, converged = self._witness_certificate(delta=delta)
            low = 0.0 if cert is None else cert.epsilon_lower
            if self.k >= 3 or not converged:
                # k >= 4: the witness is the best pure dataset; keep the search too (k = 3: the
                # witness's bisection is rounded down at its truncation level, the search's can
                # be ~1e-9 higher: measured at eps0 = 1, n = 200, delta = 1e-6). Over budget
                # (k = 2 just below delta(0) at n >= 1e5) the witness so far and the search
                low = max(low, lower_epsilon(delta, self.k, self.eps0, self.n))
            return low
        return lower_epsilon(delta, self.k, self.eps0, self.n)

    #: Alias of :meth:`epsilon_lower` (the spelling of the module function
    #: :func:`shuffle_accounting.shuffled_krr.lower.lower_epsilon`). Both names stay; for ``k = 2``
    #: the method also uses the worst-case certificate's witness, so it can exceed the module
    #: function's search.
    lower_epsilon = epsilon_lower
    #: Alias of :meth:`delta_lower` (the module function's spelling ``lower_delta``).
    lower_delta = delta_lower
    #: Alias of :meth:`log_delta_lower` (the module function's spelling ``lower_log_delta``).
    lower_log_delta = log_delta_lower

    def worst_dataset(self, eps: float) -> WorstDataset:
        """The searched concrete dataset with the largest exact delta at ``eps``.

        Example:
            >>> ShuffledKRR(3, 2.0, 5).worst_dataset(1.5).others
            (3, 0, 1)
        """
        eps = check_real("eps", eps, low=0.0)
        if self._method("auto") == "auto" and self._auto_certifies(
            lambda: float(self._blanket_log_delta(np.asarray(eps)))
        ):  # k = 2, 3: the certificate's witness
            c, converged = self._witness_certificate(eps=eps)
            if c is None:  # over budget with no witness to show: the search's
                return worst_dataset(eps, self.k, self.eps0, self.n)
            ld = c.exhibited_log_delta
            if self.k >= 4 or not converged:  # k >= 4: the witness is the best pure dataset;
                # over budget: the witness so far. Keep the search too
                found = worst_dataset(eps, self.k, self.eps0, self.n)
                if found.log_delta > ld:
                    return found
            return WorstDataset(
                eps=eps,
                others=c.worst_others,
                log_delta=ld,
                delta=math.exp(ld) if ld > -745 else 0.0,
                family="certified worst case (branch and bound)",
                statistic="histogram",
            )
        return worst_dataset(eps, self.k, self.eps0, self.n)

    def gap(self, delta: float) -> float:
        """``epsilon(delta) / epsilon_lower(delta)`` (>= 1; ``inf`` if the lower bound is 0).

        Example:
            >>> g = ShuffledKRR(10, 2.0, 1000).gap(1e-6)
            >>> 1.0 <= g < 1.5
            True
        """
        upper = self.epsilon(delta)
        lower = self.epsilon_lower(delta)
        if lower <= 0.0:
            return math.inf
        return upper / lower

    def _eval_n1(self, e: float) -> tuple[float, float]:
        ld = float(certified_log_delta(e, self.k, self.eps0, 1))
        # d/de log(pbar (e^eps0 - e^e)) = -e^e / (e^eps0 - e^e)
        slope = -1.0 / math.expm1(self.eps0 - e) if e < self.eps0 else -math.inf
        return ld, slope

    def _initial_guess(self, log_target: float) -> float:
        r = self.krr
        c = r.p_minus_pbar  # p - pbar without cancellation
        var = max(self.n - 1, 1) * r.pbar * (1.0 - r.pbar)
        mu = c * math.sqrt(2.0 / var)
        if not mu > 0.0:  # eps0 so small that p - pbar underflows: any point in (0, eps0) will do
            return 0.5 * self.eps0
        g = _gaussian_guess(mu, log_target)
        return min(max(g, 1e-12 * self.eps0), 0.9 * self.eps0)
