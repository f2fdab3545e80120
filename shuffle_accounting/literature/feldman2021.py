"""Feldman, McMillan, Talwar, *Hiding Among the Clones: A Simple and Nearly Optimal Analysis of
Privacy Amplification by Shuffling* (FOCS 2021; arXiv:2012.12803).

Two bounds for ``n`` shuffled reports of any ``eps0``-LDP randomizer (neighbouring = replace one
user's input):

* the closed form of their Theorem 3.1 (:func:`fmt2021_closed_form_epsilon` /
  :func:`fmt2021_closed_form_delta`);
* the *numerical clone bound* (their Section 3 reduction, Lemma 3.3 and Theorem 3.2): the shuffled
  output is post-processing of the pair ``P``/``Q`` below, so ``delta(eps) <= D_{e^eps}(P || Q)``.
  We compute that hockey-stick divergence exactly in log space with rigorous truncation bounds
  (:func:`fmt2021_clone_delta`), not with the bisection bracket of the authors' reference code.

The clone pair, with ``alpha = e^eps0 / (e^eps0 + 1)`` and a clone probability ``q``::

    C ~ Bin(n - 1, q),   A | C ~ Bin(C, 1/2),
    P = (A + 1, C - A) w.p. alpha,      (A, C - A + 1) w.p. 1 - alpha,
    Q = (A + 1, C - A) w.p. 1 - alpha,  (A, C - A + 1) w.p. alpha.

FMT 2021 use the generic ``q = e^-eps0`` (each other user is a clone of ``x0`` or ``x1`` with
probability ``e^-eps0 / 2`` each, their Lemma 3.3). :mod:`.feldman2023` reuses the same engine with
the larger k-RR clone probability.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import check_int, check_max_work, check_real
from ._clones import ClonePair
from ._common import BoundNotApplicable, LiteratureCurve, log_clip_to_prob
from ._common import delta_arg as _delta
from ._common import eps0_arg as _eps0
from ._common import eps_arg as _eps
from ._common import n_arg as _n

__all__ = [
    "ClosedFormCloneCurve",
    "FMT2021ClosedFormCurve",
    "ClonePairCurve",
    "FMT2021CloneCurve",
    "fmt2021_closed_form_epsilon",
    "fmt2021_closed_form_delta",
    "fmt2021_closed_form_log_delta",
    "fmt2021_clone_delta",
    "fmt2021_clone_log_delta",
    "fmt2021_clone_epsilon",
    "clone_pair_delta",
    "clone_pair_log_delta",
    "clone_pair_epsilon",
]


# --------------------------------------------------------------------------- closed form


#: Largest ``n`` accepted by the closed forms: ``n q`` must stay a finite float (and ``e^eps0`` with it,
#: since the forms apply only when ``n q >= 16 log 4``).
MAX_CLOSED_FORM_N = 10**300

_LOG_16_LOG_4 = math.log(16.0 * math.log(4.0))


def _closed_n(value: object) -> int:
    return check_int("n", value, minimum=2, maximum=MAX_CLOSED_FORM_N)


def _fmt_closed_condition(name: str, eps0: float, n: int, log_delta: float, log_q: float) -> None:
    # n q >= 16 log(4/delta); for q = e^-eps0 this is eps0 <= log(n / (16 log(4/delta))). The paper
    # states log(2/delta); the authors' reference code checks the stricter log(4/delta), used here.
    # Compared in log space: n may be up to 1e300 and 4/delta beyond the float range.
    log_qn = log_q + math.log(n)
    log_need = math.log(16.0) + math.log(math.log(4.0) - log_delta)
    if log_qn < log_need:
        raise BoundNotApplicable(
            f"{name} requires n * q >= 16 log(4/delta) (q = clone probability; for FMT 2021 q = "
            f"e^-eps0, i.e. eps0 <= log(n / (16 log(4/delta)))), got n = {n}, eps0 = {eps0}, "
            f"log(delta) = {log_delta:.6g}, log(n * q) = {log_qn:.6g} < log(16 log(4/delta)) = "
            f"{log_need:.6g}"
        )


def _closed_eps(eps0: float, n: int, delta: float, log_q: float, name: str) -> float:
    # x = a + c with a = 8 sqrt(log(4/delta)/(q n)), c = 8/(q n); eps1 = log(1 + x) and
    # eps = log(1 + (1 - e^-eps0)/(1 + e^-(eps0 + eps1)) x) (the form of the authors' reference
    # code; it is >= the tanh(eps0/2) x form, so it is the conservative choice).
    _fmt_closed_condition(name, eps0, n, math.log(delta), log_q)
    # the condition gives log(q n) >= log(16 log 4) > 3, so 1/(q n) < 0.05 and x is finite
    inv_qn = math.exp(-(log_q + math.log(n)))
    x = 8.0 * math.sqrt(math.log(4.0 / delta) * inv_qn) + 8.0 * inv_qn
    b = -math.expm1(-eps0)
    d = 1.0 + math.exp(-eps0) / (1.0 + x)
    # b x / d in log space: b may be subnormal (eps0 ~ 5e-324), where the product underflows
    log_z = math.log(b) + math.log(x) - math.log(d)
    eps = math.log1p(math.exp(log_z)) if log_z < 700.0 else log_z + math.log1p(math.exp(-log_z))
    # round outward (relative 1e-12, and at least to the next float so that an underflow to 0
    # still returns a positive bound); eps0 itself is always a valid answer
    return min(math.nextafter(eps * (1.0 + 1e-12), math.inf), eps0)


#: Returned (as log delta) when the exact value lies below the float range: an upper bound on any
#: log delta smaller than -1.7e308.
_LOG_DELTA_FLOOR = -1.7e308


def _closed_log_delta(eps: float, eps0: float, n: int, log_q: float, name: str) -> float:
    # invert eps = log(1 + b x / (1 + beta/(1 + x))), beta = e^-eps0: with y = e^eps - 1,
    # b x^2 + (b - y) x - y (1 + beta) = 0, then log(4/delta) = q n ((x - 8/(q n)) / 8)^2.
    # Scaled by b (r = y / b) so that nothing underflows for tiny eps0:
    # x = ((r - 1) + sqrt((r - 1)^2 + 4 r (1 + beta))) / 2.
    if eps >= eps0:
        return -math.inf  # shuffled eps0-LDP reports are eps0-DP: delta = 0 exactly
    log_qn = log_q + math.log(n)
    if log_qn < _LOG_16_LOG_4:
        # n q < 16 log 4 <= 16 log(4/delta): the condition fails at every delta <= 1
        _fmt_closed_condition(name, eps0, n, 0.0, log_q)
    # here e^eps0 <= n q / (16 log 4) * ... <= 1e300, so every exp below is finite
    b = -math.expm1(-eps0)
    beta = math.exp(-eps0)
    r = math.expm1(eps) / b  # < e^eps0 (eps < eps0): finite
    h = math.hypot(r - 1.0, 2.0 * math.sqrt(r * (1.0 + beta)))  # no overflow of (r - 1)^2
    # the root without cancellation on either side of r = 1
    x = ((r - 1.0) + h) / 2.0 if r >= 1.0 else 2.0 * r * (1.0 + beta) / ((1.0 - r) + h)
    c = 8.0 * math.exp(-log_qn)
    a = x - c
    if a <= 0.0:
        raise BoundNotApplicable(
            f"{name}: eps = {eps} is below the additive term of the closed form "
            f"(needs the amplified term to exceed 8/(q n) = {c:.6g})"
        )
    # q n (a/8)^2 in log space (it may exceed the float range)
    log_expo = log_qn + 2.0 * math.log(a / 8.0)
    if log_expo > 709.0:  # the exponent exceeds ~8e307: log delta < -8e307
        log_delta = max(math.log(4.0) - math.exp(min(log_expo, 709.0)), _LOG_DELTA_FLOOR)
    else:
        log_delta = math.log(4.0) - math.exp(log_expo)
    log_delta += 1e-12 * (abs(log_delta) + 1.0)  # round outward (covers the few roundings above)
    if log_delta >= 0.0:
        return 0.0  # delta >= 1 is trivially valid
    _fmt_closed_condition(name, eps0, n, log_delta, log_q)
    return log_delta


def _closed_delta(eps: float, eps0: float, n: int, log_q: float, name: str) -> float:
    return log_clip_to_prob(_closed_log_delta(eps, eps0, n, log_q, name))


class ClosedFormCloneCurve(LiteratureCurve):
    """The closed form of the clone analysis (FMT 2021, Theorem 3.1) for a clone probability ``q``,
    as a certified curve (``bound="upper"``): subclasses fix ``q`` (:class:`FMT2021ClosedFormCurve`,
    ``q = e^-eps0``; :class:`~shuffle_accounting.literature.feldman2023.FMT2023KRRClosedFormCurve`,
    ``q = 2/(e^eps0 + 1)``). ``delta`` is the direct inversion (rounded up), ``epsilon`` the closed
    form (rounded up, at most ``eps0``); both check the theorem's condition ``n q >= 16 log(4/delta)``.
    """

    eps0: float
    n: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", _eps0(self.eps0))
        object.__setattr__(self, "n", _closed_n(self.n))

    @property
    def log_q(self) -> float:
        """``log`` of the clone probability."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _log_delta(self, eps: float) -> float:
        return _closed_log_delta(eps, self.eps0, self.n, self.log_q, self._label)

    def epsilon(self, delta: float) -> float:
        """The closed form at ``delta`` (rounded up, at most ``eps0``)."""
        delta = _delta(delta)
        return _closed_eps(self.eps0, self.n, delta, self.log_q, self._label)


