"""Report building blocks: bad inputs of the renderers, the what-if grid and the plot paths."""

from __future__ import annotations

import json

import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.presentation.plotting import check_plot_path, whatif_path
from shuffle_accounting.presentation.report import (
    Deployment,
    ReportSection,
    ReportValue,
    annotate,
    build_report,
    check_skip,
    format_bound,
    render,
    to_json,
)
from shuffle_accounting.presentation.shuffled_krr_report import (
    accuracy_section,
    certified_epsilon,
    report_section,
)
from shuffle_accounting.presentation.whatif import default_eps0s, default_ns, whatif_grid

DEP = Deployment(k=3, eps0=1.0, n=100)
SEC = [ReportSection("A", (("x", "1", "note"),), (ReportValue(1.0, "upper"),), "a")]


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: ReportValue(1.0, "sideways"), "bound"),
        (lambda: ReportSection("A", (("x", "1", ""),), (ReportValue(1, "upper"),) * 2), "values"),
        (lambda: annotate(SEC[0], "a", ("upper", "upper")), "bounds"),
        (lambda: check_skip("qif"), "skip"),
        (lambda: check_skip(["qif", "nope"]), "skip"),
        (lambda: check_skip(3), "skip"),
        (lambda: build_report("not a deployment"), "dep"),
        (lambda: render("xml", DEP, SEC), "format"),
        (lambda: format_bound(1.0, "upper", digits=0), "digits"),
        (lambda: Deployment(calibrate_rounds=1), "calibrate_rounds"),
        (lambda: Deployment(eps0=50.5), "eps0"),
        (lambda: Deployment(k=True), "k"),
        (lambda: whatif_grid("dep"), "dep"),
        (lambda: whatif_grid(DEP, ns=[1]), "ns"),
        (lambda: whatif_grid(DEP, ns=list(range(2, 60))), "ns"),
        (lambda: whatif_grid(DEP, eps0s=[float("nan")]), "eps0s"),
        (lambda: default_ns(10**10), "n"),
        (lambda: default_eps0s(0.0), "eps0"),
        (lambda: check_plot_path(3), "plot"),
        (lambda: check_plot_path("figure.pdf"), "plot"),
        (lambda: report_section(DEP, lower=False, epsilon=float("nan")), "epsilon"),
        (lambda: accuracy_section(DEP, epsilon=-1.0), "epsilon"),
        (lambda: accuracy_section(DEP, epsilon=True), "epsilon"),
    ],
)
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ParameterError, match=rf"^{name} must"):
        call()


def test_check_plot_path_missing_folder(tmp_path):
    with pytest.raises(ParameterError, match="plot folder does not exist"):
        check_plot_path(str(tmp_path / "missing" / "a.png"))
    assert check_plot_path(str(tmp_path / "a.SVG")) == str(tmp_path / "a.SVG")
    assert whatif_path("a.png") == "a-whatif.png"


def test_annotate_parses_intervals_and_inequalities():
    sec = ReportSection("A", (("a", "7.389 .. 7.4", ""), ("b", ">= 30", ""), ("c", "not valid here", "")))
    vals = annotate(sec, "a", ("estimate", "lower", "upper")).values
    assert [(v.value, v.bound) for v in vals] == [((7.389, 7.4), "estimate"), (30.0, "lower"), (None, "none")]


def test_json_has_no_nan_and_round_trips_the_numbers():
    sec = [
        ReportSection(
            "A",
            (("x", "inf", ""), ("y", "0.1", "")),
            (ReportValue(float("inf"), "upper"), ReportValue(0.1, "exact")),
            "a",
        )
    ]
    doc = json.loads(to_json(DEP, sec))
    rows = doc["sections"][0]["rows"]
    assert rows[0]["value"] is None and rows[0]["bound"] == "none" and rows[0]["text"] == "inf"
    assert rows[1]["value"] == 0.1


def test_whatif_grid_renders_in_every_format():
    grid = whatif_grid(DEP, ns=[50, 100], eps0s=[1.0], calibration=False, baseline=False)
    for fmt in ("text", "md", "csv", "json"):
        out = render(fmt, DEP, SEC, whatif=grid)
        assert "certified epsilon" in out
    doc = json.loads(render("json", DEP, SEC, whatif=grid))
    assert doc["whatif"]["ns"] == [50, 100] and doc["whatif"]["series"][0]["bound"] == "upper"


def test_report_certifies_epsilon_once_and_passes_it_on(monkeypatch):
    """build_report computes the certified single-round epsilon once (its cached curves); both
    sections show it, and the values equal those of the sections computed on their own."""
    from shuffle_accounting.shuffled_krr.mechanism import ShuffledKRR

    calls = []
    real = ShuffledKRR.epsilon

    def counting(self, delta, *args, **kwargs):
        if kwargs.get("method", "auto") == "auto":  # not auto's own blanket query (k = 3, n = 100)
            calls.append(delta)
        return real(self, delta, *args, **kwargs)

    monkeypatch.setattr(ShuffledKRR, "epsilon", counting)
    secs = {
        s.key: s for s in build_report(DEP, skip=["literature", "qif", "reidentification", "calibration"])
    }
    assert calls == [DEP.delta]
    alone_shuffled = report_section(DEP)
    alone_accuracy = accuracy_section(DEP)
    assert len(calls) == 3  # each section alone computes it itself
    assert secs["shuffled"].rows == alone_shuffled.rows
    assert secs["accuracy"].rows == alone_accuracy.rows
    assert secs["shuffled"].values[0].value == certified_epsilon(DEP)


def test_accuracy_section_when_the_certified_epsilon_is_zero():
    """Huge delta, tiny local eps0: the certified curve meets delta at eps = 0, where no analytic
    Gaussian exists; the baseline row says so instead of failing the whole report."""
    dep = Deployment(k=1000, eps0=0.1, n=100, delta=0.5)
    sec = accuracy_section(dep, epsilon=0.0)
    assert sec.rows[-1][:2] == ("central Gaussian baseline", "n/a")
    assert sec.values[-1].bound == "none"
    assert accuracy_section(dep).rows == sec.rows  # the certified epsilon is 0 here
