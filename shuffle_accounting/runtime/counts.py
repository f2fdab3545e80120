"""Mergeable counts: randomize partitions into exact integer histograms, merge them once each.

For a histogram release the shuffle is free: the histogram of the shuffled reports is the
histogram of the reports, whatever the order. A collection of any size is therefore a
map-reduce: every partition (a chunk of a file, a dask partition, a Spark partition, a stream
chunk) is randomized with the session's :class:`~shuffle_accounting.runtime.KRRRandomizer` and
reduced to ``k`` integer counts (:func:`randomize_partition`), the counts are merged exactly
(:class:`CountsMerger`: integer addition, so the merge order never matters), and the merged batch is
released through :meth:`CollectionSession.release_counts
<shuffle_accounting.runtime.CollectionSession.release_counts>`, which refuses batches below
``n_min`` and charges the certified epsilon of the mechanism actually run (the randomizer's
``effective_eps0``) to the session's accountant, exactly as :meth:`CollectionSession.release
<shuffle_accounting.runtime.CollectionSession.release>` does.

Exactly once. Each partition's counts carry a key (its partition index) and the merger adds a key
at most once: a partition whose task failed and was retried, or that ran twice (speculative
execution), is counted once. Which attempt is kept depends only on arrival order, never on the
randomized values, so the choice leaks nothing.

Randomness (the package's one policy, :mod:`shuffle_accounting._rng`). ``rng=None``: every
worker draws from its own OS CSPRNG (private mode). A seed or numpy Generator (simulation,
NOT private, warned once on the driver): the driver turns it into one integer ``entropy``, and
partition ``key`` draws from ``numpy.random.default_rng(SeedSequence(entropy, spawn_key=(key,)))``
— so a partition's counts depend only on ``(entropy, key, values)``, never on the scheduling, and
a distributed collection equals the single-process one (:func:`collect_partitions`) report for
report.

Malformed values inside a partition (not a declared category) are skipped and counted in
``PartitionCounts.rejected``; a function that runs on private data never raises because of it.
"""

from __future__ import annotations

import numbers
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import ParameterError, check_int
from ._rng import check_rng
from .randomizer import KRRRandomizer, randomize_codes_checked

__all__ = [
    "PartitionCounts",
    "CountsMerger",
    "simulation_entropy",
    "randomize_partition",
    "collect_partitions",
    "check_counts_session",
]

_CHUNK = 1 << 20  # reports randomized at once (bounds a worker's memory)


@dataclass(frozen=True)
class PartitionCounts:
    """Exact k-RR report counts of one partition.

    Attributes:
        key: The partition's key (a non-negative integer, unique within a collection).
        counts: ``int64`` counts of the randomized reports per category (read-only).
        rejected: Number of malformed values skipped (not declared categories).
        k: Number of categories. keep_threshold: the randomizer's exact keep threshold (identifies
            the mechanism actually run, with ``k``).
        simulated: ``True`` if drawn in simulation mode (NOT private).
    """

    key: int
    counts: np.ndarray = field(repr=False)
    rejected: int
    k: int
    keep_threshold: int = field(repr=False)
    simulated: bool

    @property
    def n(self) -> int:
        """Number of randomized reports in the partition."""
        return int(self.counts.sum())


def simulation_entropy(rng: Any) -> int | None:
    """Resolve a collection's ``rng`` once, on the driver: ``None`` (private) or an integer entropy.

    A seed is used as is; a Generator contributes 128 bits drawn from it. Emits the package's
    :class:`~shuffle_accounting._rng.PrivacyLeakWarning` for a seed or Generator.

    Raises:
        ParameterError: If ``rng`` is not ``None``, a non-negative integer or a Generator.

    Example:
        >>> simulation_entropy(None) is None
        True
    """
    gen = check_rng(rng, stacklevel=4)  # the warning points at the caller of the public function
    if gen is None:
        return None
    if isinstance(rng, numbers.Integral):
        return int(rng)
    hi, lo = (int(x) for x in gen.integers(0, 2**63, size=2, dtype=np.int64))
    return (hi << 63) | lo


