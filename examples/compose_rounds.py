"""Compose several shuffled rounds with central releases in one dp_accounting ledger.

Run:  python examples/compose_rounds.py

``ShuffleAccountant`` is a dp_accounting ``PLDAccountant`` that also accepts
``ShuffledKRRDpEvent``: R shuffled k-RR collections, a Gaussian release and a Laplace release
compose tightly (privacy loss distributions), and every answer is an upper bound. The script
compares the composed epsilon with the naive sum of the per-release epsilons at the same total
delta.
"""

from __future__ import annotations

import dp_accounting

from shuffle_accounting import ShuffledKRR
from shuffle_accounting.shuffled_krr.accountant import ShuffleAccountant, ShuffledKRRDpEvent

K, EPS0, N, ROUNDS, DELTA = 3, 2.0, 200, 4, 1e-5


def main() -> None:
    event = ShuffledKRRDpEvent(k=K, eps0=EPS0, n=N)
    gaussian = dp_accounting.GaussianDpEvent(noise_multiplier=10.0)
    laplace = dp_accounting.LaplaceDpEvent(noise_multiplier=20.0)

    acc = ShuffleAccountant()
    acc.compose(event, count=ROUNDS).compose(gaussian).compose(laplace)
    composed = acc.get_epsilon(DELTA)  # certified upper bound

    # naive: split delta evenly over the R + 2 releases and add the epsilons
    share = DELTA / (ROUNDS + 2)
    per_round = ShuffledKRR(k=K, eps0=EPS0, n=N).epsilon(share)
    eps_g = ShuffleAccountant().compose(gaussian).get_epsilon(share)
    eps_l = ShuffleAccountant().compose(laplace).get_epsilon(share)
    naive = ROUNDS * per_round + eps_g + eps_l

    print(f"{ROUNDS} shuffled k-RR rounds (k={K}, eps0={EPS0}, n={N}) + Gaussian(10) + Laplace(20)")
    print(f"  composed epsilon at delta={DELTA:g} (PLD, certified): {composed:.4f}")
    print(f"  naive sum of epsilons at the same total delta:       {naive:.4f}")
    assert composed <= naive


if __name__ == "__main__":
    main()