@dataclass(frozen=True)
class FMT2021ClosedFormCurve(ClosedFormCloneCurve):
    """FMT 2021, Theorem 3.1 as a certified curve (see :func:`fmt2021_closed_form_epsilon`).

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer in [2, 10**300].

    Example:
        >>> c = FMT2021ClosedFormCurve(eps0=4.0, n=100_000)
        >>> round(c.epsilon(1e-6), 4), 9e-7 < c.delta(0.5378) < 1.1e-6
        (0.5378, True)
    """

    eps0: float
    n: int
    name = "FMT21 closed form"
    citation = "Feldman, McMillan, Talwar, Hiding among the clones (FOCS 2021), Thm 3.1"
    _label = "FMT 2021 Theorem 3.1"

    @property
    def log_q(self) -> float:
        """``-eps0`` (``q = e^-eps0``)."""
        return -self.eps0


def fmt2021_closed_form_epsilon(eps0: float, n: int, delta: float) -> float:
    """Closed-form amplification bound of FMT 2021, Theorem 3.1.

    With ``x = 8 sqrt(e^eps0 log(4/delta) / n) + 8 e^eps0 / n``: the theorem's form
    ``eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) x)``, valid for any ``eps0``-LDP randomizer when
    ``eps0 <= log(n / (16 log(2/delta)))``. The authors' reference code (apple/ml-shuffling-
    amplification, ``closedformanalysis``) evaluates the slightly larger
    ``eps = log(1 + (1 - e^-eps0)/(1 + e^-(eps0 + log(1 + x))) x)`` under the stricter condition
    ``eps0 <= log(n / (16 log(4/delta)))``; as the two disagree we return that larger value and
    enforce the stricter condition (conservative on both counts), rounded up by 1e-12.

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer in [2, 10**300].
        delta: Target delta in (0, 1).

    Returns:
        An upper bound on the shuffled epsilon at ``delta``, at most ``eps0`` and positive
        (rounded up to the next float, so that an underflow never returns 0).

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).
        BoundNotApplicable: If ``eps0 > log(n / (16 log(4/delta)))``.

    Example:
        >>> round(fmt2021_closed_form_epsilon(eps0=4.0, n=100_000, delta=1e-6), 4)
        0.5378
    """
    eps0, n, delta = _eps0(eps0), _closed_n(n), _delta(delta)
    return FMT2021ClosedFormCurve(eps0, n).epsilon(delta)


