"""Spark backend (local mode): same counts as the single-process run, retried failures, budget checks.

One module-scoped local SparkSession (starting it costs ~10 s); every test runs few, small jobs.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip(
        "Spark needs Java (install a JDK, e.g. Debian's openjdk-17-jre-headless)", allow_module_level=True
    )

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.runtime import BatchTooSmallError, BudgetExceededError, CollectionSession
from shuffle_accounting.runtime import spark as rspark
from shuffle_accounting.runtime.counts import collect_partitions

pytestmark = [
    pytest.mark.slow,  # a local Spark session starts in ~10 s
    pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning"),
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]

CATS = ["x", "y", "z"]
VALUES = [CATS[(i * i) % 3] for i in range(2000)] + ["bad", None]  # two malformed values
N = 2000


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
def spark():
    session = rspark.local_spark(2, max_failures=2)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def rdd(spark):
    return spark.sparkContext.parallelize(VALUES, 4)


def test_spark_equals_single_process_for_the_same_seed(spark, rdd):
    ref = collect_partitions(_session(), rdd.glom().collect(), rng=77)
    rel = rspark.collect(_session(), rdd, rng=77)
    assert rel.simulated and rel.histogram.tolist() == ref.histogram.tolist()
    assert rel.n == N == int(rel.histogram.sum())
    df = spark.createDataFrame([(v,) for v in VALUES], ["city"]).repartition(3)
    private = rspark.collect(_session(), df, column="city")
    assert not private.simulated and private.n == N


def test_a_partition_that_fails_is_retried_and_counted_once(rdd, tmp_path):
    marker_dir = str(tmp_path)

    def flaky(index, values):  # a closure: shipped to the Python workers by value
        marker = os.path.join(marker_dir, f"failed{index}")
        if index in (0, 2) and not os.path.exists(marker):
            open(marker, "w").close()
            raise OSError(f"executor lost partition {index}")
        return values

    ref = collect_partitions(_session(), rdd.glom().collect(), rng=5)
    rel = rspark.collect(_session(), rdd.mapPartitionsWithIndex(flaky, preservesPartitioning=True), rng=5)
    assert sorted(os.listdir(marker_dir)) == ["failed0", "failed2"]  # the failures did happen
    assert rel.histogram.tolist() == ref.histogram.tolist() and rel.n == N  # exact


def test_below_n_min_and_over_budget_nothing_is_released(rdd):
    s = _session(n_min=N + 1)
    with pytest.raises(BatchTooSmallError):
        rspark.collect(s, rdd)
    assert s.releases == ()
    s = _session(rounds=None, epsilon_budget=0.15)
    rspark.collect(s, rdd)
    with pytest.raises(BudgetExceededError):
        rspark.collect(s, rdd)
    assert len(s.releases) == 1 and s.privacy_spent().epsilon <= 0.15


def test_bad_arguments(spark):
    s = _session()
    with pytest.raises(ParameterError, match="data must be"):
        rspark.collect(s, VALUES)
    df = spark.createDataFrame([("x",)], ["city"])
    for col in [None, "town", 0]:
        with pytest.raises(ParameterError, match="column"):
            rspark.collect(s, df, column=col)
    with pytest.raises(ParameterError, match="rng"):
        rspark.collect(s, df, column="city", rng=1.5)
    with pytest.raises(ParameterError, match="cores"):
        rspark.local_spark(0)
    with pytest.raises(ParameterError, match="max_failures"):
        rspark.local_spark(2, max_failures=True)


def test_missing_extra_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(ImportError, match=r"shuffle-accounting\[spark\]"):
        rspark.require_spark()
