"""Certified worst case of shuffled 3-RR (worst_case_k): exact rationals, brute force, product."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.shuffled_krr import ShuffledKRR, dataset_log_delta
from shuffle_accounting.shuffled_krr import worst_case_k as K
from shuffle_accounting.shuffled_krr.lower import lower_epsilon

from _brute import brute_max_k3

# ---------------------------------------------------------------------------------------------
# exact rational reference: h_c and the box bound U(L, m) straight from their definitions
# ---------------------------------------------------------------------------------------------


def _user(x: int, p: Fraction, pbar: Fraction) -> dict[tuple[int, int], Fraction]:
    """Law of one 3-RR report as a histogram increment (h0, h1) (h2 implicit)."""
    row = [p if y == x else pbar for y in range(3)]
    return {(1, 0): row[0], (0, 1): row[1], (0, 0): row[2]}


def _conv(a: dict, b: dict) -> dict:
    out: dict = {}
    for (x0, x1), u in a.items():
        for (y0, y1), w in b.items():
            key = (x0 + y0, x1 + y1)
            out[key] = out.get(key, Fraction(0)) + u * w
    return out


def _law(values: list[int], b: int, p: Fraction, pbar: Fraction) -> dict:
    law = {(0, 0): Fraction(1)}
    third = Fraction(1, 3)
    uni = {(1, 0): third, (0, 1): third, (0, 0): third}
    for x in values:
        law = _conv(law, _user(x, p, pbar))
    for _ in range(b):
        law = _conv(law, uni)
    return law


def _hockey(R: dict, p: Fraction, pbar: Fraction, E: Fraction) -> Fraction:
    P = _conv(R, _user(0, p, pbar))
    Q = _conv(R, _user(1, p, pbar))
    return sum((max(P[h] - E * Q.get(h, Fraction(0)), Fraction(0)) for h in P), Fraction(0))


def _values(c: tuple[int, int, int]) -> list[int]:
    return [v for v in range(3) for _ in range(c[v])]


def _exact_U(L: tuple[int, int, int], m: int, p: Fraction, pbar: Fraction, E: Fraction) -> Fraction:
    """E_{B ~ Bin(m, gamma)} H_E(T + F_L + Mult(B, 1/3) || T' + ...) (module docstring (K2))."""
    g = 3 * pbar
    return sum(
        math.comb(m, b) * g**b * (1 - g) ** (m - b) * _hockey(_law(_values(L), b, p, pbar), p, pbar, E)
        for b in range(m + 1)
    )


def _all_h(n: int, p: Fraction, pbar: Fraction, E: Fraction) -> dict[tuple[int, int], Fraction]:
    """Exact ``h_c`` of every dataset ``(c0, c1, n - 1 - c0 - c1)``."""
    return {
        (c0, c1): _hockey(_law(_values((c0, c1, n - 1 - c0 - c1)), 0, p, pbar), p, pbar, E)
        for c0 in range(n)
        for c1 in range(n - c0)
    }


def _every_box(n: int, h: dict[tuple[int, int], Fraction]):
    """Every box ``(a0, b0, a1, b1)`` that :func:`worst_case_k.clip_box` keeps as it is, with the
    exact ``h_c`` of the datasets inside it."""
    for a0 in range(n):
        for b0 in range(a0, n):
            for a1 in range(n - a0):
                for b1 in range(a1, n):
                    box = (a0, b0, a1, b1)
                    if K.clip_box(box, n) != box:
                        continue
                    inside = [
                        h[c0, c1] for c0 in range(a0, b0 + 1) for c1 in range(a1, b1 + 1) if c0 + c1 <= n - 1
                    ]
                    yield box, inside


@pytest.mark.parametrize("r,E", [(Fraction(3), Fraction(3, 2)), (Fraction(7, 2), Fraction(1))])
@pytest.mark.parametrize("n", [3, 4, 5])
def test_exact_box_bound_dominates_every_dataset_in_every_box(n, r, E):
    """Theorem (K2) in exact rationals, and the engine's box bound is at least the exact U."""
    p, pbar = r / (r + 2), 1 / (r + 2)
    eps0, eps = math.log(float(r)), math.log(float(E))
    h = _all_h(n, p, pbar, E)
    pr = K.BoxProblem(eps0, n, -60.0)
    for box, inside in _every_box(n, h):
        L, m = pr.corner(box)
        U = _exact_U(L, m, p, pbar, E)
        assert U >= max(inside)
        up, low = pr.bound(box, eps)
        if U > 0:
            assert up >= math.log(U) - 1e-12
        if m == 0:  # a single dataset: U is its exact h_c, bracketed by the engine
            assert U == h[box[0], box[2]]
            if pr.is_exact(box) and U > 0:
                assert low <= math.log(U) + 1e-12
                assert up - low < 1e-6


# ---------------------------------------------------------------------------------------------
# brute force over every dataset (exact histogram enumeration of ``exact``)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("eps0,eps", [(0.5, 0.1), (1.0, 0.4), (2.0, 1.5), (5.0, 1.0)])
def test_certified_at_least_every_dataset_and_gap_small(n, eps0, eps):
    worst = brute_max_k3(eps, eps0, n)
    c = K.certify_k(3, eps0, n, eps=eps, tol=1e-5)
    assert c.log_delta >= worst - 1e-12 * abs(worst)
    assert c.exhibited_log_delta <= worst + 1e-12 * abs(worst)
    assert c.converged and c.gap <= 1e-4
    assert K.verify(c)


@pytest.mark.parametrize("n", [3, 5, 7])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_epsilon_query_brackets_the_brute_force_worst_case(n, eps0):
    delta = 1e-3
    c = K.certify_k(3, eps0, n, delta=delta, tol=1e-5)
    assert c.converged and c.epsilon_lower <= c.epsilon <= c.epsilon_lower * (1 + 1e-4) + 1e-12
    if c.epsilon_lower > 0:  # the witness really exceeds delta there; nothing exceeds it at epsilon
        assert brute_max_k3(c.epsilon_lower, eps0, n) > math.log(delta)
    assert brute_max_k3(c.epsilon, eps0, n) <= math.log(delta) + 1e-12
    assert K.verify(c)


def test_exact_leaves_match_the_histogram_enumeration():
    n, eps0, eps = 12, 1.0, 0.3
    pr = K.BoxProblem(eps0, n, -60.0)
    for c0 in range(n):
        for c1 in range(n - c0):
            c2 = n - 1 - c0 - c1
            b1, b2 = (c0, c0, c1, c1), (c1, c1, c0, c0)  # (K1): the reverse direction is the mirror
            assert pr.is_exact(b1) and pr.is_exact(b2)
            x = float(dataset_log_delta(eps, 3, eps0, [c0, c1, c2]))
            up = max(pr.bound(b1, eps)[0], pr.bound(b2, eps)[0])
            low = max(pr.bound(b1, eps)[1], pr.bound(b2, eps)[1])
            assert low <= x <= up and up - low < 1e-7


# ---------------------------------------------------------------------------------------------
# properties, certificates, product
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0])
def test_certified_at_most_blanket_and_monotone_in_eps(eps0):
    m = ShuffledKRR(3, eps0, 30)
    grid = [0.05 * eps0, 0.2 * eps0, 0.5 * eps0]
    vals = [K.certify_k(3, eps0, 30, eps=e).log_delta for e in grid]
    assert all(b <= a for a, b in zip(vals, vals[1:]))
    # where the blanket is itself the worst case (to ~1e-7), the cover is the root box, whose
    # bound is the blanket computed with this module's (more conservative) rounding: equal to
    # 1e-8; ``method="auto"`` returns the minimum, never above the blanket
    assert all(v <= float(m.log_delta(e, method="blanket")) + 1e-8 for v, e in zip(vals, grid))
    assert all(float(m.log_delta(e)) <= float(m.log_delta(e, method="blanket")) for e in grid)
    c = K.certify_k(3, eps0, 30, delta=1e-4)
    assert c.epsilon <= m.epsilon(1e-4, method="blanket")


