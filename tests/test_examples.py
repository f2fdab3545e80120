"""Every script in examples/ runs to completion (each in a subprocess, with a timeout).

The scripts check their own claims with ``assert`` (certified <= naive composition, calibrated
eps0 meets the target, lower <= upper, ...), so a script that runs is a script whose numbers
still hold.
"""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLES = sorted(p.name for p in (Path(__file__).resolve().parents[1] / "examples").glob("*.py"))

# What each script must print (a phrase of its output), so that a script silently doing nothing fails.
EXPECTED = {
    "budget_deployment.py": "certified epsilon (upper bound)",
    "calibrate.py": "fewest users",
    "compose_rounds.py": "composed epsilon",
    "diffprivlib_histogram.py": "accountant spent",
    "dp_accounting_ledger.py": "certified RDP",
    "dsigma_mallows.py": "two releases compose",
    "opendp_pipeline.py": "composition total",
    "qif_leakage.py": "V[S]",
    "reidentification_risk.py": "clone bound",
    "simulate_collection.py": "round 3 refused",
}


def test_every_example_is_listed():
    assert set(EXAMPLES) == set(EXPECTED)


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs(name, run_script):
    out = run_script(f"examples/{name}", timeout=120)
    assert EXPECTED[name] in out
