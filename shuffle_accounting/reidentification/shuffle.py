"""Re-identification risk in the shuffle-DP setting (Game 2) for k-RR and any finite randomizer.

Su, Cheng, Wang, *Bayesian Advantage of Re-Identification Attack in the Shuffle Model*, Sec. VI.
``n`` users apply a local randomizer ``R``; the shuffled reports are published and an adversary who
knows every user's input (or input distribution) names the position of user 1's report.
``beta_n(R, x1)`` is the Bayes-optimal success probability maximised over the other users'
inputs (Definitions 5, 8); ``beta_n(R)`` also maximises over ``x1`` (Definition 6).

Bounds (all upper bounds on ``beta_n(R, x1)``):

* **blanket** (Theorems 6, 7, 9): with ``lo(y) = min_x R(x)(y)``, ``alpha = sum_y lo(y)`` and
  ``Q^B = lo/alpha``, ``psi = sum_m Bin(m; n-1, alpha) beta_{m+1}(R(x1), Q^B)``. Summing the
  binomial inside Theorem 4 in closed form (``sum_m C(n-1,m) a^m (1-a)^(n-1-m) G^(m+1)/(m+1)
  = [(1 - a + a G)^n - (1 - a)^n]/(n a)``) shows that ``psi = beta_n(R(x1), Q~)`` exactly, where
  ``Q~ = alpha Q^B + (1 - alpha) delta_bot`` and ``bot`` is an extra symbol the target never
  produces (a decoy outside the blanket is revealed, ratio 0). ``psi`` is therefore computed by the
  same log-space routine as :func:`.basic.success_probability`, for any ``n``.
* **clone** (Theorem 8): ``(1 - (1 - gamma)^n)/(n gamma) <= 1/(n gamma)`` with ``Q^com = R(x1)``;
  ``gamma = e^-eps`` in the worst case over ``x1`` (the paper's bound ``e^eps/n``), and the
  input-specific (valid, never larger) ``gamma(x1) = min_y lo(y)/R(x1)(y)`` for a given ``x1``.
* **limit** (Theorem 10): ``M/n`` with ``M = max_y R(x1)(y)/lo(y)``; ``n beta_n(R, x1) -> M``.

Truth for small ``n``: :meth:`ReidentificationRisk.exact_worst_case` enumerates every dataset of
the other users. Deterministic inputs of the others suffice: the success probability of a fixed
adversary is linear in each other user's input distribution, so the optimum (a maximum of linear
functions) is convex in it and is attained at a vertex. The same convexity (of ``beta_n(P, Q)`` in
``P``) shows the blanket bound maximised over target distributions ``V1`` is attained at a
deterministic ``x1``. A valid *lower* bound for any ``n`` is the exact basic-setting value with all
other users holding one input ``x*`` (:meth:`ReidentificationRisk.lower_bound`).

Bounds are inflated by a relative 1e-9 (and capped at 1, a valid bound on any probability);
lower bounds are deflated by the same factor.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import singledispatch
from typing import Any

import numpy as np

from .._deprecation import moved_attribute, moved_names
from .._validation import ParameterError, check_choice, check_int, check_real, check_work
from ..randomizers import KRR, FiniteRandomizer
from .basic import check_dist, success_core

__all__ = [
    "ReidentificationRisk",
    "WorstCase",
    "clone_bound",
    "game2_success_probability",
]

_UP = 1.0 + 1e-9
_DOWN = 1.0 - 1e-9
_METHODS = ("blanket", "clone", "limit")
#: Largest number of (input multiset x output multiset) pairs the exact enumeration may visit.
_MAX_ENUMERATION = 2_000_000


# --------------------------------------------------------------------------------------------
# Channel views (one implementation per randomizer type; dispatch, not isinstance chains).


class _Channel:
    """What the bounds need from a randomizer: target rows, blanket minima, eps, small matrices."""

    n_inputs: int
    eps: float

    def target_and_min(self, v1: np.ndarray | int) -> tuple[np.ndarray, np.ndarray, float]:
        """(mass of R(x1) per atom, lo per atom, 1 - alpha); atoms are output groups of equal ratio."""
        raise NotImplementedError

    def pair(self, v1: np.ndarray | int, x_other: int) -> tuple[np.ndarray, np.ndarray]:
        """(R(x1), R(x_other)) as mass vectors over (grouped) outputs."""
        raise NotImplementedError

    def other_candidates(self, v1: np.ndarray | int) -> list[int]:
        """Inputs worth trying as the common input ``x*`` of the other users."""
        raise NotImplementedError

    def matrix(self) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class _KRRChannel(_Channel):
    r: KRR

    @property
    def n_inputs(self) -> int:  # type: ignore[override]
        return self.r.k

    @property
    def eps(self) -> float:  # type: ignore[override]
        return self.r.eps0

    def target_and_min(self, v1):
        # KRR's blanket decomposition (KRR.blanket_decomposition: gamma = k pbar, uniform blanket)
        # on the grouped outputs, without its k x k residual: each output's blanket mass is pbar,
        # and 1 - gamma = p - pbar.
        r = self.r
        if isinstance(v1, int):
            p = np.array([r.p, (r.k - 1) * r.pbar])
            lo = np.array([r.pbar, (r.k - 1) * r.pbar])
        else:
            p = r.pbar + (r.p - r.pbar) * v1
            lo = np.full(r.k, r.pbar)
        return p, lo, r.p_minus_pbar

    def pair(self, v1, x_other):
        r = self.r
        if isinstance(v1, int):
            if v1 == x_other:
                return np.array([1.0]), np.array([1.0])
            return (
                np.array([r.p, r.pbar, (r.k - 2) * r.pbar]),
                np.array([r.pbar, r.p, (r.k - 2) * r.pbar]),
            )
        p = r.pbar + (r.p - r.pbar) * v1
        q = np.full(r.k, r.pbar)
        q[x_other] = r.p
        return p, q

    def other_candidates(self, v1):
        if isinstance(v1, int):
            return [(v1 + 1) % self.r.k]  # every x* != x1 gives the same value (symmetry)
        if self.r.k <= 256:
            return list(range(self.r.k))
        return [int(np.argmin(v1))]  # a valid (lower-bound) choice for very large k

    def matrix(self):
        return self.r.matrix


@dataclass(frozen=True)
class _MatrixChannel(_Channel):
    r: FiniteRandomizer

    @property
    def n_inputs(self) -> int:  # type: ignore[override]
        return self.r.n_inputs

    @property
    def eps(self) -> float:  # type: ignore[override]
        return self.r.eps0

    def _row(self, v1):
        m = self.r.matrix
        return m[v1].copy() if isinstance(v1, int) else v1 @ m

    def target_and_min(self, v1):
        d = self.r.blanket_decomposition()  # lo(y) = min_x R(x)(y) = gamma * blanket(y)
        return self._row(v1), d.gamma * d.blanket, 1.0 - d.gamma

    def pair(self, v1, x_other):
        return self._row(v1), self.r.matrix[x_other].copy()

    def other_candidates(self, v1):
        return list(range(self.r.n_inputs))

    def matrix(self):
        return self.r.matrix


@singledispatch
def _channel(randomizer: Any) -> _Channel:
    raise ParameterError(f"randomizer must be a KRR or a FiniteRandomizer, got {type(randomizer).__name__}")


@_channel.register
def _(randomizer: KRR) -> _Channel:
    return _KRRChannel(randomizer)


@_channel.register
def _(randomizer: FiniteRandomizer) -> _Channel:
    return _MatrixChannel(randomizer)


# --------------------------------------------------------------------------------------------


def clone_bound(eps: Any, n: Any) -> float:
    """Theorem 8 clone bound ``(1 - (1 - e^-eps)^n) / (n e^-eps) <= e^eps / n``.

    Su, Cheng, Wang, Theorem 8: any eps-LDP local randomizer satisfies ``R(x) = e^-eps R(x1) +
    (1 - e^-eps) LO(x)``, so by Theorems 6-7 and Corollary 1 the shuffled re-identification
    probability is at most ``sum_m Bin(m; n-1, g)/(m+1) = (1 - (1-g)^n)/(n g)``, ``g = e^-eps``.
    Rounded up by a relative 1e-9.

    Args:
        eps: Local privacy level, finite and >= 0 (``inf`` gives the trivial bound 1).
        n: Number of users, integer >= 1.

    Returns:
        An upper bound on ``beta_n(R)`` in ``[1/n, 1]``.

    Raises:
        ParameterError: If ``eps`` is negative/NaN or ``n`` is not an integer >= 1.

    Example:
        >>> round(clone_bound(math.log(3), 10) * 10, 6)  # (1 - (2/3)^10) * 3
        2.947975
    """

    eps = check_real("eps", eps, low=0.0, allow_inf=True)
    n = check_int("n", n, minimum=1, maximum=2**53)
    return _clone_value(math.exp(-eps), n)


def _clone_value(gamma: float, n: int) -> float:
    if gamma <= 0.0:
        return 1.0
    if gamma >= 1.0:
        return min(1.0, _UP / n)
    val = -math.expm1(n * math.log1p(-gamma)) / (n * gamma)
    return min(1.0, val * _UP)


def others_count_distribution(mat: np.ndarray, others: Sequence[int]) -> dict[tuple[int, ...], float]:
    """Law of the output-count vector of the users holding ``others`` (dynamic programming)."""
    n_out = mat.shape[1]
    dist: dict[tuple[int, ...], float] = {tuple([0] * n_out): 1.0}
    for x in others:
        row = mat[x]
        new: dict[tuple[int, ...], float] = {}
        for c, pr in dist.items():
            for y in range(n_out):
                if row[y] > 0:
                    c2 = c[:y] + (c[y] + 1,) + c[y + 1 :]
                    new[c2] = new.get(c2, 0.0) + pr * row[y]
        dist = new
    return dist


def _game2_value(target: np.ndarray, mat: np.ndarray, others: Sequence[int]) -> float:
    """Exact Bayes-optimal single-guess success of Game 2 (see game2_success_probability)."""
    dist = others_count_distribution(mat, others)
    n_out = mat.shape[1]
    best: dict[tuple[int, ...], float] = {}
    for c_other, pr in dist.items():
        for y in range(n_out):
            if target[y] > 0:
                c = c_other[:y] + (c_other[y] + 1,) + c_other[y + 1 :]
                val = target[y] * pr / c[y]
                if val > best.get(c, 0.0):
                    best[c] = val
    return float(sum(best.values()))


def _check_x1(x1: Any, n_inputs: int) -> np.ndarray | int:
    if isinstance(x1, (list, tuple, np.ndarray)):
        v = check_dist("x1", x1)
        if v.size != n_inputs:
            raise ParameterError(
                f"x1 must be an input in [0, {n_inputs - 1}] or an input distribution of length "
                f"{n_inputs}, got a vector of length {v.size}"
            )
        return v / v.sum()
    return check_int("x1", x1, minimum=0, maximum=n_inputs - 1)


def game2_success_probability(randomizer: Any, x1: Any, others: Sequence[int]) -> float:
    """Exact Bayes-optimal success of Game 2 for one dataset (single guess, small ``n``).

    Su, Cheng, Wang, Game 2: users hold ``x1, others[0], ...``; the adversary sees the shuffled
    reports and names user 1's position. With ``c`` the output-count vector of all ``n`` reports,
    ``P1 = R(x1)`` and ``Pr_o`` the law of the other users' count vector, the joint probability of
    a shuffled sequence ``z`` and user 1 sitting at a position holding ``y`` is
    ``P1(y) Pr_o[c - e_y] / (n multinom(n - 1; c - e_y))`` (the others' reports fill the remaining
    positions in uniformly random order); summing the best guess over all ``z`` gives

        success = sum_c max_{y: c_y > 0} P1(y) Pr_o[c - e_y] / c_y.

    Args:
        randomizer: A :class:`~shuffle_accounting.KRR` or
            :class:`~shuffle_accounting.FiniteRandomizer`.
        x1: User 1's input (integer) or input distribution ``V1`` (probability vector).
        others: Inputs of users ``2..n`` (integers).

    Returns:
        The exact success probability (floating point).

    Raises:
        ParameterError: On invalid randomizer, ``x1`` or ``others``.

    Example:
        >>> fr = FiniteRandomizer([[0.75, 0.25], [0.25, 0.75]])
        >>> round(game2_success_probability(fr, 0, [1]), 12)  # = beta_2(R(0), R(1))
        0.75
    """
    ch = _channel(randomizer)
    v1 = _check_x1(x1, ch.n_inputs)
    if isinstance(others, (str, bytes)) or not hasattr(others, "__iter__"):
        raise ParameterError(f"others must be a sequence of inputs, got {others!r}")
    others = [check_int("others", x, minimum=0, maximum=ch.n_inputs - 1) for x in others]
    mat = ch.matrix()
    target = mat[v1] if isinstance(v1, int) else v1 @ mat
    return _game2_value(target, mat, others)


@dataclass(frozen=True)
class WorstCase:
    """Exact worst case over the other users' inputs (small ``n``).

    Attributes:
        value: ``beta_n(R, x1)`` (or ``beta_n(R)`` when maximised over ``x1`` as well).
        x1: The target input achieving it (the given one, or the maximiser).
        others: A worst-case multiset of the other users' inputs (sorted).
    """

    value: float
    x1: Any
    others: tuple[int, ...]


@dataclass(frozen=True)
class ReidentificationRisk:
    """Bayesian re-identification risk of a shuffled local randomizer with ``n`` users.

    Su, Cheng, Wang, *Bayesian Advantage of Re-Identification Attack in the Shuffle Model*,
    Sec. VI: upper bounds on ``beta_n(R, x1)`` from the blanket (Thms 7, 9), clone (Thm 8) and
    limit (Thm 10) arguments, exact basic-setting lower bounds, and for small ``n`` the exact worst
    case by enumeration (see the module docstring).

    Args:
        randomizer: A :class:`~shuffle_accounting.KRR` or
            :class:`~shuffle_accounting.FiniteRandomizer`.
        n: Number of users in the shuffled batch, integer >= 1.

    Raises:
        ParameterError: If the randomizer type is unsupported or ``n`` is not an integer >= 1.

    Example:
        >>> risk = ReidentificationRisk(KRR(k=2, eps0=math.log(3)), n=10)
        >>> round(risk.bound(method="clone") * 10, 6), round(risk.limit(), 6)
        (2.947975, 3.0)
        >>> risk.lower_bound() <= risk.exact_worst_case().value <= risk.bound()
        True
    """

    randomizer: Any
    n: int

    def __post_init__(self) -> None:
        _channel(self.randomizer)
        object.__setattr__(self, "n", check_int("n", self.n, minimum=1, maximum=2**53))

    @property
    def _ch(self) -> _Channel:
        return _channel(self.randomizer)

    def _targets(self, x1: Any) -> list[np.ndarray | int]:
        ch = self._ch
        if x1 is None:
            return [0] if isinstance(ch, _KRRChannel) else list(range(ch.n_inputs))
        return [_check_x1(x1, ch.n_inputs)]

    def _blanket(self, v1: np.ndarray | int) -> float:
        p, lo, one_minus_alpha = self._ch.target_and_min(v1)
        p_ext = np.concatenate([p, [0.0]])
        q_ext = np.concatenate([lo, [one_minus_alpha]])
        return success_core(p_ext / p_ext.sum(), q_ext / q_ext.sum(), self.n, 1)

    def _limit(self, v1: np.ndarray | int) -> float:
        p, lo, _ = self._ch.target_and_min(v1)
        if np.any((lo == 0) & (p > 0)):
            return math.inf
        mask = lo > 0
        return float(np.max(p[mask] / lo[mask]))

    def _clone_gamma(self, v1: np.ndarray | int) -> float:
        p, lo, _ = self._ch.target_and_min(v1)
        mask = p > 0
        return float(np.min(lo[mask] / p[mask]))

    def bound(self, x1: Any = None, method: str = "blanket") -> float:
        """Upper bound on ``beta_n(R, x1)`` (``x1=None``: on ``beta_n(R) = max_x1 beta_n(R, x1)``).

        Args:
            x1: Target input (integer), input distribution ``V1`` (probability vector over the
                inputs, Sec. III-B), or ``None`` for the worst target.
            method: ``"blanket"`` (exact ``psi``, Theorems 7 and 9; the tightest decomposition
                bound, never above the other two), ``"clone"`` (Theorem 8: ``(1 - (1 - gamma)^n)/(n gamma)``, ``gamma = e^-eps``
                for ``x1=None``, ``min_y lo(y)/R(x1)(y)`` otherwise) or ``"limit"`` (Theorem 10:
                ``M/n``).

        Returns:
            The upper bound, rounded up by a relative 1e-9 and capped at 1.

        Raises:
            ParameterError: On an invalid ``x1`` or ``method``.

        Example:
            >>> risk = ReidentificationRisk(KRR(k=4, eps0=1.0), n=1000)
            >>> risk.bound() <= risk.bound(method="limit") <= math.e / 1000 * (1 + 1e-9)
            True
        """
        method = check_choice("method", method, _METHODS)
        targets = self._targets(x1)
        if method == "blanket":
            # Theorems 9-10 give psi <= clone and psi <= M/n; taking the minimum only removes
            # rounding-level inversions when they coincide (large n).
            psi = min(1.0, max(self._blanket(v) for v in targets) * _UP)
            return min(psi, self.bound(x1, "clone"), self.bound(x1, "limit"))
        if method == "limit":
            return min(1.0, max(self._limit(v) for v in targets) / self.n * _UP)
        if x1 is None:
            return _clone_value(math.exp(-self._ch.eps), self.n)
        return _clone_value(self._clone_gamma(targets[0]), self.n)

    def multiplicative_advantage(self, x1: Any = None, method: str = "blanket") -> float:
        """Upper bound on ``Adv_n^x(R, x1) = n beta_n(R, x1)`` (Definition 7): ``n * bound``.

        Args:
            x1: As in :meth:`bound`.
            method: As in :meth:`bound`.

        Returns:
            ``n`` times :meth:`bound`.

        Raises:
            ParameterError: On an invalid ``x1`` or ``method``.

        Example:
            >>> ReidentificationRisk(KRR(k=2, eps0=math.log(3)), n=10).multiplicative_advantage() < 3
            True
        """
        return self.n * self.bound(x1=x1, method=method)

    def limit(self, x1: Any = None) -> float:
        """``M = sup_y R(x1)(y) / min_x R(x)(y)`` of Theorem 10 (max over ``x1`` when ``None``).

        ``Adv_n^x(R, x1) <= M`` for every ``n`` and ``n beta_n(R, x1) -> M`` as ``n -> inf``.
        ``inf`` when some output has ``min_x R(x)(y) = 0 < R(x1)(y)``.

        Args:
            x1: Target input, input distribution, or ``None``.

        Returns:
            ``M`` (exact up to rounding; not inflated).

        Raises:
            ParameterError: On an invalid ``x1``.

        Example:
            >>> fr = FiniteRandomizer([[0.75, 0.25], [0.25, 0.75]])  # Example VI.2, p = 0.5
            >>> ReidentificationRisk(fr, 5).limit([0.5, 0.5])
            2.0
        """
        return max(self._limit(v) for v in self._targets(x1))

    def basic_success(self, x1: Any, x_other: Any) -> float:
        """Exact ``beta_n(R(x1), R(x_other))``: every other user holds ``x_other`` (Theorem 4).

        Args:
            x1: Target input or input distribution.
            x_other: The common input of users ``2..n`` (integer).

        Returns:
            The exact success probability for that dataset (a lower bound on ``beta_n(R, x1)``).

        Raises:
            ParameterError: On invalid inputs.

        Example:
            >>> risk = ReidentificationRisk(KRR(k=2, eps0=math.log(3)), n=2)
            >>> round(risk.basic_success(0, 1), 12)
            0.75
        """
        ch = self._ch
        v1 = _check_x1(x1, ch.n_inputs)
        x_other = check_int("x_other", x_other, minimum=0, maximum=ch.n_inputs - 1)
        p, q = ch.pair(v1, x_other)
        return success_core(p / p.sum(), q / q.sum(), self.n, 1)

    def lower_bound(self, x1: Any = None) -> float:
        """Lower bound on ``beta_n(R, x1)``: the best exact basic-setting value over ``x*``.

        ``max_{x*} beta_n(R(x1), R(x*))`` (all other users hold ``x*``), rounded down by a
        relative 1e-9. By Theorem 10's argument ``n`` times it tends to :meth:`limit` for the
        maximising ``x*``.

        Args:
            x1: Target input, input distribution, or ``None`` (maximised over targets).

        Returns:
            A lower bound on ``beta_n(R, x1)``.

        Raises:
            ParameterError: On an invalid ``x1``.

        Example:
            >>> risk = ReidentificationRisk(KRR(k=3, eps0=1.0), n=50)
            >>> risk.lower_bound() <= risk.bound()
            True
        """
        ch = self._ch
        best = 0.0
        for v in self._targets(x1):
            for xo in ch.other_candidates(v):
                p, q = ch.pair(v, xo)
                best = max(best, success_core(p / p.sum(), q / q.sum(), self.n, 1))
        return best * _DOWN

    def exact_worst_case(self, x1: Any = None, *, max_work: Any = None) -> WorstCase:
        """Exact ``beta_n(R, x1)`` by enumerating every multiset of the other users' inputs.

        Uses :func:`game2_success_probability` for each multiset; only for small ``n`` and small
        alphabets (at most 2e6 input-multiset x output-multiset pairs). Its work is
        ``10 x targets x input multisets x (n - 1) x outputs x output multisets`` (the dynamic
        program of each multiset, ~10 elementary steps per dictionary update), checked against ``max_work`` before anything runs.

        Args:
            x1: Target input, input distribution, or ``None`` (maximised over targets too).
            max_work: Work budget (``None``: ``DEFAULT_MAX_WORK`` = 1e8).

        Returns:
            A :class:`WorstCase` with the value and a maximising dataset.

        Raises:
            ParameterError: On an invalid ``x1`` or if the enumeration would be too large.
            WorkBudgetExceeded: If the work exceeds ``max_work``; :meth:`bound` (an upper bound)
                and :meth:`lower_bound` bracket the value at any ``n``.

        Example:
            >>> fr = FiniteRandomizer([[0.75, 0.25], [0.25, 0.75]])
            >>> round(ReidentificationRisk(fr, 2).exact_worst_case(0).value, 12)
            0.75
        """
        ch = self._ch
        n_in = ch.n_inputs
        mat = ch.matrix()
        n_out = mat.shape[1]
        work = math.comb(self.n - 1 + n_in - 1, n_in - 1) * math.comb(self.n + n_out - 1, n_out - 1)
        targets = self._targets(x1)
        if work * len(targets) > _MAX_ENUMERATION:
            raise ParameterError(
                f"n must be small enough for exact enumeration (<= {_MAX_ENUMERATION} dataset x output "
                f"multisets); got n = {self.n} with {n_in} inputs and {n_out} outputs ({work * len(targets)})"
            )
        check_work(
            f"exact_worst_case for n = {self.n} with {n_in} inputs and {n_out} outputs",
            10 * work * len(targets) * max(self.n - 1, 1) * n_out,  # ~10 steps per dict update
            max_work=max_work,
            alternative="use bound() (certified upper) and lower_bound() (exact lower)",
        )
        best = WorstCase(value=-1.0, x1=None, others=())
        for v in targets:
            target = mat[v] if isinstance(v, int) else v @ mat
            for others in itertools.combinations_with_replacement(range(n_in), self.n - 1):
                val = _game2_value(target, mat, others)
                if val > best.value:
                    best = WorstCase(value=val, x1=v if isinstance(v, int) else tuple(v), others=others)
        return best

    def report(self) -> tuple[tuple[str, str, str], ...]:
        """Deprecated: the report rows moved to the presentation package (issue 13).

        Use :func:`shuffle_accounting.presentation.reidentification_report.risk_rows` (same rows).
        """
        return moved_attribute(
            "ReidentificationRisk.report()",
            "shuffle_accounting.presentation.reidentification_report",
            "risk_rows",
        )(self)


#: ``report_section`` moved to the presentation package (deprecated alias, issue 13).
__getattr__ = moved_names(
    __name__, {"report_section": "shuffle_accounting.presentation.reidentification_report"}
)
