"""The shuffled k-RR blocks of ``shuffle-accounting report``: certified vs exhibited epsilon, calibration."""

from __future__ import annotations

import math

from ..report import Deployment, ReportSection
from .._validation import ParameterError
from .accountant import ShuffleAccountant, ShuffledKRRDpEvent
from . import calibration
from .calibration import calibrate_eps0, min_users
from .lower import lower_epsilon
from .mechanism import ShuffledKRR

__all__ = ["report_section", "calibration_section"]


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
    wc = mech.auto_method == "worst-case"
    lower = mech.epsilon_lower(dep.delta) if wc else lower_epsilon(dep.delta, dep.k, dep.eps0, dep.n)
    gap = upper / lower if lower > 0 else math.inf
    how = "exact worst case (branch-and-bound certificate)" if wc else "privacy blanket, exact"
    who = "witness dataset of the certificate" if wc else "worst of the searched concrete datasets"
    rows = [
        ("certified eps (upper bound)", f"{upper:.6f}", f"{how}, rounded up; one round"),
        ("exhibited eps (lower bound)", f"{lower:.6f}", f"{who}, rounded down"),
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


def _calibration_rows(dep: Deployment, rounds: int, rtol: float) -> list[tuple[str, str, str]]:
    label = "1 round" if rounds == 1 else f"{rounds} rounds"
    try:
        e0 = calibrate_eps0(dep.k, dep.n, dep.target_epsilon, dep.delta, rounds=rounds, rtol=rtol)
        e0_text, e0_note = f"{e0:.6g}", f"certified; rounded down (rtol {rtol:g})"
    except ParameterError:  # every eps0 up to the cap meets the target
        e0_text, e0_note = f">= {calibration.EPS0_CAP:g}", "local privacy does not limit this target"
    try:
        n_min = min_users(dep.k, dep.eps0, dep.target_epsilon, dep.delta, rounds=rounds)
        n_text, n_note = f"{n_min}", f"certified at eps0 = {dep.eps0:.6g}; n - 1 fails"
    except ParameterError:  # more than N_CAP users would be needed
        n_text, n_note = f"> {calibration.N_CAP:g}", "target out of reach at this eps0"
    return [(f"largest eps0, {label}", e0_text, e0_note), (f"fewest users n, {label}", n_text, n_note)]


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
        A :class:`~shuffle_accounting.report.ReportSection`.

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
            rows.append((f"{dep.rounds} rounds", "not calibrated", "pass --target-eps to calibrate the composition"))
    return ReportSection(
        f"Calibration: target (eps = {dep.target_epsilon:.6g}, delta = {dep.delta:.3g})", tuple(rows)
    )
