"""Calibrate: the largest local eps0, or the fewest users, that meet a central target.

Run:  python examples/calibrate.py

``calibrate_eps0`` returns the largest eps0 (rounded down) whose shuffled k-RR release is
certified (epsilon, delta)-DP, over one or several composed rounds; ``min_users`` the fewest
users (rounded up). Both results are checked here against the certified curve.
"""

from __future__ import annotations

from shuffle_accounting import ShuffledKRR
from shuffle_accounting.shuffled_krr.calibration import calibrate_eps0, min_users

K, N, EPSILON, DELTA = 2, 100, 0.5, 1e-4


def main() -> None:
    eps0 = calibrate_eps0(k=K, n=N, epsilon=EPSILON, delta=DELTA)
    achieved = ShuffledKRR(k=K, eps0=eps0, n=N).epsilon(DELTA)
    print(
        f"largest eps0 for ({EPSILON}, {DELTA:g})-DP with k={K}, n={N}: {eps0:.4f} (certified eps {achieved:.4f})"
    )
    assert achieved <= EPSILON

    eps0_rounds = calibrate_eps0(k=K, n=N, epsilon=2 * EPSILON, delta=DELTA, rounds=3, rtol=1e-2)
    print(f"largest eps0 for 3 composed rounds at ({2 * EPSILON}, {DELTA:g}): {eps0_rounds:.4f}")

    n_min = min_users(k=K, eps0=1.0, epsilon=0.3, delta=1e-3)
    print(f"fewest users for (0.3, 1e-3)-DP at eps0=1: {n_min}")
    assert ShuffledKRR(k=K, eps0=1.0, n=n_min).epsilon(1e-3) <= 0.3


if __name__ == "__main__":
    main()
