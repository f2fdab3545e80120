"""The shuffled k-RR blocks of ``shuffle-accounting report``: certified vs exhibited epsilon,
calibration, and the accuracy of the debiased frequencies next to the central Gaussian baseline."""

from __future__ import annotations

import math

from .._validation import ParameterError, check_real
from ..shuffled_krr import calibration
from ..shuffled_krr.calibration import calibrate_eps0, min_users
from .curve_rows import DeploymentCurves, NamedCurve, curve_rows, curve_section, value_row
from .report import Deployment, ReportSection, ReportValue, format_bound

__all__ = ["report_section", "calibration_section", "accuracy_section", "certified_epsilon"]


def certified_epsilon(dep: Deployment, *, curves: DeploymentCurves | None = None) -> float:
    """The certified single-round epsilon of ``dep`` at ``dep.delta`` (upper bound, rounded up).

    ``ShuffledKRR(dep.k, dep.eps0, dep.n).epsilon(dep.delta)`` (method ``"auto"``), read from the
    report's cached certified curve
    (:attr:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves.certified`): the value the
    sections below show and use, computed once per report.

    Args:
        dep: The planned deployment.
        curves: The report's curves of ``dep`` (``None``: new ones).

    Returns:
        The certified epsilon.

    Example:
        >>> certified_epsilon(Deployment(k=10, eps0=2.0, n=10_000)) == report_section(
        ...     Deployment(k=10, eps0=2.0, n=10_000), lower=False
        ... ).values[0].value
        True
    """
    return _curves(dep, curves).certified.epsilon(dep.delta)


def _curves(dep: Deployment, curves: DeploymentCurves | None) -> DeploymentCurves:
    """``curves`` if they are ``dep``'s, else new :class:`DeploymentCurves` of ``dep``."""
    if curves is None:
        return DeploymentCurves(dep)
    if not isinstance(curves, DeploymentCurves) or curves.deployment != dep:
        raise ParameterError("curves must be a DeploymentCurves of the same deployment")
    return curves


def _check_epsilon(dep: Deployment, epsilon: float | None, curves: DeploymentCurves | None = None) -> float:
    """``epsilon`` (validated: finite, ``>= 0``) or, if ``None``, :func:`certified_epsilon` of ``dep``."""
    if epsilon is None:
        return certified_epsilon(dep, curves=curves)
    return check_real("epsilon", epsilon, low=0.0)


def report_section(
    dep: Deployment,
    *,
    lower: bool = True,
    epsilon: float | None = None,
    curves: DeploymentCurves | None = None,
) -> ReportSection:
    """Certified epsilon (upper bound), exhibited lower bound, their gap, and R-round composition.

    The certified, exhibited and composed rows are the curves of ``curves``
    (:class:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves`: ``ShuffledKRR``, its
    :class:`~shuffle_accounting.shuffled_krr.curves.ExhibitedKRRCurve` and the composed
    :class:`~shuffle_accounting.shuffled_krr.curves.AccountantCurve`) at ``dep.delta``, through
    :func:`~shuffle_accounting.presentation.curve_rows.curve_rows` (each printed rounded outward).

    Args:
        dep: The planned deployment.
        lower: Compute the exhibited lower bound and the gap (the slowest part; ``False`` skips it).
        epsilon: :func:`certified_epsilon` of ``dep`` if the caller already has it; ``None`` reads
            it from ``curves``. Finite, ``>= 0``.
        curves: The report's curves of ``dep`` (shared with the other sections and figures), or
            ``None`` for new ones.

    Returns:
        A :class:`~shuffle_accounting.presentation.report.ReportSection` (key ``"shuffled"``).

    Example:
        >>> sec = report_section(Deployment(k=4, eps0=1.0, n=200, delta=1e-6))
        >>> [row[0] for row in sec.rows][:3]
        ['certified eps (upper bound)', 'exhibited eps (lower bound)', 'gap upper / lower']
        >>> [v.bound for v in sec.values][:3]
        ['upper', 'lower', 'estimate']
    """
    curves = _curves(dep, curves)
    wc = curves.certified.curve.auto_method == "worst-case"
    how = "exact worst case (branch-and-bound certificate)" if wc else "privacy blanket, exact"
    who = "witness dataset of the certificate" if wc else "worst of the searched concrete datasets"
    cert = NamedCurve(
        "certified eps (upper bound)", curves.certified, citation=f"{how}, rounded up; one round"
    )
    if epsilon is None:
        (cert_row,) = curve_rows([cert], delta=dep.delta)
    else:
        cert_row = value_row(cert, "epsilon", dep.delta, check_real("epsilon", epsilon, low=0.0))
    upper = cert_row.value
    if upper is None:  # the certified curve is defined for every valid deployment
        raise ParameterError(f"no certified epsilon at this deployment: {cert_row.note}")
    rows = [cert_row.report_row()]
    if lower:
        exh = NamedCurve("exhibited eps (lower bound)", curves.exhibited, citation=f"{who}, rounded down")
        (low_row,) = curve_rows([exh], delta=dep.delta)
        low = low_row.value
        if low is None:  # the exhibited curve is defined for every valid deployment
            raise ParameterError(f"no exhibited epsilon at this deployment: {low_row.note}")
        gap = upper / low if low > 0 else math.inf
        rows += [
            low_row.report_row(),
            (
                "gap upper / lower",
                "inf" if math.isinf(gap) else f"{gap:.4f}",
                "1.0 would be exactly tight",
                ReportValue(gap, "estimate"),
            ),
        ]
    else:
        rows.append(("exhibited eps (lower bound)", "skipped", "--skip lower", ReportValue(None, "none")))
    rows.append(
        ("no shuffling", f"{dep.eps0:.6f}", "local eps0 per round, delta = 0", ReportValue(dep.eps0, "upper"))
    )
    if dep.rounds > 1:
        # dp_accounting (about a second to import) only where something is composed
        comp = NamedCurve(
            f"certified eps, {dep.rounds} rounds", curves.composed(), citation="PLD composition, pessimistic"
        )
        rows += [r.report_row() for r in curve_rows([comp], delta=dep.delta)]
        rows.append(
            (
                f"no shuffling, {dep.rounds} rounds",
                f"{dep.rounds * dep.eps0:.6f}",
                "basic composition of eps0",
                ReportValue(dep.rounds * dep.eps0, "upper"),
            )
        )
    return curve_section(
        f"Shuffled k-RR: (eps, delta = {dep.delta:.3g}) over all neighbouring datasets", "shuffled", rows
    )