def fmt2021_closed_form_delta(eps: float, eps0: float, n: int) -> float:
    """FMT 2021, Theorem 3.1 solved for delta (a direct inversion of the closed form).

    ``delta = 4 exp(-(n e^-eps0 / 64) ((e^eps - 1)(e^eps0 + 1)/(e^eps0 - 1) - 8 e^eps0 / n)^2)``,
    capped at 1 (trivially valid); the theorem's condition is checked at the resulting delta.
    For ``eps >= eps0`` the answer is exactly 0 (shuffled ``eps0``-LDP reports are ``eps0``-DP).
    Evaluated in log space and scaled by ``1 - e^-eps0``, so no input in range over- or
    underflows into NaN; a delta below the float range is 0.0 here (use the log variant).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer in [2, 10**300].

    Returns:
        An upper bound on delta at ``eps``.

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).
        BoundNotApplicable: If ``eps`` is below the closed form's additive term or the resulting
            delta violates ``eps0 <= log(n / (16 log(2/delta)))``.

    Example:
        >>> d = fmt2021_closed_form_delta(0.5378, eps0=4.0, n=100_000)
        >>> 9e-7 < d < 1.1e-6
        True
    """
    eps = _eps(eps)
    return FMT2021ClosedFormCurve(eps0, n).delta(eps)


