"""ShuffleAccountant, ShuffledKRRDpEvent and the pessimistic shuffled k-RR PLD.

Everything uses small n (<= 200) so a brute-force blanket module suffices; the key properties are
checked against (a) the certified curve itself at many off-grid points, (b) an exact composition of
the privacy-blanket pair computed here by brute force, (c) basic and advanced composition.
"""

from __future__ import annotations

import math

import attr
import dp_accounting
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

from shuffle_accounting import ParameterError
from shuffle_accounting.shuffled_krr.accountant import (
    ShuffleAccountant,
    ShuffledKRRDpEvent,
    UnsupportedShuffleEventError,
    shuffled_krr_pld,
)
from shuffle_accounting.shuffled_krr.blanket import certified_log_delta
from shuffle_accounting.shuffled_krr.calibration import single_round_epsilon
from shuffle_accounting.shuffled_krr.mechanism import ShuffledKRR

from _bad_inputs import BAD_K_EPS0_N

H = 1e-4
NR = dp_accounting.NeighboringRelation
CASES = [(2, 1.0, 60), (3, 2.0, 50), (4, 0.7, 30), (10, 3.0, 40), (3, 5.0, 25)]


def _cert(eps, k, eps0, n):
    """The certified blanket curve (for k = 2 the accountant's curve is tighter: see _floor)."""
    with np.errstate(under="ignore"):
        return np.exp(certified_log_delta(np.asarray(eps, dtype=float), k, eps0, n))


def _binary_dataset_deltas(eps0, n, eps):
    """Exact delta of every concrete k = 2 dataset pair (c others at 0), both directions, by brute force.

    Independent of the library: S = target's report + Bin(c, pbar) + Bin(n-1-c, p); returns the max
    over c and both directions of sum (P - e^eps Q)_+ at each eps.
    """
    p = math.exp(eps0) / (math.exp(eps0) + 1)
    q = 1 - p
    best = np.zeros(np.size(eps))
    E = np.exp(np.asarray(eps, dtype=float))[:, None]
    for c in range(n):
        y = np.convolve(_binom_pmf(c, q), _binom_pmf(n - 1 - c, p))
        P = np.concatenate([p * y, [0.0]]) + np.concatenate([[0.0], q * y])  # target at 0: reports 0 w.p. p
        P = P[::-1]  # S counts ones: reverse (the target at 0 reports a one w.p. q)
        Q = np.concatenate([q * y, [0.0]]) + np.concatenate([[0.0], p * y])
        Q = Q[::-1]
        for A, B in ((P, Q), (Q, P)):
            best = np.maximum(best, np.sum(np.maximum(A[None, :] - E * B[None, :], 0.0), axis=1))
    return best


def _binom_pmf(m, prob):
    from scipy.stats import binom

    return binom.pmf(np.arange(m + 1), m, prob)


def _floor(eps, k, eps0, n):
    """What every PLD of the accountant must dominate: the exact blanket curve (brute force, less a
    relative 1e-10 for its float rounding), or for k = 2 (where the accountant also uses the
    certified worst case) every concrete dataset's exact delta."""
    if k == 2:
        # shuffled eps0-LDP reports are eps0-DP: delta is exactly 0 from eps0 on (the float
        # brute force leaves ~1e-16 of rounding noise there, which no bound needs to dominate)
        out = np.asarray(_binary_dataset_deltas(eps0, n, eps), dtype=float)
        return np.where(np.asarray(eps, dtype=float) >= eps0, 0.0, out)
    loss, prob = _blanket_pair(k, eps0, n)
    out = _hockey(loss, prob, 0.0, eps) * (1.0 - 1e-10)
    return np.where(np.asarray(eps, dtype=float) >= eps0, 0.0, out)


def _pmf_arrays(pld):
    pmf = pld._pmf_remove.to_dense_pmf()  # dp_accounting internals, read-only
    losses = (np.arange(pmf.size) + pmf._lower_loss) * pmf._discretization
    probs = np.asarray(pmf._probs)
    keep = probs > 0  # the dense PMF is mostly zeros; keep the atoms only
    return losses[keep], probs[keep], float(pmf._infinity_mass)


def _hockey(losses, probs, inf_mass, eps):
    """inf + sum p (1 - e^{eps - l})_+ evaluated directly, vectorised over eps."""
    eps = np.atleast_1d(np.asarray(eps, dtype=float))[:, None]
    term = -np.expm1(np.minimum(eps - losses[None, :], 0.0))
    return inf_mass + term @ probs


# ----- brute-force blanket pair (independent of the blanket module) ---------------------------