def _calibration_rows(dep: Deployment, rounds: int, rtol: float) -> list[tuple[str, str, str, ReportValue]]:
    label = "1 round" if rounds == 1 else f"{rounds} rounds"
    try:
        e0 = calibrate_eps0(dep.k, dep.n, dep.target_epsilon, dep.delta, rounds=rounds, rtol=rtol)
        e0_row = (f"{e0:.6g}", f"certified; rounded down (rtol {rtol:g})", ReportValue(e0, "lower"))
    except ParameterError:  # every eps0 up to the cap meets the target
        e0_row = (
            f">= {calibration.EPS0_CAP:g}",
            "local privacy does not limit this target",
            ReportValue(float(calibration.EPS0_CAP), "lower"),
        )
    try:
        n_min = min_users(dep.k, dep.eps0, dep.target_epsilon, dep.delta, rounds=rounds)
        n_row = (f"{n_min}", f"certified at eps0 = {dep.eps0:.6g}; n - 1 fails", ReportValue(n_min, "upper"))
    except ParameterError:  # more than N_CAP users would be needed
        n_row = (f"> {calibration.N_CAP:g}", "target out of reach at this eps0", ReportValue(None, "none"))
    return [(f"largest eps0, {label}",) + e0_row, (f"fewest users n, {label}",) + n_row]


def calibration_section(dep: Deployment) -> ReportSection:
    """Calibration for ``(dep.target_epsilon, dep.delta)``: the largest eps0 at ``dep.n`` users and
    the fewest users at ``dep.eps0`` (:func:`~shuffle_accounting.shuffled_krr.calibration.calibrate_eps0`,
    :func:`~shuffle_accounting.shuffled_krr.calibration.min_users`).

    The single round is always calibrated (certified curve, fast). The ``dep.rounds``-fold
    composition is calibrated only if ``dep.calibrate_rounds`` (one pessimistic PLD per bisection
    step, at relative tolerance 1e-2).

    Args:
        dep: The planned deployment.

    Returns:
        A :class:`~shuffle_accounting.presentation.report.ReportSection` (key ``"calibration"``).

    Example:
        >>> sec = calibration_section(Deployment(k=4, eps0=1.0, n=200, delta=1e-6, target_epsilon=0.5))
        >>> [row[:2] for row in sec.rows]
        [('largest eps0, 1 round', '...'), ('fewest users n, 1 round', '...')]
    """
    rows = _calibration_rows(dep, 1, 1e-4)
    if dep.rounds > 1:
        if dep.calibrate_rounds:
            rows += _calibration_rows(dep, dep.rounds, 1e-2)
        else:
            rows.append(
                (
                    f"{dep.rounds} rounds",
                    "not calibrated",
                    "pass --target-eps to calibrate the composition",
                    ReportValue(None, "none"),
                )
            )
    return curve_section(
        f"Calibration: target (eps = {dep.target_epsilon:.6g}, delta = {dep.delta:.3g})", "calibration", rows
    )


