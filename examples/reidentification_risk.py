"""Re-identification risk: how likely a Bayes-optimal adversary finds one user's shuffled report.

Run:  python examples/reidentification_risk.py

Su, Cheng, Wang: the adversary knows every user's input and sees the shuffled reports. In the
basic setting (target draws from P, the others from Q) the success probability is exact; for k-RR
the library gives a certified interval [lower, upper], compared here with 1/n (no information)
and the clone bound e^eps0 / n.
"""

from __future__ import annotations

import math

from shuffle_accounting import KRR
from shuffle_accounting.reidentification import ReidentificationRisk, success_probability


def main() -> None:
    p = success_probability([0.3, 0.7], [0.0, 1.0], n=5)  # exact: p + (1 - p)/n
    print(f"basic setting, P=(0.3, 0.7), Q=(0, 1), n=5: success probability {p:.6f} (= 0.3 + 0.7/5)")
    assert abs(p - 0.44) < 1e-12

    for n in (100, 1_000, 10_000):
        risk = ReidentificationRisk(KRR(k=10, eps0=2.0), n=n)
        low, up = risk.lower_bound(), risk.bound(method="blanket")
        clone = risk.bound(method="clone")
        print(
            f"k-RR k=10 eps0=2, n={n:>6}: success in [{low:.6e}, {up:.6e}], clone bound {clone:.6e}, "
            f"1/n = {1 / n:.1e}, e^eps0/n = {math.exp(2.0) / n:.3e}"
        )
        assert low <= up <= clone


if __name__ == "__main__":
    main()
