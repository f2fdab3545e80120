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


def test_report_calibrates_single_round_by_default(capsys):
    assert main(["report", "--k", "3", "--n", "200", "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "largest eps0, 1 round" in out and "fewest users n, 1 round" in out
    assert "not calibrated" in out  # the composition only with an explicit --target-eps


def test_report_calibrates_composition_with_target(capsys):
    from shuffle_accounting.shuffled_krr.calibration import calibrate_eps0, min_users

    assert main(["report", "--k", "2", "--n", "40", "--eps0", "1.0", "--rounds", "2", "--target-eps", "1.5"]) == 0
    out = capsys.readouterr().out
    assert "largest eps0, 2 rounds" in out and "fewest users n, 2 rounds" in out
    # the printed values are the library's
    assert f"{calibrate_eps0(2, 40, 1.5, 1e-6, rounds=2, rtol=1e-2):.6g}" in out
    assert f"  {min_users(2, 1.0, 1.5, 1e-6, rounds=2)}  " in out


def test_report_calibration_out_of_range(capsys, monkeypatch):
    from shuffle_accounting.shuffled_krr import calibration

    monkeypatch.setattr(calibration, "N_CAP", 16)
    assert main(["report", "--k", "2", "--n", "50", "--eps0", "1.0", "--target-eps", "40"]) == 0
    out = capsys.readouterr().out
    assert ">= 30" in out  # every eps0 up to EPS0_CAP meets eps = 40
    assert main(["report", "--k", "2", "--n", "50", "--eps0", "1.0", "--target-eps", "0.01"]) == 0
    assert "> 16" in capsys.readouterr().out  # more users than N_CAP would be needed


def test_report_bad_target_epsilon(capsys):
    for bad in ("nan", "inf", "0", "-1"):
        assert main(["report", "--target-eps", bad]) == 2
        assert "target_epsilon must be" in capsys.readouterr().err


def test_report_plot_writes_png(tmp_path, capsys):
    out = tmp_path / "curves.png"
    assert main(["report", "--k", "3", "--n", "100", "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {out}" in capsys.readouterr().out


def test_report_prints_reidentification_and_qif_sections(capsys):
    assert main(["report", "--k", "3", "--n", "100"]) == 0
    out = capsys.readouterr().out
    assert "Re-identification risk" in out and "blanket bound" in out
    assert "QIF leakage" in out and "V[NS]" in out
    assert "Literature bounds" in out
