"""The Fourier leaves of shuffled binary RR (``_spectral.leaf_bounds``, issue 11, flat band at scale).

``leaf_bounds`` brackets ``h_c(eps) = H_E(P_c || Q_c)`` for many datasets at once from a short
discrete Fourier sum. Checked against 50-digit brute force (mpmath) for small ``n``, against the
windowed-convolution leaves of ``WorstCaseProblem.leaf`` for larger ``n``, and as the every-leaf
sweep of the branch and bound (``SPECTRAL_MIN_N`` lowered so that small, brute-forceable ``n``
take that path): certificates re-checked by ``verify``, tampering caught, and the budget's end
settled soundly.
"""

from __future__ import annotations

import functools
import math

import mpmath as mp
import numpy as np
import pytest

from shuffle_accounting._validation import WorkBudgetExceeded
from shuffle_accounting.shuffled_krr import worst_case as W
from shuffle_accounting.shuffled_krr._spectral import leaf_bounds

from _brute import brute_deltas_k2 as brute_deltas


def _p(eps0: float) -> tuple[float, float]:
    pr = W.WorstCaseProblem(eps0, 2, 0.0)
    return pr.p, pr.pbar


@functools.lru_cache(maxsize=256)
def _exact_pq(n: int, eps0: float, c: int) -> tuple[list, list]:
    """The laws ``P_c``, ``Q_c`` of ``S`` with 50 significant digits (repeated convolution)."""
    with mp.workdps(50):
        p = 1 / (1 + mp.e ** (-mp.mpf(eps0)))
        q = 1 - p
        y = [mp.mpf(1)]
        for pr in [q] * c + [p] * (n - 1 - c):
            z = [mp.mpf(0)] * (len(y) + 1)
            for i, v in enumerate(y):
                z[i] += v * (1 - pr)
                z[i + 1] += v * pr
            y = z
        # target at 0 (reports 1 w.p. q): P(s) = p Y(s) + q Y(s - 1); at 1: Q(s) = q Y(s) + p Y(s - 1)
        P = [p * a + q * b for a, b in zip(y + [0], [0] + y)]
        Q = [q * a + p * b for a, b in zip(y + [0], [0] + y)]
        return P, Q


def exact_log_h(n: int, eps0: float, c: int, eps: float) -> float:
    """``log h_c(eps)`` with 50 significant digits."""
    P, Q = _exact_pq(n, eps0, c)
    with mp.workdps(50):
        E = mp.e ** mp.mpf(eps)
        h = mp.fsum(max(mp.mpf(0), a - E * b) for a, b in zip(P, Q))
        return float(mp.log(h)) if h > 0 else -math.inf


@pytest.mark.parametrize("n", [2, 3, 7, 24, 41])
@pytest.mark.parametrize("eps0", [0.05, 1.0, 3.0, 10.0])
def test_brackets_the_50_digit_value(n, eps0):
    p, pbar = _p(eps0)
    cs = np.arange(n)
    for eps in (0.0, 1e-7, 0.01 * eps0, 0.3 * eps0, 0.9 * eps0):
        for level in (0.0, -20.0):
            r = leaf_bounds(n, eps0, p, pbar, cs, eps, level)
            if eps <= 0.3 * eps0:  # deep in the tail a bracket may be unproved (nan)
                assert not np.isnan(r).any()
            for c in np.flatnonzero(~np.isnan(r[0])).tolist():
                t = exact_log_h(n, eps0, c, eps)
                assert r[1, c] <= t <= r[0, c], (n, eps0, eps, c, r[:, c], t)
                if t > -10.0 and eps <= 0.3 * eps0:  # tight where h is not tiny (absolute errors)
                    assert r[0, c] - r[1, c] < 1e-9, (n, eps0, eps, c, r[:, c])


def _pmf_50(n: int, eps0: float, c: int) -> tuple[list, mp.mpf, mp.mpf]:
    """The pmf of ``Y_c`` with 50 digits, and ``(p, pbar)``."""
    with mp.workdps(50):
        p = 1 / (1 + mp.e ** (-mp.mpf(eps0)))
        y = [mp.mpf(1)]
        for pr in [1 - p] * c + [p] * (n - 1 - c):
            y = [a * (1 - pr) + b * pr for a, b in zip(y + [mp.mpf(0)], [mp.mpf(0)] + y)]
        return y, p, 1 - p


