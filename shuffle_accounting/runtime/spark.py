"""Spark backend: a shuffled k-RR histogram collection over a Spark DataFrame column or RDD.

Install the extra: ``pip install "shuffle-accounting[spark]"`` (``pyspark``; Spark needs Java 17+).

:func:`collect` is the map-reduce of :mod:`shuffle_accounting.runtime.counts` on Spark: one task per
partition (``mapPartitionsWithIndex``) randomizes the partition's true values with the session's
:class:`~shuffle_accounting.runtime.KRRRandomizer` and returns ``k`` exact integer counts keyed by
the partition index; the driver merges each key once and releases the merged batch through
:meth:`CollectionSession.release_counts <shuffle_accounting.runtime.CollectionSession.release_counts>`
(nothing below ``n_min`` or over budget; the same :class:`~shuffle_accounting.runtime.Release` as
the single-process runtime). A failed task is rerun by Spark (``spark.task.maxFailures``; in local
mode set it with :func:`local_spark`'s ``max_failures``) and ``collect()`` returns one successful
attempt per partition; the keyed merge counts each partition once anyway. In private mode
(``rng=None``) every Python worker draws from its own OS CSPRNG; with a seed, partition ``i``
draws from ``SeedSequence(entropy, spawn_key=(i,))``, so the counts equal
:func:`~shuffle_accounting.runtime.counts.collect_partitions` on the same partitions.

The Python workers must be able to import ``shuffle_accounting`` (same environment as the driver).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .._validation import ParameterError, check_int
from .counts import (
    CountsMerger,
    PartitionCounts,
    check_counts_session,
    randomize_partition,
    simulation_entropy,
)
from .randomizer import KRRRandomizer

__all__ = ["collect", "local_spark", "require_spark"]

_INSTALL = 'the Spark backend needs the extra "spark": pip install "shuffle-accounting[spark]" (and Java 17+)'


def require_spark() -> Any:
    """Import and return ``pyspark``, or raise an ``ImportError`` that says how to install it.

    Raises:
        ImportError: If ``pyspark`` is not installed.

    Example:
        >>> require_spark().__name__
        'pyspark'
    """
    try:
        import pyspark  # noqa: PLC0415
        import pyspark.sql  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(f"{_INSTALL} ({exc})") from exc
    return pyspark


def local_spark(
    cores: int | str = "*", *, max_failures: int = 4, app_name: str = "shuffle-accounting"
) -> Any:
    """A local SparkSession (``local[cores, max_failures]``) whose Python workers use this interpreter.

    Sets the environment variable ``PYSPARK_PYTHON`` to ``sys.executable`` if it is not set (pyspark
    reads it when the SparkContext starts).

    Args:
        cores: Number of worker threads, integer ``>= 1`` or ``"*"`` (all cores; the default).
        max_failures: Attempts per task before the job fails, integer ``>= 1`` (local mode's
            default is 1, no retry; 4 matches a cluster's default).
        app_name: Spark application name.

    Returns:
        The ``pyspark.sql.SparkSession`` (``getOrCreate``: an active session is reused).

    Raises:
        ParameterError: If an argument is invalid.
        ImportError: If the ``spark`` extra is not installed.

    Example:
        >>> spark = local_spark(1, max_failures=2)  # doctest: +SKIP
    """
    if cores != "*":
        cores = check_int("cores", cores, minimum=1, maximum=4096)
    max_failures = check_int("max_failures", max_failures, minimum=1, maximum=1000)
    if not isinstance(app_name, str) or not app_name:
        raise ParameterError(f"app_name must be a non-empty string, got {app_name!r}")
    require_spark()
    from pyspark.sql import SparkSession  # noqa: PLC0415

    # pyspark starts its Python workers with $PYSPARK_PYTHON (default "python3", maybe another
    # environment without this package): point it at this interpreter unless the user chose one.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.master(f"local[{cores},{max_failures}]")
        .appName(app_name)
        .config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate()
    )


def _count_partition(
    index: int, values: Iterable[Any], *, randomizer: KRRRandomizer, entropy: int | None
) -> Iterator[tuple[int, list[int], int, bool]]:
    """The Spark task for one partition: yields one ``(key, counts, rejected, simulated)`` tuple."""
    part = randomize_partition(randomizer, list(values), key=index, entropy=entropy)
    yield (part.key, part.counts.tolist(), part.rejected, part.simulated)


def _first(row: Any) -> Any:
    return row[0]


def collect(session: Any, data: Any, *, column: Any = None, rng: Any = None) -> Any:
    """Run a histogram collection on Spark and release it as one round of ``session``.

    Args:
        session: A :class:`~shuffle_accounting.runtime.CollectionSession` with ``output="histogram"``.
        data: A ``pyspark.sql.DataFrame`` (with ``column``) or a ``pyspark.RDD`` of true values.
            Use :func:`local_spark` for a local session (``local[*]``).
        column: The DataFrame column holding the true values.
        rng: ``None`` (private mode: OS CSPRNG on every worker) or a seed / numpy Generator
            (simulation mode, NOT private).

    Returns:
        The session's :class:`~shuffle_accounting.runtime.Release` (``simulated`` as drawn).

    Raises:
        BatchTooSmallError: If fewer than ``n_min`` reports were collected (nothing released).
        BudgetExceededError: If the round would exceed the budget (nothing released).
        ParameterError: If an argument is invalid.
        ImportError: If the ``spark`` extra is not installed.

    Example:
        >>> from shuffle_accounting.runtime import CollectionSession
        >>> spark = local_spark(2)  # doctest: +SKIP
        >>> df = spark.createDataFrame([("a",), ("b",), ("b",)], ["city"])  # doctest: +SKIP
        >>> s = CollectionSession(["a", "b"], 1.0, n_min=3, delta=1e-6, rounds=1)
        >>> collect(s, df, column="city").n  # doctest: +SKIP
        3
    """
    randomizer = check_counts_session(session)
    entropy = simulation_entropy(rng)
    require_spark()
    from pyspark import RDD  # noqa: PLC0415
    from pyspark.sql import DataFrame  # noqa: PLC0415

    if isinstance(data, DataFrame):
        if not isinstance(column, str) or column not in data.columns:
            raise ParameterError(f"column must name a column of the DataFrame {data.columns}, got {column!r}")
        rdd = data.select(column).rdd.map(_first)
    elif isinstance(data, RDD):
        rdd = data
    else:
        raise ParameterError(f"data must be a pyspark DataFrame or RDD, got {type(data).__name__}")
    task = functools.partial(_count_partition, randomizer=randomizer, entropy=entropy)
    results = rdd.mapPartitionsWithIndex(task).collect()
    merger = CountsMerger(randomizer)
    for key, counts, rejected, simulated in results:
        arr = np.asarray(counts, dtype=np.int64)
        arr.setflags(write=False)
        merger.add(PartitionCounts(key, arr, rejected, randomizer.k, randomizer.keep_threshold, simulated))
    return session.release_counts(merger)
