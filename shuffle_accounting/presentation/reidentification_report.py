"""The re-identification section of ``shuffle-accounting report`` (Su, Cheng, Wang).

Per shuffled batch (one report per user): the probability ``beta_n`` that a Bayes-optimal
adversary who knows every input locates a given user's report, from
:class:`~shuffle_accounting.reidentification.shuffle.ReidentificationRisk`: the exact
basic-setting value (a lower bound on the worst case), the blanket, clone and limit upper bounds
(Theorems 7-10), the paper's ``e^eps0 / n`` and the multiplicative advantage range.
"""

from __future__ import annotations

import math

from ..randomizers import KRR
from ..reidentification.shuffle import ReidentificationRisk
from .report import Deployment, ReportSection, annotate

__all__ = ["risk_rows", "report_section", "ROW_BOUNDS"]

#: Bound direction of each row, by label prefix (the exact basic-setting value is exhibited).
ROW_BOUNDS = {
    "exact beta_n": "lower",
    "blanket bound": "upper",
    "clone bound": "upper",
    "e^eps0 / n": "upper",
    "limit M / n": "estimate",
    "blind guess": "exact",
    "multiplicative advantage": "estimate",
}


def risk_rows(risk: ReidentificationRisk) -> tuple[tuple[str, str, str], ...]:
    """Report rows ``(label, value, note)`` of ``risk`` for the worst target input.

    Args:
        risk: The re-identification risk of a randomizer and batch size.

    Returns:
        Rows with the exact basic-setting value (a lower bound), the blanket, clone and limit
        upper bounds, the paper's ``e^eps/n`` and the multiplicative advantage range.

    Example:
        >>> rows = risk_rows(ReidentificationRisk(KRR(k=10, eps0=2.0), n=1000))
        >>> [r[0] for r in rows][:2]
        ['exact beta_n, others share one input', 'blanket bound (Thm 7, 9)']
    """
    n = risk.n
    low = risk.lower_bound()
    blanket = risk.bound(method="blanket")
    clone = risk.bound(method="clone")
    eps = risk.randomizer.eps0
    e_over_n = math.exp(eps) / n if eps < 700 else math.inf
    return (
        (
            "exact beta_n, others share one input",
            f"{low:.6g}",
            "basic setting, Thm 4 (lower bound on the worst case)",
        ),
        ("blanket bound (Thm 7, 9)", f"{blanket:.6g}", "upper bound on beta_n over all datasets"),
        ("clone bound (Thm 8)", f"{clone:.6g}", "(1 - (1 - e^-eps0)^n) / (n e^-eps0)"),
        ("e^eps0 / n", f"{e_over_n:.6g}", "paper's headline bound"),
        ("limit M / n (Thm 10)", f"{risk.limit() / n:.6g}", "n beta_n -> M"),
        ("blind guess 1 / n", f"{1 / n:.6g}", ""),
        ("multiplicative advantage n beta_n", f"{n * low:.4g} .. {n * blanket:.4g}", "lower .. upper"),
    )


def report_section(dep: Deployment) -> ReportSection:
    """The re-identification block of ``shuffle-accounting report`` for a k-RR deployment.

    Per shuffled batch (one report per user): probability that a Bayes-optimal adversary who knows
    every input locates a given user's report (Su, Cheng, Wang).

    Args:
        dep: The deployment (k, eps0, n).

    Returns:
        A :class:`~shuffle_accounting.presentation.report.ReportSection` (key
        ``"reidentification"``), each row's value with its bound direction (:data:`ROW_BOUNDS`).

    Example:
        >>> sec = report_section(Deployment(k=10, eps0=2.0, n=10_000))
        >>> sec.title, sec.values[0].bound, sec.values[1].bound
        ('Re-identification risk (Su, Cheng, Wang), per batch', 'lower', 'upper')
    """
    risk = ReidentificationRisk(KRR(dep.k, dep.eps0), dep.n)
    sec = ReportSection("Re-identification risk (Su, Cheng, Wang), per batch", risk_rows(risk))
    bounds = []
    for label, _, _ in sec.rows:
        matches = [b for prefix, b in ROW_BOUNDS.items() if label.startswith(prefix)]
        bounds.append(matches[0] if matches else "estimate")
    return annotate(sec, "reidentification", bounds)
