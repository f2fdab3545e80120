"""``shuffle-accounting dsigma``: plan a d_sigma-private Mallows shuffle from public points.

Example (after the lead wires :func:`add_subcommand` into the main CLI)::

    shuffle-accounting dsigma --points homes.csv --r 2.0 --alpha 4

reads an ``(n, d)`` CSV of public coordinates (a header row is skipped), builds the groups
``G_i = {j : d(t_i, t_j) <= r}`` (or the ``--nearest`` K nearest), the BFS reference permutation
and the exact sensitivity, and prints the shuffler summary, the (eta, delta)-preservation of the
typical group under Hamming distance, and the Thm 4.2 re-identification bound when ``--eps`` is
given.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .._validation import ParameterError
from ..dsigma.accounting import reidentification_bound
from ..dsigma.groups import groups_from_points, nearest_groups
from ..dsigma.mechanism import MallowsShuffler
from ..dsigma.utility import hamming_preservation_delta

__all__ = ["add_subcommand", "run", "load_points"]


def load_points(path: str) -> np.ndarray:
    """Read a CSV of numeric coordinates (one row per user; a non-numeric header is skipped).

    Raises:
        ParameterError: If the file cannot be read or holds non-numeric rows.

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        ...     _ = f.write("x,y\\n0,0\\n1,0\\n")
        >>> load_points(f.name).tolist()
        [[0.0, 0.0], [1.0, 0.0]]
        >>> os.unlink(f.name)
    """
    try:
        with open(path, encoding="utf-8") as fh:
            lines = [ln.strip() for ln in fh if ln.strip()]
    except OSError as exc:
        raise ParameterError(f"points must be a readable CSV file, got {path!r} ({exc.strerror})") from exc
    rows = []
    for num, line in enumerate(lines):
        cells = [c.strip() for c in line.split(",")]
        try:
            rows.append([float(c) for c in cells])
        except ValueError as exc:
            if num == 0:
                continue  # header
            raise ParameterError(f"points must be numeric CSV rows, got line {num + 1}: {line!r}") from exc
    if not rows or len({len(r) for r in rows}) != 1:
        raise ParameterError(
            f"points must be a non-empty CSV with the same number of columns on every row, got {path!r}"
        )
    return np.asarray(rows, dtype=float)


def run(args: argparse.Namespace) -> int:
    """Handler of the ``dsigma`` subcommand; prints the plan and returns 0.

    Raises:
        ParameterError: On invalid inputs (the main CLI turns it into exit status 2).
    """
    pts = load_points(args.points)
    if args.nearest is not None:
        groups: Any = nearest_groups(pts, args.nearest, metric=args.metric)
    else:
        if args.r is None:
            raise ParameterError("r must be given (or --nearest K), got None")
        groups = groups_from_points(pts, args.r, metric=args.metric)
    sh = MallowsShuffler(groups, alpha=args.alpha, distance=args.distance)
    print(sh.summary())
    sizes = np.array([g.size for g in sh.groups])
    median = int(np.median(sizes))
    if args.distance == "hamming" and sh.n <= 5000:
        d = hamming_preservation_delta(sh.n, median, args.eta, sh.theta)
        print(f"  (eta={args.eta:g}, delta)-preservation of a median-size group ({median}): delta <= {d:.6g}")
    if args.eps is not None:
        r = int(sizes.max())
        k = 1
        if 2 * k < r:
            b = reidentification_bound(args.eps, sh.alpha, r, k)
            print(
                f"  Thm 4.2, largest group (r={r}), k={k}, eps={args.eps:g}: "
                f"Pr[lose]/Pr[win] >= {b.odds_lower:.6g}, Pr[win] <= {b.win_probability_upper:.6g}"
            )
    return 0


def add_subcommand(subparsers: Any) -> None:
    """Register ``dsigma`` on an argparse subparsers object (``set_defaults(func=run)``).

    Example:
        >>> import argparse
        >>> p = argparse.ArgumentParser(); sub = p.add_subparsers(dest="command")
        >>> add_subcommand(sub)
        >>> p.parse_args(["dsigma", "--points", "a.csv", "--r", "2", "--alpha", "4"]).alpha
        4.0
    """
    p = subparsers.add_parser("dsigma", help="plan a d_sigma-private Mallows shuffle from public points")
    p.add_argument(
        "--points", required=True, metavar="FILE.csv", help="CSV of public coordinates, one row per user"
    )
    p.add_argument("--r", type=float, default=None, help="distance threshold for groups")
    p.add_argument(
        "--nearest", type=int, default=None, metavar="K", help="use the K nearest users as the group"
    )
    p.add_argument("--alpha", type=float, required=True, help="d_sigma privacy parameter")
    p.add_argument("--metric", choices=("euclidean", "haversine"), default="euclidean")
    p.add_argument("--distance", choices=("kendall", "hamming"), default="kendall")
    p.add_argument("--eta", type=float, default=0.8, help="preserved fraction for (eta, delta)-preservation")
    p.add_argument("--eps", type=float, default=None, help="LDP epsilon, for the Thm 4.2 bound")
    p.set_defaults(func=run)