def test_monotone_in_n():
    eps = [K.certify_k(3, 1.0, n, delta=1e-4).epsilon for n in (10, 20, 40)]
    assert all(b <= a * (1 + 1e-4) for a, b in zip(eps, eps[1:]))


def test_verify_rejects_tampering():
    c = K.certify_k(3, 1.0, 15, eps=0.3)
    assert K.verify(c)
    worst = max(range(len(c.cover)), key=lambda i: c.cover[i].log_bound)
    low = dataclasses.replace(c.cover[worst], log_bound=c.cover[worst].log_bound - 1e-3)
    bad = c.cover[:worst] + (low,) + c.cover[worst + 1 :]
    assert not K.verify(dataclasses.replace(c, cover=bad))
    assert not K.verify(dataclasses.replace(c, cover=c.cover[1:]))  # a hole in the cover
    assert not K.verify(dataclasses.replace(c, log_delta=c.log_delta - 1e-3))
    assert not K.verify(dataclasses.replace(c, worst_others=(1, 1, 1)))  # not a dataset of n = 15


def test_product_uses_it_for_k3():
    m = ShuffledKRR(3, 2.0, 30)
    assert m.auto_method == "worst-case"
    e, eb = m.epsilon(1e-4), m.epsilon(1e-4, method="blanket")
    assert e <= eb and m.delta(e) <= 1e-4
    cert = m.certificate(delta=1e-4)
    assert isinstance(cert, K.WorstCaseKCertificate) and K.verify(cert)
    # the witness and the exhibited search (the witness's bisection is rounded down at its level)
    assert m.epsilon_lower(1e-4) == max(cert.epsilon_lower, lower_epsilon(1e-4, 3, 2.0, 30)) <= e
    wd = m.worst_dataset(0.5)
    assert len(wd.others) == 3 and sum(wd.others) == 29
    assert wd.log_delta <= float(m.log_delta(0.5))
    assert ShuffledKRR(3, 2.0, 1000).auto_method == "blanket"


