"""Privacy-curve adapters for shuffled k-RR (see :mod:`shuffle_accounting.curves`).

* :class:`~shuffle_accounting.shuffled_krr.mechanism.ShuffledKRR` itself is the certified
  (``bound == "upper"``) curve (``method="auto"``); :class:`CertifiedKRRCurve` fixes another
  ``method``: the blanket curve alone, or the branch-and-bound worst case (``k = 2``).
* :class:`ExhibitedKRRCurve` is its exhibited lower curve (``bound == "lower"``): the
  ``*_lower`` methods of ``ShuffledKRR`` (concrete datasets; for ``k = 2`` the worst-case
  certificate's witness).
* :class:`AccountantCurve` turns a composed accountant (a
  :class:`~shuffle_accounting.shuffled_krr.accountant.ShuffleAccountant` or any object with
  ``get_delta`` / ``get_epsilon``) into a curve.

Thin adapters only: every number comes from the wrapped object's own methods.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np

from .._validation import ParameterError, check_delta, check_real, check_real_array
from ..curves import check_bound
from .mechanism import ShuffledKRR

__all__ = ["CertifiedKRRCurve", "ExhibitedKRRCurve", "AccountantCurve"]


@dataclass(frozen=True)
class CertifiedKRRCurve:
    """A certified curve of shuffled k-RR with a fixed ``method`` (``bound == "upper"``).

    ``method="blanket"``: the privacy-blanket divergence alone
    (:mod:`~shuffle_accounting.shuffled_krr.blanket`); ``"worst-case"``: the certified exact worst
    case by branch and bound (``k = 2``, :mod:`~shuffle_accounting.shuffled_krr.worst_case`);
    ``"auto"``: the smaller of both (what ``ShuffledKRR`` itself answers). Values are
    ``ShuffledKRR(k, eps0, n).delta/log_delta/epsilon(..., method=method)``.

    Args:
        k: Number of categories, an integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, an integer >= 1.
        method: ``"auto"``, ``"blanket"`` or ``"worst-case"`` (keyword only).

    Raises:
        ParameterError: On invalid numbers, an unknown method, or ``"worst-case"`` for ``k >= 3``.

    Example:
        >>> bl = CertifiedKRRCurve(2, 2.0, 1000, method="blanket")
        >>> wc = CertifiedKRRCurve(2, 2.0, 1000, method="worst-case")
        >>> bl.bound, bool(wc.delta(0.3) < bl.delta(0.3))
        ('upper', True)
    """

    k: int
    eps0: float
    n: int
    _: KW_ONLY
    method: str = "auto"

    def __post_init__(self) -> None:
        mech = ShuffledKRR(self.k, self.eps0, self.n)
        mech._method(self.method)  # validates the name and k = 2 for "worst-case"
        object.__setattr__(self, "k", mech.k)
        object.__setattr__(self, "eps0", mech.eps0)
        object.__setattr__(self, "n", mech.n)

    @property
    def bound(self) -> str:
        """``"upper"`` (certified)."""
        return "upper"

    @property
    def mechanism(self) -> ShuffledKRR:
        """The mechanism."""
        return ShuffledKRR(self.k, self.eps0, self.n)

    def log_delta(self, eps: Any) -> Any:
        """Certified ``log delta(eps)`` with this method."""
        return self.mechanism.log_delta(eps, method=self.method)

    def delta(self, eps: Any) -> Any:
        """Certified ``delta(eps)`` with this method."""
        return self.mechanism.delta(eps, method=self.method)

    def epsilon(self, delta: float) -> float:
        """Certified ``epsilon(delta)`` with this method (rounded up, at most ``eps0``)."""
        return self.mechanism.epsilon(delta, method=self.method)


@dataclass(frozen=True)
class ExhibitedKRRCurve:
    """The exhibited lower curve of shuffled k-RR: ``bound == "lower"``.

    ``delta(eps)`` is reached by a concrete pair of neighbouring datasets (rounded down), so the
    true worst-case delta is at least this; ``epsilon(delta)`` is the largest epsilon at which a
    searched dataset's exact delta exceeds ``delta`` (rounded down): no accountant can certify a
    smaller epsilon. Values are :meth:`ShuffledKRR.delta_lower`,
    :meth:`~ShuffledKRR.log_delta_lower` (for ``k = 2`` also the worst-case certificate's
    witness) and :meth:`~ShuffledKRR.epsilon_lower`.

    Args:
        k: Number of categories, an integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, an integer >= 2.

    Raises:
        ParameterError: On invalid numbers.

    Example:
        >>> low = ExhibitedKRRCurve(k=4, eps0=1.0, n=7)
        >>> up = ShuffledKRR(k=4, eps0=1.0, n=7)
        >>> bool(low.delta(0.5) <= up.delta(0.5)), bool(low.epsilon(1e-3) <= up.epsilon(1e-3))
        (True, True)
    """

    k: int
    eps0: float
    n: int

    def __post_init__(self) -> None:
        mech = ShuffledKRR(self.k, self.eps0, self.n)
        if mech.n < 2:
            raise ParameterError(f"n must be an integer >= 2 for the exhibited curve, got {mech.n}")
        object.__setattr__(self, "k", mech.k)
        object.__setattr__(self, "eps0", mech.eps0)
        object.__setattr__(self, "n", mech.n)

    @property
    def bound(self) -> str:
        """``"lower"`` (exhibited by concrete datasets)."""
        return "lower"

    @property
    def mechanism(self) -> ShuffledKRR:
        """The mechanism (its certified curve)."""
        return ShuffledKRR(self.k, self.eps0, self.n)

    def log_delta(self, eps: Any) -> Any:
        """Exhibited ``log delta(eps)``: :meth:`ShuffledKRR.log_delta_lower`, and for ``k = 2`` (where
        ``ShuffledKRR`` certifies the exact worst case) the larger of it and the worst-case
        certificate's witness (:meth:`ShuffledKRR.worst_dataset`), so that :meth:`delta` and
        :meth:`epsilon` exhibit the same datasets. Both are exhibited, so the maximum is too."""
        mech = self.mechanism
        out = mech.log_delta_lower(eps)
        if mech.auto_method != "worst-case":
            return out
        flat = np.array(out, dtype=float).ravel()
        for i, e in enumerate(np.ravel(np.asarray(eps, dtype=float)).tolist()):
            flat[i] = max(flat[i], mech.certificate(eps=e).exhibited_log_delta)
        return float(flat[0]) if np.ndim(out) == 0 else flat.reshape(np.shape(out))

    def delta(self, eps: Any) -> Any:
        """Exhibited ``delta(eps) = exp(log_delta(eps))`` (0.0 on underflow; use :meth:`log_delta`)."""
        ld = self.log_delta(eps)
        with np.errstate(under="ignore"):
            out = np.exp(ld)
        return float(out) if np.ndim(out) == 0 else out

    def epsilon(self, delta: float) -> float:
        """Exhibited ``epsilon(delta)`` (:meth:`ShuffledKRR.epsilon_lower`), rounded down."""
        return self.mechanism.epsilon_lower(delta)


class AccountantCurve:
    """A composed accountant as a privacy curve: ``delta = get_delta``, ``epsilon = get_epsilon``.

    A :class:`~shuffle_accounting.shuffled_krr.accountant.ShuffleAccountant` answers certified
    upper bounds (pessimistic PLDs, inflated against floating-point summation), hence the default
    ``bound="upper"``; pass another ``bound`` for an accountant that answers estimates. The curve
    reads the accountant's current ledger at each call (compose first).

    Args:
        accountant: An object with ``get_delta(eps)`` and ``get_epsilon(delta)``.
        bound: Which way its answers are sound (keyword only), ``"upper"`` by default.

    Raises:
        ParameterError: If ``accountant`` lacks the two methods or ``bound`` is unknown.

    Example:
        >>> from shuffle_accounting.shuffled_krr import ShuffleAccountant, ShuffledKRRDpEvent
        >>> acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(k=4, eps0=1.0, n=1000), 2)
        >>> c = AccountantCurve(acc)
        >>> e = c.epsilon(1e-6)
        >>> c.bound, bool(c.delta(e) <= 1e-6 * (1 + 1e-6)), bool(0 < e < 2.0)
        ('upper', True, True)
    """

    def __init__(self, accountant: Any, *, bound: str = "upper") -> None:
        if not (
            callable(getattr(accountant, "get_delta", None))
            and callable(getattr(accountant, "get_epsilon", None))
        ):
            raise ParameterError(
                f"accountant must have get_delta(eps) and get_epsilon(delta) methods, got {type(accountant).__name__}"
            )
        self._accountant = accountant
        self._bound = check_bound(bound)

    @property
    def bound(self) -> str:
        """Which way the accountant's answers are sound."""
        return self._bound

    @property
    def accountant(self) -> Any:
        """The wrapped accountant."""
        return self._accountant

    def delta(self, eps: Any) -> Any:
        """``accountant.get_delta(eps)`` for a scalar or each entry of an array."""
        if np.ndim(eps) == 0 and not isinstance(eps, (str, bytes)):
            return float(self._accountant.get_delta(check_real("eps", eps, low=0.0)))
        arr = check_real_array("eps", eps, low=0.0)
        out = np.array([float(self._accountant.get_delta(float(e))) for e in arr.ravel()])
        return out.reshape(arr.shape)

    def log_delta(self, eps: Any) -> Any:
        """Natural log of :meth:`delta` (``-inf`` where it is 0)."""
        d = self.delta(eps)
        with np.errstate(divide="ignore"):
            out = np.log(d)
        return float(out) if np.ndim(out) == 0 else out

    def epsilon(self, delta: float) -> float:
        """``accountant.get_epsilon(delta)``."""
        delta = check_delta("delta", delta)
        out = float(self._accountant.get_epsilon(delta))
        return out if not math.isnan(out) else math.inf