def fmt2021_closed_form_log_delta(eps: float, eps0: float, n: int) -> float:
    """Natural log of :func:`fmt2021_closed_form_delta` (representable far below 1e-300).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer in [2, 10**300].

    Returns:
        ``log`` of the upper bound on delta (``<= 0``), rounded up by a relative 1e-12; ``-inf``
        for ``eps >= eps0``; at least -1.7e308 (an upper bound when the true value is smaller).

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).
        BoundNotApplicable: As :func:`fmt2021_closed_form_delta`.

    Example:
        >>> round(fmt2021_closed_form_log_delta(0.5, eps0=2.0, n=10**8), 0)
        -137530.0
    """
    eps = _eps(eps)
    return FMT2021ClosedFormCurve(eps0, n).log_delta(eps)


# --------------------------------------------------------------------------- clone pair (exact)


def _q_arg(clone_prob: object) -> float:
    return check_real("clone_prob", clone_prob, low=0.0, high=1.0, low_open=True)


@dataclass(frozen=True)
class ClonePairCurve(LiteratureCurve):
    """The certified hockey-stick curve of the clone pair with clone probability ``q``
    (``bound="upper"``; see :func:`clone_pair_log_delta` for the pair and how it stays an upper bound).

    ``epsilon`` is the clone engine's certified search by the library's one root finder
    (``ClonePair.certified_epsilon``: Illinois false position on the coarse certified bound, secant
    steps on the fine one, every candidate accepted only where the certified value is
    ``<= delta``, ending with the same check as :meth:`delta`): ~1e-4 relative, at far fewer
    evaluations than bisection.

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        clone_prob: ``q`` in (0, 1].
        rel_slack: Relative tightness target of the block sums, in (0, 1) (keyword only).
        max_work: Work budget (keyword only; ``None``: the default budget).

    Raises:
        ParameterError: On invalid numbers.

    Example:
        >>> c = ClonePairCurve(2.0, 10_000, math.exp(-2.0))
        >>> e = c.epsilon(1e-6)
        >>> 0.1 < e < 0.5, c.delta(e) <= 1e-6
        (True, True)
    """

    eps0: float
    n: int
    clone_prob: float
    rel_slack: float = 1e-4
    max_work: int | None = None
    name = "clone pair"
    citation = "Feldman, McMillan, Talwar (FOCS 2021), Sec. 3, clone reduction, exact numerical"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", _eps0(self.eps0))
        object.__setattr__(self, "n", _n(self.n))
        object.__setattr__(self, "clone_prob", _q_arg(self.clone_prob))
        object.__setattr__(
            self,
            "rel_slack",
            check_real("rel_slack", self.rel_slack, low=0.0, high=1.0, low_open=True, high_open=True),
        )
        if self.max_work is not None:
            object.__setattr__(self, "max_work", check_max_work(self.max_work))

    def _log_delta(self, eps: float) -> float:
        if eps >= self.eps0:  # then P <= e^eps Q pointwise
            return -math.inf
        pair = ClonePair(self.eps0, self.n, self.clone_prob, max_work=self.max_work)
        return pair.log_delta(eps, rel_slack=self.rel_slack)[0]

    def epsilon(self, delta: float) -> float:
        """Certified epsilon at ``delta`` (at most ``eps0``; see the class docstring)."""
        delta = _delta(delta)
        return _clone_epsilon(self.eps0, self.n, delta, self.clone_prob, self.max_work)