@pytest.mark.parametrize("eps0", [1e-8, 1e-6])
def test_increments_at_their_zero_small_eps0(eps0):
    """Near the eps where an increment ``Delta(t) = a Y(t) - a' Y(t - 1)`` vanishes, its sign
    must not be certified wrongly. With ``a' = p E - pbar`` (relative error ~u / eps0 from the
    cancellation) it was, and the upper value fell up to 5e-8 (relative) below ``h_c``."""
    n = 11
    p, pbar = _p(eps0)
    checked = 0
    for c in (0, 5):
        y, P, Q = _pmf_50(n, eps0, c)
        for t in range(1, n):
            with mp.workdps(50):
                r = y[t] / y[t - 1]
                if r <= 1:
                    continue
                zero = mp.log((P * r + Q) / (Q * r + P))  # a Y(t) = a' Y(t - 1) here
            for k in range(7, 13):
                for sign in (-1, 1):
                    eps = float(zero * (1 + sign * mp.mpf(10) ** -k))
                    up, lo = leaf_bounds(n, eps0, p, pbar, np.array([c]), eps, -5.0)[:, 0]
                    if math.isnan(up):
                        continue
                    t_log = exact_log_h(n, eps0, c, eps)
                    assert lo <= t_log <= up, (eps0, c, t, eps, up, lo, t_log)
                    checked += 1
    assert checked > 50


def test_tiny_eps0():
    """``eps0 = 1e-17``: ``p`` and ``pbar`` round to 1/2 (``p E - pbar`` was 0 at ``eps = 0``:
    a domain error); ``a'`` from ``tanh(eps0 / 2)`` brackets the 50-digit value."""
    n, eps0 = 21, 1e-17
    p, pbar = _p(eps0)
    for eps in (0.0, 1e-18):
        r = leaf_bounds(n, eps0, p, pbar, np.arange(n), eps, -5.0)
        for c in (0, 7, 10, 20):
            if not math.isnan(r[0, c]):
                t = exact_log_h(n, eps0, c, eps)
                assert r[1, c] <= t <= r[0, c]


@pytest.mark.parametrize("n,eps0", [(3001, 0.5), (20000, 2.0), (150001, 6.0)])
def test_agrees_with_the_windowed_leaves(n, eps0):
    pr = W.WorstCaseProblem(eps0, n, -8.0)
    cs = np.unique(np.linspace(0, n - 1, 40).astype(np.int64))
    for eps in (0.0, 1e-6, 1e-3):
        r = leaf_bounds(n, eps0, pr.p, pr.pbar, cs, eps, -8.0)
        for i, c in enumerate(cs.tolist()):
            up, lo = pr.leaf(c, eps)
            assert r[0, i] >= lo and r[1, i] <= up  # both brackets hold the true value
            assert r[0, i] - r[1, i] < 2e-9


@pytest.mark.parametrize(
    "n,eps0,eps,level", [(40001, 1.0, 2e-5, -5.0), (65536, 10.0, 1.579, -3.0), (189614, 0.211, 0.0023, -24.7)]
)
def test_a_dataset_does_not_depend_on_its_chunk(n, eps0, eps, level):
    """A dataset's bounds are the same bits in a run, scattered, alone, shuffled, repeated or
    after other datasets (verify recomputes a cover's pieces in other chunks than the search).
    The last two cases have ``h_c`` far below ``a Y_max``, where the rounding of a matrix product
    and of the phase recurrence along a run differed by up to ``2e-8`` in log."""
    p, pbar = _p(eps0)
    run = np.arange(10000, 12000)
    ref = leaf_bounds(n, eps0, p, pbar, run, eps, level)
    rng = np.random.default_rng(0)
    for cs in (
        run[::7],
        np.arange(10000 - 4097, 12000),  # the run at another offset of its chunk
        rng.permutation(run),
        np.repeat(run[:50], 3),
        np.concatenate((rng.integers(0, n, 300), run[1234:1300])),
    ):
        r = leaf_bounds(n, eps0, p, pbar, cs, eps, level)
        inside = (cs >= 10000) & (cs < 12000)
        assert np.array_equal(r[:, inside], ref[:, cs[inside] - 10000], equal_nan=True)
    one = np.stack(
        [leaf_bounds(n, eps0, p, pbar, np.array([c]), eps, level)[:, 0] for c in run[:2000:97]], axis=1
    )
    assert np.array_equal(one, ref[:, :2000:97], equal_nan=True)


