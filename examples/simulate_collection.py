"""Simulate a collection: randomizer, shuffler, analyzer and a budgeted session, end to end.

Run:  python examples/simulate_collection.py

A ``CollectionSession`` certifies the cumulative (eps, delta) over its rounds and refuses a
round over budget or a batch below ``n_min``. ``rng=None`` is private mode (OS CSPRNG). The
seed used here selects **simulation mode: reproducible and NOT private** (it warns, and every
release says ``simulated=True``): use it to rehearse a deployment, never on real data.
"""

from __future__ import annotations

import warnings

import numpy as np

from shuffle_accounting.runtime import BudgetExceededError, CollectionSession, project_simplex

LABELS = ["red", "green", "blue"]
TRUTH = np.array([0.6, 0.3, 0.1])
N = 2_000


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # simulation mode warns that it is not private
        session = CollectionSession(LABELS, eps0=2.0, n_min=100, delta=1e-6, rounds=2, rng=7)
        data = [lab for lab, f in zip(LABELS, TRUTH) for _ in range(int(f * N))]
        for round_ in (1, 2):
            session.submit(data)
            release = session.release()
            estimate = project_simplex(session.randomizer.estimate(release.histogram))  # shuffle+INV
            spent = session.privacy_spent()
            print(
                f"round {round_}: histogram {release.histogram.tolist()}, estimate {np.round(estimate, 3).tolist()}, "
                f"cumulative eps {spent.epsilon:.4f} at delta {spent.delta:g}"
            )
            assert release.simulated and np.abs(estimate - TRUTH).max() < 0.1
        session.submit(data)
        try:
            session.release()
        except BudgetExceededError as exc:  # the session covers 2 rounds
            print(f"round 3 refused: {type(exc).__name__}: {exc}")
        else:
            raise AssertionError("a third round must be refused")


if __name__ == "__main__":
    main()
