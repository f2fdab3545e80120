"""Speed of the re-identification module (Su, Cheng, Wang).

Run: ``.venv/bin/python benchmarks/bench_reidentification.py``. Prints a table of median wall times.
Target: exact beta_n for k-RR with k = 1000 categories and n = 1e6 well under a second.
``--smoke``: n = 1e4, one run per case (CI checks that the script runs; no figures).
"""

from __future__ import annotations

import math
import statistics
import sys
import time

import numpy as np

from shuffle_accounting import KRR, FiniteRandomizer
from shuffle_accounting.presentation.reidentification_report import risk_rows
from shuffle_accounting.reidentification import (
    ReidentificationRisk,
    success_probability,
    success_probability_continuous,
    zipf_uniform_success,
)


def _median_time(fn, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    smoke = "--smoke" in sys.argv
    big = 10**4 if smoke else 10**6  # the "n = 1e6" of the labels below
    repeat = 1 if smoke else 7
    r = KRR(1000, 2.0)
    m = r.matrix
    P, Q = m[0].copy(), m[1].copy()
    rng = np.random.default_rng(0)  # benchmark inputs only
    fr = FiniteRandomizer(rng.dirichlet(np.ones(200), size=50))
    cases = [
        ("beta_n k-RR k=1000 n=1e6 (arrays of 1000)", lambda: success_probability(P, Q, big)),
        ("beta_n k-RR k=1000 n=1e7", lambda: success_probability(P, Q, 10 * big)),
        ("beta_n^10 k-RR k=1000 n=1e6", lambda: success_probability(P, Q, big, guesses=10)),
        (
            "risk_rows(ReidentificationRisk(KRR(1000,2), 1e6))",
            lambda: risk_rows(ReidentificationRisk(r, big)),
        ),
        ("Zipf(0.7) vs uniform m=1e6, n=1e7", lambda: zipf_uniform_success(big, 0.7, 10 * big)),
        ("blanket bound, 50x200 matrix, max over x1, n=1e6", lambda: ReidentificationRisk(fr, big).bound()),
        (
            "exact worst case k-RR k=3 n=6 (enumeration)",
            lambda: ReidentificationRisk(KRR(3, 1.0), 6).exact_worst_case(),
        ),
        (
            "continuous Thm 2, U[0.5,1.5] ratio, n=1e6",
            lambda: success_probability_continuous(lambda t: min(1.0, max(0.0, t - 0.5)), big, upper=1.5),
        ),
    ]
    if smoke:
        print("smoke run: n = 1e4 wherever the labels say 1e6 (1e5 for 1e7)")
    print(f"{'case':<52} {'median s':>10}")
    for name, fn in cases:
        print(f"{name:<52} {_median_time(fn, repeat):>10.5f}")
    print(
        f"\nbeta_n(k-RR k=1000, eps0=2, n={big:.0e}) * n = {success_probability(P, Q, big) * big:.9f}"
        f"  (e^2 = {math.exp(2):.9f})"
    )


if __name__ == "__main__":
    main()