def _blanket_pair(k, eps0, n):
    """(loss, P) atoms of the privacy-blanket pair: target x0 vs x1 (Balle et al. 2019)."""
    p = math.exp(eps0) / (math.exp(eps0) + k - 1)
    pbar = 1.0 / (math.exp(eps0) + k - 1)
    gamma, c = k * pbar, p - pbar
    lp, lq = [], []
    for S in range(1, n + 1):
        lbin = (
            gammaln(n)
            - gammaln(S)
            - gammaln(n - S + 1)
            + (S - 1) * math.log(gamma)
            + (n - S) * math.log1p(-gamma)
        )
        for T in [S] if k == 2 else range(S + 1):
            for h0 in range(T + 1):
                lw = (
                    lbin
                    + gammaln(S)
                    - gammaln(h0 + 1)
                    - gammaln(T - h0 + 1)
                    - gammaln(S - T + 1)
                    - (S - 1) * math.log(k)
                )
                if k > 2:
                    lw += (S - T) * math.log(k - 2)
                lp.append(lw + math.log(pbar * S + c * h0))
                lq.append(lw + math.log(pbar * S + c * (T - h0)))
    lp, lq = np.array(lp), np.array(lq)
    return lp - lq, np.exp(lp)


def _compose_exact(loss, prob, rounds):
    L, P = loss, prob
    for _ in range(rounds - 1):
        L = (L[:, None] + loss[None, :]).ravel()
        P = (P[:, None] * prob[None, :]).ravel()
    return L, P


# ----- the event --------------------------------------------------------------------------------


def test_event_is_a_frozen_validated_dp_event():
    e = ShuffledKRRDpEvent(k=3, eps0=1, n=1e3)
    assert isinstance(e, dp_event.DpEvent)
    assert (e.k, e.eps0, e.n) == (3, 1.0, 1000)
    assert type(e.eps0) is float and type(e.n) is int
    with pytest.raises(attr.exceptions.FrozenInstanceError):
        e.n = 5  # type: ignore[misc]
    assert dp_event.DpEvent.from_named_tuple(e.to_named_tuple()) == e
    assert hash(e) == hash(ShuffledKRRDpEvent(3, 1.0, 1000))


@pytest.mark.parametrize("kwargs, name", BAD_K_EPS0_N)
def test_event_rejects_bad_fields(kwargs, name):
    with pytest.raises(ParameterError, match=rf"^{name} must be"):
        ShuffledKRRDpEvent(**kwargs)


# ----- pessimism of the single-release PLD -------------------------------------------------------


@pytest.mark.parametrize("k, eps0, n", CASES)
def test_pld_delta_dominates_certified_curve_everywhere(k, eps0, n):
    pld = shuffled_krr_pld(k, eps0, n)
    losses, probs, inf_mass = _pmf_arrays(pld)
    rng = np.random.default_rng(k * 1000 + n)
    # random points plus an even sweep shifted off the PLD's loss grid (multiples of H)
    eps = np.sort(np.concatenate([rng.uniform(0, eps0 * 1.02, 250), np.linspace(0, eps0, 251) + 0.37 * H]))
    ours = _hockey(losses, probs, inf_mass, eps)
    cert = _cert(eps, k, eps0, n)
    floor = _floor(eps, k, eps0, n)
    assert np.all(ours >= floor), float(np.min(ours - floor))
    # dp_accounting's own evaluation of the same PLD agrees (it is what get_delta uses)
    for e in eps[::25]:
        assert pld.get_delta_for_epsilon(float(e)) >= float(_floor([e], k, eps0, n)[0])
    # and it is tight: within 5 % of the certified curve where delta is not tiny (for such small n
    # the curve itself is piecewise linear in e^eps with kinks at the blanket pair's loss atoms,
    # which a chord across a kink overestimates by a few per cent at most)
    big = cert > 1e-8
    assert np.all(ours[big] <= cert[big] * 1.05 + 1e-12)


@pytest.mark.parametrize("k, eps0, n", CASES[:3])
def test_pld_is_a_valid_pair_dominating_on_the_negative_side(k, eps0, n):
    """Reverse direction: Q-masses p e^-l at losses -l must dominate the (symmetric) certified curve."""
    losses, probs, inf_mass = _pmf_arrays(shuffled_krr_pld(k, eps0, n))
    assert inf_mass == 0.0 and np.all(probs >= 0)
    assert abs(probs.sum() - 1.0) < 1e-12
    q = probs * np.exp(-losses)
    assert q.sum() <= 1.0 + 1e-12  # a valid pair: Q is a (sub-)probability
    assert np.all(losses >= -eps0 - H) and np.all(losses[probs > 0] <= eps0 + H)
    rev_inf = max(0.0, 1.0 - q.sum())
    eps = np.linspace(0, eps0 * 1.01, 700)
    rev = _hockey(-losses, q, rev_inf, eps)
    assert np.all(rev >= _floor(eps, k, eps0, n))