def test_bad_inputs_raise_naming_the_parameter():
    with pytest.raises(ParameterError, match="k must be 3"):
        K.certify_k(4, 1.0, 10, eps=0.1)
    with pytest.raises(ParameterError, match="k"):
        K.certify_k(1, 1.0, 10, eps=0.1)
    with pytest.raises(ParameterError, match="exactly one"):
        K.certify_k(3, 1.0, 10)
    with pytest.raises(ParameterError, match="exactly one"):
        K.certify_k(3, 1.0, 10, eps=0.1, delta=1e-3)
    for bad in (0.0, -1.0, math.nan, math.inf, True, "1", 701.0):
        with pytest.raises(ParameterError, match="eps0"):
            K.certify_k(3, bad, 10, eps=0.1)
    for bad in (1, 0, 2.5, True, math.nan):
        with pytest.raises(ParameterError, match="n"):
            K.certify_k(3, 1.0, bad, eps=0.1)
    for bad in (0.0, 1.0, math.nan, -1e-3):
        with pytest.raises(ParameterError, match="delta"):
            K.certify_k(3, 1.0, 10, delta=bad)
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ParameterError, match="eps"):
            K.certify_k(3, 1.0, 10, eps=bad)
    for bad in (0.0, 2.0, math.nan):
        with pytest.raises(ParameterError, match="tol"):
            K.certify_k(3, 1.0, 10, eps=0.1, tol=bad)
    for bad in (0, 1.5, True):
        with pytest.raises(ParameterError, match="max_evals"):
            K.certify_k(3, 1.0, 10, eps=0.1, max_evals=bad)
    for bad in (1, 0, -1.0, "yes", None, math.nan, math.inf):
        with pytest.raises(ParameterError, match="deep"):
            K.certify_k(3, 1.0, 10, eps=0.1, deep=bad)
    with pytest.raises(ParameterError, match="box"):
        K.box_log_bound(0.1, 1.0, 10, (0, 1, 2))
    with pytest.raises(ParameterError, match=r"box\[1\]"):
        K.box_log_bound(0.1, 1.0, 10, (5, 4, 0, 0))
    with pytest.raises(ParameterError, match=r"box\[2\]"):
        K.box_log_bound(0.1, 1.0, 10, (5, 5, 6, 6))
    with pytest.raises(ParameterError, match="cert"):
        K.verify("not a certificate")