@dataclass(frozen=True)
class FMT2021CloneCurve(ClonePairCurve):
    """FMT 2021's numerical clone bound: the clone pair with ``q = e^-eps0`` (certified).

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        max_work: Work budget (keyword only).

    Example:
        >>> c = FMT2021CloneCurve(4.0, 100_000)
        >>> 0.16754 <= c.epsilon(1e-6) <= 0.17279
        True
    """

    eps0: float
    n: int
    clone_prob: float = -1.0  # set from eps0
    rel_slack: float = 1e-4
    max_work: int | None = None
    name = "FMT21 clones (exact)"
    citation = "Feldman, McMillan, Talwar (FOCS 2021), clone reduction, exact numerical"

    def __init__(self, eps0: float, n: int, *, max_work: int | None = None) -> None:
        eps0 = _eps0(eps0)
        object.__setattr__(self, "eps0", eps0)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "clone_prob", math.exp(-eps0))
        object.__setattr__(self, "rel_slack", 1e-4)
        object.__setattr__(self, "max_work", max_work)
        self.__post_init__()


def clone_pair_log_delta(
    eps: float,
    eps0: float,
    n: int,
    clone_prob: float,
    *,
    rel_slack: float = 1e-4,
    max_work: int | None = None,
) -> float:
    """Natural log of a certified upper bound on ``D_{e^eps}(P || Q)`` for the clone pair.

    The pair (FMT 2021, Section 3, with clone probability ``q``): ``C ~ Bin(n - 1, q)``,
    ``A | C ~ Bin(C, 1/2)``, ``P = (A+1, C-A)`` w.p. ``alpha`` and ``(A, C-A+1)`` otherwise, ``Q`` the
    same with ``alpha`` and ``1 - alpha`` swapped, ``alpha = e^eps0/(e^eps0 + 1)``. The divergence is
    ``sum_c Bin(n-1, q)(c) f(c)`` with ``f(c) = sum_b [kappa1 B_c(b) - kappa2 B_c(b+1)]_+``,
    ``B_c = Bin(c, 1/2)``, ``kappa1 = alpha - e^eps (1 - alpha)``, ``kappa2 = e^eps alpha - (1-alpha)``
    (only positive terms are summed: no cancellation). The pair is symmetric, so
    ``D(Q||P) = D(P||Q)``; ``delta = 0`` (log ``-inf``) for ``eps >= eps0``.

    How it stays an upper bound while running in milliseconds (details in the engine module
    ``shuffle_accounting.literature._clones``): ``f`` is non-increasing in ``c`` (one more clone is a
    Markov kernel applied to both outputs), so clone counts are grouped in blocks evaluated at the
    block's smallest ``c`` with the block's exact binomial mass, refined until the upper and lower
    block sums agree to a relative ``rel_slack``; truncated clone-count tails (Chernoff-KL) and inner
    tails (geometric series) are bounded and added; every log term carries a floating-point error
    allowance (``gammaln`` to 64 ulps, each operation to one ulp of its magnitude); ``q`` is rounded
    down (the divergence is non-increasing in ``q``). Work: ``O(blocks * sqrt(n q))``.

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        clone_prob: ``q`` in (0, 1]: probability that another user is a clone of ``x0`` or ``x1``.
        rel_slack: Relative tightness target of the block sums, in (0, 1) (the result is an upper
            bound for every value; smaller is tighter and slower).

    Returns:
        ``log`` of the upper bound (``<= 0``; may be far below ``log(1e-300)``; ``-inf`` iff 0).

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).

    Example:
        >>> x = clone_pair_log_delta(0.5, eps0=2.0, n=10**6, clone_prob=math.exp(-2.0))
        >>> -6980.0 < x < -6979.0  # delta ~ 1e-3031: far below the float range, exact in log space
        True
    """
    eps = _eps(eps)
    return ClonePairCurve(eps0, n, clone_prob, rel_slack=rel_slack, max_work=max_work).log_delta(eps)


def clone_pair_delta(
    eps: float,
    eps0: float,
    n: int,
    clone_prob: float,
    *,
    rel_slack: float = 1e-4,
    max_work: int | None = None,
) -> float:
    """Certified upper bound on ``D_{e^eps}(P || Q)`` for the clone pair (``exp`` of
    :func:`clone_pair_log_delta`, capped at 1; values below ~1e-308 underflow to 0 — use the log).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        clone_prob: ``q`` in (0, 1].
        max_work: Work budget (``None``: ``DEFAULT_MAX_WORK`` = 1e8, about 10 s); the work is about
            the clone-count window plus 256 inner sums of width ``sqrt(5 n q)``.
        rel_slack: Relative tightness target of the block sums, in (0, 1).

    Returns:
        An upper bound on the hockey-stick divergence.

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).

    Example:
        >>> d = clone_pair_delta(0.5, eps0=2.0, n=1000, clone_prob=math.exp(-2.0))
        >>> 1e-7 < d < 1e-4
        True
    """
    eps = _eps(eps)
    return ClonePairCurve(eps0, n, clone_prob, rel_slack=rel_slack, max_work=max_work).delta(eps)