def randomize_partition(
    randomizer: KRRRandomizer, values: Any, *, key: int, entropy: int | None = None
) -> PartitionCounts:
    """Randomize one partition's true values and reduce them to exact counts.

    Args:
        randomizer: The collection's :class:`KRRRandomizer`.
        values: 1-D sequence/array of true values (declared categories); malformed ones are
            skipped and counted, never raised on.
        key: The partition's key, integer ``>= 0``.
        entropy: ``None`` for private mode (OS CSPRNG), or the collection's integer entropy from
            :func:`simulation_entropy` (simulation mode: the stream is
            ``SeedSequence(entropy, spawn_key=(key,))``).

    Returns:
        :class:`PartitionCounts`.

    Raises:
        ParameterError: If ``randomizer``, ``key`` or ``entropy`` is invalid (never because of
            the values).

    Example:
        >>> r = KRRRandomizer(["a", "b"], 1.0)
        >>> p = randomize_partition(r, ["a", "b", "a", "zz"], key=0)
        >>> p.n, p.rejected, p.simulated
        (3, 1, False)
    """
    if not isinstance(randomizer, KRRRandomizer):
        raise ParameterError(f"randomizer must be a KRRRandomizer, got {type(randomizer).__name__}")
    key = check_int("key", key, minimum=0)
    if entropy is not None:
        entropy = check_int("entropy", entropy, minimum=0)
    if isinstance(values, (str, bytes)) or values is None:
        values = []
    try:
        enc = randomizer.encode_partial(values)
    except ParameterError:  # not even a sequence: never raise on private data
        enc = randomizer.encode_partial(list(_iterate(values)))
    gen = (
        None if entropy is None else np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(key,)))
    )
    counts = np.zeros(randomizer.k, dtype=np.int64)
    codes = enc.codes
    for start in range(0, codes.size, _CHUNK):
        chunk = codes[start : start + _CHUNK]
        # gen is None or a Generator derived from the validated collection rng (warned once)
        out = randomize_codes_checked(randomizer, chunk, gen)
        counts += np.bincount(out, minlength=randomizer.k)
    counts.setflags(write=False)
    return PartitionCounts(
        key, counts, len(enc.rejected), randomizer.k, randomizer.keep_threshold, gen is not None
    )


def _iterate(values: Any) -> Iterable[Any]:
    try:
        yield from values
    except TypeError:
        return


class CountsMerger:
    """Exact, keyed merge of :class:`PartitionCounts`: each key is added at most once.

    Thread-safe. Once released (:meth:`CollectionSession.release_counts
    <shuffle_accounting.runtime.CollectionSession.release_counts>`) it is sealed: no more counts
    are accepted and it cannot be released again.

    Args:
        randomizer: The collection's :class:`KRRRandomizer`; every merged partition must come
            from the same mechanism (same ``k`` and keep threshold).

    Example:
        >>> r = KRRRandomizer(3, 1.0)
        >>> m = CountsMerger(r)
        >>> m.add(randomize_partition(r, [0, 1, 2], key=0)), m.add(randomize_partition(r, [0], key=0))
        (True, False)
        >>> m.n, m.keys, m.duplicates
        (3, (0,), 1)
    """

    def __init__(self, randomizer: KRRRandomizer) -> None:
        if not isinstance(randomizer, KRRRandomizer):
            raise ParameterError(f"randomizer must be a KRRRandomizer, got {type(randomizer).__name__}")
        self.randomizer = randomizer
        self._lock = threading.Lock()
        self._counts = np.zeros(randomizer.k, dtype=np.int64)
        self._keys: dict[int, int] = {}
        self._rejected = 0
        self._duplicates = 0
        self._simulated = False
        self._sealed = False

    def add(self, part: PartitionCounts) -> bool:
        """Merge one partition's counts unless its key was already merged.

        Returns:
            ``True`` if merged, ``False`` if the key was already present (a retried or duplicated
            partition: ignored).

        Raises:
            ParameterError: If ``part`` is not a :class:`PartitionCounts` of this mechanism, or
                the merger is sealed (already released).
        """
        if not isinstance(part, PartitionCounts):
            raise ParameterError(f"part must be a PartitionCounts, got {type(part).__name__}")
        if part.k != self.randomizer.k or part.keep_threshold != self.randomizer.keep_threshold:
            raise ParameterError(
                f"part must come from the collection's randomizer (k = {self.randomizer.k}, same eps0); "
                f"got k = {part.k} with another keep threshold"
            )
        counts = np.asarray(part.counts)
        if counts.shape != (self.randomizer.k,) or counts.dtype.kind not in "iu" or (counts < 0).any():
            raise ParameterError(f"part.counts must be {self.randomizer.k} non-negative integers")
        with self._lock:
            if self._sealed:
                raise ParameterError("this merger was already released; start a new one")
            if part.key in self._keys:
                self._duplicates += 1
                return False
            self._keys[part.key] = int(counts.sum())
            self._counts += counts.astype(np.int64)
            self._rejected += part.rejected
            self._simulated = self._simulated or part.simulated
            return True

    def seal(self) -> np.ndarray:
        """Seal the merger (idempotence guard) and return a read-only copy of its counts.

        Raises:
            ParameterError: If it was already sealed.
        """
        with self._lock:
            if self._sealed:
                raise ParameterError("this merger was already released; a batch is released at most once")
            self._sealed = True
            out = self._counts.copy()
            out.setflags(write=False)
            return out

    def unseal(self) -> None:
        """Undo :meth:`seal` when the release was refused (nothing released)."""
        with self._lock:
            self._sealed = False

    @property
    def histogram(self) -> np.ndarray:
        """A copy of the merged counts."""
        with self._lock:
            return self._counts.copy()

    @property
    def n(self) -> int:
        """Number of merged reports."""
        with self._lock:
            return int(self._counts.sum())

    @property
    def keys(self) -> tuple[int, ...]:
        """Merged partition keys, sorted."""
        with self._lock:
            return tuple(sorted(self._keys))

    @property
    def rejected(self) -> int:
        """Malformed values skipped in the merged partitions."""
        return self._rejected

    @property
    def duplicates(self) -> int:
        """Partitions ignored because their key was already merged."""
        return self._duplicates

    @property
    def simulated(self) -> bool:
        """Whether any merged partition was drawn in simulation mode (NOT private)."""
        return self._simulated

    @property
    def sealed(self) -> bool:
        """Whether the merger was released."""
        return self._sealed


