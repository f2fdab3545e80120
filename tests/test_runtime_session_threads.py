"""CollectionSession under threads, shufflers that tamper with their input, bad accountant answers."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

from shuffle_accounting.runtime import (
    AccountingError,
    BatchTooSmallError,
    BudgetExceededError,
    CollectionSession,
    PrivacyLeakWarning,
    Shuffler,
)


class SlowLinearAccountant:
    """Fake: each composed round costs ``per_round``; ``get_epsilon`` sleeps to widen races."""

    def __init__(self, per_round: float, sleep: float = 0.0) -> None:
        self.per_round = per_round
        self.sleep = sleep
        self.rounds = 0

    def compose(self, event, count=1):
        self.rounds += count
        return self

    def get_epsilon(self, delta):
        if self.sleep:
            time.sleep(self.sleep)
        return self.per_round * self.rounds


def _run_threads(targets, seconds):
    stop = time.monotonic() + seconds
    errors = []

    def wrap(fn):
        def run():
            try:
                while time.monotonic() < stop:
                    fn()
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        return run

    threads = [threading.Thread(target=wrap(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 30)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


@pytest.mark.parametrize("limit", [{"rounds": 1}, {"epsilon_budget": 0.15}])
def test_concurrent_releases_cannot_both_pass_the_budget_check(limit):
    s = CollectionSession(
        3,
        1.0,
        n_min=1,
        delta=1e-6,
        rng=None,
        accountant_factory=lambda: SlowLinearAccountant(0.1, sleep=0.005),
        **limit,
    )
    s.submit_randomized([0, 1, 2] * 10)
    barrier = threading.Barrier(6)
    outcomes = []

    def releaser():
        barrier.wait()
        try:
            outcomes.append(s.release().round)
        except (BudgetExceededError, BatchTooSmallError) as exc:
            outcomes.append(type(exc).__name__)

    threads = [threading.Thread(target=releaser) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(o for o in outcomes if isinstance(o, int)) == [1]
    assert len(outcomes) == 6
    spent = s.privacy_spent()
    assert spent.rounds == 1 and spent.epsilon <= 0.15
    assert s.releases[0].n == 30 and s.pending == 0


def test_submitters_and_releasers_lose_nothing_and_release_nothing_twice():
    k = 4
    budget = 0.04  # 40 rounds at 0.001 each, then every release is refused
    s = CollectionSession(
        k,
        1.0,
        n_min=5,
        delta=1e-6,
        epsilon_budget=budget,
        rng=None,
        accountant_factory=lambda: SlowLinearAccountant(0.001),
    )
    submitted = [0] * 3
    batch = np.arange(k).repeat(3)  # 3 reports of each category per submit

    def submitter(i):
        def go():
            s.submit_randomized(batch)
            submitted[i] += batch.size

        return go

    def releaser():
        try:
            s.release()
        except (BatchTooSmallError, BudgetExceededError):
            pass

    _run_threads([submitter(0), submitter(1), submitter(2), releaser, releaser], seconds=1.0)
    releases = s.releases
    total = sum(submitted)
    assert total > 0 and len(releases) >= 1
    assert [r.round for r in releases] == list(range(1, len(releases) + 1))  # unique, consecutive
    released = sum(r.n for r in releases)
    assert released + s.pending == total  # no report lost, none released twice
    per_cat = sum(r.histogram for r in releases)
    assert all(int(c) * k == released for c in per_cat)  # each category exactly once per report
    assert all(r.n == int(r.histogram.sum()) for r in releases)
    assert s.privacy_spent().epsilon <= budget
    assert len(releases) <= round(budget / 0.001)
    assert all(not r.simulated for r in releases)


class OverwritingShuffler(Shuffler):
    """Writes zeros over its input in place and returns it: must never pass the integrity check."""

    def shuffle(self, reports, *, rng=None):
        reports[:] = 0
        return reports


class RaisingShuffler(Shuffler):
    def shuffle(self, reports, *, rng=None):
        raise OSError("shuffler down")


@pytest.mark.parametrize("output", ["histogram", "sequence"])
def test_a_shuffler_that_overwrites_its_input_is_refused(output):
    s = CollectionSession(
        3,
        1.0,
        n_min=3,
        delta=1e-6,
        rounds=2,
        shuffler=OverwritingShuffler(3),
        output=output,
        accountant_factory=lambda: SlowLinearAccountant(0.1),
    )
    s.submit_randomized([1, 2, 2])
    with pytest.raises(RuntimeError, match="permutation"):
        s.release()
    assert s.pending == 3 and s.privacy_spent().rounds == 0 and s.releases == ()


def test_a_failing_shuffler_releases_nothing_and_keeps_the_queue():
    s = CollectionSession(
        3,
        1.0,
        n_min=3,
        delta=1e-6,
        rounds=2,
        shuffler=RaisingShuffler(3),
        accountant_factory=lambda: SlowLinearAccountant(0.1),
    )
    s.submit_randomized([1, 2, 2])
    with pytest.raises(OSError):
        s.release()
    assert s.pending == 3 and s.privacy_spent().rounds == 0


class ConstantAccountant:
    def __init__(self, value):
        self.value = value

    def compose(self, event, count=1):
        return self

    def get_epsilon(self, delta):
        return self.value


@pytest.mark.parametrize("value", [-1.0, -math.inf, math.inf, math.nan, -1e-300, "0.1", None])
@pytest.mark.parametrize("limit", [{"rounds": 3}, {"epsilon_budget": 10.0}])
def test_an_invalid_accountant_answer_is_never_trusted(value, limit):
    s = CollectionSession(
        3, 1.0, n_min=1, delta=1e-6, accountant_factory=lambda: ConstantAccountant(value), **limit
    )
    s.submit_randomized([0, 1])
    with pytest.raises(AccountingError, match="finite number >= 0") as err:
        s.release()
    assert err.value.would_be_epsilon == math.inf
    assert s.pending == 2 and s.releases == () and s.privacy_spent().epsilon == 0.0
    with pytest.raises(AccountingError):
        s.would_be_epsilon(10)


def test_zero_epsilon_from_an_accountant_is_accepted():
    s = CollectionSession(
        3, 1.0, n_min=1, delta=1e-6, rounds=1, accountant_factory=lambda: ConstantAccountant(0)
    )
    s.submit_randomized([0])
    assert s.release().epsilon == 0.0


def test_simulation_releases_say_so():
    with pytest.warns(PrivacyLeakWarning):
        s = CollectionSession(
            3, 1.0, n_min=1, delta=1e-6, rounds=2, rng=5, accountant_factory=lambda: SlowLinearAccountant(0.1)
        )
    with pytest.warns(PrivacyLeakWarning):
        s.submit([0, 1, 2])
    with pytest.warns(PrivacyLeakWarning):
        rel = s.release()
    assert rel.simulated and "simulated=True" in repr(rel)
    private = CollectionSession(
        3, 1.0, n_min=1, delta=1e-6, rounds=1, accountant_factory=lambda: SlowLinearAccountant(0.1)
    )
    private.submit([0, 1, 2])
    rel = private.release()
    assert not rel.simulated and "simulated=False" in repr(rel)
