"""Shuffle-DP setting (Su, Cheng, Wang, Sec. VI): bounds vs exact enumeration, paper examples, inputs."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import numpy as np
import pytest

from shuffle_accounting import KRR, FiniteRandomizer, ParameterError
from shuffle_accounting.presentation.reidentification_report import report_section, risk_rows
from shuffle_accounting.presentation.report import Deployment, ReportSection
from shuffle_accounting.reidentification import (
    ReidentificationRisk,
    clone_bound,
    game2_success_probability,
    success_probability,
)

RANDOMIZERS = [
    KRR(2, math.log(3)),
    KRR(3, 1.0),
    FiniteRandomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]]),
    FiniteRandomizer([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]),  # zeros: eps = inf, lo(y) = 0 somewhere
    FiniteRandomizer([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [0.4, 0.2, 0.4]]),  # ties in ratios
]


def _game2_brute_force(mat, x1, others):
    """Enumerate user outputs and shuffles; Bayes-optimal guess = argmax of the joint probability.

    Pr[z, user 1 at g] = sum over permutations sigma placing user 1 at g of (1/n!) prod_i R(x_i)(z_pos(i)).
    """
    users = [x1] + list(others)
    n = len(users)
    mat = [[F(v).limit_denominator(10**6) for v in row] for row in mat]
    perms = list(itertools.permutations(range(n)))  # perm[i] = position of user i
    total = F(0)
    for z in itertools.product(range(len(mat[0])), repeat=n):
        joint = [F(0)] * n
        for perm in perms:
            pr = F(1)
            for i, pos in enumerate(perm):
                pr *= mat[users[i]][z[pos]]
            joint[perm[0]] += pr / len(perms)
        total += max(joint)
    return total


@pytest.mark.parametrize(
    "mat,x1,others",
    [
        ([[0.75, 0.25], [0.25, 0.75]], 0, [1, 1]),
        ([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]], 0, [1, 2, 2]),
        ([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]], 1, [0, 1, 0]),
        ([[0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [0.4, 0.2, 0.4]], 2, [0, 1]),
    ],
)
def test_game2_exact_matches_permutation_brute_force(mat, x1, others):
    fr = FiniteRandomizer(mat)
    assert game2_success_probability(fr, x1, others) == pytest.approx(
        float(_game2_brute_force(mat, x1, others)), abs=1e-12
    )


def test_game2_with_identical_others_is_the_basic_setting():
    fr = RANDOMIZERS[2]
    for n in range(1, 6):
        assert game2_success_probability(fr, 0, [2] * (n - 1)) == pytest.approx(
            success_probability(fr.matrix[0], fr.matrix[2], n), abs=1e-12
        )


@pytest.mark.parametrize("r", RANDOMIZERS, ids=lambda r: repr(r)[:30])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 6])
def test_bounds_sandwich_exact_worst_case(r, n):
    risk = ReidentificationRisk(r, n)
    inputs = r.k if isinstance(r, KRR) else r.n_inputs
    for x1 in [None] + list(range(inputs)):
        truth = risk.exact_worst_case(x1).value
        blanket = risk.bound(x1, "blanket")
        assert risk.lower_bound(x1) <= truth * (1 + 1e-12)
        assert truth <= blanket
        assert blanket <= risk.bound(x1, "clone") * (1 + 1e-12)  # Theorem 9: blanket is optimal
        assert blanket <= risk.bound(x1, "limit") * (1 + 1e-12)  # Theorem 10 proof
    eps = r.eps0
    if math.isfinite(eps):
        assert risk.bound(method="clone") <= math.exp(eps) / n * (1 + 2e-9)  # Theorem 8


def test_blanket_equals_theorem_7_binomial_mixture():
    # psi = sum_m Bin(m; n-1, alpha) beta_{m+1}(R(x1), Q^B), evaluated literally.
    fr = RANDOMIZERS[2]
    lo = fr.matrix.min(axis=0)
    alpha = lo.sum()
    qb = lo / alpha
    for n in (1, 2, 7, 30):
        for x1 in range(3):
            psi = sum(
                math.comb(n - 1, m)
                * alpha**m
                * (1 - alpha) ** (n - 1 - m)
                * success_probability(fr.matrix[x1], qb, m + 1)
                for m in range(n)
            )
            assert ReidentificationRisk(fr, n).bound(x1) == pytest.approx(psi, rel=2e-9)
            assert ReidentificationRisk(fr, n).bound(x1) >= psi


def test_krr_and_matrix_paths_agree():
    r = KRR(4, 1.3)
    fr = FiniteRandomizer.from_krr(r)
    for n in (1, 3, 50, 10**5):
        a, b = ReidentificationRisk(r, n), ReidentificationRisk(fr, n)
        for method in ("blanket", "clone", "limit"):
            assert a.bound(method=method) == pytest.approx(b.bound(method=method), rel=1e-12)
            assert a.bound(1, method) == pytest.approx(b.bound(1, method), rel=1e-12)
        v1 = [0.1, 0.2, 0.3, 0.4]
        assert a.bound(v1) == pytest.approx(b.bound(v1), rel=1e-12)
        assert a.lower_bound() == pytest.approx(b.lower_bound(), rel=1e-12)
        assert a.lower_bound(v1) == pytest.approx(b.lower_bound(v1), rel=1e-12)
        assert a.limit(v1) == pytest.approx(b.limit(v1), rel=1e-12)


def test_krr_closed_form_blanket():
    # For k-RR the ratio R(x1)/lo is e^eps0 on x1 and 1 elsewhere, so
    # psi = [(1-pbar)^n - (1-gamma)^n + e^eps0 (1 - (1-pbar)^n)] / n.
    r = KRR(5, 0.8)
    for n in (1, 2, 10, 1000):
        a = (1 - r.pbar) ** n
        expected = (a - (1 - r.gamma) ** n + math.exp(r.eps0) * (1 - a)) / n
        assert ReidentificationRisk(r, n).bound() == pytest.approx(expected, rel=2e-9)


def test_clone_bound_formula():
    for eps, n in [(0.5, 1), (1.0, 10), (math.log(3), 100), (5.0, 10**6)]:
        g = math.exp(-eps)
        expected = (1 - (1 - g) ** n) / (n * g)
        assert clone_bound(eps, n) == pytest.approx(expected, rel=2e-9)
        assert clone_bound(eps, n) >= expected
        assert clone_bound(eps, n) <= math.exp(eps) / n * (1 + 2e-9)
        assert ReidentificationRisk(KRR(3, eps), n).bound(method="clone") == pytest.approx(
            clone_bound(eps, n)
        )
    assert clone_bound(math.inf, 5) == 1.0
    assert clone_bound(0.0, 4) == pytest.approx(0.25)


@pytest.mark.parametrize("p", [0.0, 0.25, 0.5, 0.8, 1.0])
def test_example_vi2_limit(p):
    # Example VI.2: ln 3-DP 2-RR, V1 = (p, 1-p): M = max(1 + 2p, 3 - 2p).
    for r in (KRR(2, math.log(3)), FiniteRandomizer([[0.75, 0.25], [0.25, 0.75]])):
        risk = ReidentificationRisk(r, 10)
        assert risk.limit([p, 1 - p]) == pytest.approx(max(1 + 2 * p, 3 - 2 * p), rel=1e-12)
        assert risk.multiplicative_advantage([p, 1 - p], "limit") == pytest.approx(
            max(1 + 2 * p, 3 - 2 * p), rel=1e-8
        )


def test_theorem_10_limit_and_convergence():
    fr = RANDOMIZERS[2]
    for x1 in range(3):
        M = ReidentificationRisk(fr, 1).limit(x1)
        lo = fr.matrix.min(axis=0)
        assert M == pytest.approx(float(np.max(fr.matrix[x1] / lo)))
        advs = [ReidentificationRisk(fr, n).multiplicative_advantage(x1) for n in (10, 1000, 10**7)]
        assert all(a <= M * (1 + 2e-9) for a in advs)
        assert advs[-1] == pytest.approx(M, rel=1e-6)
        # the lower bound also tends to M (Theorem 10's squeeze)
        assert ReidentificationRisk(fr, 10**7).lower_bound(x1) * 10**7 == pytest.approx(M, rel=1e-6)
    assert ReidentificationRisk(RANDOMIZERS[3], 4).limit() == math.inf


def test_no_blanket_gives_trivial_bound():
    fr = FiniteRandomizer([[1.0, 0.0], [0.0, 1.0]])
    assert ReidentificationRisk(fr, 10).bound() == 1.0
    assert ReidentificationRisk(fr, 10).bound(method="clone") == 1.0
    assert ReidentificationRisk(fr, 3).exact_worst_case().value == pytest.approx(1.0)


def test_input_distribution_target():
    r = FiniteRandomizer([[0.75, 0.25], [0.25, 0.75]])
    risk = ReidentificationRisk(r, 4)
    v = [0.5, 0.5]  # R*(V1) = (0.5, 0.5)
    w = risk.exact_worst_case(v)
    assert w.value <= risk.bound(v)
    assert risk.bound(v) <= risk.bound(0)  # a deterministic target is the worst (convexity)
    assert risk.lower_bound(v) <= w.value * (1 + 1e-12)


def test_report_rows_and_section():
    risk = ReidentificationRisk(KRR(10, 2.0), 1000)
    rows = risk_rows(risk)
    assert all(len(r) == 3 and all(isinstance(c, str) for c in r) for r in rows)
    values = {label: value for label, value, _ in rows}
    assert float(values["exact beta_n, others share one input"]) <= float(values["blanket bound (Thm 7, 9)"])
    assert float(values["blanket bound (Thm 7, 9)"]) <= float(values["clone bound (Thm 8)"])
    assert float(values["e^eps0 / n"]) == pytest.approx(math.exp(2.0) / 1000, rel=1e-5)
    sec = report_section(Deployment(k=10, eps0=2.0, n=1000))
    assert isinstance(sec, ReportSection) and sec.rows == rows


def test_speed_path_krr_large():
    risk = ReidentificationRisk(KRR(1000, 2.0), 10**6)
    assert risk.lower_bound() <= risk.bound() <= math.exp(2.0) / 10**6 * (1 + 2e-9)


def test_bad_inputs():
    with pytest.raises(ParameterError, match="randomizer"):
        ReidentificationRisk(np.eye(2), 3)
    for n in (0, -2, 1.5, math.nan, True, "4"):
        with pytest.raises(ParameterError, match="n must"):
            ReidentificationRisk(KRR(3, 1.0), n)
    risk = ReidentificationRisk(KRR(3, 1.0), 4)
    with pytest.raises(ParameterError, match="method"):
        risk.bound(method="shuffle")
    for x1 in (3, -1, 1.5, True, math.nan, [0.5, 0.5], [0.5, 0.5, math.nan], [1.2, -0.2, 0.0]):
        with pytest.raises(ParameterError, match="x1"):
            risk.bound(x1)
    with pytest.raises(ParameterError, match="x_other"):
        risk.basic_success(0, 5)
    with pytest.raises(ParameterError, match="others"):
        game2_success_probability(KRR(3, 1.0), 0, [0, 7])
    with pytest.raises(ParameterError, match="others"):
        game2_success_probability(KRR(3, 1.0), 0, 5)
    with pytest.raises(ParameterError, match="n must be small"):
        ReidentificationRisk(KRR(20, 1.0), 60).exact_worst_case(0)
    with pytest.raises(ParameterError, match="eps"):
        clone_bound(-1.0, 3)
    with pytest.raises(ParameterError, match="eps"):
        clone_bound(math.nan, 3)
    with pytest.raises(ParameterError, match="n must"):
        clone_bound(1.0, 0)
