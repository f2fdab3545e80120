"""The report's one curve path (presentation/curve_rows.py): rows, bound directions, caching, figures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.curves import CurveBase
from shuffle_accounting.literature.registry import literature_epsilons
from shuffle_accounting.presentation.curve_rows import (
    CachedCurve,
    DeploymentCurves,
    NamedCurve,
    curve_rows,
    curve_values,
    named_curve,
    value_row,
)
from shuffle_accounting.presentation.report import Deployment, format_bound
from shuffle_accounting.shuffled_krr import ShuffledKRR


class _Exp(CurveBase):
    """delta(eps) = e^-eps (test curve), with a chosen bound and a regime eps <= top."""

    def __init__(self, bound: str, top: float = math.inf) -> None:
        self.bound = bound
        self.top = top
        self.calls = 0

    def _log_delta(self, eps: float) -> float:
        self.calls += 1
        if eps > self.top:
            raise ParameterError(f"eps must be <= {self.top}, got {eps}")
        return -eps


DEP = Deployment(k=4, eps0=1.0, n=200, delta=1e-6)


def test_rows_round_outward_for_each_direction():
    rows = curve_rows(
        [NamedCurve(b, _Exp(b), citation="c") for b in ("upper", "lower", "estimate")], delta=0.3
    )
    exact = -math.log(0.3)
    up, low, est = rows
    assert (up.bound, low.bound, est.bound) == ("upper", "lower", "estimate")
    assert float(up.text) >= up.value >= exact - 1e-9  # rounded up
    assert float(low.text) <= low.value <= exact + 1e-9  # rounded down
    assert up.text == format_bound(up.value, "upper") and low.text == format_bound(low.value, "lower")
    assert all(r.note == "c" and r.query == "epsilon" and r.at == 0.3 for r in rows)


def test_as_printed_is_reported_as_estimate_without_guarantee():
    (row,) = curve_rows([NamedCurve("paper", _Exp("as-printed"), citation="eq. 6")], eps=1.0)
    assert row.bound == "estimate" and row.note == "eq. 6; as printed, no guarantee"
    assert row.value == pytest.approx(math.exp(-1.0))


def test_not_valid_rows_carry_the_reason():
    missing = named_curve("thm", lambda: (_ for _ in ()).throw(ParameterError("needs eps0 < 1/2")))
    rows = curve_rows([missing, NamedCurve("regime", _Exp("upper", top=0.5))], eps=[0.2, 1.0])
    assert [(r.label, r.at, r.bound, r.text) for r in rows] == [
        ("thm", 0.2, "none", "not valid here"),
        ("thm", 1.0, "none", "not valid here"),
        ("regime", 0.2, "upper", format_bound(math.exp(-0.2), "upper")),
        ("regime", 1.0, "none", "not valid here"),
    ]
    assert rows[0].note == "needs eps0 < 1/2" and "<= 0.5" in rows[3].note
    assert rows[0].report_row()[3].value is None


def test_named_curve_lets_other_errors_through():
    with pytest.raises(ZeroDivisionError):
        named_curve("x", lambda: 1 / 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of delta"),
        ({"delta": 0.1, "eps": 1.0}, "exactly one of delta"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"delta": float("nan")}, "delta"),
        ({"eps": -1.0}, "eps"),
        ({"eps": float("inf")}, "eps"),
        ({"eps": True}, "eps"),
        ({"eps": []}, "eps"),
    ],
)
def test_curve_rows_rejects_bad_points(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        curve_rows([NamedCurve("c", _Exp("upper"))], **kwargs)


def test_bad_entries_are_rejected():
    with pytest.raises(ParameterError, match="NamedCurve"):
        curve_rows([_Exp("upper")], delta=0.1)
    with pytest.raises(ParameterError, match="PrivacyCurve"):
        NamedCurve("c", object())
    with pytest.raises(ParameterError, match="label"):
        NamedCurve("", _Exp("upper"))
    with pytest.raises(ParameterError, match="reason"):
        NamedCurve("c", None)
    with pytest.raises(ParameterError, match="curve-less"):
        value_row(NamedCurve("c", None, reason="r"), "epsilon", 0.1, 1.0)
    with pytest.raises(ParameterError, match="query"):
        value_row(NamedCurve("c", _Exp("upper")), "eps", 0.1, 1.0)


def test_cached_curve_computes_each_answer_once():
    inner = _Exp("upper")
    c = CachedCurve(inner)
    first = c.epsilon(0.01)
    calls = inner.calls
    assert c.epsilon(0.01) == first and inner.calls == calls
    assert c.delta(0.5) == c.delta(0.5) == inner.delta(0.5)
    assert c.log_delta(0.5) == pytest.approx(-0.5)
    np.testing.assert_allclose(c.delta(np.array([0.0, 1.0])), [1.0, math.exp(-1.0)])
    assert c.bound == "upper" and c.curve is inner
    with pytest.raises(ParameterError, match="delta"):
        c.epsilon(2.0)


def test_literature_rows_are_the_registry_epsilons():
    rows = curve_rows(DeploymentCurves(DEP).literature(), delta=DEP.delta)
    ref = literature_epsilons(DEP.k, DEP.eps0, DEP.n, DEP.delta)
    assert [r.label for r in rows] == [b.name for b in ref]
    for r, b in zip(rows, ref):
        assert r.value == b.epsilon
        assert r.note == (b.citation if b.epsilon is not None else b.reason)


def test_deployment_curves_share_one_certified_curve():
    dc = DeploymentCurves(DEP)
    assert dc.certified is dc.certified and dc.exhibited is dc.exhibited
    assert dc.certified.epsilon(DEP.delta) == ShuffledKRR(4, 1.0, 200).epsilon(DEP.delta)
    assert dc.searched_lower.epsilon(DEP.delta) <= dc.certified.epsilon(DEP.delta)
    assert dc.searched_lower.bound == "lower" and dc.exhibited.bound == "lower"
    with pytest.raises(ParameterError, match="Deployment"):
        DeploymentCurves((4, 1.0, 200))


def test_curve_values_nan_where_not_valid_and_capped():
    vals = curve_values(
        [NamedCurve("r", _Exp("upper", top=0.5)), named_curve("x", lambda: ShuffledKRR(1, 1.0, 5))],
        [0.0, 0.2, 1.0],
        cap=0.9,
    )
    assert vals["r"][0] == 0.9 and vals["r"][1] == pytest.approx(math.exp(-0.2)) and np.isnan(vals["r"][2])
    assert np.all(np.isnan(vals["x"]))


def test_plot_curves_styles_follow_the_bound():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from shuffle_accounting.presentation.plotting import plot_curves

    ax = Figure().add_subplot()
    plot_curves(
        [NamedCurve(b, _Exp(b)) for b in ("upper", "lower", "estimate", "as-printed")]
        + [NamedCurve("gone", None, reason="r")],
        np.linspace(0.1, 2.0, 6),
        ax=ax,
        primary=1,
    )
    lines = ax.get_lines()
    assert [ln.get_linestyle() for ln in lines] == ["-", "--", ":", "-."]
    assert ax.get_legend_handles_labels()[1] == [
        "upper — upper bound",
        "lower — lower bound (exhibited)",
        "estimate — estimate, no guarantee",
        "as-printed — as printed, no guarantee",
    ]
    assert lines[0].get_linewidth() > lines[1].get_linewidth()
