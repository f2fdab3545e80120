"""Dask backend: a shuffled k-RR histogram collection over a dask column, bag or list of files.

Install the extra: ``pip install "shuffle-accounting[dask]"`` (``dask[dataframe,distributed]``).

:func:`collect` is the map-reduce of :mod:`shuffle_accounting.runtime.counts` on a Dask cluster:
one task per partition randomizes the partition's true values with the session's
:class:`~shuffle_accounting.runtime.KRRRandomizer` and returns ``k`` exact integer counts keyed by
the partition index; the driver merges each key once (:class:`~shuffle_accounting.runtime.counts.CountsMerger`)
and releases the merged batch through :meth:`CollectionSession.release_counts
<shuffle_accounting.runtime.CollectionSession.release_counts>` — so nothing is released below
``n_min`` or over budget, and the release is the same :class:`~shuffle_accounting.runtime.Release`
as the single-process runtime's. A task that fails (an exception, a worker that dies) is rerun by
Dask (``retries``; tasks of a dead worker are rescheduled by the scheduler); its counts are a pure
function of the partition (and, in simulation, of the seed and key), and each key is merged once,
so no report is lost or counted twice. In private mode (``rng=None``) every worker draws from its
own OS CSPRNG.

:func:`uniform_shuffle` releases the shuffled reports themselves (sequence output): every report
gets a uniform 128-bit random key, and the collection is sorted by key; keys are redrawn if two
tie, so the permutation is exactly uniform.
"""

from __future__ import annotations

import os
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
from .simulation import read_csv_column

__all__ = ["collect", "uniform_shuffle", "require_dask"]

_INSTALL = 'the Dask backend needs the extra "dask": pip install "shuffle-accounting[dask]"'


def require_dask() -> Any:
    """Import and return ``dask``, or raise an ``ImportError`` that says how to install it.

    Raises:
        ImportError: If ``dask[dataframe,distributed]`` is not installed.

    Example:
        >>> require_dask().__name__
        'dask'
    """
    try:
        import dask  # noqa: PLC0415
        import dask.bag  # noqa: PLC0415
        import distributed  # noqa: F401, PLC0415
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching in the tests
        raise ImportError(f"{_INSTALL} ({exc})") from exc
    return dask


def _count_values(values: Any, randomizer: KRRRandomizer, key: int, entropy: int | None) -> PartitionCounts:
    """The task run on a worker for one partition (a pandas Series, a list, an array)."""
    if hasattr(values, "to_numpy"):
        values = values.to_numpy()
    return randomize_partition(randomizer, values, key=key, entropy=entropy)


def _read_file(path: Any, column: Any, header: bool) -> list:
    return read_csv_column(path, column, header=header, strict=False)


def _partitions(data: Any, column: Any, header: bool) -> list:
    """Delayed objects, one per partition, of the data's true values."""
    dask = require_dask()
    import dask.bag as db  # noqa: PLC0415

    if isinstance(data, (list, tuple)):
        if not data or not all(isinstance(p, (str, os.PathLike)) for p in data):
            raise ParameterError(
                "data must be a dask DataFrame/Series, a dask Bag or a non-empty list of CSV file paths, "
                f"got {type(data).__name__} of {[type(p).__name__ for p in data][:3]}"
            )
        if column is None:
            raise ParameterError(
                "column must be given (name or 0-based index) for a list of CSV files, got None"
            )
        return [dask.delayed(_read_file, pure=True)(p, column, header) for p in data]
    if isinstance(data, db.Bag):
        return list(data.to_delayed())
    try:
        import dask.dataframe as dd  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover
        raise ImportError(f"{_INSTALL} ({exc})") from exc
    if isinstance(data, dd.DataFrame):
        if column is None or column not in data.columns:
            raise ParameterError(
                f"column must name a column of the DataFrame {list(data.columns)}, got {column!r}"
            )
        data = data[column]
    if isinstance(data, dd.Series):
        return list(data.to_delayed())
    raise ParameterError(
        "data must be a dask DataFrame/Series, a dask Bag or a non-empty list of CSV file paths, "
        f"got {type(data).__name__}"
    )


def _client(client: Any) -> tuple[Any, Any]:
    """``(client, owned)``: the user's client, or a fresh LocalCluster's (closed after the run)."""
    require_dask()
    from distributed import Client, LocalCluster  # noqa: PLC0415

    if client is None:
        cluster = LocalCluster(processes=True, dashboard_address=None)
        return Client(cluster), cluster
    if not isinstance(client, Client):
        raise ParameterError(f"client must be a distributed.Client or None, got {type(client).__name__}")
    return client, None


