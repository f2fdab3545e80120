"""Every benchmark script runs with ``--smoke`` (tiny sizes), so the scripts cannot rot.

The figures themselves live in benchmarks/README.md; nothing here asserts a speed. Scripts that
other work is still changing get their ``--smoke`` flag later: they are listed in NO_SMOKE_YET
and the completeness test fails once one of them gains the flag (then move it to SMOKE).
"""

from __future__ import annotations

from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SMOKE = [
    "bench_accountant.py",
    "bench_compare.py",
    "bench_blanket_fast.py",
    "bench_shuffled_krr.py",
    "bench_shuffled_krr_lower.py",
    "bench_worst_case.py",
    "bench_worst_case_k.py",
    "bench_worst_case_multi.py",
    "bench_auto_k.py",
    "bench_cli.py",
    "bench_distributed.py",
    "bench_dsigma.py",
    "bench_literature.py",
    "bench_qif.py",
    "bench_reidentification.py",
    "bench_runtime.py",
    "bench_root_finder.py",
    "bench_dataset_delta_scale.py",
]
NO_SMOKE_YET: set[str] = set()


def test_every_benchmark_is_covered():
    scripts = {p.name for p in BENCH.glob("bench_*.py")}
    assert set(SMOKE) <= scripts
    assert scripts - set(SMOKE) <= NO_SMOKE_YET, (
        f"benchmark without a smoke run: {scripts - set(SMOKE) - NO_SMOKE_YET}"
    )
    for name in NO_SMOKE_YET & scripts:
        assert "--smoke" not in (BENCH / name).read_text(), f"{name} has --smoke now: add it to SMOKE"


@pytest.mark.slow
@pytest.mark.parametrize("name", SMOKE)
def test_benchmark_smoke_run(name, run_script):
    out = run_script(f"benchmarks/{name}", "--smoke", timeout=180)
    assert out.strip(), f"{name} printed nothing"


@pytest.mark.slow
def test_worst_case_k_deep_rows_smoke(run_script):
    """The ``--deep`` mode of bench_worst_case_k.py (the README's deep=False / deep=True table)."""
    out = run_script("benchmarks/bench_worst_case_k.py", "--deep", "--smoke", timeout=180)
    assert "deep" in out and "True" in out and "False" in out, out
