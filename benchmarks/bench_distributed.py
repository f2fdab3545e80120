"""Throughput of a private-mode histogram collection: single process vs Dask vs Spark (plain script).

    python benchmarks/bench_distributed.py [--n 10000000] [--partitions 16] [--backends single,dask1,dask2,spark2]

Every backend runs the same job: ``partitions`` partitions of true category codes, each generated
on the worker from its index (standing in for reading a file), randomized with k-RR in private mode
(OS CSPRNG) into exact counts, merged once per key and released through a ``CollectionSession``
(a fake constant accountant, so that the accounting's cost is not part of the measurement).
Cluster start-up is timed separately and excluded from reports/s. The reference computation
(``numpy.sort`` of 1e6 doubles, best of 5) is measured in the same run; ratios to it make runs on
differently loaded machines comparable.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from shuffle_accounting.runtime import CollectionSession
from shuffle_accounting.runtime.counts import collect_partitions

K = 15


class _FixedAccountant:
    def compose(self, event, count=1):
        return self

    def get_epsilon(self, delta):
        return 0.1


def make_partition(index: int, size: int) -> np.ndarray:
    """True codes of one partition (a stand-in for reading it from storage)."""
    return (np.arange(size, dtype=np.int64) * (index + 7)) % K


def _session(n: int) -> CollectionSession:
    return CollectionSession(K, 2.0, n, 1e-6, rounds=1, accountant_factory=_FixedAccountant)


def _reference() -> float:
    x = np.random.default_rng(0).random(1_000_000)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        np.sort(x)
        best = min(best, time.perf_counter() - t0)
    return best


def run_single(n: int, parts: int) -> tuple[float, float]:
    size = n // parts
    t0 = time.perf_counter()
    rel = collect_partitions(_session(n), (make_partition(i, size) for i in range(parts)))
    assert rel.n == n
    return 0.0, time.perf_counter() - t0


def run_dask(n: int, parts: int, workers: int) -> tuple[float, float]:
    import dask
    import dask.bag as db
    from distributed import Client, LocalCluster

    from shuffle_accounting.runtime import dask as rdask

    size = n // parts
    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    client.run(lambda: __import__("shuffle_accounting.runtime.counts"))  # warm the workers' imports
    start = time.perf_counter() - t0
    try:
        bag = db.from_delayed([dask.delayed(make_partition)(i, size) for i in range(parts)])
        t0 = time.perf_counter()
        rel = rdask.collect(_session(n), bag, client=client)
        took = time.perf_counter() - t0
    finally:
        client.close()
        cluster.close()
    assert rel.n == n
    return start, took


def run_spark(n: int, parts: int, cores: int) -> tuple[float, float]:
    from shuffle_accounting.runtime import spark as rspark

    size = n // parts
    t0 = time.perf_counter()
    spark = rspark.local_spark(cores, max_failures=2)
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    # start the Python workers and import the package in them (workers are reused across jobs)
    sc.parallelize(range(4 * cores), 4 * cores).map(
        lambda i: bool(__import__("shuffle_accounting.runtime.counts"))
    ).collect()
    start = time.perf_counter() - t0
    try:
        rdd = sc.parallelize(range(parts), parts).flatMap(lambda i: make_partition(i, size).tolist())
        t0 = time.perf_counter()
        rel = rspark.collect(_session(n), rdd)
        took = time.perf_counter() - t0
    finally:
        spark.stop()
    assert rel.n == n
    return start, took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e7)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--backends", default="single,dask1,dask2,spark2")
    ap.add_argument(
        "--smoke", action="store_true", help="n = 1e4 on the single-process backend (CI: the script runs)"
    )
    a = ap.parse_args()
    if a.smoke:
        a.n, a.partitions, a.backends = 1e4, 2, "single"
    n = int(a.n) // a.partitions * a.partitions
    warnings.simplefilter("ignore", FutureWarning)
    ref = _reference()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"cpu count {os.cpu_count()}, load {load:.1f}, numpy {np.__version__}, k={K}, n={n:.0e}, "
        f"partitions={a.partitions}, reference np.sort(1e6) {ref * 1e3:.1f} ms"
    )
    print(f"{'backend':<14} {'start s':>8} {'collect s':>10} {'reports/s':>12} {'collect/ref':>12}")
    for name in a.backends.split(","):
        if name == "single":
            start, took = run_single(n, a.partitions)
        elif name.startswith("dask"):
            start, took = run_dask(n, a.partitions, int(name[4:]))
        elif name.startswith("spark"):
            start, took = run_spark(n, a.partitions, int(name[5:]))
        else:
            raise SystemExit(f"unknown backend {name!r}")
        print(f"{name:<14} {start:>8.1f} {took:>10.2f} {n / took:>12.3g} {took / ref:>12.0f}")


if __name__ == "__main__":
    main()
