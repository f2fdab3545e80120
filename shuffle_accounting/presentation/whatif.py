"""What-if grid of a deployment: how epsilon, the calibrated eps0 and the accuracy move with ``n``.

Presentation-layer orchestration of public APIs (no new mathematics): the certified epsilon
(:meth:`~shuffle_accounting.shuffled_krr.mechanism.ShuffledKRR.epsilon`, an upper bound) for several
``eps0`` and, for ``rounds > 1``, the composition
(:class:`~shuffle_accounting.shuffled_krr.accountant.ShuffleAccountant`, an upper bound); the largest
``eps0`` meeting the target (:func:`~shuffle_accounting.shuffled_krr.calibration.calibrate_eps0`,
rounded down); the standard deviation of a debiased frequency (:mod:`shuffle_accounting.accuracy`)
next to the central Gaussian baseline at the same ``(eps, delta)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._validation import ParameterError, check_int, check_real
from .report import EPS0_MAX, N_MAX, Deployment, format_bound

if TYPE_CHECKING:  # imported lazily at run time (the curve path imports the mathematics)
    from .curve_rows import DeploymentCurves

__all__ = ["WhatIfSeries", "WhatIfGrid", "default_ns", "default_eps0s", "whatif_grid"]


@dataclass(frozen=True)
class WhatIfSeries:
    """One curve of the grid: ``values[i]`` is ``quantity`` at ``ns[i]`` (``None``: not available).

    Attributes:
        quantity: What is measured (e.g. ``"certified epsilon"``).
        eps0: Local epsilon of the curve.
        rounds: Rounds composed.
        bound: Bound direction (see :data:`shuffle_accounting.presentation.report.BOUNDS`).
        values: One value per grid ``n``.
    """

    quantity: str
    eps0: float
    rounds: int
    bound: str
    values: tuple[float | None, ...]


@dataclass(frozen=True)
class WhatIfGrid:
    """The what-if grid of a deployment (build with :func:`whatif_grid`)."""

    deployment: Deployment
    ns: tuple[int, ...]
    eps0s: tuple[float, ...]
    series: tuple[WhatIfSeries, ...]

    def find(self, quantity: str, *, eps0: float | None = None, rounds: int = 1) -> WhatIfSeries | None:
        """The series of ``quantity`` at ``eps0`` (default the deployment's) and ``rounds``, if any."""
        e0 = self.deployment.eps0 if eps0 is None else eps0
        for s in self.series:
            if s.quantity == quantity and s.eps0 == e0 and s.rounds == rounds:
                return s
        return None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the ``whatif`` member of the report schema)."""

        def num(v: float | None) -> float | None:
            return None if v is None or not math.isfinite(v) else v

        dep = self.deployment
        return {
            "ns": list(self.ns),
            "eps0s": list(self.eps0s),
            "k": dep.k,
            "rounds": dep.rounds,
            "delta": dep.delta,
            "target_epsilon": dep.target_epsilon,
            "series": [
                {
                    "quantity": s.quantity,
                    "eps0": s.eps0,
                    "rounds": s.rounds,
                    "bound": s.bound,
                    "values": [num(v) for v in s.values],
                }
                for s in self.series
            ],
        }

    def csv_rows(self) -> list[list[Any]]:
        """Rows in :data:`shuffle_accounting.presentation.report.CSV_COLUMNS` order, section ``whatif``."""
        out = []
        for s in self.series:
            for n, v in zip(self.ns, s.values):
                ok = v is not None and math.isfinite(v)
                out.append(
                    [
                        "whatif",
                        s.quantity,
                        n,
                        s.eps0,
                        s.rounds,
                        repr(v) if ok else "",
                        s.bound if ok else "none",
                        f"{v:.6g}" if ok else "n/a",
                        "",
                    ]
                )
        return out

    def _table(self) -> tuple[list[str], list[list[str]]]:
        head = ["n"] + [f"{s.quantity} (eps0={s.eps0:g}, R={s.rounds}, {s.bound})" for s in self.series]
        body = [
            [str(n)]
            + ["n/a" if s.values[i] is None else format_bound(s.values[i], s.bound) for s in self.series]
            for i, n in enumerate(self.ns)
        ]
        return head, body

    def to_text(self) -> str:
        """The grid as a plain-text block (one line per ``n``, one column per series)."""
        head, body = self._table()
        title = f"What-if over n (delta = {self.deployment.delta:.3g}, target eps = {self.deployment.target_epsilon:g})"
        lines = [title, "-" * len(title)]
        for j, h in enumerate(head[1:], 1):
            lines.append(f"  [{j}] {h}")
        widths = [max(len(str(j)) if j else 1, *(len(r[j]) for r in body)) for j in range(len(head))]
        lines.append(
            "  " + "  ".join((("n" if j == 0 else f"[{j}]").rjust(widths[j])) for j in range(len(head)))
        )
        for r in body:
            lines.append("  " + "  ".join(c.rjust(widths[j]) for j, c in enumerate(r)))
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The grid as a Markdown table."""
        head, body = self._table()
        lines = [
            f"## What-if over n (delta = {self.deployment.delta:.3g})",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)