def collect(
    session: Any,
    data: Any,
    *,
    column: Any = None,
    client: Any = None,
    rng: Any = None,
    retries: int = 3,
    header: bool = True,
) -> Any:
    """Run a histogram collection on Dask and release it as one round of ``session``.

    Args:
        session: A :class:`~shuffle_accounting.runtime.CollectionSession` with ``output="histogram"``.
        data: The true values: a ``dask.dataframe`` Series, a DataFrame (with ``column``), a
            ``dask.bag`` Bag, or a list of CSV file paths (one partition per file, read on the
            workers; empty cells are malformed reports).
        column: Column name (DataFrame, CSV with header) or 0-based index (CSV).
        client: A ``distributed.Client`` of any cluster; ``None`` starts a ``LocalCluster`` for the
            call and closes it afterwards.
        rng: ``None`` (private mode: OS CSPRNG on every worker) or a seed / numpy Generator
            (simulation mode, NOT private; the counts equal
            :func:`~shuffle_accounting.runtime.counts.collect_partitions` on the same partitions).
        retries: How many times Dask reruns a failed task, integer ``>= 0``.
        header: Whether the CSV files have a header row.

    Returns:
        The session's :class:`~shuffle_accounting.runtime.Release` (``simulated`` as drawn).

    Raises:
        BatchTooSmallError: If fewer than ``n_min`` reports were collected (nothing released).
        BudgetExceededError: If the round would exceed the budget (nothing released).
        ParameterError: If an argument is invalid.
        ImportError: If the ``dask`` extra is not installed.

    Example:
        >>> import dask.bag as db
        >>> from distributed import Client
        >>> from shuffle_accounting.runtime import CollectionSession
        >>> s = CollectionSession(["a", "b"], 1.0, n_min=5, delta=1e-6, rounds=1)
        >>> with Client(processes=False, dashboard_address=None) as c:
        ...     rel = collect(s, db.from_sequence(["a", "b", "b", "a", "a", "b"], npartitions=3), client=c)
        >>> rel.n, int(rel.histogram.sum())
        (6, 6)
    """
    randomizer = check_counts_session(session)
    retries = check_int("retries", retries, minimum=0, maximum=100)
    if not isinstance(header, bool):
        raise ParameterError(f"header must be a boolean, got {header!r}")
    entropy = simulation_entropy(rng)
    parts = _partitions(data, column, header)
    dask = require_dask()
    # pure=False: fresh task keys on every call, so a private-mode run never reuses the randomized
    # counts of an earlier run still held by the cluster.
    tasks = [
        dask.delayed(_count_values, pure=False)(part, randomizer, key, entropy)
        for key, part in enumerate(parts)
    ]
    client, cluster = _client(client)
    try:
        futures = client.compute(tasks, retries=retries)
        results = client.gather(futures)
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
    merger = CountsMerger(randomizer)
    for res in results:
        merger.add(res)
    return session.release_counts(merger)


def _keyed(values: Any, partition_info: Any = None, entropy: int | None = None, attempt: int = 0) -> Any:
    """Attach a uniform 128-bit key (two uint64 columns) to each value of one partition."""
    import pandas as pd  # noqa: PLC0415

    from .._rng import random_uint64  # noqa: PLC0415

    n = len(values)
    if entropy is None:
        keys = random_uint64(2 * n, None)
    else:
        index = 0 if partition_info is None else int(partition_info["number"])
        gen = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(attempt, index)))
        keys = random_uint64(2 * n, gen)
    vals = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
    return pd.DataFrame({"k1": keys[:n], "k2": keys[n:], "value": vals})


def uniform_shuffle(data: Any, *, rng: Any = None, max_attempts: int = 8) -> Any:
    """A uniformly random permutation of a distributed collection of reports (sequence output).

    Runs on Dask's current scheduler (the default ``distributed.Client`` if one is active).
    Every report gets a uniform 128-bit key (two 64-bit words from the OS CSPRNG on each worker in
    private mode), the collection is sorted by key (a distributed shuffle + sort), and if any two
    keys tie (probability ``<= n^2 / 2^129``, about ``1.5e-19`` at ``n = 1e10``; 64-bit keys
    would tie with probability near 1 there) all keys are redrawn. Given distinct i.i.d. keys every order is equally
    likely, and rejecting the symmetric event "some tie" keeps it so: the permutation is exactly
    uniform. Use it when the shuffled reports themselves are released (e.g. for Mallows /
    d_sigma post-processing); a histogram release needs no shuffle (:func:`collect`).

    Args:
        data: A ``dask.dataframe`` Series or a ``dask.bag`` Bag of reports.
        rng: ``None`` (private mode) or a seed / numpy Generator (simulation, NOT private).
        max_attempts: Redraws allowed on key ties before giving up, integer ``>= 1``.

    Returns:
        A ``dask.dataframe`` Series of the same reports in uniformly random order (lazy).

    Raises:
        ParameterError: If an argument is invalid.
        RuntimeError: If keys tied ``max_attempts`` times in a row (practically impossible).
        ImportError: If the ``dask`` extra is not installed.

    Example:
        >>> import dask, dask.bag as db
        >>> with dask.config.set(scheduler="sync"):
        ...     out = uniform_shuffle(db.from_sequence(range(10), npartitions=3)).compute()
        >>> sorted(out.tolist())
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    require_dask()
    import dask.bag as db  # noqa: PLC0415
    import dask.dataframe as dd  # noqa: PLC0415

    max_attempts = check_int("max_attempts", max_attempts, minimum=1, maximum=1000)
    entropy = simulation_entropy(rng)
    if isinstance(data, db.Bag):
        data = data.to_dataframe(columns=["value"])["value"]
    if not isinstance(data, dd.Series):
        raise ParameterError(f"data must be a dask Series or Bag, got {type(data).__name__}")
    meta = {"k1": "u8", "k2": "u8", "value": data.dtype}
    dask = require_dask()
    for attempt in range(max_attempts):
        keyed = data.map_partitions(_keyed, entropy=entropy, attempt=attempt, meta=meta).persist()
        n, distinct = dask.compute(keyed["k1"].size, keyed[["k1", "k2"]].drop_duplicates().shape[0])
        if int(n) == int(distinct):
            return keyed.sort_values(["k1", "k2"])["value"]
    raise RuntimeError(f"128-bit shuffle keys tied {max_attempts} times in a row; nothing shuffled")
