"""``shuffle-accounting simulate``: rehearse a shuffled collection and compare with the central model.

Prints, for each population size, the certified single-round epsilon of shuffled k-RR and the mean
total variation distance of shuffle, shuffle+INV and the analytic Gaussian baseline at the same
``(eps, delta)``; ``--plot FILE.png`` writes the Fig. 2-style figure. Simulation only: NOT private.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
from typing import Any

from .._validation import ParameterError
from ..runtime.simulation import GENERATORS, load_csv, simulate

__all__ = ["add_subcommand", "run_simulate"]


def _int_list(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected integers separated by commas, got {text!r}") from None
        if not math.isfinite(value) or not value.is_integer() or value < 1:
            raise argparse.ArgumentTypeError(f"expected positive integers, got {part!r}")
        out.append(int(value))
    return out


def run_simulate(args: argparse.Namespace) -> int:
    """Handler of ``simulate``: run :func:`simulate`, print the table, optionally plot.

    Example:
        >>> p = argparse.ArgumentParser(); sub = p.add_subparsers()
        >>> add_subcommand(sub)
        >>> a = p.parse_args(["simulate", "--k", "3", "--n", "100", "--trials", "1", "--seed", "0", "--no-progress"])
        >>> a.func(a)  # doctest: +ELLIPSIS
        simulation (NOT private): source=normal k=3 eps0=2 delta=1e-06 trials=1
        ...
        0
    """
    # Every check before the computation: output path, optional packages, data size.
    if args.plot:
        from .plotting import check_plot_path  # noqa: PLC0415 - light module

        check_plot_path(args.plot)
        if importlib.util.find_spec("matplotlib") is None:
            raise ImportError("simulate --plot needs matplotlib: pip install 'shuffle-accounting[plot]'")
    if importlib.util.find_spec("diffprivlib") is None:
        raise ImportError(
            "simulate needs diffprivlib (central baseline): pip install 'shuffle-accounting[diffprivlib]'"
        )
    column: Any = int(args.column) if str(args.column).isdigit() else args.column
    source: Any = load_csv(args.csv, column) if args.csv else args.source
    if args.csv and max(args.n) > source.codes.size:
        raise ParameterError(f"n must be <= the {source.codes.size} records of {args.csv}, got {max(args.n)}")
    k = None if args.csv else args.k
    result = simulate(
        source, k, args.eps0, args.n, args.trials, args.delta, rng=args.seed, progress=args.progress
    )
    name = args.csv if args.csv else args.source
    print(
        f"simulation (NOT private): source={name} k={result.k} eps0={args.eps0:g} "
        f"delta={args.delta:g} trials={args.trials}"
    )
    print(result.table())
    if args.plot:
        from .simulation_plot import plot_simulation  # noqa: PLC0415 - optional matplotlib

        plot_simulation(result, args.plot)
        print(f"\nwrote {args.plot}")
    return 0


def add_subcommand(subparsers: Any) -> None:
    """Register ``simulate`` on an argparse ``subparsers`` object (``set_defaults(func=run_simulate)``).

    Example:
        >>> p = argparse.ArgumentParser(); sub = p.add_subparsers()
        >>> add_subcommand(sub)
        >>> p.parse_args(["simulate", "--n", "1000,1e4"]).n
        [1000, 10000]
    """
    sim = subparsers.add_parser(
        "simulate",
        help="utility of shuffle, shuffle+INV and the central Gaussian baseline across n (NOT private)",
    )
    sim.add_argument(
        "--source",
        choices=tuple(GENERATORS),
        default="normal",
        help="synthetic distribution (default normal: N(0, 2) binned into k bins)",
    )
    sim.add_argument(
        "--csv", metavar="FILE.csv", default=None, help="real categorical data instead of --source"
    )
    sim.add_argument(
        "--column",
        default="0",
        help="CSV column name, or 0-based index (default 0); the first row is a header",
    )
    sim.add_argument("--k", type=int, default=15, help="categories for a synthetic source (default 15)")
    sim.add_argument("--eps0", type=float, default=2.0, help="local epsilon (default 2)")
    sim.add_argument(
        "--n",
        type=_int_list,
        default=[1000, 10_000, 100_000],
        help="comma-separated population sizes (default 1000,10000,100000)",
    )
    sim.add_argument("--trials", type=int, default=10, help="trials per n (default 10)")
    sim.add_argument("--delta", type=float, default=1e-6, help="target delta (default 1e-6)")
    sim.add_argument("--seed", type=int, default=None, help="seed for reproducible runs")
    sim.add_argument("--plot", metavar="FILE.png", default=None, help="write the Fig. 2-style figure")
    sim.add_argument("--no-progress", dest="progress", action="store_false", help="hide the progress bar")
    sim.set_defaults(func=run_simulate)
