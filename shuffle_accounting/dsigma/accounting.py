"""d_sigma-privacy accounting: composition, regrouping and the re-identification bound.

Paper: Meehan, Roy-Chowdhury, Chaudhuri, Jha, *Privacy Implications of Shuffling* (ICLR 2022):

* Thm A.2 (sequential composition): releases that are ``(alpha_1, G)``- and
  ``(alpha_2, G)``-d_sigma private *for the same grouping G* and use independent randomness are
  jointly ``(alpha_1 + alpha_2, G)``-d_sigma private.
* Thm 4.4 (regrouping): a Mallows shuffler with dispersion ``theta`` and reference sigma_0 is
  ``(alpha', G')``-d_sigma private for any grouping ``G'`` with ``alpha' = theta * Delta(sigma_0 : d, G')``
  (the same notion of sensitivity -- here the exact one -- on both sides).
* Thm 4.2 (LDP + d_sigma re-identification): if the reports are eps-LDP and the shuffler is
  alpha-d_sigma private, an adversary trying to pick out the reports of a subset ``I`` of
  ``k < r/2`` members (``subset_size`` in the code: ``k`` is the number of categories elsewhere) of a group of size ``r`` satisfies
  ``Pr[lose] >= floor((r - k) / k) e^{-(2 k eps + alpha)} Pr[win]``, hence
  ``Pr[win] <= 1 / (1 + floor((r - k)/k) e^{-(2 k eps + alpha)})``.

Every number is rounded on the safe side: total alphas upwards, the odds bound downwards and the
win-probability bound upwards. No randomness is used here.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import ParameterError, check_choice, check_int, check_real
from .groups import validate_groups
from .mechanism import MallowsShuffler
from .reference import validate_order
from .sensitivity import sensitivity as _sensitivity

__all__ = [
    "Release",
    "DSigmaAccountant",
    "regrouped_alpha",
    "ReidentificationBound",
    "reidentification_bound",
]


def _up(x: float) -> float:
    return float(np.nextafter(x, math.inf)) if math.isfinite(x) and x > 0 else x


def _down(x: float) -> float:
    return float(np.nextafter(x, 0.0)) if math.isfinite(x) and x > 0 else x


def regrouped_alpha(theta: float, order: Any, groups: Any, distance: str = "kendall") -> float:
    """Thm 4.4: the d_sigma parameter of a Mallows shuffler w.r.t. another grouping.

    ``alpha' = theta * Delta(sigma_0 : d, G')`` with the exact sensitivity, rounded up.

    Args:
        theta: The shuffler's dispersion in ``[0, inf]``.
        order: The shuffler's reference permutation (list of users).
        groups: The grouping ``G'`` to account against.
        distance: ``"kendall"`` or ``"hamming"`` (the shuffler's Mallows distance).

    Returns:
        ``alpha'`` (``inf`` when ``theta = inf`` and ``G'`` has a non-singleton group; 0 when
        ``Delta(G') = 0``).

    Raises:
        ParameterError: On invalid arguments.

    Example:
        >>> regrouped_alpha(0.5, [0, 1, 2, 3], [[0, 3], [1], [2], [0, 3]])  # Delta = 1 + 2*2 = 5
        2.5000000000000004
    """
    theta = check_real("theta", theta, low=0.0, allow_inf=True)
    distance = check_choice("distance", distance, ("kendall", "hamming"))
    checked = validate_groups(groups)
    ordr = validate_order(order, len(checked))
    sens = _sensitivity(checked, ordr, distance)
    if sens == 0:
        return 0.0
    if math.isinf(theta):
        return math.inf
    return _up(theta * sens)


@dataclass(frozen=True)
class Release:
    """One entry of a :class:`DSigmaAccountant` ledger.

    Attributes:
        alpha: d_sigma parameter w.r.t. the accountant's grouping (upper bound).
        label: Free text.
        theta: Dispersion of the shuffler, if the release came from one.
        sensitivity: Sensitivity w.r.t. the accountant's grouping, if known.
    """

    alpha: float
    label: str = ""
    theta: float | None = None
    sensitivity: int | None = None


class DSigmaAccountant:
    """Ledger of d_sigma-private releases against one grouping ``G`` (Thm A.2, Thm 4.4).

    Each :meth:`add` / :meth:`add_shuffler` appends a release; :attr:`alpha` is the composed
    guarantee (sum of the alphas, rounded up). Releases must use independent randomness.

    The ledger is mutable (like ``dp_accounting`` accountants); every entry is validated.

    Args:
        groups: The grouping ``G`` the guarantee is stated for.

    Raises:
        ParameterError: On an invalid grouping.

    Example:
        >>> from shuffle_accounting.dsigma import MallowsShuffler
        >>> G = [[0, 1], [0, 1], [2, 3], [2, 3]]
        >>> acct = DSigmaAccountant(G)
        >>> acct.add_shuffler(MallowsShuffler(G, alpha=1.0)).add(0.5, label="second").alpha
        1.5000000000000002
    """

    def __init__(self, groups: Any) -> None:
        self._groups = validate_groups(groups)
        self._releases: list[Release] = []

    @property
    def groups(self) -> tuple[np.ndarray, ...]:
        """The accountant's grouping."""
        return self._groups

    @property
    def releases(self) -> tuple[Release, ...]:
        """The ledger, in order."""
        return tuple(self._releases)

    @property
    def alpha(self) -> float:
        """Composed d_sigma parameter (Thm A.2), an upper bound (rounded up)."""
        if not self._releases:
            return 0.0
        return _up(math.fsum(r.alpha for r in self._releases))

    def add(self, alpha: float, *, label: str = "") -> DSigmaAccountant:
        """Record a release known to be ``(alpha, G)``-d_sigma private for this grouping.

        Returns ``self`` so calls can be chained.

        Raises:
            ParameterError: If ``alpha`` is negative or NaN.

        Example:
            >>> DSigmaAccountant([[0], [1]]).add(0.25).add(0.25).alpha
            0.5000000000000001
        """
        alpha = check_real("alpha", alpha, low=0.0, allow_inf=True)
        if not isinstance(label, str):
            raise ParameterError(f"label must be a string, got {label!r}")
        self._releases.append(Release(alpha=alpha, label=label))
        return self

    def add_shuffler(self, shuffler: Any, *, label: str = "") -> DSigmaAccountant:
        """Record one release of a :class:`~shuffle_accounting.dsigma.MallowsShuffler`.

        Its alpha w.r.t. this accountant's grouping is ``theta * Delta(sigma_0 : d, G)`` (Thm 4.4;
        equal to the shuffler's own alpha bound when the groupings coincide).

        Raises:
            ParameterError: If ``shuffler`` is not a MallowsShuffler over the same users.

        Example:
            >>> from shuffle_accounting.dsigma import MallowsShuffler
            >>> sh = MallowsShuffler([[0, 1], [0, 1], [2], [3]], alpha=1.0)
            >>> DSigmaAccountant([[0, 1, 2], [0, 1], [0, 2], [3]]).add_shuffler(sh).alpha > 1.0
            True
        """
        if not isinstance(shuffler, MallowsShuffler):
            raise ParameterError(f"shuffler must be a MallowsShuffler, got {type(shuffler).__name__}")
        if shuffler.n != len(self._groups):
            raise ParameterError(
                f"shuffler must act on the accountant's {len(self._groups)} users, got n={shuffler.n}"
            )
        if not isinstance(label, str):
            raise ParameterError(f"label must be a string, got {label!r}")
        sens = _sensitivity(self._groups, shuffler.order, shuffler.distance)
        same = len(shuffler.groups) == len(self._groups) and all(
            np.array_equal(a, b) for a, b in zip(shuffler.groups, self._groups)
        )
        if same:
            alpha = shuffler.alpha
        else:
            alpha = regrouped_alpha(shuffler.theta, shuffler.order, self._groups, shuffler.distance)
        self._releases.append(Release(alpha=alpha, label=label, theta=shuffler.theta, sensitivity=sens))
        return self

    def reidentification_bound(
        self, eps: float, subset_size: int | None = None, user: int | None = None, *, k: int | None = None
    ) -> ReidentificationBound:
        """Thm 4.2 for a subset of ``subset_size`` members of ``G_user`` at the composed :attr:`alpha`.

        Args:
            eps: LDP parameter of the local randomizer (finite, >= 0).
            subset_size: ``|I|``, the size of the targeted subset (Thm 4.2's ``k``), integer >= 1.
            user: Index of the user whose group ``G_user`` is attacked.
            k: Deprecated keyword alias of ``subset_size`` (``k`` is the number of categories
                everywhere else in the package); emits a ``DeprecationWarning``.

        Returns:
            :class:`ReidentificationBound`.

        Raises:
            ParameterError: On invalid arguments (see :func:`reidentification_bound`).

        Example:
            >>> acct = DSigmaAccountant([list(range(12))] * 12).add(1.0)
            >>> round(acct.reidentification_bound(0.1, subset_size=2, user=0).win_probability_upper, 4)
            0.4478
        """
        subset_size = _subset_size_arg(subset_size, k)
        if user is None:
            raise ParameterError(
                "user must be an integer index of a user (the attacked group is G_user), got None"
            )
        user = check_int("user", user, minimum=0, maximum=len(self._groups) - 1)
        return reidentification_bound(eps, self.alpha, int(self._groups[user].size), subset_size)


def _subset_size_arg(subset_size: Any, k: Any) -> Any:
    """``subset_size``, or the deprecated ``k=`` keyword (with a ``DeprecationWarning``)."""
    if k is not None:
        if subset_size is not None:
            raise ParameterError(
                f"pass subset_size only (k is its deprecated alias), got subset_size = {subset_size!r} and k = {k!r}"
            )
        warnings.warn(
            "the keyword k= of reidentification_bound is deprecated: use subset_size= (k is the number "
            "of categories everywhere else in shuffle_accounting)",
            DeprecationWarning,
            stacklevel=3,
        )
        return k
    if subset_size is None:
        raise ParameterError("subset_size (|I|, the k of Thm 4.2) must be an integer >= 1, got None")
    return subset_size


@dataclass(frozen=True)
class ReidentificationBound:
    """Result of :func:`reidentification_bound`.

    Attributes:
        odds_lower: Lower bound on ``Pr[lose] / Pr[win]``.
        win_probability_upper: Upper bound on ``Pr[win] = 1 / (1 + odds)``.
    """

    odds_lower: float
    win_probability_upper: float


def reidentification_bound(
    eps: float, alpha: float, group_size: int, subset_size: int | None = None, *, k: int | None = None
) -> ReidentificationBound:
    """Thm 4.2: ``Pr[lose] >= floor((r - s)/s) e^{-(2 s eps + alpha)} Pr[win]``, with ``s < r/2``.

    ``s = subset_size`` is the paper's ``k`` (the size of the targeted subset ``I``); it is renamed
    here because ``k`` is the number of categories everywhere else in the package.

    Args:
        eps: LDP parameter of the local randomizer (finite, >= 0).
        alpha: d_sigma parameter of the shuffler (>= 0, ``inf`` allowed: no protection).
        group_size: ``r = |G_i|`` (integer >= 3).
        subset_size: ``s = |I|``, size of the targeted subset (integer >= 1 with ``2 s < r``).
        k: Deprecated keyword alias of ``subset_size``; emits a ``DeprecationWarning``.

    Returns:
        :class:`ReidentificationBound` (odds rounded down, win probability rounded up).

    Raises:
        ParameterError: On invalid arguments, including ``2 s >= r`` or both ``subset_size`` and
            ``k``.

    Example:
        >>> b = reidentification_bound(eps=0.2, alpha=2.0, group_size=50, subset_size=5)
        >>> round(b.odds_lower, 6), round(b.win_probability_upper, 6)
        (0.164841, 0.858486)
    """
    subset_size = _subset_size_arg(subset_size, k)
    eps = check_real("eps", eps, low=0.0)
    alpha = check_real("alpha", alpha, low=0.0, allow_inf=True)
    r = check_int("group_size", group_size, minimum=3)
    k = check_int("subset_size (|I|, the k of Thm 4.2)", subset_size, minimum=1)
    if 2 * k >= r:
        raise ParameterError(
            f"subset_size = k must satisfy 2k < group_size = {r} (Thm 4.2 needs k = |I| < r/2), got {k}"
        )
    m = (r - k) // k
    odds = _down(_down(m * math.exp(-(2 * k * eps + alpha)))) if math.isfinite(alpha) else 0.0
    win = 1.0 if odds == 0.0 else _up(_up(1.0 / (1.0 + odds)))
    return ReidentificationBound(odds_lower=odds, win_probability_upper=min(1.0, win))