@pytest.mark.parametrize("k, eps0, n", [(2, 1.0, 6), (3, 1.5, 5), (4, 1.0, 4)])
@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_composed_pld_dominates_exact_composition_of_blanket_pair(k, eps0, n, rounds):
    loss, prob = _blanket_pair(k, eps0, n)
    assert abs(prob.sum() - 1) < 1e-12
    L, P = _compose_exact(loss, prob, rounds)
    acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(k, eps0, n), count=rounds)
    for eps in np.linspace(0, rounds * eps0, 41):
        exact = float(np.sum(P * -np.expm1(np.minimum(eps - L, 0.0))))
        if k == 2:
            # the accountant composes the (tighter) certified worst case: compare with the exact
            # composition of every concrete dataset pair instead (a non-adaptive adversary)
            # (1e-15 absolute: float losses log(P/Q) can exceed eps0 by a few ulps)
            exact = max(_composed_dataset_delta(eps0, n, c, rounds, eps) for c in range(n)) - 1e-15
        assert acc.get_delta(eps) >= exact
        if rounds == 1:  # the dependency itself: certified >= exact
            assert float(_cert([eps], k, eps0, n)[0]) >= exact * (1 - 1e-12)


def _composed_dataset_delta(eps0, n, c, rounds, eps):
    """Exact delta of ``rounds`` releases on the fixed k = 2 dataset c (both directions)."""
    p = math.exp(eps0) / (math.exp(eps0) + 1)
    q = 1 - p
    y = np.convolve(_binom_pmf(c, q), _binom_pmf(n - 1 - c, p))
    P = np.concatenate([q * y, [0.0]]) + np.concatenate([[0.0], p * y])
    Q = np.concatenate([p * y, [0.0]]) + np.concatenate([[0.0], q * y])
    out = 0.0
    for A, B in ((P, Q), (Q, P)):
        keep = (A > 0) & (B > 0)
        loss, prob = np.log(A[keep] / B[keep]), A[keep]
        L, W = _compose_exact(loss, prob, rounds)
        out = max(out, float(np.sum(W * -np.expm1(np.minimum(eps - L, 0.0)))))
    return out


@settings(max_examples=12, deadline=None)
@given(
    k=st.integers(2, 5),
    eps0=st.floats(0.2, 4.0),
    n=st.integers(1, 30),
    u=st.lists(st.floats(0, 1.05), min_size=20, max_size=20),
)
def test_property_pld_dominates_certified(k, eps0, n, u):
    losses, probs, inf_mass = _pmf_arrays(shuffled_krr_pld(k, eps0, n))
    eps = np.asarray(u) * eps0
    # For n = 1 the PLD is the exact k-RR pair (atoms at +-eps0), while the certified curve carries
    # its relative outward rounding _REL_INFLATION = 1e-10; allow that (and a few ulps), no more.
    # For n >= 2 the floor is the exact curve (brute force; every dataset's delta for k = 2).
    floor = _cert(eps, k, eps0, n) if n == 1 else _floor(eps, k, eps0, n)
    assert np.all(_hockey(losses, probs, inf_mass, eps) >= floor * (1 - 2e-10))


# ----- the accountant --------------------------------------------------------------------------


@pytest.mark.parametrize("k, eps0, n", CASES)
@pytest.mark.parametrize("delta", [1e-2, 1e-4, 1e-6])
def test_single_release_epsilon_matches_certified_within_discretisation(k, eps0, n, delta):
    single = single_round_epsilon(k, eps0, n, delta)
    got = ShuffleAccountant().compose(ShuffledKRRDpEvent(k, eps0, n)).get_epsilon(delta)
    assert got <= single + 2 * H
    if k == 2:  # the certified worst case is tighter than the blanket: between it and the exhibited
        assert got >= ShuffledKRR(k, eps0, n).epsilon_lower(delta)
    else:
        assert single <= got


