"""dp_accounting adapter: shuffled k-RR as a ``DpEvent``, a PLD accountant for it, and PLD export.

dp_accounting (0.6) is a core dependency of shuffle_accounting, so this module imports it directly
(no optional extra). What dp_accounting users find here:

* :class:`ShuffledKRRDpEvent` — a frozen ``dp_accounting.DpEvent`` (``k``, ``eps0``, ``n``),
  replace-one neighbouring.
* :class:`ShufflePLDAccountant` — a ``dp_accounting.pld.PLDAccountant`` that composes
  :class:`ShuffledKRRDpEvent` tightly (pessimistic PLD built from the certified privacy-blanket
  curve) together with dp_accounting's native events (Gaussian, Laplace, randomized response,
  composed and self-composed events) in one ledger.
* :func:`to_dp_accounting_pld` — the certified single-release PLD as a dp_accounting
  ``PrivacyLossDistribution``, to compose by hand with PLDs from ``dp_accounting.pld``.

The core implementation (and the proof that every number is an upper bound) lives in
:mod:`shuffle_accounting.shuffled_krr.accountant`; this module is the stable place to import from.

Example:
    >>> import dp_accounting
    >>> acc = ShufflePLDAccountant()
    >>> _ = acc.compose(ShuffledKRRDpEvent(k=3, eps0=2.0, n=50))
    >>> _ = acc.compose(dp_accounting.LaplaceDpEvent(noise_multiplier=10.0))
    >>> isinstance(acc, dp_accounting.pld.PLDAccountant)
    True
    >>> 0 < acc.get_epsilon(1e-3) < 2.0 + 0.2 + 1e-3
    True
"""

from __future__ import annotations

from dp_accounting.pld import privacy_loss_distribution as _pld_lib

from shuffle_accounting.shuffled_krr.accountant import (
    DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
    ShuffleAccountant,
    ShuffledKRRDpEvent,
    UnsupportedShuffleEventError,
    shuffled_krr_pld,
)

__all__ = [
    "ShuffledKRRDpEvent",
    "ShufflePLDAccountant",
    "UnsupportedShuffleEventError",
    "to_dp_accounting_pld",
]


class ShufflePLDAccountant(ShuffleAccountant):
    """dp_accounting-named alias of :class:`~shuffle_accounting.shuffled_krr.accountant.ShuffleAccountant`.

    Same constructor (``neighboring_relation=REPLACE_ONE``, ``value_discretization_interval=1e-4``),
    same methods and guarantees: ``compose(event, count=1) -> self``, ``get_epsilon(delta)`` and
    ``get_delta(epsilon)`` (upper bounds), ``ledger``, ``privacy_loss_distribution()``.

    Example:
        >>> acc = ShufflePLDAccountant().compose(ShuffledKRRDpEvent(2, 1.0, 30), count=2)
        >>> acc.ledger
        SelfComposedDpEvent(event=ShuffledKRRDpEvent(k=2, eps0=1.0, n=30), count=2)
        >>> acc.get_epsilon(1e-6) <= 2 * 1.0 + 2e-4
        True
    """


def to_dp_accounting_pld(
    k: int,
    eps0: float,
    n: int,
    value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
) -> _pld_lib.PrivacyLossDistribution:
    """Certified PLD of one shuffled k-RR release as a dp_accounting ``PrivacyLossDistribution``.

    Its delta curve is ``>=`` the certified privacy-blanket curve at every epsilon (pessimistic
    connect-the-dots discretisation), so composing it with other pessimistic dp_accounting PLDs
    gives upper bounds. Same as
    :func:`shuffle_accounting.shuffled_krr.accountant.shuffled_krr_pld`.

    Args:
        k: Number of categories, an integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, an integer >= 1.
        value_discretization_interval: Loss-grid step in (0, 1]; must match the PLDs it is
            composed with.

    Returns:
        A symmetric ``PrivacyLossDistribution`` with a dense pessimistic PMF.

    Raises:
        ParameterError: If an argument is out of range or of the wrong type.

    Example:
        >>> from dp_accounting.pld import privacy_loss_distribution as pld_lib
        >>> shuffled = to_dp_accounting_pld(k=3, eps0=2.0, n=50)
        >>> gauss = pld_lib.from_gaussian_mechanism(20.0)
        >>> both = shuffled.compose(gauss)
        >>> both.get_epsilon_for_delta(1e-3) >= shuffled.get_epsilon_for_delta(1e-3)
        True
    """
    return shuffled_krr_pld(k, eps0, n, value_discretization_interval)
