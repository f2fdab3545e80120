"""The presentation code moved to shuffle_accounting.presentation (issue 13): every old import path
still works, returns the very same object, and emits a DeprecationWarning naming the new path."""

from __future__ import annotations

import importlib
import math
import subprocess
import sys

import pytest

from shuffle_accounting import KRR

P = "shuffle_accounting.presentation"

#: (old module, a name used from it, new module): one row per deprecated alias module (the
#: ``shuffle_accounting.planner`` package is covered through its two alias submodules).
MOVED_MODULES = [
    ("shuffle_accounting.report", "Deployment", f"{P}.report"),
    ("shuffle_accounting.plotting", "check_plot_path", f"{P}.plotting"),
    ("shuffle_accounting.cli", "main", f"{P}.cli"),
    ("shuffle_accounting.whatif", "whatif_grid", f"{P}.whatif"),
    ("shuffle_accounting.qif.report", "leakage_report", f"{P}.qif_report"),
    ("shuffle_accounting.qif.plot", "vulnerability_curves", f"{P}.qif_plot"),
    ("shuffle_accounting.runtime.plot", "plot_simulation", f"{P}.simulation_plot"),
    ("shuffle_accounting.runtime.command", "add_subcommand", f"{P}.simulate_command"),
    ("shuffle_accounting.dsigma.command", "add_subcommand", f"{P}.dsigma_command"),
    ("shuffle_accounting.shuffled_krr.report", "report_section", f"{P}.shuffled_krr_report"),
    ("shuffle_accounting.planner.compute", "plan", f"{P}.planner.compute"),
    ("shuffle_accounting.planner.server", "create_app", f"{P}.planner.server"),
]

#: (math module or package, name it no longer defines, new module): the names kept as aliases.
MOVED_NAMES = [
    ("shuffle_accounting.qif", "LeakageReport", f"{P}.qif_report"),
    ("shuffle_accounting.qif", "leakage_report", f"{P}.qif_report"),
    ("shuffle_accounting.qif", "report_section", f"{P}.qif_report"),
    ("shuffle_accounting.qif", "plot_vulnerability_curves", f"{P}.qif_plot"),
    ("shuffle_accounting.qif", "vulnerability_curves", f"{P}.qif_plot"),
    ("shuffle_accounting.runtime", "plot_simulation", f"{P}.simulation_plot"),
    ("shuffle_accounting.literature", "report_section", f"{P}.literature_report"),
    ("shuffle_accounting.literature.registry", "report_section", f"{P}.literature_report"),
    ("shuffle_accounting.reidentification", "report_section", f"{P}.reidentification_report"),
    ("shuffle_accounting.reidentification.shuffle", "report_section", f"{P}.reidentification_report"),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED_MODULES + MOVED_NAMES)
def test_old_path_forwards_and_warns(old, name, new):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} is deprecated: it moved to {new}\.{name}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


@pytest.mark.parametrize(("old", "name", "new"), MOVED_NAMES)
def test_math_packages_no_longer_export_presentation(old, name, new):
    module = importlib.import_module(old)
    assert name not in getattr(module, "__all__", ())
    assert name not in vars(module)  # reachable only through the deprecated __getattr__


def test_from_import_of_an_old_path_warns():
    with pytest.warns(DeprecationWarning, match="shuffle_accounting.report.Deployment"):
        from shuffle_accounting.report import Deployment
    from shuffle_accounting.presentation.report import Deployment as new

    assert Deployment is new


def test_unknown_names_still_raise_attribute_error():
    import shuffle_accounting.qif as qif
    import shuffle_accounting.report as report

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        report.nope  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        qif.nope  # noqa: B018
    assert "Deployment" in dir(report)


def test_reidentification_risk_report_method_forwards():
    from shuffle_accounting.presentation.reidentification_report import risk_rows
    from shuffle_accounting.reidentification import ReidentificationRisk

    risk = ReidentificationRisk(KRR(10, 2.0), 1000)
    with pytest.warns(DeprecationWarning, match="risk_rows"):
        rows = risk.report()
    assert rows == risk_rows(risk)
    assert float({r[0]: r[1] for r in rows}["e^eps0 / n"]) == pytest.approx(math.exp(2.0) / 1000, rel=1e-5)


def test_python_dash_m_old_cli_still_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "shuffle_accounting.cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("shuffle-accounting ")
