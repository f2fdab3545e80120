"""Feldman, McMillan, Talwar, *Stronger Privacy Amplification by Shuffling for Renyi and
Approximate Differential Privacy* (SODA 2023; arXiv:2208.04591), the "stronger clone" reduction
(their Lemma 3.5, as corrected in the paper's errata) specialised to k-ary randomized response.

For k-RR every report decomposes as ``R(x) = beta R(x0) + beta R(x1) + (1 - 2 beta) LO(x)`` with
``beta = 1 / (e^eps0 + 1)`` (see :meth:`shuffle_accounting.KRR.clone_decomposition`), and the pair
``(R(x0), R(x1))`` is a ``(alpha, 1 - alpha)`` mixture of two distributions with
``alpha = e^eps0 / (e^eps0 + 1)``. So k-RR belongs to the class for which the corrected stronger-
clone theorem holds with clone probability ``p = 1/(e^eps0 + 1)``: the shuffled output is
post-processing of the clone pair of :mod:`.feldman2021` with ``C ~ Bin(n - 1, 2/(e^eps0 + 1))``
instead of FMT 2021's generic ``Bin(n - 1, e^-eps0)`` — more clones, hence a smaller delta.

* :func:`fmt2023_krr_clone_delta` / :func:`fmt2023_krr_clone_epsilon`: the numerical bound, the
  exact hockey-stick divergence of that pair (certified upward, see
  :func:`.feldman2021.clone_pair_delta`).
* :func:`fmt2023_krr_closed_form_epsilon` / :func:`fmt2023_krr_closed_form_delta`: the closed form
  obtained from the FMT 2021 Theorem 3.1 analysis with the clone probability ``e^-eps0`` replaced by
  ``2/(e^eps0 + 1)``: ``eps = log(1 + tanh(eps0/2) (8 sqrt(log(4/delta)/(q n)) + 8/(q n)))`` with
  ``q = 2/(e^eps0 + 1)``, valid when ``q n >= 16 log(2/delta)``. (The exact constants printed in
  FMT 2023 could not be checked against the paper text in this project; this form is the one their
  proof technique gives, and the test suite checks it is >= the exact numerical bound.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._common import BoundNotApplicable
from ._common import delta_arg as _delta
from ._common import eps0_arg as _eps0
from ._common import eps_arg as _eps
from ._common import n_arg as _n
from .feldman2021 import ClonePairCurve, ClosedFormCloneCurve

__all__ = [
    "FMT2023KRRCloneCurve",
    "FMT2023KRRClosedFormCurve",
    "krr_clone_probability",
    "fmt2023_krr_clone_delta",
    "fmt2023_krr_clone_log_delta",
    "fmt2023_krr_closed_form_log_delta",
    "fmt2023_krr_clone_epsilon",
    "fmt2023_krr_closed_form_epsilon",
    "fmt2023_krr_closed_form_delta",
]


def krr_clone_probability(eps0: float) -> float:
    """``q = 2 / (e^eps0 + 1)``: probability that a k-RR report is a clone of ``x0`` or ``x1``.

    Example:
        >>> krr_clone_probability(math.log(3.0))
        0.5
    """
    eps0 = _eps0(eps0)
    return 2.0 / (math.exp(eps0) + 1.0) if eps0 < 700 else 0.0


def _log_q(eps0: float) -> float:
    """``log(2 / (e^eps0 + 1))``, finite for every finite ``eps0`` (no underflow)."""
    return math.log(2.0) - (eps0 + math.log1p(math.exp(-eps0)))


def _q(eps0: float) -> float:
    q = krr_clone_probability(eps0)
    if q <= 0.0:
        raise BoundNotApplicable(f"clone probability 2/(e^eps0 + 1) underflows for eps0 = {eps0}")
    return q


@dataclass(frozen=True)
class FMT2023KRRCloneCurve(ClonePairCurve):
    """Stronger-clone numerical bound for shuffled k-RR: the clone pair with ``q = 2/(e^eps0 + 1)``
    (FMT 2023, Lemma 3.5 as corrected in the errata), certified (``bound="upper"``).

    Args:
        eps0: Local privacy parameter of k-RR, finite and > 0.
        n: Number of users, integer >= 2.
        max_work: Work budget (keyword only).

    Example:
        >>> round(FMT2023KRRCloneCurve(2.0, 10_000).epsilon(1e-6), 3)
        0.114
    """

    eps0: float
    n: int
    clone_prob: float = -1.0  # set from eps0
    rel_slack: float = 1e-4
    max_work: int | None = None
    name = "FMT23 clones (exact)"
    citation = "Feldman, McMillan, Talwar (SODA 2023), k-RR stronger clones, exact numerical"

    def __init__(self, eps0: float, n: int, *, max_work: int | None = None) -> None:
        eps0 = _eps0(eps0)
        n = _n(n)
        object.__setattr__(self, "eps0", eps0)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "clone_prob", _q(eps0))
        object.__setattr__(self, "rel_slack", 1e-4)
        object.__setattr__(self, "max_work", max_work)
        self.__post_init__()


@dataclass(frozen=True)
class FMT2023KRRClosedFormCurve(ClosedFormCloneCurve):
    """The closed form with the k-RR stronger-clone probability ``q = 2/(e^eps0 + 1)`` (certified).

    Args:
        eps0: Local privacy parameter of k-RR, finite and > 0.
        n: Number of users, integer in [2, 10**300].

    Example:
        >>> round(FMT2023KRRClosedFormCurve(4.0, 100_000).epsilon(1e-6), 4)
        0.4099
    """

    eps0: float
    n: int
    name = "FMT23 closed form"
    citation = "Feldman, McMillan, Talwar, Stronger amplification (SODA 2023), k-RR stronger clones"
    _label = "FMT 2023 stronger-clone closed form"

    @property
    def log_q(self) -> float:
        """``log(2 / (e^eps0 + 1))``."""
        return _log_q(self.eps0)


def fmt2023_krr_clone_delta(eps: float, eps0: float, n: int, *, max_work: int | None = None) -> float:
    """Stronger-clone numerical bound for shuffled k-RR: exact ``D_{e^eps}(P||Q)`` with
    ``C ~ Bin(n - 1, 2/(e^eps0 + 1))`` (FMT 2023, Lemma 3.5 as corrected in the errata).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter of k-RR, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        Certified upper bound on the shuffled delta at ``eps`` (0 for ``eps >= eps0``).

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).

    Example:
        >>> from shuffle_accounting.literature import fmt2021_clone_delta
        >>> fmt2023_krr_clone_delta(0.3, 2.0, 2000) <= fmt2021_clone_delta(0.3, 2.0, 2000)
        True
    """
    eps = _eps(eps)
    return FMT2023KRRCloneCurve(eps0, n, max_work=max_work).delta(eps)


def fmt2023_krr_clone_epsilon(eps0: float, n: int, delta: float, *, max_work: int | None = None) -> float:
    """Stronger-clone numerical bound for shuffled k-RR as epsilon(delta) (certified root find).

    Args:
        eps0: Local privacy parameter of k-RR, finite and > 0.
        n: Number of users, integer >= 2.
        delta: Target delta in (0, 1).

    Returns:
        An epsilon at which the certified delta is ``<= delta`` (at most ``eps0``).

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).

    Example:
        >>> round(fmt2023_krr_clone_epsilon(2.0, 10_000, 1e-6), 3)
        0.114
    """
    eps0, n, delta = _eps0(eps0), _n(n), _delta(delta)
    return FMT2023KRRCloneCurve(eps0, n, max_work=max_work).epsilon(delta)


def fmt2023_krr_closed_form_epsilon(eps0: float, n: int, delta: float) -> float:
    """Closed form with the k-RR stronger-clone probability ``q = 2/(e^eps0 + 1)``.

    ``eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) * (8 sqrt(log(4/delta)/(q n)) + 8/(q n)))``.

    Args:
        eps0: Local privacy parameter of k-RR, finite and > 0.
        n: Number of users, integer in [2, 10**300].
        delta: Target delta in (0, 1).

    Returns:
        Upper bound on the shuffled epsilon.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: If ``q n < 16 log(2/delta)``.

    Example:
        >>> round(fmt2023_krr_closed_form_epsilon(4.0, 100_000, 1e-6), 4)
        0.4099
    """
    return FMT2023KRRClosedFormCurve(eps0, n).epsilon(delta)


def fmt2023_krr_closed_form_delta(eps: float, eps0: float, n: int) -> float:
    """The stronger-clone closed form solved for delta (direct inversion, capped at 1).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter of k-RR, finite and > 0.
        n: Number of users, integer in [2, 10**300].

    Returns:
        Upper bound on delta at ``eps``.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: Outside the closed form's regime.

    Example:
        >>> d = fmt2023_krr_closed_form_delta(0.4099, 4.0, 100_000)
        >>> 9e-7 < d < 1.1e-6
        True
    """
    eps = _eps(eps)
    return FMT2023KRRClosedFormCurve(eps0, n).delta(eps)


def fmt2023_krr_clone_log_delta(eps: float, eps0: float, n: int, *, max_work: int | None = None) -> float:
    """Natural log of :func:`fmt2023_krr_clone_delta` (certified; far below 1e-300 when needed).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter of k-RR, finite and > 0.
        n: Number of users, integer >= 2.

    Returns:
        ``log`` of the certified upper bound (``-inf`` for ``eps >= eps0``).

    Raises:
        ParameterError: On invalid numbers.
        WorkBudgetExceeded: If the evaluation would exceed ``max_work`` (large ``n q``).

    Example:
        >>> fmt2023_krr_clone_log_delta(0.9, eps0=1.0, n=10**5) < math.log(1e-300)
        True
    """
    eps = _eps(eps)
    return FMT2023KRRCloneCurve(eps0, n, max_work=max_work).log_delta(eps)


def fmt2023_krr_closed_form_log_delta(eps: float, eps0: float, n: int) -> float:
    """Natural log of :func:`fmt2023_krr_closed_form_delta` (far below 1e-300 when needed).

    Args:
        eps: Target epsilon, finite and >= 0.
        eps0: Local privacy parameter of k-RR, finite and > 0.
        n: Number of users, integer in [2, 10**300].

    Returns:
        ``log`` of the upper bound on delta, rounded up by a relative 1e-12.

    Raises:
        ParameterError: On invalid numbers.
        BoundNotApplicable: Outside the closed form's regime.

    Example:
        >>> fmt2023_krr_closed_form_log_delta(0.5, 2.0, 10**8) < math.log(1e-300)
        True
    """
    eps = _eps(eps)
    return FMT2023KRRClosedFormCurve(eps0, n).log_delta(eps)
