"""Guards of the certified engine: the soundness invariant, certified-only answers, bounded work.

Issue 10: a certification that fails must return the always-valid answer (``eps0``) or raise,
never an uncertified number; an answer below the exhibited one-outcome bound raises
:class:`SoundnessError`; work estimates and loops are bounded.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting import ParameterError
from shuffle_accounting.shuffled_krr import ShuffledKRR, blanket, calibrate_eps0, mechanism, shuffled_krr_pld
from shuffle_accounting.shuffled_krr.accountant import MAX_LOSS_GRID
from shuffle_accounting.shuffled_krr.blanket import BlanketEvaluator, SoundnessError, certified_log_delta


def test_log_delta_below_exhibited_raises(monkeypatch):
    def too_small(eps, k, eps0, n):
        return np.full(np.shape(eps), -1e6)

    monkeypatch.setattr(mechanism, "certified_log_delta", too_small)
    m = ShuffledKRR(3, 30.0, 5)
    with pytest.raises(SoundnessError, match="exhibited"):
        m.log_delta(29.97)
    with pytest.raises(SoundnessError):
        m.delta([1.0, 29.97])


def test_nan_log_delta_raises(monkeypatch):
    monkeypatch.setattr(
        mechanism, "certified_log_delta", lambda eps, k, eps0, n: np.full(np.shape(eps), np.nan)
    )
    with pytest.raises(SoundnessError):
        ShuffledKRR(3, 1.0, 5).log_delta(0.5)


def test_epsilon_never_returns_an_uncertified_value(monkeypatch):
    """If the final public evaluation never certifies, the answer is eps0 (always valid)."""
    m = ShuffledKRR(4, 2.0, 50)
    honest = m.epsilon(1e-3)
    assert honest < 2.0
    # the root search sees the true curve, the public evaluation refuses every eps < eps0
    monkeypatch.setattr(ShuffledKRR, "log_delta", lambda self, eps, **kw: 0.0)
    assert m.epsilon(1e-3) == 2.0


def test_epsilon_below_one_outcome_bound_raises(monkeypatch):
    m = ShuffledKRR(3, 30.0, 5)
    monkeypatch.setattr(BlanketEvaluator, "certified", lambda self, e, *a, **k: (-1e6, -1.0))
    monkeypatch.setattr(ShuffledKRR, "log_delta", lambda self, eps, **kw: -1e6)
    with pytest.raises(SoundnessError, match="exhibited"):
        m.epsilon(1e-6)


@pytest.mark.parametrize(
    "k, eps0, n, delta, low",
    [(3, 30.0, 5, 1e-6, 29.999999), (3, 20.0, 1000, 1e-6, 19.999999), (3, 14.0, 3, 1e-12, 13.99999999999)],
)
def test_issue_10_epsilon_reproducers_at_least_exhibited(k, eps0, n, delta, low):
    assert ShuffledKRR(k, eps0, n).epsilon(delta) >= low


def test_chord_bound_near_eps0_is_tight_and_sound():
    """Just below eps0 the curve is linear in e^eps: delta ~ p^n (1 - e^(eps - eps0)) for n = 5."""
    m = ShuffledKRR(3, 30.0, 5)
    for gap in [1e-3, 1e-6, 1e-9, 1e-13]:
        eps = 30.0 - gap
        log_p = -math.log1p(2 * math.exp(-30.0))
        low = 5 * log_p + math.log(-math.expm1(eps - 30.0))
        got = m.log_delta(eps)
        assert low <= got <= low + 1e-6


def test_delta_capped_at_one():
    assert ShuffledKRR(2, 50.0, 1).delta(0.0) == 1.0
    assert ShuffledKRR(2, 700.0, 3).delta(0.0) <= 1.0
    assert float(certified_log_delta(0.0, 2, 50.0, 1)) == 0.0


def test_eps0_700_no_nan():
    ld = ShuffledKRR(3, 700.0, 5).log_delta(np.array([0.0, 0.7, 1.0, 100.0, 699.0, 699.999]))
    assert not np.any(np.isnan(ld)) and np.all(ld <= 0.0)


def test_work_estimate_is_constant_memory():
    bl = BlanketEvaluator(3, 1.0, 10**15)
    est = bl._pairs_estimate(0.3, (1, 10**15, 1, 10**15))
    assert est > 1e15  # the full problem: estimated, not enumerated


def test_small_budget_gives_a_looser_certified_value():
    """Past the work budget the evaluation moves to fewer users: certified, not below the exact value."""
    full = float(certified_log_delta(0.3, 3, 1.0, 20000))
    capped = float(certified_log_delta(0.3, 3, 1.0, 20000, max_pairs=2000.0))
    assert capped >= full - 1e-9 * abs(full)
    assert capped <= 0.0 and math.isfinite(capped)


def test_calibrate_eps0_tiny_rtol_terminates_certified():
    eps0 = calibrate_eps0(k=2, n=100, epsilon=0.5, delta=1e-4, rtol=1e-17)
    # the returned end is certified: the single-round certificate holds there
    assert float(certified_log_delta(0.5, 2, eps0, 100)) <= math.log(1e-4)
    coarse = calibrate_eps0(k=2, n=100, epsilon=0.5, delta=1e-4, rtol=1e-6)
    assert abs(eps0 - coarse) <= 2e-6 * coarse


def test_shuffled_krr_pld_rejects_a_loss_grid_too_fine():
    with pytest.raises(ParameterError, match="value_discretization_interval"):
        shuffled_krr_pld(3, 1.0, 10, 1e-300)
    with pytest.raises(ParameterError, match="value_discretization_interval"):
        shuffled_krr_pld(3, 1.0, 10, 0.99 / MAX_LOSS_GRID)


def test_soundness_error_is_a_runtime_error():
    assert issubclass(SoundnessError, RuntimeError) and not issubclass(SoundnessError, ValueError)
    assert blanket.EPS0_MAX == 700.0


def test_large_n_epsilon_is_certified_and_survives_a_failing_fast_path(monkeypatch):
    """From FAST_BLANKET_MIN_N on, epsilon is certified by the sub-linear evaluator's upper bound,
    re-checked through the public blanket path; a wrong or failing fast root is repaired."""
    from shuffle_accounting.shuffled_krr import blanket_fast

    n = mechanism.FAST_BLANKET_MIN_N
    m = ShuffledKRR(10, 2.0, n)
    fast = m.epsilon(1e-9)
    assert m.log_delta(fast, method="blanket") <= math.log(1e-9)  # the public (fast) path
    up, _ = blanket_fast.certified_log_delta_bounds(fast, 10, 2.0, n)
    assert float(up) <= math.log(1e-9)
    # the exact reference sum agrees to the fast evaluator's tolerance (plus its own budget)
    assert float(certified_log_delta(fast, 10, 2.0, n)) <= math.log(1e-9) + 2e-6
    # a fast root that is far too small is stepped up until the public path accepts it
    monkeypatch.setattr(blanket_fast, "certified_epsilon", lambda *a, **k: 0.5 * fast)
    stepped = m.epsilon(1e-9)
    assert stepped >= fast * (1 - 1e-6) and m.log_delta(stepped, method="blanket") <= math.log(1e-9)

    # a failing fast path falls back to the exact root search
    def boom(*a, **k):
        raise ValueError("fast path refused")

    monkeypatch.setattr(blanket_fast, "certified_epsilon", boom)
    exact = m.epsilon(1e-9)
    assert exact == pytest.approx(fast, rel=1e-7)


@pytest.mark.parametrize("n", [5, 10**6])
def test_tiny_eps0_with_third_values_is_answered_not_a_domain_error(n):
    """k = 3, eps0 = 1e-250: the blanket's third-value fraction rounds to 1 (it raised a math domain
    error); the local k-RR curve is returned instead, which bounds every n by post-processing."""
    from shuffle_accounting.shuffled_krr.blanket import certified_log_delta

    m = ShuffledKRR(3, 1e-250, n)
    local = float(certified_log_delta(5e-251, 3, 1e-250, 1))
    for method in ("auto", "blanket"):
        got = m.log_delta(5e-251, method=method)
        assert math.isfinite(got) and got == local
    assert 0.0 < m.epsilon(1e-300) <= 1e-250
    assert m.delta(1e-250) == 0.0


@pytest.mark.parametrize("n", [2, 5, 10**6])
def test_degenerate_blanket_gives_the_local_curve_everywhere(n):
    """The blanket module itself (public functions, grid, accountant) answers eps0 = 1e-250, k = 3."""
    eps = np.array([0.0, 2.5e-251, 5e-251, 1e-250])
    local = certified_log_delta(eps, 3, 1e-250, 1)
    assert blanket.blanket_degenerate(3, 1e-250) and not blanket.blanket_degenerate(3, 1e-10)
    assert np.array_equal(certified_log_delta(eps, 3, 1e-250, n), local)
    assert np.array_equal(blanket.certified_log_delta_grid(eps, 3, 1e-250, n), local)
    assert local[-1] == -np.inf and np.all(np.isfinite(local[:-1]))
    pld = shuffled_krr_pld(3, 1e-250, n)
    assert pld.get_epsilon_for_delta(1e-300) <= 2e-4  # eps0 rounded up to the 1e-4 loss grid (+ inflation)
