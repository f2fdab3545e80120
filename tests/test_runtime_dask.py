"""Dask backend: same counts as the single-process run, exact under failures, budget checks, shuffle."""

from __future__ import annotations

import itertools
import os
import sys

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

import dask
import dask.bag as db
import dask.dataframe as dd
import pandas as pd
from distributed import Client

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.runtime import BatchTooSmallError, BudgetExceededError, CollectionSession
from shuffle_accounting.runtime import dask as rdask
from shuffle_accounting.runtime.counts import collect_partitions

pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")

CATS = ["x", "y", "z", "w"]
rs = np.random.default_rng(0)  # test data only
PARTS = [list(rs.choice(CATS, size=int(m))) for m in (300, 1, 0, 250, 499)]
N = sum(map(len, PARTS))


class Linear:
    def __init__(self):
        self.r = 0

    def compose(self, event, count=1):
        self.r += count

    def get_epsilon(self, delta):
        return 0.1 * self.r


def _session(**kw):
    kw.setdefault("rounds", 1)
    return CollectionSession(CATS, 1.0, kw.pop("n_min", 100), 1e-6, accountant_factory=Linear, **kw)


@pytest.fixture(scope="module")
def client():
    with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as c:
        yield c


def _bag(parts):
    return db.from_delayed([dask.delayed(list)(p) for p in parts])


def test_distributed_equals_single_process_for_the_same_seed(client):
    ref = collect_partitions(_session(), PARTS, rng=2024)
    rel = rdask.collect(_session(), _bag(PARTS), client=client, rng=2024)
    assert rel.simulated and rel.histogram.tolist() == ref.histogram.tolist()
    assert rel.n == N == int(rel.histogram.sum())
    series = dd.from_delayed(
        [dask.delayed(pd.Series)(p, dtype=object) for p in PARTS], meta=pd.Series([], dtype=object)
    )
    rel2 = rdask.collect(_session(), series, client=client, rng=2024)
    assert rel2.histogram.tolist() == ref.histogram.tolist()
    frame = series.to_frame(name="city")
    assert rdask.collect(_session(), frame, column="city", client=client, rng=2024).histogram.tolist() == (
        ref.histogram.tolist()
    )


def test_private_mode_counts_sum_to_the_reports(client):
    rel = rdask.collect(_session(), _bag(PARTS), client=client)
    assert not rel.simulated and rel.n == N and rel.round == 1


def test_csv_files_one_partition_each(client, tmp_path):
    paths = []
    for i, part in enumerate(PARTS):
        f = tmp_path / f"p{i}.csv"
        f.write_text("city,age\n" + "".join(f"{v},1\n" for v in part) + ",2\n")  # one empty cell each
        paths.append(f)
    ref = collect_partitions(_session(), PARTS, rng=3)
    rel = rdask.collect(_session(), paths, column="city", client=client, rng=3)
    assert rel.histogram.tolist() == ref.histogram.tolist()  # empty cells skipped (malformed)


def _load_once_failing(part, marker):
    """Load a partition; the first attempt fails when ``marker`` is given (a file records it)."""
    if marker is not None and not os.path.exists(marker):
        open(marker, "w").close()
        raise OSError(f"worker lost partition {marker}")
    return list(part)


def _flaky(parts, fail_keys, tmp_path):
    """Partitions whose loading fails the first time for each key in ``fail_keys``."""
    markers = {i: str(tmp_path / f"failed{i}") for i in fail_keys}
    bag = db.from_delayed(
        [dask.delayed(_load_once_failing, pure=False)(p, markers.get(i)) for i, p in enumerate(parts)]
    )
    return bag, lambda: {i for i, f in markers.items() if os.path.exists(f)}


def test_a_partition_that_fails_is_retried_and_counted_once(client, tmp_path):
    ref = collect_partitions(_session(), PARTS, rng=11)
    bag, failed = _flaky(PARTS, {0, 3}, tmp_path / "a")
    (tmp_path / "a").mkdir()
    rel = rdask.collect(_session(), bag, client=client, rng=11, retries=2)
    assert failed() == {0, 3}
    assert rel.histogram.tolist() == ref.histogram.tolist() and rel.n == N  # exact: nothing lost or doubled
    (tmp_path / "b").mkdir()
    bag, failed = _flaky(PARTS, {4}, tmp_path / "b")
    assert rdask.collect(_session(), bag, client=client, retries=1).n == N  # private mode too
    assert failed() == {4}


def test_without_retries_a_failure_releases_nothing(client, tmp_path):
    s = _session()
    bag, _ = _flaky(PARTS, {1}, tmp_path)
    with pytest.raises(OSError, match="lost partition"):
        rdask.collect(s, bag, client=client, retries=0)
    assert s.releases == () and s.privacy_spent().rounds == 0


def _die_once(values, marker):
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)  # the worker process dies mid-collection
    return list(values)


