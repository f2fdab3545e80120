"""OpenDP pipeline: a shuffled k-RR histogram next to native OpenDP measurements.

Run:  python examples/opendp_pipeline.py

1. Builds a shuffled k-RR histogram measurement with ``then_shuffled_krr`` (our certified privacy
   map) and a native OpenDP Laplace count on the same sized input space, composes them with
   ``make_composition`` and checks the total (epsilon, delta) equals the sum of the parts.
2. Runs both inside an OpenDP ``Context`` (``query().shuffled_krr(...)`` is registered).
3. Shows how much tighter our composed profile over R rounds is than OpenDP's basic composition
   of the per-round (epsilon, delta) guarantees at the same total delta.
4. Reads the re-identification bound of the shuffled measurement and composes two releases of
   the d_sigma Mallows shuffler.
"""

from __future__ import annotations

import opendp.prelude as dp

from shuffle_accounting.adapters.opendp import (
    dsigma_distance,
    reidentification_risk,
    then_mallows_shuffle,
    then_shuffled_krr,
)
from shuffle_accounting.dsigma import MallowsShuffler

CATEGORIES = ["walk", "bike", "bus", "car", "train"]
N = 2_000
EPS0 = 2.0
DELTA = 1e-6


def main() -> None:
    # The constructors never change global features: this line is the user's decision.
    dp.enable_features("contrib", "honest-but-curious")
    data = (CATEGORIES * (N // len(CATEGORIES) + 1))[:N]
    space = dp.vector_domain(dp.atom_domain(T=str), size=N), dp.symmetric_distance()

    hist_meas = space >> then_shuffled_krr(CATEGORIES, eps0=EPS0, delta=DELTA)
    laplace = dp.c.make_approximate(space >> dp.t.then_count() >> dp.m.then_laplace(scale=10.0))
    pipeline = dp.c.make_composition([hist_meas, laplace])

    hist, noisy_count = pipeline(data)
    eps_h, delta_h = hist_meas.map(2)
    eps_l, delta_l = laplace.map(2)
    eps_t, delta_t = pipeline.map(2)
    print(f"histogram (shuffled {EPS0}-LDP k-RR, n={N}, last bin = null): {hist}")
    print(f"noisy count: {noisy_count}")
    print(f"shuffled histogram: eps={eps_h:.4f} delta={delta_h:g}")
    print(f"laplace count:      eps={eps_l:.4f} delta={delta_l:g}")
    print(f"composition total:  eps={eps_t:.4f} delta={delta_t:g}")
    assert abs(eps_t - (eps_h + eps_l)) < 1e-9 and abs(delta_t - (delta_h + delta_l)) < 1e-15

    ctx = dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=2.0, delta=DELTA),
        split_evenly_over=2,
        domain=space[0],
    )
    print(
        "\nContext:",
        ctx.query().count().laplace().release(),
        ctx.query().shuffled_krr(CATEGORIES, eps0=EPS0, delta=DELTA / 2).release(),
    )

    print("\nR rounds at the same total delta: OpenDP basic composition vs our composed profile")
    print(f"{'R':>4}  {'basic eps':>10}  {'composed eps':>12}")
    for rounds in (2, 5):
        single = space >> then_shuffled_krr(CATEGORIES, eps0=EPS0, delta=DELTA / rounds)
        eps_basic, delta_basic = dp.c.make_composition([single] * rounds).map(2)
        tight = space >> then_shuffled_krr(CATEGORIES, eps0=EPS0, rounds=rounds, delta=delta_basic)
        eps_tight, _ = tight.map(2)
        print(f"{rounds:>4}  {eps_basic:>10.4f}  {eps_tight:>12.4f}")
        assert eps_tight <= eps_basic

    risk = reidentification_risk(hist_meas)
    print(
        f"\nBayesian re-identification bound (Su et al.), one batch: {risk.bound():.5f} (1/n = {1 / N:.5f})"
    )

    groups = [[0, 1], [0, 1], [2, 3], [2, 3]]
    shuffler = MallowsShuffler(groups, alpha=1.0)
    mallows = (
        dp.vector_domain(dp.atom_domain(T=str), size=4),
        dsigma_distance(groups),
    ) >> then_mallows_shuffle(shuffler)
    both = dp.c.make_composition([mallows, mallows])
    print(f"Mallows shuffler: alpha={mallows.map(1):.4f}; two releases: alpha={both.map(1):.4f}")


if __name__ == "__main__":
    main()