def collect_partitions(session: Any, partitions: Iterable[Any], *, rng: Any = None) -> Any:
    """Single-process reference collection: randomize each partition, merge, release once.

    The partitions may be a list of arrays or any iterable (a generator of chunks streamed from
    disk: only one partition is in memory at a time). Partition ``i`` (in iteration order) gets
    key ``i``, as in the distributed backends, so the same seed gives the same counts.

    Args:
        session: The :class:`~shuffle_accounting.runtime.CollectionSession` (``output="histogram"``).
        partitions: Iterable of 1-D sequences of true values.
        rng: ``None`` (private mode, OS CSPRNG) or a seed / numpy Generator (simulation mode,
            NOT private; warned).

    Returns:
        The session's :class:`~shuffle_accounting.runtime.Release`.

    Raises:
        BatchTooSmallError: If fewer than ``n_min`` reports were collected (nothing released).
        BudgetExceededError: If the round would exceed the budget (nothing released).
        ParameterError: If an argument is invalid.

    Example:
        >>> from shuffle_accounting.runtime import CollectionSession
        >>> s = CollectionSession(["x", "y"], 1.0, n_min=4, delta=1e-6, rounds=1)
        >>> rel = collect_partitions(s, [["x", "y"], ["y", "y", "x"]])
        >>> rel.n, int(rel.histogram.sum()), rel.simulated
        (5, 5, False)
    """
    randomizer = check_counts_session(session)
    entropy = simulation_entropy(rng)
    if isinstance(partitions, (str, bytes)):
        raise ParameterError("partitions must be an iterable of 1-D sequences, got a string")
    try:
        iterator = iter(partitions)
    except TypeError:
        raise ParameterError(f"partitions must be an iterable of 1-D sequences, got {partitions!r}") from None
    merger = CountsMerger(randomizer)
    for key, part in enumerate(iterator):
        merger.add(randomize_partition(randomizer, part, key=key, entropy=entropy))
    return session.release_counts(merger)


def check_counts_session(session: Any) -> KRRRandomizer:
    """The session's randomizer, after checking the session can release counts (every backend uses it).

    Raises:
        ParameterError: If ``session`` is not a CollectionSession with ``output="histogram"``.

    Example:
        >>> from shuffle_accounting.runtime import CollectionSession
        >>> check_counts_session(CollectionSession(3, 1.0, n_min=1, delta=1e-6, rounds=1)).k
        3
    """
    randomizer = getattr(session, "randomizer", None)
    if not isinstance(randomizer, KRRRandomizer) or not callable(getattr(session, "release_counts", None)):
        raise ParameterError(f"session must be a CollectionSession, got {type(session).__name__}")
    if getattr(session, "output", "histogram") != "histogram":
        raise ParameterError(
            "session.output must be 'histogram' for a counts collection (the reports themselves are "
            f"never gathered), got {session.output!r}"
        )
    return randomizer