@pytest.mark.parametrize("k, eps0, n", [(2, 1.0, 60), (3, 2.0, 50)])
def test_composition_is_monotone_and_below_basic_and_advanced(k, eps0, n):
    ev = ShuffledKRRDpEvent(k, eps0, n)
    delta = 1e-3
    single = single_round_epsilon(k, eps0, n, delta)
    prev = 0.0
    for rounds in (1, 2, 3, 5, 8):
        acc = ShuffleAccountant().compose(ev, count=rounds)
        eps_r = acc.get_epsilon(rounds * delta)
        assert eps_r <= rounds * (single + 2 * H)  # basic composition (+ the PLD's grid step)
        if rounds > 1:
            assert eps_r <= rounds * single
        eps_same = acc.get_epsilon(delta)
        assert eps_same >= prev  # monotone in the count at fixed delta
        prev = eps_same
        # advanced composition (Dwork, Rothblum, Vadhan 2010): (eps', R delta + delta')
        dprime = 1e-3
        adv = math.sqrt(2 * rounds * math.log(1 / dprime)) * single + rounds * single * math.expm1(single)
        assert acc.get_epsilon(rounds * delta + dprime) <= adv
    # delta side monotone in the count too
    ds = [ShuffleAccountant().compose(ev, count=r).get_delta(0.5) for r in (1, 2, 4)]
    assert ds[0] <= ds[1] <= ds[2]


def test_compose_returns_self_and_ledger_counts():
    ev = ShuffledKRRDpEvent(2, 1.0, 20)
    g = dp_accounting.GaussianDpEvent(5.0)
    acc = ShuffleAccountant()
    assert acc.compose(ev, 2) is acc
    acc.compose(g)
    assert acc.ledger == dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(ev, 2), g])
    assert acc.supports(ev) and acc.supports(dp_event.SelfComposedDpEvent(ev, 3))
    assert not acc.supports(dp_event.UnsupportedDpEvent())


def test_mixed_ledger_dominates_each_component():
    ev = ShuffledKRRDpEvent(3, 2.0, 50)
    g = dp_accounting.GaussianDpEvent(noise_multiplier=3.0)
    lap = dp_accounting.LaplaceDpEvent(noise_multiplier=4.0)
    for rel in (NR.REPLACE_ONE, NR.REPLACE_SPECIAL):
        delta = 1e-5
        mixed = ShuffleAccountant(rel).compose(ev, 2).compose(g).compose(lap).get_epsilon(delta)
        parts = [
            ShuffleAccountant(rel).compose(ev, 2).get_epsilon(delta),
            ShuffleAccountant(rel).compose(g).get_epsilon(delta),
            ShuffleAccountant(rel).compose(lap).get_epsilon(delta),
        ]
        assert all(mixed >= p for p in parts)
        assert mixed <= sum(
            ShuffleAccountant(rel).compose(e, c).get_epsilon(delta / 3)
            for e, c in ((ev, 2), (g, 1), (lap, 1))
        )
        # the nested forms give the same answer
        nested = ShuffleAccountant(rel).compose(
            dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(ev, 2), g, lap])
        )
        assert nested.get_epsilon(delta) == pytest.approx(mixed, rel=1e-9)


def test_laplace_sensitivity_doubles_under_replace_one():
    lap = dp_accounting.LaplaceDpEvent(noise_multiplier=4.0)
    # Laplace is pure DP: eps = sensitivity / b; tiny delta isolates the pure part
    one = ShuffleAccountant(NR.REPLACE_ONE).compose(lap).get_epsilon(1e-12)
    special = ShuffleAccountant(NR.REPLACE_SPECIAL).compose(lap).get_epsilon(1e-12)
    assert one == pytest.approx(2 / 4.0, abs=2e-4)
    assert special == pytest.approx(1 / 4.0, abs=2e-4)
    native = dp_accounting.pld.PLDAccountant(NR.REPLACE_SPECIAL).compose(lap).get_epsilon(1e-12)
    assert special == pytest.approx(native, rel=1e-8)
    dl = dp_event.DiscreteLaplaceDpEvent(noise_parameter=0.5, sensitivity=1)
    assert ShuffleAccountant(NR.REPLACE_ONE).compose(dl).get_epsilon(1e-12) == pytest.approx(1.0, abs=2e-4)
    assert (
        ShuffleAccountant(NR.REPLACE_ONE).compose(dp_accounting.LaplaceDpEvent(0.0)).get_epsilon(0.1)
        == math.inf
    )


def test_gaussian_matches_native_accountant():
    g = dp_accounting.GaussianDpEvent(noise_multiplier=2.0)
    ours = ShuffleAccountant(NR.REPLACE_ONE).compose(g, 3).get_epsilon(1e-6)
    native = dp_accounting.pld.PLDAccountant(NR.REPLACE_ONE).compose(g, 3).get_epsilon(1e-6)
    assert ours == pytest.approx(native, rel=1e-8) and ours >= native


