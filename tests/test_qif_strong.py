"""Strong (all-but-one) adversary, eq. (10), report section and plot helper."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_accounting import ParameterError
from shuffle_accounting.presentation.qif_plot import plot_vulnerability_curves, vulnerability_curves
from shuffle_accounting.presentation.qif_report import LeakageReport, leakage_report, report_section
from shuffle_accounting.presentation.report import Deployment, ReportSection, format_sections
from shuffle_accounting.qif import (
    all_but_one_prior,
    all_but_one_vulnerability,
    all_but_one_vulnerability_bounds,
    cascade,
    datasets,
    krr_channel,
    krr_shuffle_vulnerability,
    posterior_g_vulnerability,
    reduced_shuffle_channel,
    single_target_gain,
)


def test_published_fig3_values():
    # Sec. V, Fig. 3: k = 2, n = 201, p = 0.8.
    assert all_but_one_vulnerability(0.8, [0, 200]) == pytest.approx(0.52111, abs=5e-6)
    assert all_but_one_vulnerability(0.8, [100, 100]) == pytest.approx(0.52116, abs=5e-6)
    # shuffle alone (p = 1) does not protect against the strong adversary
    assert all_but_one_vulnerability(1.0, [0, 200]) == 1.0


@pytest.mark.parametrize("n,k", [(2, 2), (4, 2), (5, 2), (3, 3), (4, 3), (3, 4)])
def test_equals_explicit_channel_for_every_known_dataset(n, k):
    p = 0.7
    c = cascade(krr_channel(k, p, n), reduced_shuffle_channel(k=k, n=n))
    g = single_target_gain(k=k, n=n)
    for known in itertools.product(range(k), repeat=n - 1):
        brute = posterior_g_vulnerability(all_but_one_prior(k=k, n=n, known=known), c, g)
        counts = [known.count(v) for v in range(k)]
        e = all_but_one_vulnerability_bounds(p, counts)
        assert abs(e.value - brute) < 1e-12
        assert e.lower - 1e-15 <= brute <= e.upper + 1e-15


@pytest.mark.parametrize("n,k", [(4, 2), (4, 3)])
def test_subset_knowledge_equals_explicit_channel(n, k):
    p = 0.6
    c = cascade(krr_channel(k, p, n), reduced_shuffle_channel(k=k, n=n))
    g = single_target_gain(k=k, n=n)
    ds = datasets(k=k, n=n)
    for unknown in range(n):
        known = (1,) * (n - 1 - unknown)
        pi = np.array([1.0 if x[1 + unknown :] == known else 0.0 for x in ds])
        pi /= pi.sum()
        counts = [0] * k
        counts[1] = n - 1 - unknown
        brute = posterior_g_vulnerability(pi, c, g)
        assert all_but_one_vulnerability(p, counts, unknown=unknown) == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize("n,k,p", [(50, 2, 0.8), (30, 3, 0.5), (12, 4, 0.4)])
def test_nothing_known_reduces_to_uninformed(n, k, p):
    assert all_but_one_vulnerability(p, [0] * k, unknown=n - 1) == pytest.approx(
        krr_shuffle_vulnerability(k, p, n), abs=1e-11
    )


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60), st.floats(0.5, 1.0))
def test_property_shuffle_never_worse_than_local(a, b, p):
    # Data processing: k-RR + shuffle never leaks more than k-RR alone, and V >= prior.
    v = all_but_one_vulnerability(p, [a, b])
    assert 0.5 - 1e-15 <= v <= p + 1e-12


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 40), st.floats(0.5, 1.0))
def test_property_average_informed_at_least_uninformed(m, p):
    # Knowing the others can only help on average (convexity of Bayes vulnerability):
    # E_{others ~ uniform}[V_ABO] >= V_uninformed.
    avg = sum(math.comb(m, a) / 2**m * all_but_one_vulnerability(p, [a, m - a]) for a in range(m + 1))
    assert avg >= krr_shuffle_vulnerability(2, p, m + 1) - 1e-12


def test_large_instances_are_fast_enough_and_sane():
    v = all_but_one_vulnerability(0.8, [2000, 3000])
    assert 0.5 < v < 0.52
    v3 = all_but_one_vulnerability(0.5, [100, 100, 100])
    assert 1 / 3 < v3 < 0.5


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((0.8, [5]), {}, "known_counts"),
        ((0.8, 5), {}, "known_counts"),
        ((0.8, "ab"), {}, "known_counts"),
        ((0.8, [1, -1]), {}, "known_counts"),
        ((0.8, [1.5, 2]), {}, "known_counts"),
        ((0.8, [True, 2]), {}, "known_counts"),
        ((0.4, [1, 2]), {}, "p must"),
        ((float("nan"), [1, 2]), {}, "p must"),
        ((0.8, [1, 2]), {"unknown": -1}, "unknown"),
        ((0.5, [3000, 3000, 3000]), {}, "MAX_FFT_CELLS"),
        ((0.3, [100, 100, 100, 100, 100]), {}, "MAX_FFT_CELLS"),
    ],
)
def test_bad_inputs(args, kwargs, match):
    with pytest.raises(ParameterError, match=match):
        all_but_one_vulnerability(*args, **kwargs)


def test_trivial_cases_need_no_grid():
    # p = 1 with everyone known: certainty, for any size (no MAX_WORK refusal)
    assert all_but_one_vulnerability(1.0, [300, 300, 300, 300]) == 1.0
    # p = 1/k: reports carry no information about the target
    assert all_but_one_vulnerability(0.25, [300, 300, 300, 300]) == 0.25
    # p = 1 with unknown users is not trivial
    assert all_but_one_vulnerability(1.0, [3, 0], unknown=4) < 1.0


def test_single_user():
    assert all_but_one_vulnerability(0.7, [0, 0]) == 0.7


# ----------------------------------------------------------------------------- report / plot


def test_leakage_report_values():
    r = leakage_report(k=2, eps0=math.log(9), n=200)  # p = 0.9
    assert isinstance(r, LeakageReport)
    assert r.p == pytest.approx(0.9)
    assert r.prior == 0.5 and r.krr == pytest.approx(0.9)
    assert r.shuffle.value == pytest.approx(0.528174, abs=5e-7)
    assert r.krr_shuffle.value == pytest.approx(0.52254, abs=5e-6)
    assert r.additive_leakage == pytest.approx(0.02254, abs=5e-6)
    assert r.multiplicative_leakage == pytest.approx(2 * r.krr_shuffle.upper)


def test_report_section_default_deployment():
    sec = report_section(Deployment())  # n = 10 000, k = 10, eps0 = 2
    assert isinstance(sec, ReportSection)
    labels = [row[0] for row in sec.rows]
    assert labels[:4] == ["prior 1/k", "V[N] k-RR only", "V[S] shuffle only", "V[NS] k-RR + shuffle"]
    vals = [float(row[1]) for row in sec.rows[:4]]
    assert vals[0] == pytest.approx(0.1)
    assert vals[1] == pytest.approx(math.exp(2) / (math.exp(2) + 9), rel=1e-5)
    assert vals[0] < vals[3] < vals[2] < vals[1]
    assert "QIF" in format_sections([sec])


def test_report_bad_inputs():
    with pytest.raises(ParameterError, match="eps0"):
        leakage_report(k=2, eps0=-1.0, n=10)
    with pytest.raises(ParameterError, match="n must"):
        leakage_report(k=2, eps0=1.0, n=0)


def test_vulnerability_curves_and_plot(tmp_path):
    data = vulnerability_curves([1, 2, 200], 2, [1.0, 0.9, 0.6])
    assert data[0.9][1][:2] == pytest.approx([0.9, 0.7])
    assert data[0.6][1][2] == pytest.approx(0.50563, abs=5e-6)
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    out = tmp_path / "fig2.png"
    ax = plot_vulnerability_curves([1, 2, 5, 10, 50], 5, [1.0, 0.8], path=str(out))
    assert out.stat().st_size > 1000
    assert len(ax.lines) == 5  # 2 x (N, NS) + prior line
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_plot_bad_inputs():
    with pytest.raises(ParameterError, match="ns"):
        vulnerability_curves([], 2, [0.9])
    with pytest.raises(ParameterError, match="ns"):
        vulnerability_curves([0], 2, [0.9])
    with pytest.raises(ParameterError, match="p must"):
        vulnerability_curves([1], 3, [0.2])


def test_plot_import_error_message(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *a, **kw):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib")
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r"shuffle-accounting\[plot\]"):
        plot_vulnerability_curves([1, 2], 2, [0.9])


# ----- FFT path (beyond MAX_WORK, k >= 3) -----------------------------------------------------


@pytest.mark.parametrize(
    "p, counts, unknown",
    [(0.5, [100, 100, 100], 0), (0.4, [20, 20, 20, 5], 0), (0.5, [30, 1, 1], 0), (0.6, [40, 0, 25], 17)],
)
def test_fft_path_matches_direct_evaluation(monkeypatch, p, counts, unknown):
    from shuffle_accounting.qif import strong_adversary

    direct = all_but_one_vulnerability_bounds(p, counts, unknown=unknown)
    monkeypatch.setattr(strong_adversary, "MAX_WORK", 1)  # force the FFT path
    fft = all_but_one_vulnerability_bounds(p, counts, unknown=unknown)
    assert fft.lower <= direct.value <= fft.upper
    assert abs(fft.value - direct.value) <= fft.error + direct.error
    assert fft.error < 1e-9


def test_fft_path_runs_for_large_populations():
    # k = 3 with thousands of users spread over every value (refused before the FFT path)
    e = all_but_one_vulnerability_bounds(0.5, [1000, 1000, 1000])
    assert e.error < 1e-8 and 1 / 3 < e.lower <= e.upper < 0.5
    # with every other user unknown the instance is the uninformed V[NS] (closed form, eq. (17))
    from shuffle_accounting.qif import krr_shuffle_vulnerability

    u = all_but_one_vulnerability_bounds(0.5, [0, 0, 0], unknown=2999)
    assert u.lower - 1e-12 <= krr_shuffle_vulnerability(3, 0.5, 3000) <= u.upper + 1e-12


def test_leakage_report_old_positional_order_warns_with_the_same_values():
    new = leakage_report(k=3, eps0=1.0, n=50)
    with pytest.warns(DeprecationWarning, match="leakage_report"):
        old = leakage_report(50, 3, 1.0)
    assert old == new
