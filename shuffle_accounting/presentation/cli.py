"""Command-line interface: ``shuffle-accounting report`` and friends.

The ``report`` subcommand prints, for a planned shuffled k-RR deployment, one section per
registered module (:func:`shuffle_accounting.presentation.report.build_report`) as text, Markdown, CSV or JSON.
``serve`` starts the local web planner (:mod:`shuffle_accounting.presentation.planner`).

Start-up is kept fast: nothing heavy is imported until a subcommand runs, and the modules of the
other subcommands (``simulate``, ``dsigma``) are imported only when that subcommand is chosen.
Every argument is checked (ranges, output paths, optional packages) before any computation.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from collections.abc import Sequence

__all__ = ["main", "build_parser", "SUBCOMMAND_MODULES"]

#: Names of the modules whose ``add_subcommand(subparsers)`` registers a subcommand.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "shuffle_accounting.presentation.simulate_command",
    "shuffle_accounting.presentation.dsigma_command",
)
#: Subcommand name -> (module of SUBCOMMAND_MODULES, help line): lets ``--help`` list them unimported.
_LAZY_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "simulate": (
        "shuffle_accounting.presentation.simulate_command",
        "utility of shuffle, shuffle+INV and the central Gaussian baseline across n (NOT private; "
        "needs the diffprivlib extra, --plot the plot extra)",
    ),
    "dsigma": (
        "shuffle_accounting.presentation.dsigma_command",
        "plan a d_sigma-private Mallows shuffle from public points",
    ),
}


def _int_arg(text: str) -> int:
    """argparse type for integers; ``1e4`` is accepted; the message names the option (argparse adds it)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not math.isfinite(value) or not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    if abs(value) > 1e18:
        raise argparse.ArgumentTypeError(f"expected an integer of at most 1e18 in magnitude, got {text!r}")
    return int(value)


def _skip_arg(text: str) -> frozenset[str]:
    from .report import SECTION_KEYS  # noqa: PLC0415 - light module

    parts = frozenset(p.strip() for p in text.split(",") if p.strip())
    bad = sorted(parts - set(SECTION_KEYS))
    if bad or not parts:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated sections from {', '.join(SECTION_KEYS)}, got {text!r}"
        )
    return parts


def _check_output(path: str | None) -> None:
    from .._validation import ParameterError  # noqa: PLC0415 - light module

    if path is None or path == "-":
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ParameterError(f"output folder does not exist: {os.path.dirname(path)!r}")
    if os.path.isdir(path):
        raise ParameterError(f"output must be a file, got the folder {path!r}")
    if not os.access(folder, os.W_OK):
        raise ParameterError(f"output folder is not writable: {folder!r}")


def _check_k(args: argparse.Namespace) -> None:
    """Refuse ``--k`` above the report's :data:`~.report.K_MAX` up front, naming the cheaper
    certified alternative (the certified epsilon alone; its cost does not grow with ``k``)."""
    from .._validation import ParameterError  # noqa: PLC0415 - light module
    from .report import K_MAX  # noqa: PLC0415 - light module

    if isinstance(args.k, int) and args.k > K_MAX:
        raise ParameterError(
            f"k must be an integer in [2, {K_MAX}] for the report, got {args.k}. The certified epsilon "
            f'alone (its cost does not grow with k): python -c "from shuffle_accounting import ShuffledKRR; '
            f'print(ShuffledKRR(k={args.k}, eps0={args.eps0!r}, n={args.n}).epsilon({args.delta!r}))"'
        )


def _require(module: str, extra: str, what: str) -> None:
    import importlib.util  # noqa: PLC0415

    if importlib.util.find_spec(module) is None:
        raise ImportError(f"{what} needs {module}: pip install 'shuffle-accounting[{extra}]'")


