"""OpenDP pipeline: a shuffled k-RR histogram and a Laplace count, composed and checked.

Run:  python examples/opendp_pipeline.py

1. Builds a shuffled k-RR histogram measurement (our certified privacy map) and a native OpenDP
   Laplace count on the same sized input domain, composes them with ``make_composition`` and
   checks the total (epsilon, delta) equals the sum of the parts.
2. Shows how much tighter our composed profile over R rounds is than OpenDP's basic composition
   of the per-round (epsilon, delta) guarantees at the same total delta.
"""

from __future__ import annotations

import opendp.prelude as dp

from shuffle_accounting.adapters.opendp import make_shuffled_krr_approx

CATEGORIES = ["walk", "bike", "bus", "car", "train"]
N = 2_000
EPS0 = 2.0
DELTA = 1e-6


def main() -> None:
    data = (CATEGORIES * (N // len(CATEGORIES) + 1))[:N]

    hist_meas = make_shuffled_krr_approx(CATEGORIES, eps0=EPS0, n_min=N, delta=DELTA)
    domain = dp.vector_domain(dp.atom_domain(T=str), size=N)
    count = dp.t.make_count(domain, dp.symmetric_distance())
    laplace = dp.c.make_approximate(count >> dp.m.then_laplace(scale=10.0))
    pipeline = dp.c.make_composition([hist_meas, laplace])

    hist, noisy_count = pipeline(data)
    eps_h, delta_h = hist_meas.map(2)
    eps_l, delta_l = laplace.map(2)
    eps_t, delta_t = pipeline.map(2)
    print(f"histogram (shuffled {EPS0}-LDP k-RR, n={N}): {hist}")
    print(f"noisy count: {noisy_count}")
    print(f"shuffled histogram: eps={eps_h:.4f} delta={delta_h:g}")
    print(f"laplace count:      eps={eps_l:.4f} delta={delta_l:g}")
    print(f"composition total:  eps={eps_t:.4f} delta={delta_t:g}")
    assert abs(eps_t - (eps_h + eps_l)) < 1e-9 and abs(delta_t - (delta_h + delta_l)) < 1e-15

    print("\nR rounds at the same total delta: OpenDP basic composition vs our composed profile")
    print(f"{'R':>4}  {'basic eps':>10}  {'composed eps':>12}")
    for rounds in (2, 5, 10, 20):
        single = make_shuffled_krr_approx(CATEGORIES, eps0=EPS0, n_min=N, delta=DELTA / rounds)
        eps_basic, delta_basic = dp.c.make_composition([single] * rounds).map(2)
        tight = make_shuffled_krr_approx(CATEGORIES, eps0=EPS0, n_min=N, rounds=rounds, delta=delta_basic)
        eps_tight, _ = tight.map(2)
        print(f"{rounds:>4}  {eps_basic:>10.4f}  {eps_tight:>12.4f}")
        assert eps_tight <= eps_basic


if __name__ == "__main__":
    main()
