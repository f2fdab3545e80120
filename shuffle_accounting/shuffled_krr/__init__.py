"""Certified and exact (eps, delta) accounting for shuffled k-RR.

* :class:`ShuffledKRR` (``mechanism``) — the mechanism with its certified privacy curve
  ``delta(eps)``/``log_delta(eps)`` and ``epsilon(delta)``.
* :func:`certified_log_delta` (``blanket``) — the certified upper bound itself: the exact
  privacy-blanket divergence of Balle, Bell, Gascón, Nissim (CRYPTO 2019), vectorised over eps.
"""

from .blanket import certified_log_delta
from .mechanism import ShuffledKRR

__all__ = ["ShuffledKRR", "certified_log_delta"]