def _cmd_report(args: argparse.Namespace) -> int:
    from .plotting import check_plot_path, whatif_path  # noqa: PLC0415
    from .report import Deployment, build_report, render  # noqa: PLC0415

    # Every check before any computation: parameters, output paths, optional packages.
    _check_k(args)
    dep = Deployment(
        k=args.k,
        eps0=args.eps0,
        n=args.n,
        delta=args.delta,
        rounds=args.rounds,
        target_epsilon=1.0 if args.target_eps is None else args.target_eps,
        calibrate_rounds=args.target_eps is not None,
    )
    _check_output(args.output)
    if args.plot:
        check_plot_path(args.plot)
        _require("matplotlib", "plot", "--plot")
    skip = args.skip or frozenset()
    from .curve_rows import DeploymentCurves  # noqa: PLC0415

    curves = DeploymentCurves(dep)  # one set of cached curves for the report, the grid and the figures
    sections = build_report(dep, skip=skip, curves=curves)
    grid = None
    if args.whatif or args.plot:
        from .whatif import whatif_grid  # noqa: PLC0415

        grid = whatif_grid(dep, curves=curves)
    text = render(args.format, dep, sections, skip=skip, whatif=grid if args.whatif else None)
    if args.output and args.output != "-":
        with open(args.output, "w", encoding="utf-8", newline="") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
        print(f"wrote {args.output}", file=sys.stderr if args.format != "text" else sys.stdout)
    else:
        print(text)
    if args.plot:
        from .plotting import plot_delta_curves, plot_whatif  # noqa: PLC0415 - optional matplotlib

        plot_delta_curves(dep, args.plot, curves=curves)
        plot_whatif(grid, whatif_path(args.plot))
        stream = sys.stdout if args.format == "text" else sys.stderr
        print(f"\nwrote {args.plot}", file=stream)
        print(f"wrote {whatif_path(args.plot)}", file=stream)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    _require("starlette", "web", "serve")
    _require("uvicorn", "web", "serve")
    from .planner.server import serve  # noqa: PLC0415

    serve(host=args.host, port=args.port, open_browser=args.open)
    return 0


def _version() -> str:
    from .. import __version__  # noqa: PLC0415

    return f"shuffle-accounting {__version__}"


def _chosen_command(argv: Sequence[str]) -> str | None:
    for tok in argv:
        if not tok.startswith("-"):
            return tok
    return None


def build_parser(*, load: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argparse parser for ``shuffle-accounting``.

    Args:
        load: Names of the lazily registered subcommands (``simulate``, ``dsigma``) whose modules
            are imported to add their full options; ``None`` loads all of them. The others get a
            placeholder with their help line.
    """
    parser = argparse.ArgumentParser(
        prog="shuffle-accounting",
        description="Privacy accounting for the shuffle model of differential privacy.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser(
        "report",
        help="certified and literature bounds, accuracy and what-if for a shuffled k-RR deployment",
        description="Privacy report of a shuffled k-RR deployment. --plot needs the plot extra.",
    )
    rep.add_argument("--k", type=_int_arg, default=10, help="number of categories (default 10)")
    rep.add_argument("--eps0", type=float, default=2.0, help="local epsilon (default 2)")
    rep.add_argument("--n", type=_int_arg, default=10_000, help="users per shuffled batch (default 10000)")
    rep.add_argument("--delta", type=float, default=1e-6, help="target delta (default 1e-6)")
    rep.add_argument("--rounds", type=_int_arg, default=1, help="number of rounds composed (default 1)")
    rep.add_argument(
        "--target-eps",
        type=float,
        default=None,
        help="central epsilon to calibrate eps0 and n for (default 1; given explicitly, the "
        "composition over --rounds is calibrated too, which takes tens of seconds)",
    )
    rep.add_argument(
        "--format",
        choices=("text", "md", "csv", "json"),
        default="text",
        help="output format (default text); json follows a versioned schema",
    )
    rep.add_argument(
        "--output", "-o", metavar="FILE", default=None, help="write the report to FILE instead of stdout"
    )
    rep.add_argument(
        "--whatif",
        action="store_true",
        help="add the what-if grid over n (eps for several eps0 and rounds, calibrated eps0, accuracy)",
    )
    rep.add_argument(
        "--skip",
        type=_skip_arg,
        default=None,
        metavar="SECTIONS",
        help="comma-separated sections not to compute: lower, shuffled, calibration, accuracy, "
        "literature, reidentification, qif",
    )
    rep.add_argument(
        "--plot",
        metavar="FILE.png|FILE.svg",
        default=None,
        help="write the delta(eps) curves to FILE and the what-if figure to FILE-whatif (plot extra)",
    )
    rep.set_defaults(func=_cmd_report)
    srv = sub.add_parser("serve", help="local web planner on 127.0.0.1 (needs the web extra)")
    srv.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    srv.add_argument("--port", type=_int_arg, default=8765, help="port (default 8765)")
    srv.add_argument("--open", action="store_true", help="open the page in the default browser")
    srv.set_defaults(func=_cmd_serve)
    for name, (module, help_text) in _LAZY_SUBCOMMANDS.items():
        if load is None or name in load:
            importlib.import_module(module).add_subcommand(sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``shuffle-accounting`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = _chosen_command(argv)
    parser = build_parser(load=[chosen] if chosen in _LAZY_SUBCOMMANDS else [])
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:  # ParameterError included
        print(f"shuffle-accounting: error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(f"shuffle-accounting: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"shuffle-accounting: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