def test_non_private_event_and_empty_ledger():
    acc = ShuffleAccountant()
    assert acc.get_epsilon(1e-6) == 0.0 and acc.get_delta(0.0) == 0.0
    acc.compose(dp_event.NonPrivateDpEvent())
    assert acc.get_epsilon(1e-6) == math.inf and acc.get_delta(3.0) == 1.0
    assert acc.privacy_loss_distribution().get_delta_for_epsilon(10.0) == 1.0


def test_privacy_loss_distribution_export():
    acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(3, 2.0, 50), 2)
    pld = acc.privacy_loss_distribution()
    assert isinstance(pld, pld_lib.PrivacyLossDistribution)
    assert acc.get_epsilon(1e-4) == pytest.approx(pld.get_epsilon_for_delta(1e-4), rel=1e-8)
    assert acc.get_epsilon(1e-4) >= pld.get_epsilon_for_delta(1e-4)
    single = shuffled_krr_pld(3, 2.0, 50)
    assert isinstance(single, pld_lib.PrivacyLossDistribution)
    e1 = single.get_epsilon_for_delta(1e-4)
    e2 = single.self_compose(2).get_epsilon_for_delta(1e-4)
    # two rounds cost strictly more than one, and never more than basic composition of
    # (eps(delta/2), delta/2) twice (the PLD composition is the tight one)
    assert e1 < e2 <= 2.0 * single.get_epsilon_for_delta(5e-5)
    assert e2 == pytest.approx(acc.get_epsilon(1e-4), rel=1e-8)  # = the accountant's two rounds


def test_pld_cache_is_per_accountant_and_reused():
    ev = ShuffledKRRDpEvent(2, 1.0, 20)
    acc = ShuffleAccountant()
    a = acc.shuffled_pld(ev)
    assert acc.shuffled_pld(ShuffledKRRDpEvent(2, 1, 20)) is a
    assert ShuffleAccountant().shuffled_pld(ev) is not a


# ----- bad inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [0, -1, 1.5, True, float("nan"), "2"])
def test_compose_rejects_bad_count(count):
    with pytest.raises(ParameterError, match=r"^count must be"):
        ShuffleAccountant().compose(ShuffledKRRDpEvent(2, 1.0, 10), count)


@pytest.mark.parametrize(
    "event",
    [
        "not an event",
        None,
        dp_event.UnsupportedDpEvent(),
        dp_event.PoissonSampledDpEvent(0.5, ShuffledKRRDpEvent(2, 1.0, 10)),
        dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(1.0), dp_event.UnsupportedDpEvent()]),
    ],
)
def test_compose_rejects_unsupported_events(event):
    acc = ShuffleAccountant()
    with pytest.raises(UnsupportedShuffleEventError, match=r"event"):
        acc.compose(event)
    with pytest.raises(ValueError):
        acc.compose(event)
    with pytest.raises(dp_accounting.UnsupportedEventError):
        acc.compose(event)
    assert acc.ledger == dp_event.NoOpDpEvent() or acc.ledger == dp_event.ComposedDpEvent([])


@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5, float("nan"), float("inf"), True, "0.1"])
def test_get_epsilon_rejects_bad_delta(delta):
    with pytest.raises(ParameterError, match=r"^target_delta must be"):
        ShuffleAccountant().get_epsilon(delta)


@pytest.mark.parametrize("eps", [-0.1, float("nan"), float("inf"), True, None])
def test_get_delta_rejects_bad_epsilon(eps):
    with pytest.raises(ParameterError, match=r"^target_epsilon must be"):
        ShuffleAccountant().get_delta(eps)


@pytest.mark.parametrize("rel", [NR.ADD_OR_REMOVE_ONE, "REPLACE_ONE", 2, None])
def test_constructor_rejects_bad_relation(rel):
    with pytest.raises(ParameterError, match=r"^neighboring_relation must be"):
        ShuffleAccountant(rel)


@pytest.mark.parametrize("h", [0, -1e-4, 2.0, float("nan"), float("inf"), True])
def test_constructor_and_pld_reject_bad_interval(h):
    with pytest.raises(ParameterError, match=r"^value_discretization_interval must be"):
        ShuffleAccountant(value_discretization_interval=h)
    with pytest.raises(ParameterError, match=r"^value_discretization_interval must be"):
        shuffled_krr_pld(2, 1.0, 10, h)


@pytest.mark.parametrize(
    "args, name",
    [((1, 1.0, 10), "k"), ((2, float("nan"), 10), "eps0"), ((2, 1.0, 0), "n"), ((2, 1.0, 2.5), "n")],
)
def test_shuffled_krr_pld_rejects_bad_args(args, name):
    with pytest.raises(ParameterError, match=rf"^{name} must be"):
        shuffled_krr_pld(*args)
