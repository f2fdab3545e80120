"""A shuffled k-RR collection that keeps its own privacy books.

:class:`CollectionSession` ties the runtime together: clients' values are randomized with a
:class:`~shuffle_accounting.runtime.KRRRandomizer` (or arrive already randomized), queued,
and released round by round through a shuffler as a histogram (or shuffled sequence). Before each
release the session composes, with the :class:`~shuffle_accounting.shuffled_krr.accountant.ShuffleAccountant`,
one ``ShuffledKRRDpEvent(k, effective_eps0, n)`` per released round *including the one about to
be released* (``n`` = the actual batch size), and refuses the round if the certified epsilon at
the configured ``delta`` would exceed the budget. Nothing is released on refusal.

The session is safe to share between threads: one lock serialises intake, the pending list and
the whole check-spend-release step, so no report is lost or released twice and the certified
spend never exceeds the budget, whatever the interleaving.
"""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import ParameterError, check_choice, check_delta, check_int, check_real
from ._rng import check_rng, is_simulation
from .analyzer import histogram as _histogram
from .counts import CountsMerger
from .randomizer import KRRRandomizer, RejectedReport
from .shuffler import BatchTooSmallError, Shuffler

__all__ = [
    "CollectionSession",
    "Release",
    "PrivacySpent",
    "BudgetExceededError",
    "MalformedReportsError",
    "AccountingError",
]


class BudgetExceededError(RuntimeError):
    """Releasing the pending round would exceed the configured privacy budget; nothing was released.

    Attributes:
        would_be_epsilon: Certified epsilon the session would have reached (``inf`` if unknown).
    """

    def __init__(self, message: str, would_be_epsilon: float) -> None:
        super().__init__(message)
        self.would_be_epsilon = would_be_epsilon


class AccountingError(BudgetExceededError):
    """The accountant returned an epsilon that is not a finite number ``>= 0``; nothing was released.

    An unknown, infinite or negative epsilon is never trusted: it is treated as an infinite spend
    (``would_be_epsilon = inf``), so the round is refused as over budget.

    Example:
        >>> issubclass(AccountingError, BudgetExceededError)
        True
    """


class MalformedReportsError(ParameterError):
    """Some submitted reports were malformed. **The valid ones were kept** (queued).

    Attributes:
        accepted: Number of valid reports queued by the failing call.
        rejected: The malformed reports (position, value, reason).
    """

    def __init__(self, message: str, accepted: int, rejected: tuple[RejectedReport, ...]) -> None:
        super().__init__(message)
        self.accepted = accepted
        self.rejected = rejected


@dataclass(frozen=True)
class PrivacySpent:
    """Certified privacy of everything a session has released so far.

    Attributes:
        epsilon: Upper bound on epsilon at ``delta`` (0.0 before the first release).
        delta: The configured delta (0.0 before the first release: nothing released yet).
        rounds: Number of released rounds.
    """

    epsilon: float
    delta: float
    rounds: int


@dataclass(frozen=True)
class Release:
    """One released round.

    Attributes:
        round: 1-based round number.
        n: Number of reports in the round.
        histogram: Counts per category (in the session's category order).
        reports: The shuffled reports (labels), or ``None`` when the output is ``"histogram"``.
        epsilon: Certified cumulative epsilon after this round, at ``delta``.
        delta: The session's delta.
        simulated: ``True`` when the reports were randomized or shuffled in simulation mode (a
            seed or numpy Generator): such a release is reproducible and **NOT private**.
            Shown in the repr.
    """

    round: int
    n: int
    histogram: np.ndarray = field(repr=False)
    reports: np.ndarray | None = field(repr=False)
    epsilon: float
    delta: float
    simulated: bool = False


def _default_accountant() -> Any:
    # Imported on first use: dp_accounting (under the accountant) is heavy (no import cycle here).
    from ..shuffled_krr.accountant import ShuffleAccountant  # noqa: PLC0415

    return ShuffleAccountant()


def _event(k: int, eps0: float, n: int) -> Any:
    from ..shuffled_krr.accountant import ShuffledKRRDpEvent  # noqa: PLC0415

    return ShuffledKRRDpEvent(k=k, eps0=eps0, n=n)