def test_budget_exhaustion_returns_a_sound_certificate():
    eps0, n, eps = 1.0, 7, 0.4
    c = K.certify_k(3, eps0, n, eps=eps, max_evals=3)
    assert not c.converged and c.log_delta >= brute_max_k3(eps, eps0, n) and K.verify(c)
    d = K.certify_k(3, eps0, n, delta=1e-3, max_evals=3)
    assert d.epsilon >= K.certify_k(3, eps0, n, delta=1e-3).epsilon_lower and K.verify(d)
    assert np.isfinite(d.epsilon)


# ---------------------------------------------------------------------------------------------
# partial hiding ((K2), BoxProblem.hidden): part of the two smaller fixed classes revealed
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cap", [0, 1])
@pytest.mark.parametrize("r,E", [(Fraction(3), Fraction(3, 2)), (Fraction(7, 2), Fraction(1))])
@pytest.mark.parametrize("n", [4, 5])
def test_partial_hiding_bound_dominates_every_dataset_in_every_box(n, r, E, cap):
    """(K2) with ``L' = hidden(L)``: exact ``U(L', m')`` >= ``U(L, m)`` >= every ``h_c``; engine >= exact."""
    p, pbar = r / (r + 2), 1 / (r + 2)
    eps0, eps = math.log(float(r)), math.log(float(E))
    h = _all_h(n, p, pbar, E)
    pr = K.BoxProblem(eps0, n, -60.0, hide_cap=cap)
    partial = 0
    for box, inside in _every_box(n, h):
        L, m = pr.corner(box)
        H = pr.hidden(L)
        v = max((2, 0, 1), key=lambda x: L[x])  # the pivot (ties: 2, 0, 1)
        assert all(0 <= H[x] <= L[x] for x in range(3)) and H[v] == L[v]
        assert sum(L) - L[v] <= cap or sum(H) - H[v] <= cap
        m2 = m + sum(L) - sum(H)
        partial += H != L
        U, U2 = _exact_U(L, m, p, pbar, E), _exact_U(H, m2, p, pbar, E)
        assert U2 >= U >= max(inside)
        up, low = pr.bound(box, eps)
        if U2 > 0:
            assert up >= math.log(U2) - 1e-12
        if H != L:  # not an exact leaf, even for a single dataset
            assert low == -math.inf and not pr.is_exact(box)
    assert partial > 0  # the cap really revealed some users


@pytest.mark.parametrize("eps0,eps", [(1.0, 0.3), (2.0, 1.2)])
def test_more_hidden_users_never_loosen_the_box_bound(eps0, eps):
    n = 9
    prs = [K.BoxProblem(eps0, n, -60.0, hide_cap=c) for c in (0, 1, 3, None)]
    for box in [(0, 8, 0, 8), (2, 4, 2, 4), (3, 3, 3, 3), (1, 5, 2, 3), (2, 2, 3, 6), (4, 4, 4, 4)]:
        ups = [pr.bound(box, eps)[0] for pr in prs]
        assert all(b <= a + 1e-12 for a, b in zip(ups, ups[1:])), (box, ups)
    # the datasets with every class populated: revealing both smaller classes is strictly looser
    assert prs[0].bound((3, 3, 3, 3), eps)[0] > prs[-1].bound((3, 3, 3, 3), eps)[0] + 1e-3