def test_far_tail_is_nan_at_once():
    """``eps = eps0 / 2`` at ``n = 1e6``: the threshold guess is ~500 standard deviations below the
    mean, ``J`` would be ~1600 (13000 at ``n = 1e7``, gigabytes of tables), and no bracket is ever
    proved there: ``nan`` (the windowed fallback) without building the tables."""
    import tracemalloc

    n, eps0 = 10**6, 1.0
    p, pbar = _p(eps0)
    tracemalloc.start()
    try:
        r = leaf_bounds(n, eps0, p, pbar, np.arange(1000, 1020), 0.5, -10.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.isnan(r).all() and peak < 10e6
    assert not np.isnan(leaf_bounds(n, eps0, p, pbar, np.arange(1000, 1020), 0.001, -10.0)).any()


def test_mirror_and_edges():
    n, eps0 = 201, 2.0
    p, pbar = _p(eps0)
    r = leaf_bounds(n, eps0, p, pbar, np.array([0, 1, n - 2, n - 1]), 0.001, -3.0)
    for i, c in enumerate([0, 1, n - 2, n - 1]):
        t = exact_log_h(n, eps0, c, 0.001) if c < 2 else None
        if t is not None:
            assert r[1, i] <= t <= r[0, i]
    assert np.all(leaf_bounds(n, eps0, p, pbar, np.array([0, 5]), eps0, -3.0) == -math.inf)
    assert np.all(leaf_bounds(n, eps0, p, pbar, np.array([0, 5]), 2 * eps0, -3.0) == -math.inf)
    assert leaf_bounds(n, eps0, p, pbar, np.array([], dtype=np.int64), 0.1, -3.0).shape == (2, 0)


@pytest.fixture
def spectral_everywhere(monkeypatch):
    monkeypatch.setattr(W, "SPECTRAL_MIN_N", 2)
    W.clear_bound_memo()
    yield
    W.clear_bound_memo()


@pytest.mark.parametrize("eps0,n,f", [(0.5, 200, 0.99), (2.0, 301, 0.999), (1.0, 1500, 0.99)])
def test_flat_band_sweep_by_fourier_leaves(spectral_everywhere, eps0, n, f):
    d0 = float(np.max(brute_deltas(eps0, n, 0.0)))
    cert = W.certify(eps0, n, delta=f * d0)
    assert W.verify(cert)
    assert any(iv.spectral for iv in cert.cover)
    assert cert.epsilon <= cert.epsilon_lower * (1 + 1e-4)
    assert float(np.max(brute_deltas(eps0, n, cert.epsilon))) <= f * d0 * (1 + 1e-12)
    assert float(np.max(brute_deltas(eps0, n, cert.epsilon_lower))) > f * d0
    dq = W.certify(eps0, n, eps=cert.epsilon_lower)
    assert W.verify(dq)
    assert all(iv.spectral for iv in dq.cover)
    truth = float(np.max(brute_deltas(eps0, n, cert.epsilon_lower)))
    assert truth <= math.exp(dq.log_delta) * (1 + 1e-12)
    assert dq.log_delta - math.log(truth) < 1e-8
    assert math.isclose(math.exp(dq.exhibited_log_delta), truth, rel_tol=1e-8)


def test_fourier_sweep_equals_the_blocks(monkeypatch):
    """Both every-leaf sweeps certify the same epsilon (their leaves differ only in rounding)."""
    eps0, n = 1.0, 700
    d = 0.995 * W.certify(eps0, n, eps=0.0).delta
    W.clear_bound_memo()
    blocks = W.certify(eps0, n, delta=d)
    monkeypatch.setattr(W, "SPECTRAL_MIN_N", 2)
    W.clear_bound_memo()
    fourier = W.certify(eps0, n, delta=d)
    W.clear_bound_memo()
    assert not any(iv.spectral for iv in blocks.cover) and any(iv.spectral for iv in fourier.cover)
    assert math.isclose(blocks.epsilon, fourier.epsilon, rel_tol=1e-9)
    assert fourier.worst_c in (blocks.worst_c, n - 1 - blocks.worst_c)


def test_verify_accepts_fourier_pieces_far_below_the_point_mass(spectral_everywhere):
    """eps0 = 10: the middle datasets' ``h_c`` (~e^-12) is far below ``a Y_max``; verify recomputes
    the pieces at odd multiples of 4096 in other chunks than the sweep did (it rejected this
    sound certificate while those values differed in the last bits of the sums)."""
    cert = W.certify(10.0, 30001, eps=2.0)
    assert sum(iv.spectral for iv in cert.cover) == 8
    assert W.verify(cert)


def test_piece_slack_never_crosses_the_target(monkeypatch, spectral_everywhere):
    """A Fourier leaf at most delta but within the recorded slack (1e-12 relative) of it is not
    recorded as a piece at that eps (its piece would be above delta: the certificate's delta
    exceeded the target and verify rejected it). Forced: upper values within 1e-3 of log delta
    are raised to log delta - 1e-14 (still upper values)."""
    eps0, n = 0.5, 200
    d = 0.99 * float(np.max(brute_deltas(eps0, n, 0.0)))
    target = math.log(d)
    real = W.spectral_leaf_bounds
    raised = []

    def near(*args):
        out = real(*args)
        close = (out[0] <= target) & (out[0] > target - 1e-3)
        out[0, close] = target - 1e-14
        raised.append(int(close.sum()))
        return out

    monkeypatch.setattr(W, "spectral_leaf_bounds", near)
    cert = W.certify(eps0, n, delta=d)
    assert sum(raised) > 0
    assert all(iv.log_bound <= target for iv in cert.cover)
    assert cert.log_delta <= target and W.verify(cert)


def test_verify_catches_tampered_fourier_pieces(spectral_everywhere):
    eps0, n = 2.0, 301
    dq = W.certify(eps0, n, eps=1e-5)
    assert W.verify(dq)
    ivs = list(dq.cover)
    k = max(range(len(ivs)), key=lambda i: ivs[i].c_hi - ivs[i].c_lo)
    iv = ivs[k]
    for bad in (
        W.CoverInterval(iv.c_lo, iv.c_hi, iv.eps, iv.log_bound - 1e-6, None, True),  # bound too low
        W.CoverInterval(iv.c_lo, iv.c_hi, iv.eps, iv.log_bound, (iv.c_lo, 0), True),  # both kinds
        W.CoverInterval(iv.c_lo, iv.c_hi, iv.eps, iv.log_bound, None, False),  # claimed as an interval
    ):
        cover = tuple(bad if i == k else x for i, x in enumerate(ivs))
        tampered = type(dq)(**{**dq.__dict__, "cover": cover})
        if bad.spectral or bad.block is not None:
            assert not W.verify(tampered)
        else:  # the interval bound U of a wide piece is looser than its leaves' maximum
            assert iv.c_hi > iv.c_lo and not W.verify(tampered)


def test_budget_end_settles_soundly(monkeypatch, spectral_everywhere):
    """When the budget runs out after a round of the sweep (forced: each Fourier evaluation is
    charged 10 more per dataset), the leaves left (19 here) are settled at larger eps: the cover is
    complete and re-checkable, and the partial epsilon holds for every dataset."""
    real = W.WorstCaseProblem.spectral_many

    def costly(self, cs, eps):
        out = real(self, cs, eps)
        self.evaluations += 10 * len(cs)
        return out

    monkeypatch.setattr(W.WorstCaseProblem, "spectral_many", costly)
    eps0, n = 1.0, 400
    d = 0.99 * float(np.max(brute_deltas(eps0, n, 0.0)))
    with pytest.raises(WorkBudgetExceeded) as info:
        W.certify(eps0, n, delta=d, max_evals=2000)
    part = info.value.partial
    assert part is not None and W.verify(part)
    assert sum(iv.spectral for iv in part.cover) >= 2 and len({iv.eps for iv in part.cover}) >= 2
    assert float(np.max(brute_deltas(eps0, n, part.epsilon))) <= d * (1 + 1e-12)
    assert part.epsilon >= part.epsilon_lower > 0.0
    assert part.epsilon <= part.epsilon_lower * 1.1  # settled on the grid just above eps_up


def test_spectral_many_counts_and_falls_back(monkeypatch):
    """``spectral_many`` counts one evaluation per SPECTRAL_PER_EVAL datasets; a dataset whose
    threshold bracket is not proved (``nan``) is evaluated by the windowed leaf instead."""
    pr = W.WorstCaseProblem(1.0, 3000, -5.0)
    r = pr.spectral_many(np.arange(2000), 1e-4)
    assert pr.evaluations == -(-2000 // W.SPECTRAL_PER_EVAL)
    real = W.spectral_leaf_bounds

    def unproved_odd(*args):
        out = real(*args)
        out[:, 1::2] = np.nan
        return out

    monkeypatch.setattr(W, "spectral_leaf_bounds", unproved_odd)
    pr2 = W.WorstCaseProblem(1.0, 3000, -5.0)
    r2 = pr2.spectral_many(np.arange(6), 1e-4)
    assert pr2.evaluations == 1 + 3  # one chunk, three fallbacks
    assert not np.isnan(r2).any()
    for c in range(6):
        up, lo = pr2.leaf(c, 1e-4)
        assert r2[0, c] >= lo and r2[1, c] <= up and r[0, c] >= lo and r[1, c] <= up
        if c % 2:
            assert (r2[0, c], r2[1, c]) == (up, lo)


@pytest.mark.parametrize("eps0,n,f", [(0.5, 200_001, 0.99), (2.0, 2_000_000, 0.5)])
def test_lower_epsilon_beyond_auto_keeps_the_seed_leaves(eps0, n, f):
    """Beyond auto's range ``epsilon_lower`` is the module search; for k = 2 it now includes the
    certified search's seeds by their windowed leaves: within 1e-4 of the certificate's witness
    (the family's statistic alone was 10 % low at n = 1e6, eps0 = 0.5, f = 0.99) and never above
    the certified epsilon."""
    from shuffle_accounting.shuffled_krr import ShuffledKRR
    from shuffle_accounting.shuffled_krr.lower import lower_epsilon

    d = f * W.certify(eps0, n, eps=0.0).delta
    cert = W.certify(eps0, n, delta=d)
    low = lower_epsilon(d, 2, eps0, n)
    assert cert.epsilon_lower * (1 - 1e-4) <= low <= cert.epsilon
    assert ShuffledKRR(2, eps0, n).epsilon_lower(d) >= low


def test_seed_values_are_exhibited_lower_bounds():
    eps0, n = 1.0, 60
    truth = brute_deltas(eps0, n, 0.05)
    v, c = W.seed_log_delta_lower([0.05], eps0, n)
    assert v[0] <= math.log(truth[c[0]]) + 1e-12 and v[0] >= math.log(truth[c[0]]) - 1e-9
    d = float(np.max(truth))
    e, c2 = W.seed_epsilon_lower(d * 0.999, eps0, n)
    assert e >= 0.05 and brute_deltas(eps0, n, e)[c2] > d * 0.999
    assert W.seed_epsilon_lower(0.999, eps0, n) == (0.0, -1)
    with pytest.raises(ValueError, match="delta"):
        W.seed_epsilon_lower(1.5, eps0, n)
    with pytest.raises(ValueError, match="eps"):
        W.seed_log_delta_lower([-1.0], eps0, n)


def _tv_reference(n, eps0, count=4):
    """(F5)'s candidates by scoring every c <= (N - 1) / 2 (the O(n) scan seed_datasets replaced)."""
    N = n - 1
    if N % 2 == 0:
        return {N // 2}
    p, d = 1.0 / (1.0 + math.exp(-eps0)), math.tanh(0.5 * eps0)
    c = np.arange(N // 2 + 1, dtype=float)
    x = N * p - c * d - d * (2.0 * c - N) / (2.0 * N)
    score = (x - np.round(x)) ** 2 + (d * (2.0 * c - N) / N) ** 2
    return {int(i) for i in np.argsort(score, kind="stable")[:count]}


def test_seed_datasets_equal_the_full_scan():
    # the total-variation candidates from a widened window equal those of scoring every dataset
    # (which took about 2 minutes at n = 1e9): about 2000 (n, eps0) pairs, n up to 3e5
    rng = np.random.default_rng(5)
    ns = list(range(2, 300)) + [int(x) for x in rng.integers(300, 300_000, 40)]
    for n in ns:
        for eps0 in (1e-6, 0.05, 0.5, 2.0, 10.0, 50.0):
            got = set(W.seed_datasets(n, eps0))
            ends = set(range(min(n, 4))) | {n - 1 - j for j in range(min(n, 4))}
            assert ends <= got and _tv_reference(n, eps0) <= got, (n, eps0)
            assert len(got) <= 8 + 7 + 4
    big = W.seed_datasets(10**9, 1.0)  # N odd: four candidates near the centre
    assert sum(abs(c - 5e8) < 1e5 for c in big) >= 4
