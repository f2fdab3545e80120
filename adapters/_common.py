"""Shared pieces of the adapters: the certified privacy curve of a shuffled k-RR collection and
the collection itself (runtime randomizer + shuffler).

The privacy statements made by every adapter come from here, so the three libraries report the
same numbers as :class:`shuffle_accounting.ShuffledKRR` (one round) and
:class:`shuffle_accounting.ShuffleAccountant` (several rounds, tight PLD composition).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .._validation import ParameterError, check_delta, check_int, check_real

__all__ = ["ShuffledCollection"]


@dataclass(frozen=True)
class ShuffledCollection:
    """A shuffled k-RR collection of ``n_min`` reports per round, repeated ``rounds`` times.

    The local randomizer is :class:`shuffle_accounting.runtime.KRRRandomizer` (exact rational
    probabilities, OS CSPRNG by default); the privacy curve is computed for the mechanism actually
    implemented, i.e. with its ``effective_eps0`` (rounded up), for batches of ``n_min`` users
    (the certified bound is non-increasing in the number of users, so larger batches are covered).

    Args:
        categories: An integer ``k >= 2`` or a sequence of at least two distinct labels.
        eps0: Nominal local epsilon (finite, > 0).
        n_min: Users per shuffled batch (integer >= 2).
        rounds: Number of rounds released (integer >= 1); several rounds are composed tightly with
            the privacy-loss-distribution accountant.

    Raises:
        ParameterError: On invalid parameters.

    Example:
        >>> c = ShuffledCollection(["a", "b", "c"], eps0=1.0, n_min=50)
        >>> c.k, c.rounds
        (3, 1)
        >>> 0 < c.epsilon(1e-3) < 1.0
        True
    """

    categories: Any
    eps0: float
    n_min: int
    rounds: int = 1
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from ..runtime import KRRRandomizer  # noqa: PLC0415 - keep import light

        object.__setattr__(self, "eps0", check_real("eps0", self.eps0, low=0.0, low_open=True))
        object.__setattr__(self, "n_min", check_int("n_min", self.n_min, minimum=2))
        object.__setattr__(self, "rounds", check_int("rounds", self.rounds, minimum=1))
        randomizer = KRRRandomizer(self.categories, self.eps0)
        self._cache["randomizer"] = randomizer

    @property
    def randomizer(self):
        """The runtime :class:`~shuffle_accounting.runtime.KRRRandomizer`."""
        return self._cache["randomizer"]

    @property
    def k(self) -> int:
        """Number of categories."""
        return int(self.randomizer.k)

    @property
    def labels(self) -> tuple:
        """Category labels in histogram order."""
        return tuple(self.randomizer.decode(np.arange(self.k)).tolist())

    @property
    def effective_eps0(self) -> float:
        """Local epsilon of the implemented mechanism (rounded up); used for all accounting."""
        return float(self.randomizer.effective_eps0)

    def _single(self):
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
        """Certified upper bound on delta at ``epsilon`` for all rounds together.

        Raises:
            ParameterError: If ``epsilon`` is NaN or negative.
        """
        eps = check_real("epsilon", epsilon, low=0.0, allow_inf=True)
        if math.isinf(eps):
            return 0.0
        if self.rounds == 1:
            return float(np.minimum(self._single().delta(eps), 1.0))
        return float(min(self._composed().get_delta(eps), 1.0))

    def epsilon(self, delta: float) -> float:
        """Certified upper bound on epsilon at ``delta`` for all rounds together.

        Raises:
            ParameterError: If ``delta`` is not in (0, 1).
        """
        d = check_delta("delta", delta)
        if self.rounds == 1:
            return float(self._single().epsilon(d))
        return float(self._composed().get_epsilon(d))

    def release(self, values: Sequence[Any], *, rng: Any = None) -> list:
        """Run the collection on one batch: randomize, shuffle, release histograms.

        Args:
            values: The users' true values (declared categories), at least ``n_min`` of them.
            rng: ``None`` for private mode (OS CSPRNG); a seed or numpy ``Generator`` selects
                simulation mode, which is NOT private.

        Returns:
            One histogram (list of ``k`` ints, in :attr:`labels` order) per round.

        Raises:
            ParameterError: If a value is not a declared category or the batch is too small.
        """
        from ..runtime import Shuffler  # noqa: PLC0415

        codes = self.randomizer.encode(values)
        if codes.size < self.n_min:
            raise ParameterError(
                f"values must hold at least n_min = {self.n_min} reports, got {codes.size}"
            )
        shuffler = Shuffler(self.n_min)
        if rng is not None and not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(rng)  # one stream across rounds (simulation only)
        out = []
        for _ in range(self.rounds):
            reports = self.randomizer.randomize_codes(codes, rng=rng)
            out.append([int(c) for c in shuffler.histogram(reports, self.k)])
        return out
