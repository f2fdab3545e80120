"""Shared pieces of the adapters: the certified privacy curve of a shuffled k-RR collection, the
collection itself (runtime randomizer + shuffler), the total encoding of undeclared values and
the group-privacy bound.

The privacy statements made by every adapter come from here, so the three libraries report the
same numbers as :class:`shuffle_accounting.ShuffledKRR` (one round) and
:class:`shuffle_accounting.ShuffleAccountant` (several rounds, tight PLD composition).

Undeclared values (documented mapping rule, shared by the adapters). A value that is not a declared
category never raises inside a release (the error would depend on the private data). It is mapped
*before* randomizing, by a fixed per-record rule: to the extra **null category** (code ``k``, the
last histogram bin, like OpenDP's ``make_count_by_categories(..., null_category=True)``) when the
collection has one, else to the **first declared category**. A fixed per-record map sends two
datasets that differ in one record to two datasets that differ in at most one record, so every
guarantee stated for the declared categories holds for arbitrary inputs. With a null category the
randomizer runs over ``k + 1`` values and the accounting uses ``k + 1``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import ParameterError, check_delta, check_int, check_real

__all__ = ["ShuffledCollection", "group_delta", "group_epsilon_delta"]


def _up(x: float, ulps: int = 2) -> float:
    for _ in range(ulps):
        x = math.nextafter(x, math.inf)
    return x


def _down(x: float, ulps: int = 2) -> float:
    for _ in range(ulps):
        x = math.nextafter(x, -math.inf)
    return max(x, 0.0)


def _log_geometric_sum(eps: float, d: int) -> float:
    """``log sum_{i=0}^{d-1} e^{i eps}`` (``log d`` at ``eps = 0``), rounded up."""
    if eps == 0.0:
        return _up(math.log(d))
    # sum = expm1(d eps) / expm1(eps), evaluated in log space
    num = d * eps + math.log(-math.expm1(-d * eps))
    den = math.log(math.expm1(eps))
    return _up(num - den, 8) + 1e-12 * abs(num - den)


def group_epsilon_delta(epsilon: float, delta: float, d: int) -> tuple[float, float]:
    """Group privacy of an ``(epsilon, delta)`` guarantee for inputs ``d`` steps apart.

    Lemma (group privacy). If ``P[M(x) in A] <= e^eps P[M(x') in A] + delta`` for every
    neighbouring pair and every event ``A``, and ``x = x_0, x_1, ..., x_d = x'`` is a chain of
    neighbours, then by induction ``P[M(x_0) in A] <= e^eps (e^{(d-1) eps} P[M(x_d) in A]
    + delta sum_{i<d-1} e^{i eps}) + delta = e^{d eps} P[M(x_d) in A] + delta sum_{i<d} e^{i eps}``.
    So ``M`` is ``(d eps, delta (e^{d eps} - 1)/(e^eps - 1))``-DP at distance ``d`` (``<= d
    e^{(d-1) eps} delta``). Both numbers are rounded up; delta is capped at 1.

    Args:
        epsilon: Epsilon at distance 1 (finite, >= 0).
        delta: Delta at distance 1, in ``[0, 1]``.
        d: Distance (integer >= 0); ``d = 0`` gives ``(0, 0)``.

    Returns:
        ``(epsilon_d, delta_d)``.

    Example:
        >>> e, d = group_epsilon_delta(0.5, 1e-6, 2)
        >>> e >= 1.0 and d >= 1e-6 * (1 + math.exp(0.5))
        True
    """
    d = check_int("d", d, minimum=0)
    epsilon = check_real("epsilon", epsilon, low=0.0)
    delta = check_real("delta", delta, low=0.0, high=1.0)
    if d == 0:
        return 0.0, 0.0
    if d == 1:
        return epsilon, delta
    eps_d = _up(d * epsilon)
    if delta == 0.0:
        return eps_d, 0.0
    log_d = math.log(delta) + _log_geometric_sum(epsilon, d)
    return eps_d, min(1.0, _up(math.exp(log_d), 4))


def group_delta(delta_curve, epsilon: float, d: int) -> float:
    """Profile at distance ``d`` from the profile ``delta_curve`` at distance 1 (group privacy).

    For each target ``epsilon`` the lemma of :func:`group_epsilon_delta` is applied with the
    distance-1 guarantee ``(e, delta_curve(e))`` at ``e = epsilon / d`` rounded *down* (so that
    ``d e <= epsilon`` and the guarantee at ``d e`` also holds at ``epsilon``):
    ``delta_d(epsilon) <= delta_curve(e) sum_{i<d} e^{i e}``, rounded up and capped at 1.

    Example:
        >>> group_delta(lambda e: 0.0 if e >= 1 else 0.1, 3.0, 2)
        0.0
    """
    d = check_int("d", d, minimum=0)
    if d == 0:
        return 0.0
    if d == 1:
        return float(delta_curve(epsilon))
    e = _down(epsilon / d)
    base = float(delta_curve(e))
    if base <= 0.0:
        return 0.0
    return min(1.0, _up(math.exp(math.log(base) + _log_geometric_sum(e, d)), 4))


@dataclass(frozen=True)
class ShuffledCollection:
    """A shuffled k-RR collection of ``n_min`` reports per round, repeated ``rounds`` times.

    The local randomizer is :class:`shuffle_accounting.runtime.KRRRandomizer` (exact rational
    probabilities, OS CSPRNG by default) over the declared categories plus, with
    ``null_category=True``, one extra null category; the privacy curve is computed for the
    mechanism actually implemented, i.e. with its ``effective_eps0`` (rounded up) and ``k`` the
    number of randomized values, for batches of ``n_min`` users (the certified bound is
    non-increasing in the number of users, so larger batches are covered).

    Args:
        categories: An integer ``k >= 2`` or a sequence of at least two distinct labels.
        eps0: Nominal local epsilon (finite, > 0).
        n_min: Users per shuffled batch (integer >= 1).
        rounds: Number of rounds released (integer >= 1); several rounds are composed tightly with
            the privacy-loss-distribution accountant.
        null_category: Whether undeclared values go to an extra null category (last bin) instead
            of the first declared category (see the module docstring).

    Raises:
        ParameterError: On invalid parameters.

    Example:
        >>> c = ShuffledCollection(["a", "b", "c"], eps0=1.0, n_min=50)
        >>> c.k, c.rounds
        (3, 1)
        >>> 0 < c.epsilon(1e-3) < 1.0
        True
        >>> c.release(["a"] * 49 + ["zzz"], rng=0)[0].__len__()  # rng=0: simulation, NOT private
        3
    """

    categories: Any
    eps0: float
    n_min: int
    rounds: int = 1
    null_category: bool = False
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from ..runtime import KRRRandomizer  # noqa: PLC0415 - keep import light

        object.__setattr__(self, "eps0", check_real("eps0", self.eps0, low=0.0, low_open=True))
        object.__setattr__(self, "n_min", check_int("n_min", self.n_min, minimum=1))
        object.__setattr__(self, "rounds", check_int("rounds", self.rounds, minimum=1))
        if not isinstance(self.null_category, bool):
            raise ParameterError(f"null_category must be True or False, got {self.null_category!r}")
        encoder = KRRRandomizer(self.categories, self.eps0)  # validates the labels
        k_total = encoder.k + (1 if self.null_category else 0)
        self._cache["encoder"] = encoder
        self._cache["randomizer"] = KRRRandomizer(k_total, self.eps0)

    @property
    def randomizer(self):
        """The runtime :class:`~shuffle_accounting.runtime.KRRRandomizer` over the codes ``0..k-1``."""
        return self._cache["randomizer"]

    @property
    def k(self) -> int:
        """Number of randomized values (declared categories, plus one with a null category)."""
        return int(self.randomizer.k)

    @property
    def labels(self) -> tuple:
        """Declared category labels in histogram order (the null bin, if any, comes last)."""
        enc = self._cache["encoder"]
        return tuple(enc.decode(np.arange(enc.k)).tolist())

    @property
    def effective_eps0(self) -> float:
        """Local epsilon of the implemented mechanism (rounded up); used for all accounting."""
        return float(self.randomizer.effective_eps0)

    def single(self):
        """The certified :class:`~shuffle_accounting.ShuffledKRR` of one round."""
        if "single" not in self._cache:
            from ..shuffled_krr import ShuffledKRR  # noqa: PLC0415

            self._cache["single"] = ShuffledKRR(self.k, self.effective_eps0, self.n_min)
        return self._cache["single"]

    def _composed(self):
        if "composed" not in self._cache:
            from ..shuffled_krr import ShuffleAccountant, ShuffledKRRDpEvent  # noqa: PLC0415

            acc = ShuffleAccountant()
            acc.compose(ShuffledKRRDpEvent(k=self.k, eps0=self.effective_eps0, n=self.n_min), self.rounds)
            self._cache["composed"] = acc
        return self._cache["composed"]

    def delta(self, epsilon: float) -> float:
        """Certified upper bound on delta at ``epsilon`` for all rounds together (one change).

        Raises:
            ParameterError: If ``epsilon`` is NaN or negative.
        """
        eps = check_real("epsilon", epsilon, low=0.0, allow_inf=True)
        if math.isinf(eps):
            return 0.0
        if self.rounds == 1:
            return float(np.minimum(self.single().delta(eps), 1.0))
        return float(min(self._composed().get_delta(eps), 1.0))

    def epsilon(self, delta: float) -> float:
        """Certified upper bound on epsilon at ``delta`` for all rounds together (one change).

        Raises:
            ParameterError: If ``delta`` is not in (0, 1).
        """
        d = check_delta("delta", delta)
        if self.rounds == 1:
            return float(self.single().epsilon(d))
        return float(self._composed().get_epsilon(d))

    def encode(self, values: Sequence[Any] | np.ndarray) -> np.ndarray:
        """Total encoding into codes ``0..k-1``: undeclared values follow the mapping rule.

        Never raises because of the values themselves (only if ``values`` is not a 1-D sequence).
        """
        enc = self._cache["encoder"].encode_partial(values)
        n = enc.codes.size + len(enc.rejected)
        default = self._cache["encoder"].k if self.null_category else 0
        codes = np.full(n, default, dtype=np.int64)
        codes[enc.positions] = enc.codes
        return codes

    def release(self, values: Sequence[Any] | np.ndarray, *, rng: Any = None) -> list:
        """Run the collection on one batch: encode (total), randomize, shuffle, release histograms.

        Args:
            values: The users' values (any values; undeclared ones follow the mapping rule), at
                least ``n_min`` of them (the batch size is public).
            rng: ``None`` for private mode (OS CSPRNG); a seed or numpy ``Generator`` selects
                simulation mode, which is NOT private.

        Returns:
            One histogram (list of ``k`` ints, declared categories in :attr:`labels` order, then
            the null bin if any) per round.

        Raises:
            ParameterError: If the batch holds fewer than ``n_min`` values, or ``rng`` is not
                ``None``, a seed or a numpy ``Generator`` (``True`` and floats included).

        Warns:
            PrivacyLeakWarning: If ``rng`` is a seed or a Generator (simulation mode).
        """
        from .._rng import check_rng  # noqa: PLC0415
        from ..runtime import Shuffler  # noqa: PLC0415

        rng = check_rng(rng)  # the package's one RNG policy (warns for seeds, rejects True/floats)
        codes = self.encode(values)
        if codes.size < self.n_min:
            raise ParameterError(f"values must hold at least n_min = {self.n_min} reports, got {codes.size}")
        shuffler = Shuffler(self.n_min)
        out = []
        for _ in range(self.rounds):
            reports = self.randomizer.randomize_codes(codes, rng=rng)
            out.append([int(c) for c in shuffler.histogram(reports, self.k)])
        return out