@pytest.mark.parametrize("n", [5, 7])
@pytest.mark.parametrize("eps0,eps", [(1.0, 0.4), (2.0, 1.5)])
def test_certificates_with_partial_hiding_bracket_the_brute_force(monkeypatch, n, eps0, eps):
    """Forced partial hiding (at most one user of the two smaller classes hidden) stays sound."""

    class Capped(K.BoxProblem):
        def __init__(self, eps0, n, log_level, *, hide_cap=None, memo=False):
            super().__init__(eps0, n, log_level, hide_cap=1, memo=memo)  # the cap is in the memo key

    monkeypatch.setattr(K, "BoxProblem", Capped)
    worst = brute_max_k3(eps, eps0, n)
    c = K.certify_k(3, eps0, n, eps=eps, tol=1e-5)
    assert c.log_delta >= worst - 1e-12 * abs(worst) and c.exhibited_log_delta <= worst + 1e-12 * abs(worst)
    assert K.verify(c)
    d = K.certify_k(3, eps0, n, delta=1e-3, tol=1e-5)
    assert brute_max_k3(d.epsilon, eps0, n) <= math.log(1e-3) + 1e-12
    if d.epsilon_lower > 0:
        assert brute_max_k3(d.epsilon_lower, eps0, n) > math.log(1e-3)
    assert K.verify(d)


def test_partial_hiding_brings_three_class_datasets_below_the_corner():
    """The n = 1e4 stall (delta = 1e-12), reproduced at n = 1000 by capping the hidden users: with
    both smaller classes revealed the bound of a three-class dataset depends on its pivot class
    alone and stays above the corner's exhibited value; with 64 of them hidden it is far below
    it. At n = 1e4 the default keeps 136 of them hidden where they cannot all be."""
    n, eps0, log_delta = 1000, 0.5, math.log(1e-12)
    pr = K.BoxProblem(eps0, n, log_delta)
    e_low = pr.leaf_epsilon((0, 0, 0, 0), log_delta, upper=False)
    corner = pr.bound((0, 0, 0, 0), e_low)[1]
    assert corner > log_delta
    box, eps = (249, 249, 374, 374), e_low * (1 + 1e-4)  # (c0, c1, c2) = (249, 374, 376)
    ups = [K.BoxProblem(eps0, n, log_delta, hide_cap=c).bound(box, eps)[0] for c in (0, 64, None)]
    assert ups[0] > corner > corner - 0.2 > ups[1] > ups[2]
    big = K.BoxProblem(eps0, 10**4, log_delta)
    assert big.hidden((2499, 3749, 3751)) == (68, 68, 3751) and big.hidden((0, 10, 9989)) == (0, 10, 9989)


def test_bad_hide_cap_raises_naming_the_parameter():
    for bad in (-1, 1.5, True):
        with pytest.raises(ParameterError, match="hide_cap"):
            K.BoxProblem(1.0, 10, -20.0, hide_cap=bad)


