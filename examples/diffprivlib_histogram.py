"""Call from diffprivlib: a shuffled histogram that spends a diffprivlib BudgetAccountant.

Run:  python examples/diffprivlib_histogram.py      (needs the ``diffprivlib`` extra)

``shuffled_histogram`` takes the central ``epsilon`` a diffprivlib user already thinks in: the
local eps0 of k-RR is calibrated so that the shuffled release is certified (epsilon, delta)-DP,
the accountant is checked before and charged after the release, and the result has the shape of
``diffprivlib.tools.histogram``. ``random_state=None`` (the default) is private; the seed below is
a warned, NOT private simulation so that the script's output is reproducible. ``n_rounds=R``
releases R histograms whose composition (calibrated tightly, slower) spends ``epsilon`` once.
"""

from __future__ import annotations

import warnings

from diffprivlib.accountant import BudgetAccountant

from shuffle_accounting.adapters.diffprivlib import shuffled_histogram

N = 1_000


def main() -> None:
    sample = ["a"] * 600 + ["b"] * 300 + ["c"] * (N - 900)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded run warns that it is not private
        hist, cats = shuffled_histogram(
            sample, 0.5, delta=1e-6, categories=["a", "b", "c"], accountant=acc, random_state=0
        )
    print("histogram:", dict(zip(cats.tolist(), hist.tolist())))
    spent_eps, spent_delta = acc.total()
    print(f"accountant spent: epsilon={spent_eps:.4f}, delta={spent_delta:g} (budget 1.0, 1e-5)")
    assert int(hist.sum()) == N and spent_eps <= 0.5


if __name__ == "__main__":
    main()