def accuracy_section(
    dep: Deployment, *, confidence: float = 0.95, epsilon: float | None = None
) -> ReportSection:
    """Accuracy of one round's debiased frequencies (shuffle+INV) next to the central Gaussian baseline.

    The shuffle+INV numbers are exact (:mod:`shuffle_accounting.accuracy`); the baseline adds
    analytic-Gaussian noise (Balle and Wang 2018) at the certified single-round ``(eps, delta)`` of
    this deployment, so both columns have the same privacy (its sigma needs no diffprivlib).

    Args:
        dep: The planned deployment.
        confidence: Confidence level of the intervals, in ``(0, 1)``.
        epsilon: :func:`certified_epsilon` of ``dep`` if the caller already has it (one report
            certifies it once); ``None`` computes it. Finite, ``>= 0``.

    Returns:
        A :class:`~shuffle_accounting.presentation.report.ReportSection` (key ``"accuracy"``).

    Example:
        >>> sec = accuracy_section(Deployment(k=10, eps0=2.0, n=10_000))
        >>> sec.rows[0][:2]
        ('shuffle+INV std, worst category', '0.0127638')
    """
    from ..accuracy import gaussian_frequency_accuracy, shuffle_frequency_accuracy  # noqa: PLC0415

    pct = f"{100 * confidence:g}%"
    worst = shuffle_frequency_accuracy(dep.k, dep.eps0, dep.n, confidence=confidence)
    uniform = shuffle_frequency_accuracy(dep.k, dep.eps0, dep.n, frequency=1.0 / dep.k, confidence=confidence)
    rows = [
        (
            "shuffle+INV std, worst category",
            format_bound(worst.std, "upper"),
            "exact; any true frequency in [0, 1]",
            ReportValue(worst.std, "upper"),
        ),
        ("shuffle+INV std, frequency 1/k", f"{uniform.std:.6g}", "exact", ReportValue(uniform.std, "exact")),
        (
            f"shuffle+INV {pct} CI half-width",
            f"{worst.normal_half_width:.6g}",
            "normal approximation, worst category",
            ReportValue(worst.normal_half_width, "estimate"),
        ),
        (
            f"shuffle+INV {pct} CI half-width, guaranteed",
            format_bound(worst.guaranteed_half_width, "upper"),
            "Bernstein: coverage >= the level for every n",
            ReportValue(worst.guaranteed_half_width, "upper"),
        ),
    ]
    eps = _check_epsilon(dep, epsilon)
    if eps == 0.0:  # the certified curve already meets delta at eps = 0 (tiny n, huge k or delta)
        rows.append(
            (
                "central Gaussian baseline",
                "n/a",
                "certified eps is 0 here; the analytic Gaussian needs eps > 0",
                ReportValue(None, "none"),
            )
        )
        return curve_section(
            f"Accuracy of a debiased frequency, one round ({pct} intervals)", "accuracy", rows
        )
    g = gaussian_frequency_accuracy(eps, dep.delta, dep.n, confidence=confidence)
    sigma = g.std * dep.n
    rows += [
        (
            "central Gaussian sigma per bin",
            f"{sigma:.6g}",
            f"analytic Gaussian (Balle-Wang 2018) at eps = {eps:.4g}, delta = {dep.delta:.3g}",
            ReportValue(sigma, "exact"),
        ),
        (
            "central Gaussian std",
            f"{g.std:.6g}",
            "sigma / n; trusted curator, same (eps, delta)",
            ReportValue(g.std, "exact"),
        ),
        (
            f"central Gaussian {pct} CI half-width",
            f"{g.normal_half_width:.6g}",
            "exact coverage",
            ReportValue(g.normal_half_width, "exact"),
        ),
        (
            "std ratio shuffle / central",
            f"{worst.std / g.std:.4g}",
            "price of not trusting a curator",
            ReportValue(worst.std / g.std, "estimate"),
        ),
    ]
    return curve_section(f"Accuracy of a debiased frequency, one round ({pct} intervals)", "accuracy", rows)
