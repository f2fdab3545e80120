"""The console script: defaults, arguments, bad input."""

from __future__ import annotations

import csv as _csv
import io as _io
import json as _json
import subprocess
import sys

import pytest

from shuffle_accounting.presentation.cli import main
from shuffle_accounting.presentation.report import BOUNDS, SCHEMA_VERSION


def test_report_defaults(capsys):
    assert main(["report"]) == 0
    out = capsys.readouterr().out
    assert "local eps0" in out and "10000" in out


def test_report_bad_input(capsys):
    assert main(["report", "--eps0", "nan"]) == 2
    assert "eps0 must be" in capsys.readouterr().err


def test_console_script_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "shuffle_accounting.presentation.cli", "report", "--k", "3", "--n", "1e3"],
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

    assert (
        main(["report", "--k", "2", "--n", "40", "--eps0", "1.0", "--rounds", "2", "--target-eps", "1.5"])
        == 0
    )
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


# --- issue 16: formats, early and clear failures, fast start-up ---------------------------------

_FAST = ["--k", "3", "--n", "100", "--skip", "literature,reidentification,qif"]


def test_version(capsys):
    import shuffle_accounting

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"shuffle-accounting {shuffle_accounting.__version__}"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--n", "abc"], "argument --n: expected an integer, got 'abc'"),
        (["--k", "2.5"], "argument --k: expected an integer, got '2.5'"),
        (["--rounds", "1e300"], "argument --rounds: expected an integer of at most 1e18"),
        (["--n", "1e300"], "argument --n: expected an integer of at most 1e18"),
        (["--skip", "nope"], "argument --skip: expected comma-separated sections"),
        (["--format", "xml"], "argument --format: invalid choice"),
    ],
)
def test_bad_arguments_name_the_option(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", *argv])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--eps0", "1000"], "eps0 must be a finite real number in (0.0, 50.0], got 1000.0"),
        (["--rounds", "1e17"], "rounds must be an integer in [1, 100000]"),
        (["--n", "1e12"], "n must be an integer in [2, 1000000000]"),
        (["--k", "1e9"], "k must be an integer in [2, 100000]"),
        (["--output", "/nonexistent-dir/r.json"], "output folder does not exist"),
        (["--plot", "/nonexistent-dir/p.png"], "plot folder does not exist"),
        (["--plot", "p.gif"], "plot must end in one of ('.png', '.svg')"),
    ],
)
def test_out_of_range_refused_before_computing(argv, message, capsys, monkeypatch):
    import shuffle_accounting.presentation.report as report

    def boom(*a, **k):  # any computation would be a failure of the early checks
        raise AssertionError("computed before checking")

    monkeypatch.setattr(report, "build_report", boom)
    assert main(["report", *argv]) == 2
    assert message in capsys.readouterr().err


