"""Certified, exact and exhibited (eps, delta) accounting for shuffled k-RR.

* :class:`ShuffledKRR` (``mechanism``) — the mechanism with its certified privacy curve
  ``delta(eps)``/``log_delta(eps)``/``epsilon(delta)``, the exhibited lower bound
  ``delta_lower``/``epsilon_lower``/``worst_dataset`` and the ``gap`` between them.
* :func:`certified_log_delta` (``blanket``) — the certified upper bound: the exact
  privacy-blanket divergence of Balle, Bell, Gascon, Nissim (CRYPTO 2019), vectorised over eps.
* :func:`~shuffle_accounting.shuffled_krr.worst_case.certify` (``worst_case``) — the certified
  exact worst case for ``k = 2`` by branch and bound over datasets, with a re-checkable
  :class:`WorstCaseCertificate` (:func:`verify`); ``ShuffledKRR(..., method="auto")`` uses it.
* :func:`~shuffle_accounting.shuffled_krr.worst_case_k.certify_k` (``worst_case_k``) — the
  certified worst case for ``k = 3`` by branch and bound over boxes of datasets (re-check with
  ``worst_case_k.verify``); ``method="auto"`` uses it up to 30 users.
* :func:`dataset_delta` (``exact``) — the exact delta(eps) of one concrete neighbouring pair,
  for the shuffled histogram or the count-only release of Biswas, Jung, Palamidessi.
* ``lower`` — the search over concrete datasets that exhibits a lower bound.
* :class:`ShuffleAccountant` (``accountant``) — tight PLD composition over rounds, with
  dp_accounting's native events in the same ledger.
* :func:`calibrate_eps0`, :func:`min_users` (``calibration``).
"""

from __future__ import annotations

from .._lazy import lazy_attributes

#: Where each public name lives (imported on first use, PEP 562: ``import shuffle_accounting.
#: shuffled_krr`` does not import dp_accounting until the accountant or calibration is used).
_LAZY: dict[str, tuple[str, str | None]] = {
    "ShuffledKRR": (".mechanism", "ShuffledKRR"),
    "WorstCaseCertificate": (".worst_case", "WorstCaseCertificate"),
    "verify": (".worst_case", "verify"),
    "certified_log_delta": (".blanket", "certified_log_delta"),
    "dataset_delta": (".exact", "dataset_delta"),
    "dataset_log_delta": (".exact", "dataset_log_delta"),
    "dataset_log_delta_bounds": (".exact", "dataset_log_delta_bounds"),
    "histogram_bins": (".exact", "histogram_bins"),
    "WorstDataset": (".lower", "WorstDataset"),
    "worst_dataset": (".lower", "worst_dataset"),
    "lower_log_delta": (".lower", "lower_log_delta"),
    "lower_delta": (".lower", "lower_delta"),
    "lower_epsilon": (".lower", "lower_epsilon"),
    "ShuffleAccountant": (".accountant", "ShuffleAccountant"),
    "ShuffledKRRDpEvent": (".accountant", "ShuffledKRRDpEvent"),
    "UnsupportedShuffleEventError": (".accountant", "UnsupportedShuffleEventError"),
    "shuffled_krr_pld": (".accountant", "shuffled_krr_pld"),
    "calibrate_eps0": (".calibration", "calibrate_eps0"),
    "min_users": (".calibration", "min_users"),
}

__all__ = [
    "ShuffledKRR",
    "WorstCaseCertificate",
    "verify",
    "certified_log_delta",
    "dataset_delta",
    "dataset_log_delta",
    "dataset_log_delta_bounds",
    "histogram_bins",
    "WorstDataset",
    "worst_dataset",
    "lower_log_delta",
    "lower_delta",
    "lower_epsilon",
    "ShuffleAccountant",
    "ShuffledKRRDpEvent",
    "UnsupportedShuffleEventError",
    "shuffled_krr_pld",
    "calibrate_eps0",
    "min_users",
]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