class CollectionSession:
    """Randomize, queue, shuffle and release k-RR reports round by round, within a privacy budget.

    Args:
        categories: Integer ``k >= 2`` or a sequence of distinct labels (see :class:`KRRRandomizer`).
        eps0: Nominal local privacy; the accountant is given the randomizer's ``effective_eps0``.
        n_min: Smallest batch the session will release (the shuffler's ``min_batch``), ``>= 1``.
        delta: Target delta in ``(0, 1)`` at which epsilon is certified.
        rounds: Maximum number of rounds, integer ``>= 1``, or ``None``.
        epsilon_budget: Maximum certified epsilon at ``delta``, finite ``> 0``, or ``None``.
            At least one of ``rounds`` and ``epsilon_budget`` must be given.
        shuffler: Any object with ``shuffle(reports, *, rng=None)`` (default ``Shuffler(n_min)``).
            A shuffler that is not uniform (no ``is_uniform = True`` attribute), such as a Mallows
            shuffler, is only allowed with ``output="histogram"``, where the order is discarded
            and the shuffled-k-RR guarantee holds regardless.
        output: ``"histogram"`` (default) or ``"sequence"`` (also return the shuffled reports).
        accountant_factory: Zero-argument callable returning a fresh accountant with
            ``compose(event, count)`` and ``get_epsilon(delta)``; default the real
            ``ShuffleAccountant`` (inject a fake one in tests).
        rng: ``None`` (private mode, OS CSPRNG) or a seed / numpy Generator (simulation mode,
            NOT private: a :class:`~shuffle_accounting._rng.PrivacyLeakWarning` is emitted and
            every release has ``simulated=True``).

    Thread safety:
        Every public method may be called from several threads at once. One lock guards the
        intake (randomization and queueing), the pending list and the whole release step
        (batch-size, rounds and budget checks, accounting, shuffling and the reset of the
        queue): a report submitted concurrently with a release lands either in that release or
        in the queue, never in both or neither; two concurrent releases cannot both pass the
        budget check; release numbers are unique and consecutive.

    Integrity:
        The released histogram is computed from the batch *before* the shuffler runs, and the
        shuffler's output must have exactly that histogram (a shuffler that drops, adds, alters
        or overwrites reports in place is refused, nothing released). The accountant's answer
        must be a finite number ``>= 0`` (else :class:`AccountingError`, nothing released).

    Raises:
        ParameterError: If an argument is invalid or no budget is configured.

    Example:
        >>> s = CollectionSession(["a", "b", "c"], eps0=1.0, n_min=4, delta=1e-6, rounds=1, rng=7)
        >>> s.submit(["a", "b", "a", "c", "a"])  # simulation mode (seeded): NOT private
        >>> r = s.release()
        >>> r.n, int(r.histogram.sum()), s.privacy_spent().rounds
        (5, 5, 1)
        >>> s.privacy_spent().epsilon == r.epsilon > 0
        True
    """

    def __init__(
        self,
        categories: Any,
        eps0: float,
        n_min: int,
        delta: float,
        *,
        rounds: int | None = None,
        epsilon_budget: float | None = None,
        shuffler: Any = None,
        output: str = "histogram",
        accountant_factory: Callable[[], Any] | None = None,
        rng: Any = None,
    ) -> None:
        self.randomizer = KRRRandomizer(categories, eps0)
        self.n_min = check_int("n_min", n_min, minimum=1)
        self.delta = check_delta("delta", delta)
        self.rounds = None if rounds is None else check_int("rounds", rounds, minimum=1)
        self.epsilon_budget = (
            None
            if epsilon_budget is None
            else check_real("epsilon_budget", epsilon_budget, low=0.0, low_open=True)
        )
        if self.rounds is None and self.epsilon_budget is None:
            raise ParameterError(
                "configure a budget: rounds and/or epsilon_budget must be given, got neither"
            )
        self.output = check_choice("output", output, ("histogram", "sequence"))
        if shuffler is None:
            shuffler = Shuffler(self.n_min)
        if not callable(getattr(shuffler, "shuffle", None)):
            raise ParameterError(
                f"shuffler must have a method shuffle(reports, *, rng=None), got {shuffler!r}"
            )
        if self.output == "sequence" and getattr(shuffler, "is_uniform", False) is not True:
            raise ParameterError(
                "shuffler must be a uniform shuffler (is_uniform = True) when output='sequence': the "
                "ShuffleAccountant certifies uniformly shuffled k-RR; use output='histogram' with "
                f"{type(shuffler).__name__} or account for it separately"
            )
        self.shuffler = shuffler
        if accountant_factory is not None and not callable(accountant_factory):
            raise ParameterError(
                f"accountant_factory must be a zero-argument callable, got {accountant_factory!r}"
            )
        self._factory = accountant_factory or _default_accountant
        self._rng = check_rng(rng)
        self.simulated = is_simulation(self._rng)
        self._eps0 = self.randomizer.effective_eps0
        self._lock = threading.RLock()
        self._pending: list[np.ndarray] = []
        self._events: list[Any] = []
        self._releases: list[Release] = []
        self._epsilon = 0.0

    # ----- intake ----------------------------------------------------------------------------
    @property
    def pending(self) -> int:
        """Number of queued (randomized, not yet released) reports."""
        with self._lock:
            return int(sum(a.size for a in self._pending))

    def _queue(self, values: Any, randomize: bool) -> None:
        enc = self.randomizer.encode_partial(values)
        with self._lock:  # a Generator is not thread-safe; the pending list is shared
            codes = enc.codes
            if randomize and codes.size:
                codes = self.randomizer.randomize_codes(codes, rng=self._rng)
            if codes.size:
                self._pending.append(codes)
        if enc.rejected:
            first = enc.rejected[0]
            raise MalformedReportsError(
                f"values: {len(enc.rejected)} malformed report(s) rejected, {codes.size} valid "
                f"kept; first at position {first.position}: {first.value!r} ({first.reason})",
                accepted=int(codes.size),
                rejected=enc.rejected,
            )

    def submit(self, values: Any) -> None:
        """Randomize true values on the clients' behalf and queue them.

        Args:
            values: 1-D sequence of declared categories.

        Raises:
            MalformedReportsError: If some values are not declared categories (unknown category or
                wrong type). Every valid value has been randomized and queued all the same.

        Example:
            >>> s = CollectionSession(2, 1.0, n_min=2, delta=1e-6, rounds=1, rng=0)
            >>> try:
            ...     s.submit([0, "x", 1, True])
            ... except MalformedReportsError as e:
            ...     print(e.accepted, [r.position for r in e.rejected])
            2 [1, 3]
            >>> s.pending
            2
        """
        self._queue(values, randomize=True)

    def submit_randomized(self, reports: Any) -> None:
        """Queue reports already randomized by clients with the same ``KRRRandomizer`` parameters.

        Raises:
            MalformedReportsError: As :meth:`submit`; valid reports are kept.

        Example:
            >>> s = CollectionSession(["x", "y"], 1.0, n_min=1, delta=1e-6, rounds=1)
            >>> s.submit_randomized(["x", "y", "y"]); s.pending
            3
        """
        self._queue(reports, randomize=False)

    # ----- accounting ------------------------------------------------------------------------
    def _certified_epsilon(self, events: list[Any]) -> float:
        if not events:
            return 0.0
        groups: list[list[Any]] = []  # [event, count]; equality only (events need not be hashable)
        for ev in events:
            for grp in groups:
                if grp[0] == ev:
                    grp[1] += 1
                    break
            else:
                groups.append([ev, 1])
        acct = self._factory()
        for event, count in groups:
            acct.compose(event, count=count)
        raw = acct.get_epsilon(self.delta)
        real = isinstance(raw, numbers.Real) and not isinstance(raw, (bool, np.bool_))
        eps = float(raw) if real else float("nan")
        if not (math.isfinite(eps) and eps >= 0.0):  # never trust an unknown or negative bound
            raise AccountingError(
                f"the accountant returned epsilon = {raw!r} at delta = {self.delta!r}; a certified "
                "epsilon must be a finite number >= 0; nothing released",
                float("inf"),
            )
        return eps

    def would_be_epsilon(self, n: int | None = None) -> float:
        """Certified epsilon at ``delta`` if one more round of ``n`` reports were released now.

        Args:
            n: Batch size, default the number of pending reports (at least 1).

        Raises:
            AccountingError: If the accountant's answer is not a finite number ``>= 0``.

        Example:
            >>> s = CollectionSession(3, 1.0, n_min=1, delta=1e-6, rounds=2)
            >>> s.would_be_epsilon(100) > 0
            True
        """
        with self._lock:
            n = self.pending if n is None else n
            n = check_int("n", n, minimum=1)
            return self._certified_epsilon(self._events + [_event(self.randomizer.k, self._eps0, n)])

    def planned_epsilon(self) -> float:
        """Certified epsilon of ``rounds`` rounds of exactly ``n_min`` reports (needs ``rounds``).

        Raises:
            ParameterError: If the session has no ``rounds`` limit.

        Example:
            >>> s = CollectionSession(3, 1.0, n_min=50, delta=1e-6, rounds=2)
            >>> s.planned_epsilon() > 0
            True
        """
        if self.rounds is None:
            raise ParameterError("planned_epsilon needs rounds to be configured, got rounds=None")
        ev = _event(self.randomizer.k, self._eps0, self.n_min)
        return self._certified_epsilon([ev] * self.rounds)

    def privacy_spent(self) -> PrivacySpent:
        """Certified ``(epsilon, delta)`` of everything released so far.

        Example:
            >>> CollectionSession(3, 1.0, n_min=1, delta=1e-6, rounds=1).privacy_spent()
            PrivacySpent(epsilon=0.0, delta=0.0, rounds=0)
        """
        with self._lock:
            done = len(self._releases)
            return PrivacySpent(self._epsilon, self.delta if done else 0.0, done)

    @property
    def ledger(self) -> tuple[Any, ...]:
        """The ``ShuffledKRRDpEvent`` of every released round, in order."""
        with self._lock:
            return tuple(self._events)

    @property
    def releases(self) -> tuple[Release, ...]:
        """Every release so far, in order."""
        with self._lock:
            return tuple(self._releases)

    # ----- release ---------------------------------------------------------------------------
    def release(self) -> Release:
        """Shuffle and release the pending batch as one round, if the budget allows it.

        Order of checks (nothing is released and the queue is kept if any fails): batch size
        ``>= n_min``; rounds left; certified epsilon *including this round* ``<= epsilon_budget``.

        Returns:
            The :class:`Release`.

        Raises:
            BatchTooSmallError: If fewer than ``n_min`` reports are pending.
            BudgetExceededError: If the round would exceed ``rounds`` or ``epsilon_budget``.

        Example:
            >>> s = CollectionSession(2, 1.0, n_min=3, delta=1e-6, rounds=1, rng=1)
            >>> s.submit([0, 1])
            >>> s.release()
            Traceback (most recent call last):
            ...
            shuffle_accounting.runtime.shuffler.BatchTooSmallError: batch of 2 reports is smaller than min_batch = 3; nothing released (the privacy guarantee is computed for n >= 3)
        """
        with self._lock:
            n = self.pending
            self._check_release(n)
            event = _event(self.randomizer.k, self._eps0, n)
            eps = self._check_budget(event)
            codes = np.concatenate(self._pending)
            k = self.randomizer.k
            hist = _histogram(codes, k)  # reference taken BEFORE the shuffler can touch codes
            shuffled = np.asarray(self.shuffler.shuffle(codes, rng=self._rng))
            if (
                shuffled.shape != codes.shape
                or shuffled.dtype.kind not in "iu"
                or not np.array_equal(_histogram(shuffled.astype(np.int64), k), hist)
            ):
                raise RuntimeError("the shuffler did not return a permutation of its input; nothing released")
            reports = self.randomizer.decode(shuffled.astype(np.int64)) if self.output == "sequence" else None
            self._pending = []
            return self._record(event, eps, n, hist, reports)

    def release_counts(self, merged: Any) -> Release:
        """Release a merged batch of randomized counts (a map-reduce collection) as one round.

        The counts were produced by this session's randomizer (same categories and eps0) on
        workers (:mod:`shuffle_accounting.runtime.counts`, the Dask and Spark backends); the
        histogram needs no shuffle (it is order-free). Same checks, accounting and integrity as
        :meth:`release`: nothing is released below ``n_min`` or over budget, and the round is
        charged the certified epsilon of the mechanism actually run (``effective_eps0``). The
        merger is sealed by a successful release, so a batch is never released twice.

        Args:
            merged: A :class:`~shuffle_accounting.runtime.counts.CountsMerger` built with this
                session's randomizer (or an equal one).

        Returns:
            The :class:`Release` (``reports=None``; ``simulated`` as the counts were drawn).

        Raises:
            BatchTooSmallError: If the merged batch holds fewer than ``n_min`` reports.
            BudgetExceededError: If the round would exceed ``rounds`` or ``epsilon_budget``.
            ParameterError: If ``merged`` is not a merger of this mechanism, was already
                released, or ``output`` is not ``"histogram"``.

        Example:
            >>> from shuffle_accounting.runtime.counts import CountsMerger, randomize_partition
            >>> s = CollectionSession(3, 1.0, n_min=4, delta=1e-6, rounds=1)
            >>> m = CountsMerger(s.randomizer)
            >>> _ = m.add(randomize_partition(s.randomizer, [0, 1, 2, 2, 1], key=0))
            >>> s.release_counts(m).n
            5
        """
        if not isinstance(merged, CountsMerger):
            raise ParameterError(f"merged must be a CountsMerger, got {type(merged).__name__}")
        if self.output != "histogram":
            raise ParameterError(f"release_counts needs output='histogram', got output={self.output!r}")
        if (
            merged.randomizer != self.randomizer
            or merged.randomizer.keep_threshold != self.randomizer.keep_threshold
        ):
            raise ParameterError(
                "merged must hold counts of this session's randomizer (same categories and eps0), "
                f"got {merged.randomizer!r}"
            )
        with self._lock:
            hist = merged.seal()  # raises if already released; blocks late additions
            try:
                n = int(hist.sum())
                self._check_release(n)
                event = _event(self.randomizer.k, self._eps0, n)
                eps = self._check_budget(event)
            except BaseException:
                merged.unseal()
                raise
            return self._record(event, eps, n, hist, None, simulated=merged.simulated)

    def _check_release(self, n: int) -> None:
        """Batch-size and rounds checks of a release of ``n`` reports (caller holds the lock)."""
        if n < self.n_min:
            raise BatchTooSmallError(
                f"batch of {n} reports is smaller than min_batch = {self.n_min}; nothing released "
                f"(the privacy guarantee is computed for n >= {self.n_min})"
            )
        done = len(self._releases)
        if self.rounds is not None and done + 1 > self.rounds:
            raise BudgetExceededError(
                f"round {done + 1} refused: the session is configured for rounds = {self.rounds}",
                float("inf"),
            )

    def _check_budget(self, event: Any) -> float:
        """Certified epsilon including ``event``; raise if over budget (caller holds the lock)."""
        eps = self._certified_epsilon(self._events + [event])
        if self.epsilon_budget is not None and not eps <= self.epsilon_budget:
            raise BudgetExceededError(
                f"round {len(self._releases) + 1} refused: certified epsilon would be {eps!r} > "
                f"epsilon_budget = {self.epsilon_budget!r} at delta = {self.delta!r}",
                eps,
            )
        return eps

    def _record(
        self, event: Any, eps: float, n: int, hist: np.ndarray, reports: Any, simulated: bool | None = None
    ) -> Release:
        """Spend and record one release (caller holds the lock and has passed every check)."""
        for arr in (hist, reports):
            if arr is not None:
                arr.setflags(write=False)
        self._events.append(event)
        self._epsilon = eps
        sim = self.simulated if simulated is None else bool(simulated)
        rel = Release(len(self._releases) + 1, n, hist, reports, eps, self.delta, sim)
        self._releases.append(rel)
        return rel
