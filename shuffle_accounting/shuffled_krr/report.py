"""The shuffled k-RR block of ``shuffle-accounting report``: certified vs exhibited epsilon."""

from __future__ import annotations

import math

from ..report import Deployment, ReportSection
from .accountant import ShuffleAccountant, ShuffledKRRDpEvent
from .lower import lower_epsilon
from .mechanism import ShuffledKRR

__all__ = ["report_section"]


def report_section(dep: Deployment) -> ReportSection:
    """Certified epsilon (upper bound), exhibited lower bound, their gap, and R-round composition.

    Args:
        dep: The planned deployment.

    Returns:
        A :class:`~shuffle_accounting.report.ReportSection`.

    Example:
        >>> sec = report_section(Deployment(k=4, eps0=1.0, n=200, delta=1e-6))
        >>> [row[0] for row in sec.rows][:3]
        ['certified eps (upper bound)', 'exhibited eps (lower bound)', 'gap upper / lower']
    """
    mech = ShuffledKRR(dep.k, dep.eps0, dep.n)
    upper = mech.epsilon(dep.delta)
    lower = lower_epsilon(dep.delta, dep.k, dep.eps0, dep.n)
    gap = upper / lower if lower > 0 else math.inf
    rows = [
        ("certified eps (upper bound)", f"{upper:.6f}", "privacy blanket, exact, rounded up; one round"),
        ("exhibited eps (lower bound)", f"{lower:.6f}", "worst of the searched concrete datasets, rounded down"),
        ("gap upper / lower", "inf" if math.isinf(gap) else f"{gap:.4f}", "1.0 would be exactly tight"),
        ("no shuffling", f"{dep.eps0:.6f}", "local eps0 per round, delta = 0"),
    ]
    if dep.rounds > 1:
        acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(k=dep.k, eps0=dep.eps0, n=dep.n), dep.rounds)
        rows.append(
            (f"certified eps, {dep.rounds} rounds", f"{acc.get_epsilon(dep.delta):.6f}", "PLD composition, pessimistic")
        )
        rows.append((f"no shuffling, {dep.rounds} rounds", f"{dep.rounds * dep.eps0:.6f}", "basic composition of eps0"))
    return ReportSection(
        f"Shuffled k-RR: (eps, delta = {dep.delta:.3g}) over all neighbouring datasets", tuple(rows)
    )
