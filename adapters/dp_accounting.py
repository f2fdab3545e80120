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
* :func:`shuffled_krr_rdp` — a certified RDP curve (upper bound on the Renyi divergence of every
  neighbouring pair at each order) and :class:`ShuffleRdpAccountant`, a
  ``dp_accounting.rdp.RdpAccountant`` that composes :class:`ShuffledKRRDpEvent` with the native
  events, for RDP users (Opacus, TF Privacy).

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

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from dp_accounting import dp_event as _dp_event
from dp_accounting.pld import privacy_loss_distribution as _pld_lib
from dp_accounting.privacy_accountant import NeighboringRelation
from dp_accounting.rdp import RdpAccountant
from scipy.special import logsumexp

from shuffle_accounting._validation import ParameterError, check_int, check_real, check_real_array
from shuffle_accounting.shuffled_krr import certified_log_delta
from shuffle_accounting.shuffled_krr.accountant import (
    DEFAULT_VALUE_DISCRETIZATION_INTERVAL,
    ShuffleAccountant,
    ShuffledKRRDpEvent,
    UnsupportedShuffleEventError,
    shuffled_krr_pld,
)

__all__ = [
    "ShuffleRdpAccountant",
    "ShuffledKRRDpEvent",
    "ShufflePLDAccountant",
    "shuffled_krr_rdp",
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


#: Default number of grid points on ``[0, eps0]`` for :func:`shuffled_krr_rdp`.
DEFAULT_RDP_GRID_POINTS = 201
#: Default speed knob passed to :func:`~shuffle_accounting.certified_log_delta` (deltas below
#: ``exp(-100)`` are certified but not tightened further).
DEFAULT_RDP_LOG_DELTA_FLOOR = -100.0


def shuffled_krr_rdp(
    k: int,
    eps0: float,
    n: int,
    orders: Any,
    *,
    grid_points: int = DEFAULT_RDP_GRID_POINTS,
    log_delta_floor: float = DEFAULT_RDP_LOG_DELTA_FLOOR,
) -> np.ndarray:
    r"""Certified RDP curve of one shuffled k-RR release: ``D_alpha(M(D) || M(D')) <= rdp[alpha]``.

    For every pair of neighbouring datasets (replace one of ``n`` users; both orders) and every
    order ``alpha > 1`` the returned value is an upper bound on the Renyi divergence
    ``D_alpha(P || Q) = log E_P[e^{(alpha - 1) L}] / (alpha - 1)``, ``L = log dP/dQ``. It is
    computed from the certified privacy-blanket profile ``delta(t)``
    (:func:`~shuffle_accounting.certified_log_delta`), which bounds the hockey-stick divergence
    of every neighbouring pair and is itself the exact profile of the blanket dominating pair
    (module docstring of :mod:`shuffle_accounting.shuffled_krr.blanket`).

    Proof. Fix neighbours ``D, D'``, ``P = M(D)``, ``Q = M(D')``, and let
    ``d(t) = H_{e^t}(P || Q) = E_P[(1 - e^{t - L})_+]``.

    1. *Bounded loss.* Only the target's k-RR report differs, so ``|L| <= eps0`` (post-processing
       of an eps0-LDP report with the others' reports independent of it).
    2. *Pointwise identity.* With ``h(l) = e^{(alpha - 1) l}`` and ``a = -eps0``, for every
       ``l`` in ``[a, eps0]``:
       ``h(l) = h(a) (1 + (alpha - 1)(1 - e^{a - l})) + alpha (alpha - 1) \int_a^{eps0} e^{(alpha - 1) t} (1 - e^{t - l})_+ dt``.
       (For ``l > a`` the integral runs to ``l``; it equals ``(h(l) - h(a))/(alpha - 1) -
       (e^{alpha l} - e^{alpha a}) e^{-l}/alpha``, and the right side simplifies to ``h(l)``.)
    3. *Expectation.* Taking ``E_P`` (Fubini; every term is non-negative):
       ``E_P[h(L)] = h(a)(1 + (alpha - 1) d(a)) + alpha (alpha - 1) \int_a^{eps0} e^{(alpha - 1) t} d(t) dt``.
       Every coefficient is ``>= 0`` for ``alpha > 1``, so upper bounds on ``d`` give an upper
       bound on ``E_P[h(L)]``.
    4. *Bounds on d.* For ``t >= 0``: ``d(t) <= delta(t)`` (certified curve). For ``t < 0``:
       ``H_g(P || Q) = 1 - g + g H_{1/g}(Q || P)`` for any ``g > 0``, and ``(D', D)`` are
       neighbours too, so ``d(t) <= 1 - e^t + e^t delta(-t)`` (and ``<= 1``).
    5. *Discretisation.* ``d`` is non-increasing in ``t``; on a grid ``a = t_0 < ... < t_m =
       eps0`` each cell is bounded by its left value:
       ``\int_{t_i}^{t_{i+1}} e^{(alpha - 1) t} d(t) dt <= u(t_i) (h(t_{i+1}) - h(t_i)) / (alpha - 1)``.

    Hence ``E_P[h(L)] <= h(a)(1 + (alpha - 1) u(a)) + alpha sum_i u(t_i) (h(t_{i+1}) - h(t_i))``,
    evaluated in log space and inflated by a relative ``1e-9``; the result is capped at ``eps0``
    (``D_alpha <= D_inf <= eps0``), which is also the value at ``alpha = inf``.

    Relation to the dominating pair. The release is a post-processing of the blanket view
    ``(h0, h1, S)`` plus information distributed identically under ``D`` and ``D'``, and Renyi
    divergence is data-processing monotone (van Erven, Harremoes, *Renyi Divergence and
    Kullback-Leibler Divergence*, IEEE Trans. IT 2014, Thm 9: ``D_alpha(PK || QK) <= D_alpha(P || Q)``
    for every Markov kernel ``K``), so the blanket pair's ``D_alpha`` also bounds every
    dataset's. The steps above apply verbatim to the blanket pair itself (its loss is bounded by
    ``eps0``, its profile is the certified curve up to the outward rounding, and it is symmetric
    under swapping ``x0`` and ``x1``), so the value returned is an upper bound on the blanket pair's
    Renyi divergence that converges to it as the grid is refined (tested against the exact
    enumeration of the pair for small ``n``, and against every dataset pair by brute force).

    Cost: ``grid_points`` evaluations of the certified curve (seconds for ``n`` up to ``1e4``).

    Args:
        k: Number of categories, an integer >= 2.
        eps0: Local privacy parameter (the sampler's effective one), finite and > 0.
        n: Number of users, an integer >= 1.
        orders: Scalar or 1-D array of Renyi orders, each ``> 1`` (``inf`` allowed).
        grid_points: Grid points on ``[0, eps0]`` (integer >= 3); finer is tighter, never less sound.
        log_delta_floor: Passed to :func:`~shuffle_accounting.certified_log_delta` (speed knob;
            still certified below it).

    Returns:
        ``np.ndarray`` of upper bounds, one per order (0-d for a scalar order).

    Raises:
        ParameterError: If an argument is out of range, NaN or of the wrong type.

    Example:
        >>> rdp = shuffled_krr_rdp(3, 2.0, 100, [2.0, 8.0, np.inf])
        >>> bool(0 < rdp[0] < rdp[1] < rdp[2] == 2.0)
        True
    """
    k = check_int("k", k, minimum=2)
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True)
    n = check_int("n", n, minimum=1)
    alphas = check_real_array("orders", orders, low=1.0, low_open=True, allow_inf=True)
    grid_points = check_int("grid_points", grid_points, minimum=3)
    floor = check_real("log_delta_floor", log_delta_floor, high=0.0, allow_inf=True)
    s = np.linspace(0.0, eps0, grid_points)
    s[-1] = eps0
    log_d = np.minimum(certified_log_delta(s, k, eps0, n, log_delta_floor=floor), 0.0)
    # grid on [-eps0, eps0]: t = -s[::-1] (excluding 0 twice) then s
    t = np.concatenate([-s[:0:-1], s])
    log_neg = np.logaddexp(np.log(-np.expm1(-s[:0:-1])), -s[:0:-1] + log_d[:0:-1])  # u(-s), s > 0
    log_u = np.concatenate([np.minimum(log_neg, 0.0), log_d])
    widths = np.diff(t)
    out = np.empty(alphas.shape, dtype=float)
    flat = out.reshape(-1)
    for i, alpha in enumerate(alphas.reshape(-1)):
        if math.isinf(alpha):
            flat[i] = eps0
            continue
        am1 = alpha - 1.0
        head = -am1 * eps0 + math.log1p(am1 * math.exp(log_u[0]))
        cells = math.log(alpha) + log_u[:-1] + am1 * t[1:] + np.log(-np.expm1(-am1 * widths))
        log_e = float(logsumexp(np.concatenate([[head], cells])))
        log_e += 1e-9 * abs(log_e) + 1e-15
        flat[i] = min(eps0, max(0.0, log_e / am1))
    return out if alphas.ndim else out.reshape(())