@pytest.mark.filterwarnings("ignore:Port .* is already in use:UserWarning")
def test_a_worker_killed_mid_collection_still_gives_the_exact_release(tmp_path):
    from distributed import LocalCluster

    ref = collect_partitions(_session(), PARTS, rng=5)
    marker = str(tmp_path / "died")
    bag = db.from_delayed([dask.delayed(_die_once, pure=False)(p, marker) for p in PARTS])
    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as c,
    ):
        rel = rdask.collect(_session(), bag, client=c, rng=5)
    assert os.path.exists(marker)
    assert rel.histogram.tolist() == ref.histogram.tolist() and rel.n == N


def test_below_n_min_and_over_budget_nothing_is_released(client):
    s = _session(n_min=N + 1)
    with pytest.raises(BatchTooSmallError):
        rdask.collect(s, _bag(PARTS), client=client)
    assert s.releases == ()
    s = _session(rounds=1)
    rdask.collect(s, _bag(PARTS), client=client)
    with pytest.raises(BudgetExceededError):
        rdask.collect(s, _bag(PARTS), client=client)
    assert len(s.releases) == 1


def test_bad_arguments(client):
    s = _session()
    for bad in [[1, 2], [], "file.csv", np.arange(3)]:
        with pytest.raises(ParameterError, match="data must be"):
            rdask.collect(s, bad, client=client, column=0)
    with pytest.raises(ParameterError, match="column"):
        rdask.collect(s, ["a.csv"], client=client)
    with pytest.raises(ParameterError, match="column"):
        rdask.collect(s, dd.from_pandas(pd.DataFrame({"a": CATS}), npartitions=1), column="b", client=client)
    with pytest.raises(ParameterError, match="client"):
        rdask.collect(s, _bag(PARTS), client="local")
    with pytest.raises(ParameterError, match="retries"):
        rdask.collect(s, _bag(PARTS), client=client, retries=-1)
    with pytest.raises(ParameterError, match="rng"):
        rdask.collect(s, _bag(PARTS), client=client, rng=True)
    with pytest.raises(ParameterError, match="histogram"):
        rdask.collect(
            CollectionSession(CATS, 1.0, 1, 1e-6, rounds=1, output="sequence"), _bag(PARTS), client=client
        )


def test_missing_extra_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"shuffle-accounting\[dask\]"):
        rdask.require_dask()


@pytest.mark.parametrize("rng", [1234, None])
def test_uniform_shuffle_is_a_uniform_permutation(rng, client):
    # Disjoint triples of a uniform permutation have independent uniform relative orders, so one
    # shuffle of 3 m items gives m samples of a uniform permutation of 3 (each triple spans partitions).
    m = 600
    data = db.from_sequence(range(3 * m), npartitions=4)
    out = rdask.uniform_shuffle(data, rng=rng).compute().to_numpy()  # on the distributed client
    assert sorted(out.tolist()) == list(range(3 * m))
    pos = np.empty(3 * m, dtype=np.int64)
    pos[out] = np.arange(3 * m)
    triples = np.stack([pos[:m], pos[m : 2 * m], pos[2 * m :]], axis=1)
    patterns = [tuple(np.argsort(t)) for t in triples]
    observed = np.array([patterns.count(p) for p in itertools.permutations(range(3))])
    chi2 = float(((observed - m / 6) ** 2 / (m / 6)).sum())
    assert chi2 < 35.9  # chi-square, 5 d.o.f., p = 1e-6
    start = np.arange(3 * m) // (3 * m // 4 + 1)  # input partition of each item (roughly)
    for p in range(4):  # no partition's items are biased towards the front or the back
        assert abs(pos[start == p].mean() / (3 * m - 1) - 0.5) < 0.1


def test_uniform_shuffle_bad_input():
    with pytest.raises(ParameterError, match="data"):
        rdask.uniform_shuffle([1, 2, 3])
    with pytest.raises(ParameterError, match="max_attempts"):
        rdask.uniform_shuffle(db.from_sequence([1]), max_attempts=0)


def test_tied_shuffle_keys_are_redrawn(client, monkeypatch):
    import shuffle_accounting._rng as rng_module

    real = rng_module.random_uint64
    calls = []

    def first_calls_tie(size, gen):  # the first two partitions' keys of attempt 0 are all zero
        calls.append(size)
        return np.zeros(size, dtype=np.uint64) if len(calls) <= 2 else real(size, gen)

    monkeypatch.setattr(rng_module, "random_uint64", first_calls_tie)
    out = rdask.uniform_shuffle(db.from_sequence(range(40), npartitions=4)).compute().tolist()
    assert sorted(out) == list(range(40)) and len(calls) >= 8  # a second attempt ran
    monkeypatch.setattr(rng_module, "random_uint64", lambda size, gen: np.zeros(size, dtype=np.uint64))
    with pytest.raises(RuntimeError, match="tied 2 times"):
        rdask.uniform_shuffle(db.from_sequence(range(10), npartitions=2), max_attempts=2)


def test_private_runs_never_reuse_earlier_randomized_counts(client):
    bag = _bag(PARTS)  # the same graph three times on the same client
    hists = [tuple(rdask.collect(_session(), bag, client=client).histogram.tolist()) for _ in range(3)]
    assert len(set(hists)) > 1  # equal by chance with probability ~1e-10
