"""Shared test configuration.

* The ``slow`` marker (registered in pyproject.toml) labels tests that take more than a few
  seconds: the example scripts and the benchmark smoke runs. CI runs them; during development,
  ``pytest -m "not slow"`` leaves them out.
* ``run_script`` runs a Python script of the repository in a subprocess with a timeout and
  returns its standard output (failing the test with the script's stderr when it exits non-zero).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (the folder holding pyproject.toml)."""
    return ROOT


@pytest.fixture
def run_script(tmp_path: Path) -> Callable[..., str]:
    """Run ``ROOT / relpath`` with ``args`` in a fresh interpreter (cwd: a temporary folder)."""

    def run(relpath: str, *args: str, timeout: float = 120.0) -> str:
        env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore::DeprecationWarning")
        proc = subprocess.run(
            [sys.executable, str(ROOT / relpath), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert proc.returncode == 0, (
            f"{relpath} {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-4000:]}"
        )
        return proc.stdout

    return run
