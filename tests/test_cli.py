"""The console script: defaults, arguments, bad input."""

from __future__ import annotations

import subprocess
import sys

from shuffle_accounting.cli import main


def test_report_defaults(capsys):
    assert main(["report"]) == 0
    out = capsys.readouterr().out
    assert "local eps0" in out and "10000" in out


def test_report_bad_input(capsys):
    assert main(["report", "--eps0", "nan"]) == 2
    assert "eps0 must be" in capsys.readouterr().err


def test_console_script_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "shuffle_accounting.cli", "report", "--k", "3", "--n", "1e3"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "categories k" in proc.stdout