def test_help_imports_nothing_heavy():
    code = (
        "import sys\n"
        "from shuffle_accounting.presentation.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('numpy', 'scipy', 'dp_accounting', 'shuffle_accounting.shuffled_krr',"
        " 'shuffle_accounting.runtime', 'matplotlib') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in proc.stdout
    assert "simulate" in proc.stdout and "serve" in proc.stdout and "dsigma" in proc.stdout


def test_single_round_report_does_not_import_dp_accounting():
    """rounds = 1 composes nothing: the report (calibration included) runs without dp_accounting;
    rounds > 1 imports it where it composes."""
    code = (
        "import sys\n"
        "from shuffle_accounting.presentation.cli import main\n"
        "main(['report', '--k', '3', '--n', '100', '--eps0', '1', '--skip', 'literature,qif,reidentification'])\n"
        "print('DPA', 'dp_accounting' in sys.modules)\n"
        "main(['report', '--k', '3', '--n', '100', '--eps0', '1', '--rounds', '2',"
        " '--skip', 'lower,literature,qif,reidentification,accuracy'])\n"
        "print('DPA', 'dp_accounting' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert [line for line in proc.stdout.splitlines() if line.startswith("DPA")] == ["DPA False", "DPA True"]


def test_report_imports_no_heavy_optional_module():
    """Start-up of ``report`` (issue 12): every section runs without scipy.integrate/optimize/signal/
    stats, diffprivlib or matplotlib (each costs 0.3-1 s of imports)."""
    code = (
        "import sys, io, contextlib\n"
        "from shuffle_accounting.presentation.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['report', '--k', '3', '--n', '100', '--eps0', '1'])\n"
        "mods = ('scipy.integrate', 'scipy.optimize', 'scipy.signal', 'scipy.stats', 'diffprivlib', 'matplotlib')\n"
        "print('HEAVY', [m for m in mods if m in sys.modules])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in proc.stdout


def test_lazy_package_keeps_every_public_name():
    code = (
        "import shuffle_accounting as s, sys\n"
        "assert 'shuffle_accounting.shuffled_krr' not in sys.modules\n"
        "from shuffle_accounting import ShuffledKRR, ShuffleAccountant, KRR, literature, qif\n"
        "from shuffle_accounting import *\n"
        "print(sorted(s.__all__) == sorted(n for n in s.__all__ if hasattr(s, n)), len(s.__all__))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["True", "12"]


def test_report_json_schema(capsys):
    assert main(["report", *_FAST, "--format", "json"]) == 0
    doc = _json.loads(capsys.readouterr().out)
    assert doc["schema"] == "shuffle-accounting/report" and doc["schema_version"] == SCHEMA_VERSION
    assert doc["deployment"]["n"] == 100 and doc["whatif"] is None
    assert doc["skipped"] == ["literature", "qif", "reidentification"]
    keys = [s["key"] for s in doc["sections"]]
    assert keys == ["deployment", "shuffled", "calibration", "accuracy"]
    for sec in doc["sections"]:
        for row in sec["rows"]:
            assert row["bound"] in BOUNDS
            assert (row["value"] is None) == (row["bound"] == "none")
    shuffled = {r["label"]: r for r in doc["sections"][1]["rows"]}
    from shuffle_accounting import ShuffledKRR

    assert shuffled["certified eps (upper bound)"]["value"] == ShuffledKRR(3, 2.0, 100).epsilon(1e-6)
    assert shuffled["certified eps (upper bound)"]["bound"] == "upper"
    assert shuffled["exhibited eps (lower bound)"]["bound"] == "lower"


def test_report_full_json_has_a_direction_for_every_number(capsys):
    assert main(["report", "--k", "3", "--n", "100", "--format", "json"]) == 0
    doc = _json.loads(capsys.readouterr().out)
    assert {s["key"] for s in doc["sections"]} >= {"literature", "reidentification", "qif"}
    for sec in doc["sections"]:
        for row in sec["rows"]:
            if row["bound"] == "none":
                assert row["value"] is None and row["text"]
            else:
                assert row["value"] is not None


def test_report_formats_hold_the_same_content(capsys, tmp_path):
    assert main(["report", *_FAST, "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert main(["report", *_FAST, "--format", "md"]) == 0
    md = capsys.readouterr().out
    out = tmp_path / "r.csv"
    assert main(["report", *_FAST, "--format", "csv", "--output", str(out)]) == 0
    rows = list(_csv.DictReader(_io.StringIO(out.read_text())))
    assert rows and {r["section"] for r in rows} == {"deployment", "shuffled", "calibration", "accuracy"}
    for r in rows:
        assert r["label"] in text and r["label"].replace("|", "\\|") in md
        assert r["text"] in text


def test_report_whatif_grid_in_csv(capsys):
    assert (
        main(
            [
                "report",
                "--k",
                "3",
                "--n",
                "50",
                "--skip",
                "literature,reidentification,qif,lower",
                "--format",
                "csv",
                "--whatif",
            ]
        )
        == 0
    )
    rows = list(_csv.DictReader(_io.StringIO(capsys.readouterr().out)))
    grid = [r for r in rows if r["section"] == "whatif"]
    eps_rows = [r for r in grid if r["label"] == "certified epsilon" and r["eps0"] == "2.0"]
    from shuffle_accounting import ShuffledKRR

    assert len(eps_rows) == len({r["n"] for r in grid}) >= 5
    for r in eps_rows:
        assert float(r["value"]) == ShuffledKRR(3, 2.0, int(r["n"])).epsilon(1e-6) and r["bound"] == "upper"
    assert any(r["label"] == "largest eps0 meeting target" for r in grid)


def test_report_skip_lower(capsys):
    assert (
        main(["report", *_FAST, "--skip", "lower,calibration,accuracy,literature,reidentification,qif"]) == 0
    )
    out = capsys.readouterr().out
    assert "exhibited eps (lower bound)  skipped" in out and "Calibration" not in out


def test_report_plot_svg_and_whatif(tmp_path, capsys):
    out = tmp_path / "curves.svg"
    assert (
        main(
            [
                "report",
                "--k",
                "3",
                "--n",
                "30",
                "--skip",
                "literature,reidentification,qif",
                "--plot",
                str(out),
            ]
        )
        == 0
    )
    assert out.read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "curves-whatif.svg").stat().st_size > 0
    assert "curves-whatif.svg" in capsys.readouterr().out


def test_plots_draw_the_composed_rounds(tmp_path):
    from shuffle_accounting.presentation.plotting import plot_delta_curves, plot_whatif
    from shuffle_accounting.presentation.report import Deployment
    from shuffle_accounting.presentation.whatif import whatif_grid

    dep = Deployment(k=3, eps0=1.0, n=30, rounds=2)
    plot_delta_curves(dep, str(tmp_path / "d.svg"), num=12)
    svg = (tmp_path / "d.svg").read_text()
    assert "2 rounds composed" in svg and "target delta" in svg and "certified eps &lt;=" in svg
    grid = whatif_grid(dep, ns=[20, 40], eps0s=[1.0], calibration=False, baseline=False)
    assert grid.find("certified epsilon", rounds=2) is not None
    plot_whatif(grid, str(tmp_path / "w.png"))
    assert (tmp_path / "w.png").read_bytes()[:4] == b"\x89PNG"


def test_simulate_checks_before_running(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("c\na\nb\na\n")
    assert main(["simulate", "--csv", str(data), "--n", "10", "--trials", "1", "--no-progress"]) == 2
    assert "n must be <= the 3 records" in capsys.readouterr().err
    assert main(["simulate", "--n", "10", "--plot", str(tmp_path / "no" / "x.png")]) == 2
    assert "plot folder does not exist" in capsys.readouterr().err


def test_format_bound_rounds_outward():
    import random

    from shuffle_accounting.presentation.report import format_bound

    rnd = random.Random(7)
    for _ in range(3000):
        x = 10 ** rnd.uniform(-300, 300)
        assert float(format_bound(x, "lower")) <= x <= float(format_bound(x, "upper"))
        assert len(format_bound(x, "upper").split("e")[0].replace(".", "").lstrip("0")) <= 6
    assert format_bound(0.0797917203496098, "lower") == "0.0797917"
    assert format_bound(0.0797917203496098, "upper") == "0.0797918"
    assert format_bound(float("inf"), "upper") == "inf"


def test_report_text_rounds_bounds_outward(capsys):
    from shuffle_accounting import ShuffledKRR
    from shuffle_accounting.shuffled_krr.lower import lower_epsilon

    assert main(["report", *_FAST]) == 0
    out = capsys.readouterr().out
    up = float(out.split("certified eps (upper bound)")[1].split()[0])
    low = float(out.split("exhibited eps (lower bound)")[1].split()[0])
    assert up >= ShuffledKRR(3, 2.0, 100).epsilon(1e-6)
    assert low <= lower_epsilon(1e-6, 3, 2.0, 100)


def test_missing_extras_fail_before_computing(monkeypatch, tmp_path, capsys):
    import importlib.util

    real = importlib.util.find_spec

    def fake(name, *a, **k):
        return None if name in ("matplotlib", "diffprivlib", "starlette") else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    assert main(["report", "--plot", str(tmp_path / "a.png")]) == 2
    assert "pip install 'shuffle-accounting[plot]'" in capsys.readouterr().err
    assert main(["simulate", "--n", "100"]) == 2
    assert "pip install 'shuffle-accounting[diffprivlib]'" in capsys.readouterr().err
    assert main(["serve"]) == 2
    assert "pip install 'shuffle-accounting[web]'" in capsys.readouterr().err


def test_large_k_refusal_names_the_cheaper_certified_alternative(capsys):
    assert main(["report", "--k", "1e6", "--n", "500"]) == 2
    err = capsys.readouterr().err
    assert "k must be an integer in [2, 100000] for the report, got 1000000" in err
    assert "ShuffledKRR(k=1000000, eps0=2.0, n=500).epsilon(1e-06)" in err
