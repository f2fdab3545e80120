"""Leakage summary of a shuffled k-RR deployment for ``shuffle-accounting report``.

Against the uninformed adversary (uniform prior on ``K^n``, single target; Jurado, Gonze, Alvim,
Palamidessi, *Analyzing the Shuffle Model through the Lens of Quantitative Information Flow*,
Sec. IV and VI): prior vulnerability ``1/k`` (Prop. 14), k-RR alone ``V[N] = p`` (Prop. 15),
shuffle alone ``V[S]`` (Prop. 20), both ``V[NS]`` (eq. (17)), with
``p = e^eps0 / (e^eps0 + k - 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._deprecation import old_positional_order
from ..qif._common import Estimate, krr_keep_probability
from ..qif.vulnerability import ns_from_s as _ns_from_s
from ..qif.vulnerability import shuffle_vulnerability_bounds
from .report import Deployment, ReportSection, ReportValue, format_bound

__all__ = ["LeakageReport", "leakage_report", "report_section"]


@dataclass(frozen=True)
class LeakageReport:
    """Single-target Bayes vulnerabilities of noise only, shuffle only, and both.

    Build it with :func:`leakage_report`. Vulnerabilities are probabilities that the optimal
    uninformed adversary guesses the target's value; ``upper`` ends are the pessimistic numbers.

    Attributes:
        n: Users per shuffled batch.
        k: Number of values.
        eps0: Local epsilon of k-RR.
        p: k-RR keep probability ``e^eps0 / (e^eps0 + k - 1)``.
        prior: ``1/k``.
        krr: ``V[N] = p``.
        shuffle: ``V[S]`` with its certified interval.
        krr_shuffle: ``V[NS]`` with its certified interval.

    Example:
        >>> r = leakage_report(k=2, eps0=2.1972245773362196, n=200)  # p = 0.9
        >>> round(r.krr_shuffle.value, 5), round(r.multiplicative_leakage, 4)
        (0.52254, 1.0451)
    """

    n: int
    k: int
    eps0: float
    p: float
    prior: float
    krr: float
    shuffle: Estimate
    krr_shuffle: Estimate

    @property
    def additive_leakage(self) -> float:
        """``V[NS] - 1/k`` (upper end of the interval): additive Bayes leakage of k-RR + shuffle."""
        return self.krr_shuffle.upper - self.prior

    @property
    def multiplicative_leakage(self) -> float:
        """``V[NS] / (1/k)`` (upper end): multiplicative Bayes leakage of k-RR + shuffle."""
        return self.krr_shuffle.upper / self.prior

    def rows(self) -> tuple[tuple[str, str, str], ...]:
        """(label, value, note) rows for :class:`shuffle_accounting.presentation.report.ReportSection`.

        The vulnerabilities and the leakage are the upper ends of certified intervals, printed
        rounded up (:func:`~shuffle_accounting.presentation.report.format_bound`).
        """
        return (
            ("prior 1/k", f"{self.prior:.6g}", "random guess of the target's value"),
            ("V[N] k-RR only", f"{self.krr:.6g}", "= p (Prop. 15)"),
            (
                "V[S] shuffle only",
                format_bound(self.shuffle.upper, "upper"),
                f"E[max load]/n, error <= {self.shuffle.error:.1e}",
            ),
            (
                "V[NS] k-RR + shuffle",
                format_bound(self.krr_shuffle.upper, "upper"),
                "eq. (17); what this deployment leaks",
            ),
            (
                "leakage NS (x prior)",
                format_bound(self.multiplicative_leakage, "upper"),
                "multiplicative Bayes leakage",
            ),
        )

    def values(self) -> tuple[ReportValue, ...]:
        """The numbers of :meth:`rows` at full precision, with their bound directions."""
        return (
            ReportValue(self.prior, "exact"),
            ReportValue(self.krr, "exact"),
            ReportValue(self.shuffle.upper, "upper"),
            ReportValue(self.krr_shuffle.upper, "upper"),
            ReportValue(self.multiplicative_leakage, "upper"),
        )


@old_positional_order(("n", "k", "eps0"))
def leakage_report(*, k: Any, eps0: Any, n: Any) -> LeakageReport:
    """Compute the :class:`LeakageReport` for ``n`` users, ``k`` values and local ``eps0``.

    Keyword-only (the library's order is ``k, eps0, n``); the former positional order
    ``leakage_report(n, k, eps0)`` still works with a :class:`DeprecationWarning` (no test could
    tell the two positional orders apart: ``k`` and ``n`` are both integers).

    Args:
        k: Number of values (integer >= 2).
        eps0: Local epsilon (finite, >= 0).
        n: Users per shuffled batch (integer >= 1).

    Returns:
        The report (takes well under a second for ``n = 10 000``, ``k = 10``).

    Raises:
        ParameterError: On invalid arguments.

    Example:
        >>> r = leakage_report(k=3, eps0=50.0, n=100)  # p ~ 1: the shuffle alone
        >>> round(r.shuffle.value, 4), round(r.krr_shuffle.value, 4)
        (0.3826, 0.3826)
    """
    p = krr_keep_probability(k, eps0)
    s = shuffle_vulnerability_bounds(k=k, n=n)
    k = int(k)
    ns = _ns_from_s(s, k, p)
    return LeakageReport(int(n), k, float(eps0), p, 1.0 / k, p, s, ns)


def report_section(dep: Deployment) -> ReportSection:
    """The QIF block of ``shuffle-accounting report`` for a :class:`~shuffle_accounting.presentation.report.Deployment`.

    Uses the deployment's ``n``, ``k`` and ``eps0`` (one round; vulnerability of a single
    release).

    Example:
        >>> sec = report_section(Deployment(k=2, eps0=2.1972245773362196, n=200))
        >>> sec.rows[3][:2]  # V[NS] = 0.5225394 (upper end), rounded up
        ('V[NS] k-RR + shuffle', '0.52254')
    """
    r = leakage_report(k=dep.k, eps0=dep.eps0, n=dep.n)
    return ReportSection(
        "QIF leakage, uninformed adversary (Jurado et al. 2023)",
        r.rows(),
        r.values(),
        "qif",
    )
