"""Command-line interface: ``shuffle-accounting report`` and friends.

The ``report`` subcommand prints, for a planned shuffled k-RR deployment, one section per
registered module (see :data:`REPORT_SECTIONS`).
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
from typing import Callable, Sequence

from .randomizers import KRR
from .report import Deployment, ReportSection, format_sections

__all__ = ["main", "build_parser", "SUBCOMMAND_MODULES"]


def _local_section(dep: Deployment) -> ReportSection:
    r = KRR(dep.k, dep.eps0)
    return ReportSection(
        "Deployment and local randomizer (k-RR)",
        (
            ("users per batch n", f"{dep.n}", ""),
            ("categories k", f"{dep.k}", ""),
            ("local eps0", f"{dep.eps0:.6g}", "each report alone is eps0-LDP"),
            ("rounds", f"{dep.rounds}", ""),
            ("target delta", f"{dep.delta:.3g}", ""),
            ("p (keep)", f"{r.p:.6g}", "e^eps0 / (e^eps0 + k - 1)"),
            ("blanket gamma", f"{r.gamma:.6g}", "k / (e^eps0 + k - 1)"),
        ),
    )


def _report_sections() -> list[Callable[[Deployment], ReportSection]]:
    """The registered report sections, in print order (imported on use: the CLI starts fast)."""
    from .literature import report_section as literature_section  # noqa: PLC0415
    from .qif import report_section as qif_section  # noqa: PLC0415
    from .reidentification import report_section as reid_section  # noqa: PLC0415
    from .shuffled_krr.report import calibration_section  # noqa: PLC0415
    from .shuffled_krr.report import report_section as shuffled_section  # noqa: PLC0415

    return [_local_section, shuffled_section, calibration_section, literature_section, reid_section, qif_section]


#: Names of the modules whose ``add_subcommand(subparsers)`` registers a subcommand.
SUBCOMMAND_MODULES: tuple[str, ...] = ("shuffle_accounting.runtime.command", "shuffle_accounting.dsigma.command")


def _cmd_report(args: argparse.Namespace) -> int:
    dep = Deployment(
        k=args.k,
        eps0=args.eps0,
        n=args.n,
        delta=args.delta,
        rounds=args.rounds,
        target_epsilon=1.0 if args.target_eps is None else args.target_eps,
        calibrate_rounds=args.target_eps is not None,
    )
    sections = [fn(dep) for fn in _report_sections()]
    print(format_sections(sections))
    if args.plot:
        from .plotting import plot_delta_curves  # noqa: PLC0415 - optional matplotlib

        plot_delta_curves(dep, args.plot)
        print(f"\nwrote {args.plot}")
    return 0


def _int_arg(text: str) -> int:
    value = float(text)
    if not math.isfinite(value) or not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser for ``shuffle-accounting``."""
    parser = argparse.ArgumentParser(
        prog="shuffle-accounting",
        description="Privacy accounting for the shuffle model of differential privacy.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="certified and literature bounds for a shuffled k-RR deployment")
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
    rep.add_argument("--plot", metavar="FILE.png", default=None, help="write the delta(eps) curves")
    rep.set_defaults(func=_cmd_report)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).add_subcommand(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``shuffle-accounting`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:
        print(f"shuffle-accounting: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
