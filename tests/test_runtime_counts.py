"""Mergeable counts: exact keyed merge, release through the session, single-process reference."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.runtime import (
    BatchTooSmallError,
    BudgetExceededError,
    CollectionSession,
    KRRRandomizer,
    PrivacyLeakWarning,
)
from shuffle_accounting.runtime.counts import (
    CountsMerger,
    PartitionCounts,
    collect_partitions,
    randomize_partition,
    simulation_entropy,
)

pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")


class Linear:
    def __init__(self, per=0.1):
        self.per, self.r = per, 0

    def compose(self, event, count=1):
        self.r += count

    def get_epsilon(self, delta):
        return self.per * self.r


def _session(**kw):
    kw.setdefault("rounds", 2)
    return CollectionSession(
        ["a", "b", "c"], 1.0, kw.pop("n_min", 10), 1e-6, accountant_factory=lambda: Linear(), **kw
    )


PARTS = [["a", "b", "c", "a"] * 5, ["c"] * 7, [], ["b", "a"] * 9]


def test_counts_sum_to_the_reports_and_malformed_values_are_skipped_not_raised():
    r = KRRRandomizer(["a", "b"], 1.0)
    p = randomize_partition(r, ["a", None, "b", 3, "a", "b"], key=4)
    assert (p.n, p.rejected, p.key, p.simulated) == (4, 2, 4, False)
    assert not p.counts.flags.writeable
    for weird in [None, "ab", 5, object()]:  # never raises because of the data
        assert randomize_partition(r, weird, key=0).n == 0


def test_simulation_counts_depend_only_on_entropy_key_and_values():
    r = KRRRandomizer(5, 0.5)
    vals = np.arange(1000) % 5
    a = randomize_partition(r, vals, key=3, entropy=99)
    b = randomize_partition(r, vals, key=3, entropy=99)
    c = randomize_partition(r, vals, key=4, entropy=99)
    assert a.simulated and a.counts.tolist() == b.counts.tolist() != c.counts.tolist()


def test_merger_adds_each_key_once():
    r = KRRRandomizer(["a", "b", "c"], 1.0)
    m = CountsMerger(r)
    first = randomize_partition(r, PARTS[0], key=0)
    assert m.add(first) is True
    assert m.add(randomize_partition(r, PARTS[0], key=0)) is False  # a retried attempt
    assert m.add(randomize_partition(r, PARTS[1], key=1)) is True
    assert (m.n, m.keys, m.duplicates) == (27, (0, 1), 1)
    assert m.histogram.sum() == 27


def test_merger_rejects_another_mechanism_and_bad_parts():
    m = CountsMerger(KRRRandomizer(["a", "b", "c"], 1.0))
    with pytest.raises(ParameterError, match="collection's randomizer"):
        m.add(randomize_partition(KRRRandomizer(["a", "b", "c"], 2.0), ["a"], key=0))
    with pytest.raises(ParameterError, match="PartitionCounts"):
        m.add((0, [1, 2, 3]))
    r = m.randomizer
    with pytest.raises(ParameterError, match="non-negative"):
        m.add(PartitionCounts(0, np.array([1, -1, 0]), 0, r.k, r.keep_threshold, False))
    with pytest.raises(ParameterError, match="KRRRandomizer"):
        CountsMerger("abc")


def test_collect_partitions_streams_and_releases_once():
    s = _session()
    rel = collect_partitions(s, (p for p in PARTS))  # a generator: streamed
    assert rel.n == sum(map(len, PARTS)) == int(rel.histogram.sum()) and rel.reports is None
    assert rel.round == 1 and not rel.simulated and s.privacy_spent().rounds == 1
    assert s.ledger[0].n == rel.n and s.ledger[0].eps0 == s.randomizer.effective_eps0


def test_seeded_collection_is_reproducible_and_says_simulated():
    with pytest.warns(PrivacyLeakWarning):
        a = collect_partitions(_session(), PARTS, rng=5)
    b = collect_partitions(_session(), PARTS, rng=5)
    c = collect_partitions(_session(), PARTS, rng=np.random.default_rng(5))
    assert a.simulated and c.simulated
    assert a.histogram.tolist() == b.histogram.tolist()
    assert c.n == a.n


def test_below_n_min_nothing_is_released():
    s = _session(n_min=100)
    with pytest.raises(BatchTooSmallError):
        collect_partitions(s, PARTS)
    assert s.releases == () and s.privacy_spent().rounds == 0


def test_over_budget_nothing_is_released():
    s = _session(rounds=1)
    collect_partitions(s, PARTS)
    with pytest.raises(BudgetExceededError):
        collect_partitions(s, PARTS)
    assert len(s.releases) == 1
    s = CollectionSession(
        ["a", "b", "c"], 1.0, 10, 1e-6, epsilon_budget=0.05, accountant_factory=lambda: Linear()
    )
    with pytest.raises(BudgetExceededError):
        collect_partitions(s, PARTS)
    assert s.releases == ()


def test_a_merged_batch_is_released_at_most_once_and_a_refused_one_can_grow():
    s = _session(n_min=30, rounds=3)
    m = CountsMerger(s.randomizer)
    m.add(randomize_partition(s.randomizer, PARTS[0], key=0))
    with pytest.raises(BatchTooSmallError):
        s.release_counts(m)  # refused: unsealed, may still grow
    m.add(randomize_partition(s.randomizer, PARTS[3], key=3))
    assert s.release_counts(m).n == 38
    with pytest.raises(ParameterError, match="already released"):
        s.release_counts(m)
    with pytest.raises(ParameterError, match="already released"):
        m.add(randomize_partition(s.randomizer, PARTS[1], key=1))
    assert len(s.releases) == 1


def test_release_counts_checks_its_input():
    s = _session()
    with pytest.raises(ParameterError, match="CountsMerger"):
        s.release_counts([1, 2, 3])
    with pytest.raises(ParameterError, match="this session's randomizer"):
        s.release_counts(CountsMerger(KRRRandomizer(["a", "b", "c"], 1.5)))
    seq = CollectionSession(["a", "b", "c"], 1.0, 1, 1e-6, rounds=1, output="sequence")
    with pytest.raises(ParameterError, match="histogram"):
        collect_partitions(seq, PARTS)
    with pytest.raises(ParameterError, match="CollectionSession"):
        collect_partitions(object(), PARTS)
    for bad in ["abc", 5]:
        with pytest.raises(ParameterError, match="partitions"):
            collect_partitions(s, bad)


def test_simulation_entropy():
    assert simulation_entropy(None) is None
    assert simulation_entropy(7) == 7
    e = simulation_entropy(np.random.default_rng(1))
    assert isinstance(e, int) and e >= 0
    with pytest.raises(ParameterError):
        simulation_entropy(True)