def _clone_epsilon(eps0: float, n: int, delta: float, q: float, max_work: int | None = None) -> float:
    if n - 1 == 0:
        return eps0
    return ClonePair(eps0, n, q, max_work=max_work).certified_epsilon(delta)


def clone_pair_epsilon(
    eps0: float, n: int, delta: float, clone_prob: float, *, max_work: int | None = None
) -> float:
    """Smallest epsilon (to about 1e-4 relative: block slack 1e-3 over the slope) whose certified clone-pair
    delta (:func:`clone_pair_log_delta`) is ``<= delta``.

    The one root finder (:func:`shuffle_accounting.curves.epsilon_from_delta`: Illinois false
    position on the coarse certified ``log delta(eps)``, smooth and decreasing, then secant steps on
    the fine one), followed by upward steps until the certified value at the returned epsilon is
    ``<= delta``: the returned epsilon is always one
    at which the certified bound was evaluated and found ``<= delta``. Never exceeds ``eps0``.

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        delta: Target delta in (0, 1).
        clone_prob: ``q`` in (0, 1].
        max_work: Work budget (``None``: ``DEFAULT_MAX_WORK`` = 1e8, about 10 s); the work is about
            the clone-count window plus 256 inner sums of width ``sqrt(5 n q)``.

    Returns:
        A certified epsilon in ``[0, eps0]``.

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).

    Example:
        >>> e = clone_pair_epsilon(eps0=2.0, n=10_000, delta=1e-6, clone_prob=math.exp(-2.0))
        >>> 0.1 < e < 0.5
        True
    """
    eps0, n, delta = _eps0(eps0), _n(n), _delta(delta)
    return ClonePairCurve(eps0, n, clone_prob, max_work=max_work).epsilon(delta)


def fmt2021_clone_delta(eps: float, eps0: float, n: int, *, max_work: int | None = None) -> float:
    """FMT 2021 numerical clone bound: exact ``D_{e^eps}(P||Q)`` with ``q = e^-eps0`` (Lemma 3.3,
    Theorem 3.2), certified upward (see :func:`clone_pair_delta`). Valid for every ``eps0``-LDP
    randomizer, any ``n >= 2`` and ``eps >= 0``.

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        Upper bound on the shuffled delta at ``eps``.

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).

    Example:
        >>> fmt2021_clone_delta(4.0, eps0=4.0, n=1000)
        0.0
    """
    eps = _eps(eps)
    return FMT2021CloneCurve(eps0, n, max_work=max_work).delta(eps)


def fmt2021_clone_log_delta(eps: float, eps0: float, n: int, *, max_work: int | None = None) -> float:
    """Natural log of :func:`fmt2021_clone_delta` (certified; far below 1e-300 when needed).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        ``log`` of the certified upper bound (``-inf`` for ``eps >= eps0``).

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).

    Example:
        >>> fmt2021_clone_log_delta(0.9, eps0=1.0, n=10**5) < math.log(1e-300)
        True
    """
    eps = _eps(eps)
    return FMT2021CloneCurve(eps0, n, max_work=max_work).log_delta(eps)


def fmt2021_clone_epsilon(eps0: float, n: int, delta: float, *, max_work: int | None = None) -> float:
    """FMT 2021 numerical clone bound as epsilon(delta), by a certified monotone root find.

    The authors' reference example (``n = 1e5, eps0 = 4, delta = 1e-6``) brackets this value in
    ``[0.16754, 0.17279]``; here it is computed (certified, ~1e-4 relative) instead of bracketed.

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        delta: Target delta in (0, 1).

    Returns:
        An epsilon at which the certified clone delta is ``<= delta`` (at most ``eps0``).

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).

    Example:
        >>> e = fmt2021_clone_epsilon(eps0=4.0, n=100_000, delta=1e-6)
        >>> 0.16754 <= e <= 0.17279
        True
    """
    eps0, n, delta = _eps0(eps0), _n(n), _delta(delta)
    return FMT2021CloneCurve(eps0, n, max_work=max_work).epsilon(delta)
