"""Benchmark: start-up and end-to-end times of the command line and the web planner's computation.

Each command runs in a fresh subprocess (cold imports included), ``--repeat`` times; the table
gives the median wall time, the 1-minute load average before the run, and the ratio to a fixed
reference computation (a numpy workload, measured in the same run) so figures from runs under
different load can be compared.

    python benchmarks/bench_cli.py              # --help, import, report (defaults), report --format json, planner
    python benchmarks/bench_cli.py --repeat 5
    python benchmarks/bench_cli.py --repeat 1 --slow   # + report --target-eps 0.5 --rounds 4 (minutes)
    python benchmarks/bench_cli.py --no-scale          # only the start-up and default-report commands
    python benchmarks/bench_cli.py --profile           # + where the default report's time goes (one process)

The commands import ``shuffle_accounting`` from the current directory first (``python -m`` puts
it on the path), so running the script from an unpacked older tree times that version.

Besides the start-up and default-report commands it times the issue 12 (item 5) cases: the
report at k = 1e5 (the CLI refuses k > 1e5), at n = 1e6, the exhibited lower-bound search at
k = 1e6, and with ``--slow`` the calibrated multi-round report.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

COMMANDS = {
    "shuffle-accounting --help": [sys.executable, "-m", "shuffle_accounting.presentation.cli", "--help"],
    "import shuffle_accounting": [sys.executable, "-c", "import shuffle_accounting"],
    "shuffle-accounting report": [sys.executable, "-m", "shuffle_accounting.presentation.cli", "report"],
    "report --format json": [
        sys.executable,
        "-m",
        "shuffle_accounting.presentation.cli",
        "report",
        "--format",
        "json",
    ],
    "report --skip lower,literature,reidentification,qif": [
        sys.executable,
        "-m",
        "shuffle_accounting.presentation.cli",
        "report",
        "--skip",
        "lower,literature,reidentification,qif",
    ],
    "planner: plan() defaults": [
        sys.executable,
        "-c",
        "from shuffle_accounting.presentation.planner.compute import plan; plan({})",
    ],
    "planner: whatif() defaults": [
        sys.executable,
        "-c",
        "from shuffle_accounting.presentation.planner.compute import whatif; whatif({})",
    ],
}


_CLI = [sys.executable, "-m", "shuffle_accounting.presentation.cli"]
#: Issue 12 cases (item 5): run after COMMANDS; the last one only with --slow (minutes).
SCALE_COMMANDS = {
    "report --k 100000": _CLI + ["report", "--k", "100000"],
    "report --k 1000000 (refused by the CLI's k check)": _CLI + ["report", "--k", "1000000"],
    "report --n 1000000": _CLI + ["report", "--n", "1000000"],
    "lower_epsilon(1e-6, k=1e6, eps0=2, n=1e4) in a fresh process": [
        sys.executable,
        "-c",
        "from shuffle_accounting.shuffled_krr.lower import lower_epsilon; lower_epsilon(1e-6, 10**6, 2.0, 10**4)",
    ],
}
SLOW_COMMANDS = {
    "report --target-eps 0.5 --rounds 4": _CLI + ["report", "--target-eps", "0.5", "--rounds", "4"],
}


def _reference() -> float:
    """Fixed workload: 20 sorts of 1e6 random doubles (seeded)."""
    x = np.random.default_rng(0).random(1_000_000)
    t = time.perf_counter()
    for _ in range(20):
        np.sort(x)
    return time.perf_counter() - t


#: Run in a fresh process by ``--profile``: the default report's imports and sections, timed apart.
_PROFILE = r"""
import time
t0 = time.perf_counter()
from shuffle_accounting.presentation import report as R
from shuffle_accounting.presentation.curve_rows import DeploymentCurves
t1 = time.perf_counter()
import shuffle_accounting.presentation.shuffled_krr_report, shuffle_accounting.presentation.literature_report
import shuffle_accounting.presentation.qif_report, shuffle_accounting.presentation.reidentification_report
t2 = time.perf_counter()
try:
    import diffprivlib.mechanisms  # the accuracy section's central Gaussian baseline
except ImportError:
    pass
t3 = time.perf_counter()
print(f"  import report + curve path            {t1 - t0:7.3f}")
print(f"  import the section modules (scipy)    {t2 - t1:7.3f}")
print(f"  import diffprivlib (Gaussian baseline){t3 - t2:7.3f}")
dep = R.Deployment()
memo = {"curves": DeploymentCurves(dep)}
c = memo["curves"]
t = time.perf_counter(); c.certified.epsilon(dep.delta); print(f"  certified epsilon (once per report)   {time.perf_counter() - t:7.3f}")
t = time.perf_counter(); c.exhibited.epsilon(dep.delta); print(f"  exhibited epsilon (lower-bound search){time.perf_counter() - t:7.3f}")
for key, build in R._SECTIONS.items():
    t = time.perf_counter()
    build(dep, frozenset(), memo)
    print(f"  section {key:30s}{time.perf_counter() - t:7.3f}")
print(f"  total in process                      {time.perf_counter() - t0:7.3f}")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--smoke", action="store_true", help="one run of the two fastest commands (CI: the script runs)"
    )
    ap.add_argument("--slow", action="store_true", help="also the minutes-long report --rounds case")
    ap.add_argument("--no-scale", action="store_true", help="leave out the issue 12 scale cases")
    ap.add_argument(
        "--profile", action="store_true", help="also time the default report's imports and sections apart"
    )
    args = ap.parse_args()
    commands = dict(list(COMMANDS.items())[:2]) if args.smoke else {**COMMANDS, **SCALE_COMMANDS}
    if args.no_scale:
        commands = {name: cmd for name, cmd in commands.items() if name in COMMANDS}
    if args.slow and not args.smoke:
        commands.update(SLOW_COMMANDS)
    if args.smoke:
        args.repeat = 1
    ref = _reference()
    print(f"load (1 min) {os.getloadavg()[0]:.2f}; reference workload {ref:.3f} s")
    print(f"{'command':55s} {'median s':>9s} {'x ref':>7s}")
    for name, cmd in commands.items():
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            # "refused" cases exit with status 2 by design; anything else must succeed
            rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            if rc != 0 and "refused" not in name:
                raise SystemExit(f"{name} failed with exit status {rc}")
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        print(f"{name:55s} {med:9.3f} {med / ref:7.2f}")
    if args.profile and not args.smoke:
        print("default report, one process (s; the two epsilons are then cached for the sections):")
        subprocess.run([sys.executable, "-c", _PROFILE], check=True)


if __name__ == "__main__":
    main()
