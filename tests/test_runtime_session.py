"""CollectionSession: never releases above budget, checks before releasing, keeps valid reports."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.runtime import (
    BatchTooSmallError,
    BudgetExceededError,
    CollectionSession,
    MalformedReportsError,
    Shuffler,
)

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")


@dataclass
class LinearAccountant:
    """Fake: each composed round costs ``per_round`` (records what it was given)."""

    per_round: float = 0.3
    log: list = field(default_factory=list)

    def compose(self, event, count=1):
        self.log.append((event, count))
        return self

    def get_epsilon(self, delta):
        return self.per_round * sum(c for _, c in self.log)


def _factory(per_round=0.3, made=None):
    def make():
        acct = LinearAccountant(per_round)
        if made is not None:
            made.append(acct)
        return acct

    return make


class SpyShuffler(Shuffler):
    calls: list

    def __init__(self, n):
        super().__init__(n)
        object.__setattr__(self, "calls", [])

    def shuffle(self, reports, *, rng=None):
        self.calls.append(len(reports))
        return super().shuffle(reports, rng=rng)


def test_never_releases_above_budget_and_checks_before_releasing():
    made = []
    spy = SpyShuffler(10)
    s = CollectionSession(
        4,
        1.0,
        n_min=10,
        delta=1e-6,
        epsilon_budget=1.0,
        shuffler=spy,
        accountant_factory=_factory(0.3, made),
        rng=0,
    )
    for _ in range(3):
        s.submit(np.arange(12) % 4)
        rel = s.release()
        assert rel.epsilon <= 1.0
    assert s.privacy_spent().epsilon == pytest.approx(0.9)
    s.submit(np.arange(12) % 4)
    with pytest.raises(BudgetExceededError, match="epsilon_budget") as err:
        s.release()
    assert err.value.would_be_epsilon == pytest.approx(1.2)
    # nothing was released: no shuffle call, ledger and spent unchanged, queue kept
    assert len(spy.calls) == 3
    assert len(s.releases) == 3 and len(s.ledger) == 3
    assert s.privacy_spent() == s.privacy_spent()
    assert s.privacy_spent().epsilon == pytest.approx(0.9) and s.privacy_spent().rounds == 3
    assert s.pending == 12
    # the accountant was given the randomizer's effective eps0 and the actual batch size
    events = [e for e, _ in made[-1].log]
    assert all(e.eps0 == s.randomizer.effective_eps0 and e.k == 4 and e.n == 12 for e in events)


def test_actual_batch_sizes_are_accounted():
    made = []
    s = CollectionSession(
        3, 1.0, n_min=5, delta=1e-6, rounds=5, accountant_factory=_factory(0.1, made), rng=1
    )
    for size in (5, 9, 5):
        s.submit([0] * size)
        s.release()
    composed = {(e.n, c) for e, c in made[-1].log}
    assert composed == {(5, 2), (9, 1)}
    assert [r.n for r in s.releases] == [5, 9, 5]
    assert [e.n for e in s.ledger] == [5, 9, 5]


def test_rounds_limit():
    s = CollectionSession(3, 1.0, n_min=2, delta=1e-6, rounds=2, accountant_factory=_factory(), rng=2)
    for _ in range(2):
        s.submit([0, 1, 2])
        s.release()
    s.submit([0, 1, 2])
    with pytest.raises(BudgetExceededError, match="rounds = 2"):
        s.release()
    assert s.pending == 3 and s.privacy_spent().rounds == 2


def test_nan_or_inf_epsilon_is_refused():
    s = CollectionSession(
        3, 1.0, n_min=1, delta=1e-6, epsilon_budget=5.0, accountant_factory=_factory(float("nan")), rng=0
    )
    s.submit([0])
    with pytest.raises(BudgetExceededError) as err:
        s.release()
    assert err.value.would_be_epsilon == math.inf


def test_with_default_accountant_never_above_budget():
    s = CollectionSession(5, 2.0, n_min=200, delta=1e-6, epsilon_budget=1.0, rng=3)
    first = s.would_be_epsilon(200)
    assert 0 < first <= s.randomizer.effective_eps0 * 1.001 + 1e-6
    s = CollectionSession(5, 2.0, n_min=200, delta=1e-6, epsilon_budget=1.05 * first, rng=3)
    refused = None
    for _ in range(20):
        s.submit(np.arange(200) % 5)
        try:
            rel = s.release()
        except BudgetExceededError as exc:
            refused = exc
            break
        assert rel.epsilon <= s.epsilon_budget
        assert s.privacy_spent().epsilon == rel.epsilon
    assert refused is not None and refused.would_be_epsilon > s.epsilon_budget
    assert s.privacy_spent().epsilon <= s.epsilon_budget
    assert s.privacy_spent().delta == 1e-6


def test_malformed_reports_rejected_valid_ones_kept():
    s = CollectionSession(
        ["a", "b", "c"], 1.0, n_min=4, delta=1e-6, rounds=1, accountant_factory=_factory(), rng=4
    )
    with pytest.raises(MalformedReportsError, match="3 malformed") as err:
        s.submit(["a", "zz", "b", 7, "c", None, "a"])
    assert err.value.accepted == 4
    assert [(r.position, r.reason) for r in err.value.rejected] == [
        (1, "unknown category"),
        (3, "wrong type (integer)"),
        (5, "wrong type (NoneType)"),
    ]
    assert s.pending == 4
    rel = s.release()
    assert rel.n == 4 and int(rel.histogram.sum()) == 4
    assert isinstance(err.value, ValueError)


def test_malformed_randomized_reports():
    s = CollectionSession(3, 1.0, n_min=1, delta=1e-6, rounds=1, accountant_factory=_factory())
    with pytest.raises(MalformedReportsError) as err:
        s.submit_randomized([0, 1, 3, True, 2])
    assert err.value.accepted == 3 and s.pending == 3
    rel = s.release()
    assert rel.histogram.tolist() == [1, 1, 1]  # already randomized: passed through as is


def test_small_batch_refused_and_kept():
    s = CollectionSession(3, 1.0, n_min=5, delta=1e-6, rounds=1, accountant_factory=_factory(), rng=0)
    s.submit([0, 1])
    with pytest.raises(BatchTooSmallError):
        s.release()
    assert s.pending == 2 and s.privacy_spent().rounds == 0
    s.submit([2, 2, 2])
    assert s.release().n == 5


def test_sequence_output_is_a_permutation_of_the_randomized_reports():
    s = CollectionSession(
        ["x", "y"], 1.0, n_min=3, delta=1e-6, rounds=1, output="sequence", accountant_factory=_factory()
    )
    s.submit_randomized(["x", "y", "y", "x", "y"])
    rel = s.release()
    assert sorted(rel.reports.tolist()) == ["x", "x", "y", "y", "y"]
    with pytest.raises(ValueError):
        rel.histogram[0] = 99  # released data is read-only
    assert rel.histogram.tolist() == [2, 3]


class ReversingShuffler:
    """Not uniform (deterministic), but satisfies the interface."""

    def shuffle(self, reports, *, rng=None):
        return np.asarray(reports)[::-1]


class DroppingShuffler:
    is_uniform = True

    def shuffle(self, reports, *, rng=None):
        return np.asarray(reports)[1:]


def test_custom_shufflers():
    s = CollectionSession(
        3, 1.0, n_min=2, delta=1e-6, rounds=2, shuffler=ReversingShuffler(), accountant_factory=_factory()
    )
    s.submit_randomized([0, 1, 1])
    assert s.release().histogram.tolist() == [1, 2, 0]
    with pytest.raises(ParameterError, match="shuffler"):
        CollectionSession(
            3, 1.0, n_min=2, delta=1e-6, rounds=1, shuffler=ReversingShuffler(), output="sequence"
        )
    bad = CollectionSession(
        3, 1.0, n_min=2, delta=1e-6, rounds=1, shuffler=DroppingShuffler(), accountant_factory=_factory()
    )
    bad.submit_randomized([0, 1, 2])
    with pytest.raises(RuntimeError, match="permutation"):
        bad.release()
    assert bad.privacy_spent().rounds == 0 and bad.pending == 3


def test_planned_and_would_be_epsilon():
    s = CollectionSession(3, 1.0, n_min=10, delta=1e-6, rounds=3, accountant_factory=_factory(0.25))
    assert s.planned_epsilon() == pytest.approx(0.75)
    assert s.would_be_epsilon(10) == pytest.approx(0.25)
    assert s.privacy_spent().epsilon == 0.0 and s.privacy_spent().delta == 0.0
    with pytest.raises(ParameterError, match="n"):
        s.would_be_epsilon()  # nothing pending
    t = CollectionSession(3, 1.0, n_min=10, delta=1e-6, epsilon_budget=1.0, accountant_factory=_factory())
    with pytest.raises(ParameterError, match="rounds"):
        t.planned_epsilon()


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(n_min=0), "n_min"),
        (dict(n_min=2.5), "n_min"),
        (dict(n_min=True), "n_min"),
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), "delta"),
        (dict(delta=float("nan")), "delta"),
        (dict(rounds=0), "rounds"),
        (dict(rounds=1.5), "rounds"),
        (dict(rounds=None, epsilon_budget=-1.0), "epsilon_budget"),
        (dict(epsilon_budget=float("inf")), "epsilon_budget"),
        (dict(epsilon_budget=True), "epsilon_budget"),
        (dict(rounds=None), "rounds and/or epsilon_budget"),
        (dict(output="both"), "output"),
        (dict(shuffler=object()), "shuffler"),
        (dict(accountant_factory=3), "accountant_factory"),
        (dict(rng=1.5), "rng"),
        (dict(eps0=float("nan")), "eps0"),
        (dict(categories=["a"]), "categories"),
    ],
)
def test_bad_parameters(kwargs, name):
    base = dict(categories=3, eps0=1.0, n_min=2, delta=1e-6, rounds=1)
    base.update(kwargs)
    with pytest.raises(ParameterError, match=name):
        CollectionSession(**base)


def test_mallows_shuffler_plugs_into_a_session():
    """The d_sigma MallowsShuffler goes through the same interface: allowed for histograms (the
    order is discarded, so the shuffled k-RR guarantee holds), refused for sequence output."""
    from shuffle_accounting.dsigma import MallowsShuffler

    groups = [[0, 1, 2], [0, 1, 2], [0, 1, 2], [3, 4, 5], [3, 4, 5], [3, 4, 5]]
    sh = MallowsShuffler(groups, alpha=2.0)
    s = CollectionSession(
        3, 1.0, n_min=6, delta=1e-6, rounds=2, shuffler=sh, accountant_factory=_factory(), rng=5
    )
    codes = [0, 1, 2, 2, 1, 0]
    s.submit_randomized(codes)
    r = s.release()
    assert r.histogram.tolist() == np.bincount(codes, minlength=3).tolist() and r.n == 6
    assert s.privacy_spent().rounds == 1
    with pytest.raises(ParameterError, match="uniform shuffler"):
        CollectionSession(3, 1.0, n_min=6, delta=1e-6, rounds=1, shuffler=sh, output="sequence")
