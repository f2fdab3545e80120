"""Shuffler: exact uniform law (chi-square over all permutations), refusal of small batches, no drops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import chisquare

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.runtime import BatchTooSmallError, Shuffler, ShufflerLike, secure_permutation
from shuffle_accounting.runtime import shuffler as shuffler_mod

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")

PERMS = {p: i for i, p in enumerate(itertools.permutations(range(4)))}


def _perm_counts(draw, trials: int) -> np.ndarray:
    obs = np.zeros(len(PERMS), dtype=np.int64)
    for _ in range(trials):
        obs[PERMS[tuple(draw().tolist())]] += 1
    return obs


@pytest.mark.parametrize("method", ["sort", "fisher-yates"])
def test_private_shuffle_is_uniform_over_all_permutations(method):
    s = Shuffler(4, method=method)
    obs = _perm_counts(lambda: s.shuffle(np.arange(4)), 12_000)
    assert chisquare(obs).pvalue > 1e-6
    # power: the same counts are far from a law that favours the identity
    biased = np.full(24, 1.0)
    biased[0] = 3.0
    assert chisquare(obs, biased / biased.sum() * obs.sum()).pvalue < 1e-6


def test_simulation_shuffle_is_uniform_fixed_seed():
    s = Shuffler(4)
    gen = np.random.default_rng(12345)
    obs = _perm_counts(lambda: s.shuffle(np.arange(4), rng=gen), 12_000)
    assert chisquare(obs).pvalue > 1e-3


def test_position_law_of_a_large_private_shuffle():
    # where does element 0 land? uniform over 10 positions
    s = Shuffler(10)
    pos = [int(np.flatnonzero(s.shuffle(np.arange(10)) == 0)[0]) for _ in range(5000)]
    assert chisquare(np.bincount(pos, minlength=10)).pvalue > 1e-6


def test_refuses_small_batches_and_releases_nothing():
    s = Shuffler(min_batch=5)
    with pytest.raises(BatchTooSmallError, match="min_batch = 5"):
        s.shuffle([1, 2, 3, 4])
    with pytest.raises(BatchTooSmallError):
        s.histogram([0, 1], 2)
    with pytest.raises(BatchTooSmallError):
        s.shuffle([], rng=0)
    assert isinstance(BatchTooSmallError("x"), ParameterError)
    assert s.shuffle([1, 2, 3, 4, 5]).size == 5


@pytest.mark.parametrize("rng", [None, 3])
def test_drops_nothing_and_keeps_types(rng):
    s = Shuffler(1)
    x = np.random.default_rng(0).integers(0, 7, 1000)
    out = s.shuffle(x, rng=rng)
    assert np.array_equal(np.sort(out), np.sort(x))
    mixed = [1, "1", 2.5, None, (1, 2)]
    out = s.shuffle(mixed, rng=rng)
    assert sorted(map(repr, out.tolist())) == sorted(map(repr, mixed))
    labels = ["a", "b", "b", "c"]
    assert sorted(s.shuffle(labels, rng=rng).tolist()) == labels


def test_sort_method_redraws_on_ties(monkeypatch):
    calls = []
    real = shuffler_mod.random_uint64

    def fake(n, rng):
        calls.append(n)
        return np.zeros(n, dtype=np.uint64) if len(calls) == 1 else real(n, rng)

    monkeypatch.setattr(shuffler_mod, "random_uint64", fake)
    out = secure_permutation(50, method="sort")
    assert len(calls) == 2
    assert sorted(out.tolist()) == list(range(50))


def test_histogram_output_and_protocol():
    s = Shuffler(3)
    assert s.histogram([2, 0, 2, 1], 3).tolist() == [1, 1, 2]
    assert isinstance(s, ShufflerLike)
    assert Shuffler.is_uniform is True
    assert secure_permutation(0).size == 0 and secure_permutation(1).tolist() == [0]
    assert sorted(secure_permutation(7, method="fisher-yates").tolist()) == list(range(7))


@pytest.mark.parametrize("min_batch", [0, -1, 1.5, True, "3", None, float("nan")])
def test_bad_min_batch(min_batch):
    with pytest.raises(ParameterError, match="min_batch"):
        Shuffler(min_batch)


def test_bad_arguments():
    with pytest.raises(ParameterError, match="method"):
        Shuffler(2, method="bogus")
    with pytest.raises(ParameterError, match="reports"):
        Shuffler(1).shuffle("abc")
    with pytest.raises(ParameterError, match="reports"):
        Shuffler(1).shuffle(5)
    with pytest.raises(ParameterError, match="reports"):
        Shuffler(1).shuffle(np.zeros((2, 2)))
    with pytest.raises(ParameterError, match="rng"):
        Shuffler(1).shuffle([1, 2], rng=2.0)
    with pytest.raises(ParameterError, match="n"):
        secure_permutation(-1)
    with pytest.raises(ParameterError, match="codes"):
        Shuffler(1).histogram([0, 5], 3)
