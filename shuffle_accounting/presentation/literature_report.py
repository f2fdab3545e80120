"""The "Literature bounds" section of ``shuffle-accounting report``.

Every published bound of :mod:`shuffle_accounting.literature` at the deployment
(:func:`~shuffle_accounting.literature.registry.literature_epsilons`), one row per bound: its
epsilon at ``dep.delta`` (an upper bound, printed rounded up and kept at full precision in the
row's value), or why the bound is not valid at this deployment.
"""

from __future__ import annotations

from ..literature.registry import literature_epsilons
from .report import Deployment, ReportSection, ReportValue, format_bound

__all__ = ["report_section"]


def report_section(dep: Deployment) -> ReportSection:
    """The "Literature bounds" block of ``shuffle-accounting report`` (one round; epsilons at ``dep.delta``).

    Args:
        dep: The deployment.

    Returns:
        A :class:`~shuffle_accounting.presentation.report.ReportSection` (key ``"literature"``)
        with one row per bound of
        :data:`~shuffle_accounting.literature.registry.LITERATURE_BOUNDS`.

    Example:
        >>> sec = report_section(Deployment(k=10, eps0=2.0, n=10_000, delta=1e-6))
        >>> sec.rows[0][1], sec.values[0].bound, sec.values[1].bound
        ('not valid here', 'none', 'upper')
    """
    rows, values = [], []
    for b in literature_epsilons(dep.k, dep.eps0, dep.n, dep.delta):
        if b.epsilon is None:
            rows.append((b.name, "not valid here", b.reason))
            values.append(ReportValue(None, "none"))
        else:
            rows.append((b.name, format_bound(b.epsilon, "upper"), b.citation))
            values.append(ReportValue(b.epsilon, "upper"))
    note = "per round" if dep.rounds == 1 else f"per round (x{dep.rounds} rounds not composed here)"
    return ReportSection(
        f"Literature bounds (eps at delta={dep.delta:g}, {note})", tuple(rows), tuple(values), "literature"
    )
