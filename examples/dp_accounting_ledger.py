"""Call from dp_accounting: PLD and RDP accountants that understand shuffled k-RR.

Run:  python examples/dp_accounting_ledger.py

* ``ShufflePLDAccountant`` composes a ``ShuffledKRRDpEvent`` with native dp_accounting events
  (here built with ``DpEventBuilder``), and ``to_dp_accounting_pld`` exports the certified PLD to
  compose by hand with dp_accounting's own PLDs.
* ``ShuffleRdpAccountant`` / ``shuffled_krr_rdp`` give a certified Renyi-DP curve, for code that
  composes in RDP (Opacus, TF Privacy). Both answers are upper bounds, so the smaller one
  holds (at these small sizes the RDP conversion can beat the PLD's pessimistic discretisation).
"""

from __future__ import annotations

import dp_accounting
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from shuffle_accounting.adapters.dp_accounting import (
    ShuffledKRRDpEvent,
    ShufflePLDAccountant,
    ShuffleRdpAccountant,
    shuffled_krr_rdp,
    to_dp_accounting_pld,
)

K, EPS0, N, DELTA = 3, 2.0, 100, 1e-5


def main() -> None:
    event = ShuffledKRRDpEvent(k=K, eps0=EPS0, n=N)
    gaussian = dp_accounting.GaussianDpEvent(noise_multiplier=5.0)
    builder = dp_accounting.DpEventBuilder()
    builder.compose(event, 2)
    builder.compose(gaussian)
    ledger = builder.build()

    eps_pld = ShufflePLDAccountant().compose(ledger).get_epsilon(DELTA)
    eps_rdp = ShuffleRdpAccountant(orders=[1.5, 2.0, 4.0, 8.0, 16.0, 32.0]).compose(ledger).get_epsilon(DELTA)
    print(f"2 shuffled rounds + Gaussian(5) at delta={DELTA:g}: PLD eps {eps_pld:.4f}, RDP eps {eps_rdp:.4f}")

    by_hand = (
        to_dp_accounting_pld(K, EPS0, N)
        .self_compose(2)
        .compose(
            pld_lib.from_gaussian_mechanism(
                5.0, neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
            )
        )
    )
    print(f"the same with the exported PLD composed by hand: {by_hand.get_epsilon_for_delta(DELTA):.4f}")

    rdp = shuffled_krr_rdp(K, EPS0, N, [2.0, 8.0, 32.0])
    print("certified RDP of one round at orders 2, 8, 32:", [round(float(x), 4) for x in rdp])
    print(f"certified epsilon: {min(eps_pld, eps_rdp):.4f} (both are upper bounds)")


if __name__ == "__main__":
    main()
