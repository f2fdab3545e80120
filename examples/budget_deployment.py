"""Budget a deployment: the certified (eps, delta) of one shuffled k-RR collection.

Run:  python examples/budget_deployment.py [--k 10 --eps0 2 --n 10000 --delta 1e-6]

Prints, for one collection of ``n`` users each sending a k-RR report with local ``eps0`` through a
shuffler:

* the certified epsilon (an upper bound, valid for every pair of neighbouring datasets) and the
  exhibited epsilon (a lower bound from concrete datasets): the truth lies in between;
* the published amplification bounds at the same parameters, side by side (a bound outside its
  theorem's regime says so instead of giving a number);
* the accuracy of the debiased frequencies (shuffle+INV).
"""

from __future__ import annotations

import argparse

from shuffle_accounting import ShuffledKRR
from shuffle_accounting.accuracy import shuffle_frequency_accuracy
from shuffle_accounting.literature import literature_epsilons


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10, help="number of categories")
    parser.add_argument("--eps0", type=float, default=2.0, help="local epsilon of k-RR")
    parser.add_argument("--n", type=int, default=10_000, help="number of users")
    parser.add_argument("--delta", type=float, default=1e-6, help="target delta")
    args = parser.parse_args(argv)

    m = ShuffledKRR(k=args.k, eps0=args.eps0, n=args.n)
    upper = m.epsilon(args.delta)  # certified: rounded up
    lower = m.epsilon_lower(args.delta)  # exhibited by a concrete pair of datasets
    print(f"k={args.k} eps0={args.eps0} n={args.n} delta={args.delta:g}")
    print(f"  certified epsilon (upper bound): {upper:.6f}")
    print(f"  exhibited epsilon (lower bound): {lower:.6f}")
    assert lower <= upper

    print("published bounds at the same parameters:")
    for b in literature_epsilons(k=args.k, eps0=args.eps0, n=args.n, delta=args.delta):
        value = f"{b.epsilon:.6f}" if b.epsilon is not None else f"not applicable ({b.reason})"
        print(f"  {b.name:<22} {value}")

    acc = shuffle_frequency_accuracy(k=args.k, eps0=args.eps0, n=args.n)
    print(
        f"accuracy of one debiased frequency: std {acc.std:.5f}, 95% half-width {acc.normal_half_width:.4f}"
    )


if __name__ == "__main__":
    main()
