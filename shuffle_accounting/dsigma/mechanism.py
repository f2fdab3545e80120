"""The d_sigma-private Mallows shuffler (Alg. 1 of *Privacy Implications of Shuffling*).

Paper: Meehan, Roy-Chowdhury, Chaudhuri, Jha, ICLR 2022, Alg. 1 and Thm 4.3. The composition used
here is the one that is actually private (the printed step 8, ``sigma* = sigma_0^{-1} sigma``,
read with the paper's Def. A.2, is not; the paper's own App. A.10 example uses this one):

    ``order`` = BFS list of users (sigma_0), ``pos`` its inverse,
    ``delta ~ Mallows(theta, identity)`` on positions,
    release ``z = y[order[delta[pos]]]``, i.e. user ``i``'s slot receives the report of the user
    sitting at position ``delta[pos[i]]`` of sigma_0.

Two neighbouring inputs w.r.t. ``G_i`` are produced by position permutations ``delta`` and
``tau o delta`` with ``tau`` moving only ``pos[G_i]``, so the output probability ratio is at most
``exp(theta * Delta)`` with the exact sensitivity ``Delta`` of
:mod:`shuffle_accounting.dsigma.sensitivity`; ``theta = alpha / Delta`` (rounded down so that
``theta * Delta <= alpha`` exactly).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import ParameterError, check_choice, check_real
from .groups import groups_from_points, validate_groups
from .mallows import SAMPLERS as _SAMPLERS
from .mallows import RandomBits as _Bits
from .reference import group_widths, inverse_order, reference_permutation, validate_order
from .sensitivity import kendall_width_bound
from .sensitivity import sensitivity as _sensitivity

__all__ = ["MallowsShuffler", "theta_for_alpha"]


def theta_for_alpha(alpha: float, sensitivity: int) -> float:
    """Largest float ``theta`` with ``theta * sensitivity <= alpha`` (exactly, in rationals).

    ``sensitivity = 0`` (all groups singletons) gives ``inf`` (the identity); ``alpha = 0`` gives 0.

    Args:
        alpha: Target d_sigma parameter in ``[0, inf]``.
        sensitivity: Non-negative integer sensitivity ``Delta``.

    Returns:
        The dispersion ``theta``.

    Raises:
        ParameterError: On a negative/NaN ``alpha`` or a negative sensitivity.

    Example:
        >>> theta_for_alpha(4.0, 13) * 13 <= 4.0
        True
        >>> theta_for_alpha(1.0, 0)
        inf
    """
    alpha = check_real("alpha", alpha, low=0.0, allow_inf=True)
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 0:
        raise ParameterError(f"sensitivity must be an integer >= 0, got {sensitivity!r}")
    if sensitivity == 0 or math.isinf(alpha):
        return math.inf
    theta = alpha / int(sensitivity)
    while theta > 0 and Fraction(theta) * int(sensitivity) > Fraction(alpha):
        theta = float(np.nextafter(theta, 0.0))
    return theta


class MallowsShuffler:
    """Alg. 1: shuffle LDP reports mostly within public groups, (alpha, G)-d_sigma private.

    Construct from explicit ``groups`` or from public ``points`` and a threshold ``r`` (groups
    ``G_i = {j : d(t_i, t_j) <= r}``). The reference permutation is the BFS order of
    :func:`~shuffle_accounting.dsigma.reference.reference_permutation` unless ``order`` is given.
    Instances are immutable.

    Args:
        groups: Group assignment (``groups[i]`` contains ``i``), or ``None`` with ``points``.
        alpha: d_sigma privacy parameter in ``[0, inf]`` (0 = uniform shuffle, inf = no shuffle).
        distance: ``"kendall"`` (default) or ``"hamming"`` Mallows model.
        points: Public coordinates (``(n, d)``, or lat/lon degrees with ``metric="haversine"``).
        r: Distance threshold used with ``points``.
        metric: ``"euclidean"`` or ``"haversine"`` (km), used with ``points``.
        order: Optional reference permutation (list of users) instead of the BFS one.
        max_work: Work budget of :func:`~shuffle_accounting.dsigma.groups.groups_from_points`
            with ``points`` (``None``: 1e8 units, about two million group members).

    Raises:
        ParameterError: If both or neither of ``groups``/``points`` are given, or on any invalid
            argument.
        WorkBudgetExceeded: With ``points``, if the groups would have more members than
            ``max_work`` allows (counted before any is built); use
            :func:`~shuffle_accounting.dsigma.groups.nearest_groups` or a smaller ``r``.

    Example:
        >>> sh = MallowsShuffler([[0, 1], [0, 1], [2, 3], [2, 3]], alpha=2.0)
        >>> sh.sensitivity, sh.theta
        (1, 2.0)
        >>> sorted(sh.shuffle(["a", "b", "c", "d"], rng=0))  # rng=0: simulation, NOT private
        ['a', 'b', 'c', 'd']
    """

    __slots__ = ("_groups", "_alpha", "_distance", "_order", "_pos", "_sens", "_theta", "_widths")
    # Declared for type checkers only (slots set once in __init__ through object.__setattr__).
    _groups: tuple[np.ndarray, ...]
    _alpha: float
    _distance: str
    _order: np.ndarray
    _pos: np.ndarray
    _sens: int
    _theta: float
    _widths: np.ndarray

    def __init__(
        self,
        groups: Any = None,
        alpha: Any = None,
        distance: str = "kendall",
        *,
        points: Any = None,
        r: Any = None,
        metric: str = "euclidean",
        order: Any = None,
        max_work: Any = None,
    ) -> None:
        if (groups is None) == (points is None):
            raise ParameterError(
                "groups or points must be given (exactly one of them), got "
                f"groups={'None' if groups is None else 'set'}, points={'None' if points is None else 'set'}"
            )
        if alpha is None:
            raise ParameterError("alpha must be a real number in [0.0, inf], got None")
        alpha = check_real("alpha", alpha, low=0.0, allow_inf=True)
        distance = check_choice("distance", distance, ("kendall", "hamming"))
        if points is not None:
            if r is None:
                raise ParameterError("r must be given with points (a finite real number >= 0), got None")
            groups = groups_from_points(points, r, metric=metric, max_work=max_work)
        elif r is not None:
            raise ParameterError(f"r is only used with points, got r={r!r} together with groups")
        checked = validate_groups(groups)
        ordr = reference_permutation(groups) if order is None else validate_order(order, len(checked))
        sens = _sensitivity(checked, ordr, distance)
        ordr.setflags(write=False)
        pos = inverse_order(ordr)
        pos.setflags(write=False)
        values = {
            "_groups": checked,
            "_alpha": alpha,
            "_distance": distance,
            "_order": ordr,
            "_pos": pos,
            "_sens": sens,
            "_theta": theta_for_alpha(alpha, sens),
            "_widths": group_widths(checked, ordr),
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)

    # -- read-only attributes ---------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of users."""
        return len(self._groups)

    @property
    def groups(self) -> tuple[np.ndarray, ...]:
        """The validated group assignment."""
        return self._groups

    @property
    def alpha(self) -> float:
        """The guaranteed d_sigma parameter (``theta * sensitivity <= alpha``)."""
        return self._alpha

    @property
    def distance(self) -> str:
        """``"kendall"`` or ``"hamming"``."""
        return self._distance

    @property
    def order(self) -> np.ndarray:
        """Reference permutation sigma_0 as the list of users (read-only)."""
        return self._order

    @property
    def pos(self) -> np.ndarray:
        """Inverse of :attr:`order`: ``pos[user]`` is the user's position (read-only)."""
        return self._pos

    @property
    def sensitivity(self) -> int:
        """Exact sensitivity ``Delta(sigma_0 : d, G)``."""
        return self._sens

    @property
    def theta(self) -> float:
        """Mallows dispersion ``theta = alpha / Delta`` (rounded down)."""
        return self._theta

    @property
    def width(self) -> int:
        """Overall width ``omega`` of sigma_0 w.r.t. the groups."""
        return int(self._widths.max())

    @property
    def width_bound(self) -> int:
        """The paper's Kendall bound ``omega (omega + 1) / 2`` (>= the exact sensitivity)."""
        return kendall_width_bound(self._groups, self._order)

    # -- sampling --------------------------------------------------------------------------
    def permutation(self, *, rng: Any = None) -> np.ndarray:
        """Draw the shuffling permutation ``pi = order[delta[pos]]``; the release is ``y[pi]``.

        Args:
            rng: ``None`` (default) = cryptographically secure (:mod:`secrets`); a seed or numpy
                Generator is for simulation only and NOT private (``PrivacyLeakWarning``);
                anything else raises.

        Example:
            >>> MallowsShuffler([[0], [1]], alpha=1.0).permutation().tolist()
            [0, 1]
        """
        bits = _Bits(rng)
        delta = _SAMPLERS[self._distance](self.n, self._theta, bits)
        return self._order[delta[self._pos]]

    def shuffle(self, reports: Any, *, rng: Any = None) -> Any:
        """Release the reports in d_sigma-private order: ``z[i] = reports[pi[i]]``.

        Args:
            reports: Sequence or array of the ``n`` LDP reports, ``reports[i]`` from user ``i``
                (numpy arrays are permuted along axis 0).
            rng: ``None`` (default) = cryptographically secure; a seed or numpy Generator is for
                simulation only and NOT private (``PrivacyLeakWarning``); anything else raises.

        Returns:
            A numpy array if ``reports`` is one, otherwise a list.

        Raises:
            ParameterError: If ``len(reports) != n``.

        Example:
            >>> MallowsShuffler([[0, 1], [0, 1]], alpha=0.0).shuffle([7, 7])
            [7, 7]
        """
        try:
            count = len(reports)
        except TypeError as exc:
            raise ParameterError(
                f"reports must be a sequence of {self.n} reports, got {type(reports).__name__}"
            ) from exc
        if count != self.n:
            raise ParameterError(f"reports must hold one report per user ({self.n}), got {count}")
        perm = self.permutation(rng=rng)
        if isinstance(reports, np.ndarray):
            return reports[perm]
        return [reports[int(i)] for i in perm]

    # -- reporting -------------------------------------------------------------------------
    def summary(self) -> str:
        """Multi-line plain-text summary (what the CLI prints).

        Example:
            >>> print(MallowsShuffler([[0, 1], [0, 1], [2]], alpha=1.0).summary())  # doctest: +ELLIPSIS
            d_sigma Mallows shuffler (Meehan et al., ICLR 2022, Alg. 1)
              users n                  3
            ...
        """
        sizes = np.array([g.size for g in self._groups])
        rows = [
            ("users n", f"{self.n}"),
            ("distance", self._distance),
            ("group size min/mean/max", f"{sizes.min()} / {sizes.mean():.3g} / {sizes.max()}"),
            ("reference width omega", f"{self.width}"),
            ("sensitivity Delta (exact)", f"{self._sens}"),
        ]
        if self._distance == "kendall":
            rows.append(("paper bound omega(omega+1)/2", f"{self.width_bound}"))
        rows += [
            ("theta = alpha / Delta", f"{self._theta:.6g}"),
            ("alpha (d_sigma guarantee)", f"{self._alpha:.6g}"),
        ]
        width = max(len(r[0]) for r in rows)
        lines = ["d_sigma Mallows shuffler (Meehan et al., ICLR 2022, Alg. 1)"]
        lines += [f"  {label:<{width}}  {value}" for label, value in rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (
            f"MallowsShuffler(n={self.n}, alpha={self._alpha!r}, distance={self._distance!r}, "
            f"sensitivity={self._sens}, theta={self._theta!r})"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("MallowsShuffler is immutable")