class ShuffleRdpAccountant(RdpAccountant):
    """``dp_accounting.rdp.RdpAccountant`` that also composes :class:`ShuffledKRRDpEvent`.

    A shuffled k-RR event adds ``count * shuffled_krr_rdp(k, eps0, n, orders)`` (certified, see
    :func:`shuffled_krr_rdp`) to the accountant's RDP curve; every other event is handled by
    dp_accounting itself, so Gaussian steps, sampled Gaussians etc. compose in the same ledger, and
    ``get_epsilon`` / ``get_delta`` use dp_accounting's RDP-to-DP conversion. Replace-one
    neighbours (the default here): under ``ADD_OR_REMOVE_ONE`` the histogram's total reveals the
    number of users, so the shuffled event is reported as unsupported.

    Args:
        orders: RDP orders (default: dp_accounting's).
        neighboring_relation: ``REPLACE_ONE`` (default) or another dp_accounting relation.
        grid_points: Passed to :func:`shuffled_krr_rdp`.

    Example:
        >>> import dp_accounting
        >>> acc = ShuffleRdpAccountant(orders=[2.0, 4.0, 8.0, 16.0])
        >>> _ = acc.compose(ShuffledKRRDpEvent(k=3, eps0=2.0, n=100), 2)
        >>> _ = acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=5.0))
        >>> bool(0 < acc.get_epsilon(1e-5) < 2 * 2.0 + 1.0)
        True
    """

    def __init__(
        self,
        orders: Sequence[float] | None = None,
        neighboring_relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE,
        *,
        grid_points: int = DEFAULT_RDP_GRID_POINTS,
    ) -> None:
        if not isinstance(neighboring_relation, NeighboringRelation):
            raise ParameterError(
                f"neighboring_relation must be a dp_accounting NeighboringRelation, got {neighboring_relation!r}"
            )
        self._grid_points = check_int("grid_points", grid_points, minimum=3)
        super().__init__(orders, neighboring_relation)
        check_real_array("orders", self._orders, low=1.0, low_open=True, allow_inf=True)
        self._curves: dict = {}

    def _maybe_compose(self, event: _dp_event.DpEvent, count: int, do_compose: bool):
        if isinstance(event, ShuffledKRRDpEvent):
            if self._neighboring_relation is not NeighboringRelation.REPLACE_ONE:
                return _unsupported(event, self._neighboring_relation)
            if do_compose:
                key = (event.k, event.eps0, event.n)
                if key not in self._curves:
                    self._curves[key] = shuffled_krr_rdp(
                        event.k, event.eps0, event.n, self._orders, grid_points=self._grid_points
                    )
                self._rdp += count * self._curves[key]
            return None
        return super()._maybe_compose(event, count, do_compose)


def _unsupported(event, relation):
    return RdpAccountant.CompositionErrorDetails(
        invalid_event=event,
        error_message=(
            f"ShuffledKRRDpEvent needs neighboring_relation REPLACE_ONE, found {relation}: the "
            "histogram's total reveals the number of users under add/remove neighbours"
        ),
    )
