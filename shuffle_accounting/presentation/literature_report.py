"""The "Literature bounds" section of ``shuffle-accounting report``.

Every published bound of :mod:`shuffle_accounting.literature` at the deployment, as a privacy
curve (:data:`~shuffle_accounting.literature.registry.LITERATURE_CURVES`), one row per bound through
the report's one curve path (:func:`~shuffle_accounting.presentation.curve_rows.curve_rows`): its
epsilon at ``dep.delta`` (an upper bound, printed rounded up and kept at full precision in the
row's value), or why the bound is not valid at this deployment.
"""

from __future__ import annotations

from .curve_rows import DeploymentCurves, curve_rows, curve_section
from .report import Deployment, ReportSection

__all__ = ["report_section"]


def report_section(dep: Deployment, *, curves: DeploymentCurves | None = None) -> ReportSection:
    """The "Literature bounds" block of ``shuffle-accounting report`` (one round; epsilons at ``dep.delta``).

    Args:
        dep: The deployment.
        curves: The report's :class:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves`
            of ``dep`` (shared with the other sections and figures), or ``None`` for new ones.

    Returns:
        A :class:`~shuffle_accounting.presentation.report.ReportSection` (key ``"literature"``)
        with one row per bound of
        :data:`~shuffle_accounting.literature.registry.LITERATURE_CURVES`.

    Example:
        >>> sec = report_section(Deployment(k=10, eps0=2.0, n=10_000, delta=1e-6))
        >>> sec.rows[0][1], sec.values[0].bound, sec.values[1].bound
        ('not valid here', 'none', 'upper')
    """
    if curves is None or curves.deployment != dep:
        curves = DeploymentCurves(dep)
    rows = [r.report_row() for r in curve_rows(curves.literature(), delta=dep.delta)]
    note = "per round" if dep.rounds == 1 else f"per round (x{dep.rounds} rounds not composed here)"
    return curve_section(f"Literature bounds (eps at delta={dep.delta:g}, {note})", "literature", rows)
