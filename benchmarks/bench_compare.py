"""Side by side with the public reference code: FMT 2021 (Apple) and Koskela et al.'s FFT accountant.

Usage::

    python benchmarks/bench_compare.py [--smoke] [--fmt-path DIR] [--koskela-path DIR]
                                       [--ns 1e3,1e4] [--koskela-max-n 1e4] [--rounds 10]

Nothing of the external code is part of this project: it is imported at run time from a path
that the user gives (``--fmt-path`` / env ``FMT_CODE_PATH``; ``--koskela-path`` / env
``KOSKELA_CODE_PATH``), run beside ours with the same parameters, and only its outputs (epsilon,
seconds) are printed.

* FMT 2021: Feldman, McMillan, Talwar, "Hiding among the clones" (FOCS 2021); code
  ``github.com/apple/ml-shuffling-amplification``, file ``computeamplification.py``. Its
  ``numericalanalysis(n, eps0, delta, num_iterations, step, True)`` is the clone-reduction
  upper bound for any eps0-LDP randomizer (so it applies to k-RR for every k); ``--fmt-path`` is
  the directory that holds ``computeamplification.py``.
* Koskela, Heikkila, Honkela, "Numerical accounting in the shuffle model of differential privacy"
  (TMLR 2023; earlier "Tight accounting in the shuffle model of differential privacy"): the
  figure code once in ``github.com/DPBayes/PLD-Accountant`` (``fourier_accountant/
  experimental_shufflers/blankets_fig4/compute_epsilon_bin_tight.py``, removed from that
  repository in commit 2d9702b "move shufflers codes to own repo"; its parent commit still has it).
  ``get_omega(n, gamma, k, nx, L)`` builds the strong-adversary privacy-blanket PLD of k-RR
  (blanket probability ``gamma = k / (e^eps0 + k - 1)``) by a Python double loop (about
  ``80 n`` terms: O(n) work), and ``get_epsilons(..., n_c, ...)`` composes it ``n_c`` times by
  FFT and bisects epsilon to 1e-5 (it returns the lower end of its final bracket).
  ``--koskela-path`` is the directory that holds ``compute_epsilon_bin_tight.py`` or the root
  of a checkout of that parent commit.

Ours: ``ShuffledKRR(k, eps0, n).epsilon(delta)`` (certified) and, for composition,
``ShuffleAccountant`` with ``ShuffledKRRDpEvent`` composed ``--rounds`` times; also our own
implementation of the FMT 2021 clone bound (``literature.fmt2021_clone_epsilon``) so that the
two implementations of the same bound can be compared.

Every row is timed once (cold, in this process). The load average and a fixed reference
computation (20 sorts of 1e6 seeded doubles) are printed at the start and the end.
With ``--smoke`` (CI has no network) an absent external tool is skipped with a message and the
script exits 0 after one small row of ours.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from shuffle_accounting.literature import fmt2021_clone_epsilon
from shuffle_accounting.shuffled_krr import ShuffleAccountant, ShuffledKRR, ShuffledKRRDpEvent

KOSKELA_FILE = "compute_epsilon_bin_tight.py"
KOSKELA_SUBDIR = Path("fourier_accountant/experimental_shufflers/blankets_fig4")
FMT_FILE = "computeamplification.py"
# Koskela et al.'s example grid is nx = 3e7 on [-10, 10]; 2e6 points (dx = 1e-5) keep the
# discretisation well below the reported digits and the FFT inside a few hundred MB.
KOSKELA_NX = 2_000_000
KOSKELA_L = 10.0


def _reference() -> float:
    """Fixed workload: 20 sorts of 1e6 random doubles (seeded)."""
    x = np.random.default_rng(0).random(1_000_000)
    t = time.perf_counter()
    for _ in range(20):
        np.sort(x)
    return time.perf_counter() - t


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _find(given: str | None, env: str, filename: str, subdir: Path | None) -> tuple[Path | None, str]:
    """The external file, or None and the reason why it is absent."""
    root = given or os.environ.get(env)
    if not root:
        return None, f"not given (--{env.split('_')[0].lower()}-path or env {env})"
    for cand in (Path(root) / filename, Path(root) / (subdir or Path()) / filename):
        if cand.is_file():
            return cand, ""
    return None, f"{filename} not found under {root}"


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _fmt_step(n: int) -> int:
    # FMT's example uses step = 100 at n = 1e5; scale it as sqrt(n) / 10 so that small n are not
    # covered by a handful of coarse blocks (the step only trades accuracy for time).
    return max(1, round(math.sqrt(n) / 10))


def _koskela_eps(mod: ModuleType, k: int, eps0: float, n: int, delta: float, rounds: int) -> list[float]:
    gamma = k / (math.exp(eps0) + k - 1)
    quiet = io.StringIO()  # their code prints progress and every bisection step
    with contextlib.redirect_stdout(quiet):
        omega, grid, err = mod.get_omega(n, gamma, k, KOSKELA_NX, KOSKELA_L)
        out = []
        for nc in (1, rounds):
            out.append(
                mod.get_epsilons(
                    omega,
                    err,
                    grid,
                    n=n,
                    gamma=gamma,
                    k=k,
                    n_c=nc,
                    nx=KOSKELA_NX,
                    L=KOSKELA_L,
                    target_delta=delta,
                )
            )
    return out


def _ours_composed(k: int, eps0: float, n: int, delta: float, rounds: int) -> float:
    acc = ShuffleAccountant()
    acc.compose(ShuffledKRRDpEvent(k=k, eps0=eps0, n=n), count=rounds)
    return acc.get_epsilon(delta)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="one tiny row; absent tools are skipped")
    ap.add_argument("--fmt-path", default=None)
    ap.add_argument("--koskela-path", default=None)
    ap.add_argument("--ns", default="1e3,1e4,1e5,1e6")
    ap.add_argument("--eps0s", default="1,2,4")
    ap.add_argument("--ks", default="2,10")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument(
        "--koskela-max-n",
        type=float,
        default=1e4,
        help="largest n for Koskela et al.'s O(n) Python loop (default 1e4)",
    )
    ap.add_argument("--rounds", type=int, default=10, help="composition rounds for the FFT accountant")
    a = ap.parse_args(argv)
    if a.smoke:
        a.ns, a.eps0s, a.ks, a.rounds, a.koskela_max_n = "1e3", "2", "2", 2, 1e3

    ns = [int(float(x)) for x in a.ns.split(",")]
    eps0s = [float(x) for x in a.eps0s.split(",")]
    ks = [int(x) for x in a.ks.split(",")]
    delta = a.delta

    fmt_path, fmt_why = _find(a.fmt_path, "FMT_CODE_PATH", FMT_FILE, None)
    kos_path, kos_why = _find(a.koskela_path, "KOSKELA_CODE_PATH", KOSKELA_FILE, KOSKELA_SUBDIR)
    fmt = kos = None
    if fmt_path is not None:
        try:
            fmt = _load(fmt_path, "_ext_fmt2021")
        except Exception as exc:  # external code: report why it cannot run, do not crash
            fmt_why = f"import failed: {exc!r}"
    if kos_path is not None:
        try:
            kos = _load(kos_path, "_ext_koskela")
        except Exception as exc:
            kos_why = f"import failed: {exc!r}"
    print(f"FMT 2021 reference code: {fmt_path if fmt else 'SKIPPED: ' + fmt_why}")
    print(f"Koskela et al. FFT code: {kos_path if kos else 'SKIPPED: ' + kos_why}")

    ref = _reference()
    print(f"load average {os.getloadavg()}; reference workload (20 x np.sort(1e6)) {ref:.3f} s")
    print(f"delta = {delta:g}; each cell: epsilon (seconds); times are single cold runs\n")

    print("## One round: FMT 2021 (generic eps0-LDP clones) vs ours")
    print("| n | k | eps0 | FMT code (step) | our FMT21 clones | ours: ShuffledKRR.epsilon |")
    print("|---|---|---|---|---|---|")
    for n in ns:
        for eps0 in eps0s:
            for k in ks:
                if fmt is not None:
                    step = _fmt_step(n)
                    with contextlib.redirect_stdout(io.StringIO()):
                        e_f, t_f = _timed(lambda: fmt.numericalanalysis(n, eps0, delta, 20, step, True))
                    c_fmt = f"{e_f:.5g} ({t_f:.2f} s, step {step})"
                else:
                    c_fmt = "skipped"
                e_l, t_l = _timed(lambda: fmt2021_clone_epsilon(eps0, n, delta))
                e_o, t_o = _timed(lambda: ShuffledKRR(k, eps0, n).epsilon(delta))
                print(
                    f"| {n:.0e} | {k} | {eps0:g} | {c_fmt} | {e_l:.5g} ({t_l:.2f} s) "
                    f"| {e_o:.5g} ({t_o:.2f} s) |",
                    flush=True,
                )

    print(f"\n## Koskela et al. blanket PLD + FFT (1 and {a.rounds} rounds) vs ours")
    print(
        f"| n | k | eps0 | Koskela 1 round | ours 1 round (blanket only) | ours 1 round (default) "
        f"| Koskela {a.rounds} rounds | ours {a.rounds} rounds (ShuffleAccountant) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in ns:
        for eps0 in eps0s:
            for k in ks:
                if kos is None:
                    c1 = cr = "skipped"
                elif n > a.koskela_max_n:
                    c1 = cr = f"not run (O(n) Python loop, n > {a.koskela_max_n:.0e})"
                else:
                    (e1, er), t_k = _timed(lambda: _koskela_eps(kos, k, eps0, n, delta, a.rounds))
                    c1, cr = f"{e1:.5g}", f"{er:.5g} ({t_k:.1f} s both)"
                e_b, t_b = _timed(lambda: ShuffledKRR(k, eps0, n).epsilon(delta, method="blanket"))
                e_o, t_o = _timed(lambda: ShuffledKRR(k, eps0, n).epsilon(delta))
                e_r, t_r = _timed(lambda: _ours_composed(k, eps0, n, delta, a.rounds))
                print(
                    f"| {n:.0e} | {k} | {eps0:g} | {c1} | {e_b:.5g} ({t_b:.2f} s) "
                    f"| {e_o:.5g} ({t_o:.2f} s) | {cr} "
                    f"| {e_r:.5g} ({t_r:.2f} s) |",
                    flush=True,
                )
    print(f"\nload average at the end {os.getloadavg()}; reference {ref:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