def test_fits_shortcut_agrees_with_the_built_check():
    """``fits`` answers without building where the sequential work surely fits; same answers."""
    from shuffle_accounting.shuffled_krr import _krr_grid as G

    rng = np.random.default_rng(3)
    for n in (1000, 10**4):
        pr = K.BoxProblem(1.0, n, -30.0)
        pts = [
            (0, 0, n - 1),
            (0, 5, n - 6),
            (n // 3, n // 3, n - 1 - 2 * (n // 3)),
            (n // 4, n // 2, n - 1 - 3 * (n // 4)),
        ]
        for _ in range(6):
            a = int(rng.integers(n))
            b = int(rng.integers(n - a))
            pts.append((a, b, n - 1 - a - b))
        for L in pts:
            built = G.fixed_law_k3(1.0, L, pr.log_tol - math.log(4.0), check_only=True) is not None
            assert pr.fits(L) == built, L
    assert not K.BoxProblem(1.0, 10**4, -30.0).fits((3333, 3333, 3333))


def test_deep_delta_query_is_tight_below_the_shallow_levels_resolution():
    # n = 200, eps0 = 0.25, eps = 0.24: every corner is below e^-85, the resolution of the e^-60
    # level, where deep=False stops and certifies only the windows' dropped mass (~e^-89); the
    # deep query follows the corners down to their level and closes the gap to the witness
    eps0, n, eps = 0.25, 200, 0.24
    deep = K.certify_k(3, eps0, n, eps=eps)
    shallow = K.certify_k(3, eps0, n, eps=eps, deep=False)
    assert K.verify(deep) and K.verify(shallow)
    exact = float(dataset_log_delta(eps, 3, eps0, list(deep.worst_others)))
    assert exact < -160.0 and deep.converged and deep.log_level < -160.0
    assert exact <= deep.log_delta <= exact + math.log1p(1e-5) + 1e-12
    assert not shallow.converged and -95.0 < shallow.log_delta < -85.0  # sound, but only the floor
    assert deep.log_delta <= float(ShuffledKRR(3, eps0, n).log_delta(eps, method="blanket"))


def test_worst_case_epsilon_at_tiny_delta_is_the_certificates_not_eps0():
    # method="worst-case": the round trip's delta query is the deep one. With the e^-60 level
    # only, it certified ~e^-88 at every eps here, so the step-up ran to eps0 = 0.25 although
    # the epsilon query certifies 0.18558 (found by CI through test_curves_protocol)
    m = ShuffledKRR(3, 0.25, 300)
    d = m.delta(0.1875)  # the blanket's, ~9.2e-59
    e = m.epsilon(d, method="worst-case")
    assert e == K.certify_k(3, 0.25, 300, delta=d).epsilon < 0.186
    assert m.log_delta(e, method="worst-case") <= math.log(d)
    assert m.epsilon_lower(d) <= e


def test_deep_delta_query_just_below_eps0_stays_at_a_resolving_level():
    # found by fuzzing method="worst-case": the epsilon certificate at delta = 2e-30 is 4e-10
    # below eps0, where every corner's exhibited delta rounds to 0 although the answer (~e^-68)
    # is well within the e^-60 level's resolution; the deep query doubled down to e^-1920 and
    # ran 11497 evaluations (148 s) for the same bound. It goes deeper only where the root box's
    # bound is at the windows' dropped mass
    eps0, n, d = 1.4065851964830787, 119, 1.9915358882855913e-30
    ce = K.certify_k(3, eps0, n, delta=d)
    assert eps0 - 1e-9 < ce.epsilon < eps0
    c = K.certify_k(3, eps0, n, eps=ce.epsilon)
    assert c.log_level == -60.0 and c.evaluations < 1000 and K.verify(c)
    assert c.log_delta <= math.log(d)
    m = ShuffledKRR(3, eps0, n)
    e = m.epsilon(d, method="worst-case")  # within 1e-8 eps0 of eps0: eps0, no delta query
    assert e == eps0 and m.log_delta(e, method="worst-case") <= math.log(d)


def test_worst_case_epsilon_within_1e8_of_eps0_returns_eps0_without_the_delta_query(monkeypatch):
    # found by fuzzing method="worst-case": the certificate is 4e-11 below eps0 = 0.0727 and the
    # round trip's delta query (no exhibited value rounds above 0 there) ran 56 s to its budget
    eps0, n, d = 0.0727295417322618, 101, 6.374285033530548e-56
    ce = K.certify_k(3, eps0, n, delta=d)
    assert 0.0 < eps0 - ce.epsilon <= 1e-8 * eps0
    m = ShuffledKRR(3, eps0, n)

    def no_delta_query(self, eps, *, method="auto"):
        raise AssertionError("delta query run")

    monkeypatch.setattr(ShuffledKRR, "log_delta", no_delta_query)
    assert m.epsilon(d, method="worst-case") == eps0