def default_ns(n: int) -> tuple[int, ...]:
    """Seven population sizes from ``n / 10^1.5`` to ``n * 10^1.5`` (within ``[10, N_MAX]``).

    Example:
        >>> default_ns(10_000)
        (316, 1000, 3162, 10000, 31623, 100000, 316228)
    """
    n = check_int("n", n, minimum=2, maximum=N_MAX)
    out = sorted({min(N_MAX, max(10, round(n * 10 ** (j / 2)))) for j in range(-3, 4)} | {n})
    return tuple(out)


def default_eps0s(eps0: float) -> tuple[float, ...]:
    """``eps0 / 2``, ``eps0`` and ``2 eps0`` (capped at ``EPS0_MAX``).

    Example:
        >>> default_eps0s(2.0)
        (1.0, 2.0, 4.0)
    """
    eps0 = check_real("eps0", eps0, low=0.0, high=EPS0_MAX, low_open=True)
    return tuple(sorted({eps0 / 2, eps0, min(2 * eps0, EPS0_MAX)}))


def whatif_grid(
    dep: Deployment,
    *,
    ns: Sequence[int] | None = None,
    eps0s: Sequence[float] | None = None,
    rounds: bool = True,
    calibration: bool = True,
    baseline: bool = True,
    curves: DeploymentCurves | None = None,
) -> WhatIfGrid:
    """Compute the what-if grid of ``dep`` over ``ns`` (default :func:`default_ns`).

    Args:
        dep: The deployment.
        ns: Population sizes (integers in ``[2, N_MAX]``, at most 50).
        eps0s: Local epsilons (default :func:`default_eps0s`; at most 10, each in ``(0, EPS0_MAX]``).
        rounds: Also compose ``dep.rounds`` rounds at ``dep.eps0`` (one PLD per ``n``) when ``> 1``.
        calibration: Include the largest eps0 meeting ``dep.target_epsilon`` (one round).
        baseline: Include the central Gaussian baseline.
        curves: The report's :class:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves`
            of ``dep``: its cached curves are reused at ``(dep.eps0, dep.n)`` (``None``: new ones).

    Returns:
        A :class:`WhatIfGrid`.

    Raises:
        ParameterError: On invalid arguments.

    Example:
        >>> g = whatif_grid(Deployment(k=3, eps0=1.0, n=100), ns=[50, 100], eps0s=[1.0], baseline=False)
        >>> s = g.find("certified epsilon")
        >>> s.bound, s.values[0] > s.values[1]
        ('upper', True)
    """
    from ..accuracy import gaussian_frequency_accuracy, shuffle_frequency_accuracy  # noqa: PLC0415
    from ..shuffled_krr import calibration as cal  # noqa: PLC0415
    from .curve_rows import DeploymentCurves, NamedCurve, curve_rows  # noqa: PLC0415

    if not isinstance(dep, Deployment):
        raise ParameterError(f"dep must be a Deployment, got {type(dep).__name__}")
    if curves is not None and (not isinstance(curves, DeploymentCurves) or curves.deployment != dep):
        raise ParameterError("curves must be a DeploymentCurves of the same deployment")
    ns_t = (
        default_ns(dep.n) if ns is None else tuple(check_int("ns", v, minimum=2, maximum=N_MAX) for v in ns)
    )
    e0_t = (
        default_eps0s(dep.eps0)
        if eps0s is None
        else tuple(check_real("eps0s", v, low=0.0, high=EPS0_MAX, low_open=True) for v in eps0s)
    )
    if not 1 <= len(ns_t) <= 50 or not 1 <= len(e0_t) <= 10:
        raise ParameterError(
            f"ns must hold 1 to 50 sizes and eps0s 1 to 10 values, got {len(ns_t)} and {len(e0_t)}"
        )
    # One DeploymentCurves per grid point (the report's own at the deployment), so every bound
    # compared here goes through the report's curve path (curve_rows) and is computed once.
    grid_curves: dict[tuple[float, int], DeploymentCurves] = {}
    if curves is not None:
        grid_curves[(dep.eps0, dep.n)] = curves

    def at(e0: float, n: int) -> DeploymentCurves:
        if (e0, n) not in grid_curves:
            grid_curves[(e0, n)] = DeploymentCurves(
                Deployment(k=dep.k, eps0=e0, n=n, delta=dep.delta, rounds=dep.rounds)
            )
        return grid_curves[(e0, n)]

    def series_of(quantity: str, e0: float, r: int, named: list[NamedCurve]) -> WhatIfSeries:
        rows = curve_rows(named, delta=dep.delta)
        bounds = {row.bound for row in rows if row.value is not None}
        return WhatIfSeries(
            quantity, e0, r, bounds.pop() if len(bounds) == 1 else "upper", tuple(row.value for row in rows)
        )

    series: list[WhatIfSeries] = []
    for e0 in e0_t:
        series.append(
            series_of("certified epsilon", e0, 1, [NamedCurve(f"n = {n}", at(e0, n).certified) for n in ns_t])
        )
    eps_at_dep = tuple(at(dep.eps0, n).certified.epsilon(dep.delta) for n in ns_t)
    if rounds and dep.rounds > 1:
        series.append(
            series_of(
                "certified epsilon",
                dep.eps0,
                dep.rounds,
                [NamedCurve(f"n = {n}", at(dep.eps0, n).composed()) for n in ns_t],
            )
        )
    if calibration:
        vals_c: list[float | None] = []
        for n in ns_t:
            try:
                vals_c.append(cal.calibrate_eps0(dep.k, n, dep.target_epsilon, dep.delta, rtol=1e-3))
            except ParameterError:  # every eps0 up to the cap meets the target
                vals_c.append(None)
        series.append(WhatIfSeries("largest eps0 meeting target", dep.eps0, 1, "lower", tuple(vals_c)))
    series.append(
        WhatIfSeries(
            "shuffle+INV std (worst category)",
            dep.eps0,
            1,
            "upper",
            tuple(shuffle_frequency_accuracy(dep.k, dep.eps0, n).std for n in ns_t),
        )
    )
    if baseline:
        vals_g = tuple(
            gaussian_frequency_accuracy(e, dep.delta, n).std if e > 0.0 else None  # eps = 0: no Gaussian
            for e, n in zip(eps_at_dep, ns_t)
        )
        series.append(WhatIfSeries("central Gaussian std", dep.eps0, 1, "exact", vals_g))
    return WhatIfGrid(dep, ns_t, e0_t, tuple(series))
