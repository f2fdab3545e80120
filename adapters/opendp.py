"""OpenDP (0.16.x) measurements for shuffled k-RR with our certified privacy curves.

OpenDP has no shuffle amplification. These constructors wrap the runtime collection (exact-rational
k-RR randomizer + uniform shuffler, histogram release) in an OpenDP ``Measurement`` whose privacy
map is our certified bound:

* :func:`make_shuffled_krr` — output measure ``smoothed_max_divergence()``: ``map(d_in)`` returns
  a privacy profile ``delta(epsilon)`` (one round: the certified privacy-blanket curve of
  :class:`shuffle_accounting.ShuffledKRR`; several rounds: the tightly composed curve of
  :class:`shuffle_accounting.ShuffleAccountant`).
* :func:`make_shuffled_krr_approx` — output measure ``approximate(max_divergence())``:
  ``map(d_in)`` returns ``(epsilon, delta)`` at a fixed ``delta``, ready for
  ``dp.c.make_composition`` with native OpenDP measurements.

Neighbouring relation. Our bounds are for *replace-one* neighbours with a fixed number of users.
The input domain is therefore a **sized** vector domain (``size=n_min``) under
``symmetric_distance()``: on a sized domain, replacing one user is a symmetric distance of 2, and
odd distances cannot occur. ``map(d_in)`` is the certified curve for ``d_in <= 2`` and raises for
larger ``d_in`` (group privacy is not provided).

Trust. ``make_user_measurement`` and ``new_privacy_profile`` require OpenDP's ``"contrib"`` and
``"honest-but-curious"`` features; these constructors enable them, because the privacy map is the
library's own certified bound (proofs in :mod:`shuffle_accounting.shuffled_krr`).

OpenDP is imported lazily; without it, calling a constructor raises an ``ImportError`` that says
``pip install 'shuffle-accounting[opendp]'``.
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

from .._validation import ParameterError, check_delta, check_int
from ._common import ShuffledCollection

__all__ = ["make_shuffled_krr", "make_shuffled_krr_approx"]

_INSTALL_HINT = (
    "shuffle_accounting.adapters.opendp needs OpenDP 0.16: install it with "
    "pip install 'shuffle-accounting[opendp]'"
)


def _opendp():
    try:
        import opendp.prelude as dp  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    dp.enable_features("contrib", "honest-but-curious")
    return dp


def _atom_type(labels: Sequence[Any]) -> type:
    if all(isinstance(v, str) for v in labels):
        return str
    if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in labels):
        return int
    raise ParameterError(
        f"categories must all be strings or all be integers for an OpenDP atom domain, got {tuple(labels)!r}"
    )


def _collection(categories: Any, eps0: float, n_min: Any, rounds: Any) -> ShuffledCollection:
    if n_min is None:
        raise ParameterError(
            "n_min must be an integer >= 2 (the batch size the guarantee is computed for; "
            "the OpenDP input domain is sized), got None"
        )
    if isinstance(categories, numbers.Integral) and not isinstance(categories, bool):
        categories = list(range(check_int("categories", categories, minimum=2)))
    coll = ShuffledCollection(categories, eps0, n_min, rounds)
    _atom_type(coll.labels)  # validated before OpenDP is touched
    return coll


def _check_d_in(d_in: Any) -> int:
    d = check_int("d_in", d_in, minimum=0)
    if d > 2:
        raise ParameterError(
            f"d_in must be <= 2 (replace one user on a sized domain; group privacy is not "
            f"provided), got {d}"
        )
    return d


def _space(dp, coll: ShuffledCollection):
    domain = dp.vector_domain(dp.atom_domain(T=_atom_type(coll.labels)), size=coll.n_min)
    return domain, dp.symmetric_distance()


def _function(coll: ShuffledCollection):
    def function(values):
        hists = coll.release(list(values))
        return hists[0] if coll.rounds == 1 else hists

    return function


def make_shuffled_krr(categories: Any, eps0: float, n_min: int | None = None, rounds: int = 1):
    """Measurement: vector of category values -> shuffled k-RR histogram, certified profile.

    The function randomizes every value with k-RR (exact rational law, OS CSPRNG), shuffles and
    releases the histogram (a list of ``k`` counts in category order; a list of ``rounds`` such
    histograms when ``rounds > 1``). The privacy map returns, for ``d_in`` in {1, 2}, the
    profile ``epsilon -> delta`` certified by the privacy-blanket bound (Balle, Bell, Gascon,
    Nissim, *The Privacy Blanket of the Shuffle Model*, CRYPTO 2019; evaluated exactly, see
    :class:`shuffle_accounting.ShuffledKRR`) or, for several rounds, by the pessimistic PLD
    composition of :class:`shuffle_accounting.ShuffleAccountant`; for ``d_in = 0`` delta is 0.

    Args:
        categories: The declared categories (strings or integers), or an integer ``k``.
        eps0: Local epsilon of each report (finite, > 0); the accounting uses the effective
            epsilon of the implemented exact-rational mechanism (rounded up).
        n_min: Users per batch; the input domain is vectors of exactly this size.
        rounds: Number of independent k-RR rounds released on the same data.

    Returns:
        An OpenDP ``Measurement`` with output measure ``smoothed_max_divergence()``.

    Raises:
        ParameterError: On invalid parameters (before OpenDP is touched).
        ImportError: If OpenDP is not installed.

    Example:
        >>> meas = make_shuffled_krr(["a", "b", "c"], eps0=1.0, n_min=100)
        >>> hist = meas(["a"] * 60 + ["b"] * 40)
        >>> len(hist), sum(hist)
        (3, 100)
        >>> profile = meas.map(2)
        >>> 0 < profile.delta(0.5) < 1e-2
        True
    """
    coll = _collection(categories, eps0, n_min, rounds)
    dp = _opendp()

    def privacy_map(d_in):
        d = _check_d_in(d_in)

        def curve(epsilon):
            if d == 0:
                return 0.0
            return coll.delta(epsilon)

        # A fresh profile on every call: OpenDP takes ownership of the returned object.
        return dp.new_privacy_profile(curve).curve

    domain, metric = _space(dp, coll)
    return dp.m.make_user_measurement(
        domain, metric, dp.smoothed_max_divergence(), _function(coll), privacy_map
    )


def make_shuffled_krr_approx(
    categories: Any,
    eps0: float,
    n_min: int | None = None,
    rounds: int = 1,
    *,
    delta: float,
):
    """Measurement like :func:`make_shuffled_krr` with output measure ``approximate(max_divergence())``.

    ``map(d_in)`` returns ``(epsilon, delta)``: the certified epsilon at the given ``delta``
    (rounded up; all rounds together), so the measurement composes with native OpenDP
    measurements through ``dp.c.make_composition`` (basic composition: epsilons and deltas add).

    Args:
        categories: The declared categories (strings or integers), or an integer ``k``.
        eps0: Local epsilon of each report (finite, > 0).
        n_min: Users per batch; the input domain is vectors of exactly this size.
        rounds: Number of independent k-RR rounds released on the same data.
        delta: The delta in (0, 1) at which epsilon is certified.

    Returns:
        An OpenDP ``Measurement`` with output measure ``approximate(max_divergence())``.

    Raises:
        ParameterError: On invalid parameters (before OpenDP is touched).
        ImportError: If OpenDP is not installed.

    Example:
        >>> meas = make_shuffled_krr_approx(["a", "b", "c"], eps0=1.0, n_min=100, delta=1e-6)
        >>> eps, delta = meas.map(2)
        >>> 0 < eps < 1.0, delta
        (True, 1e-06)
    """
    d = check_delta("delta", delta)
    coll = _collection(categories, eps0, n_min, rounds)
    dp = _opendp()
    eps = coll.epsilon(d)

    def privacy_map(d_in):
        if _check_d_in(d_in) == 0:
            return 0.0, 0.0
        return float(eps), float(d)

    domain, metric = _space(dp, coll)
    return dp.m.make_user_measurement(
        domain, metric, dp.approximate(dp.max_divergence()), _function(coll), privacy_map
    )

