"""Accuracy of a shuffled k-RR collection: the shuffle+INV frequency estimate and the central baseline.

The analyzer of a shuffled k-RR collection (Biswas, Jung, Palamidessi, *Tight Differential Privacy
Guarantees for the Shuffle Model with k-Randomized Response*, eq. (7); see
:func:`shuffle_accounting.runtime.analyzer.estimate_frequencies`) debiases the released histogram::

    f_hat_j = (c_j / n - pbar) / (p - pbar),    p = e^eps0 / (e^eps0 + k - 1),  pbar = 1 / (e^eps0 + k - 1)

where ``c_j`` counts the reports equal to ``j``. Shuffling does not change the histogram, so the
accuracy of shuffle+INV is that of k-RR debiasing.

**Exact variance.** User ``i`` with true value ``x_i`` reports ``j`` with probability ``q_i = p``
if ``x_i = j`` and ``q_i = pbar`` otherwise, independently of the other users, so ``c_j`` is a sum
of ``n`` independent Bernoulli(``q_i``) variables. With ``n_j = f_j n`` users holding ``j``::

    E[c_j]   = n_j p + (n - n_j) pbar                     -> E[f_hat_j] = f_j (unbiased)
    Var[c_j] = n_j p (1 - p) + (n - n_j) pbar (1 - pbar)
    Var[f_hat_j] = (f_j p (1 - p) + (1 - f_j) pbar (1 - pbar)) / (n (p - pbar)^2)

No approximation is involved: this is the variance of the Bernoulli sum divided by the constant
``(n (p - pbar))^2``. It is linear in ``f_j``, so its largest value over ``f_j in [0, 1]`` is
``max(p (1 - p), pbar (1 - pbar)) / (n (p - pbar)^2)`` (the "worst category").

**Confidence intervals.** Two half-widths at confidence ``1 - alpha``:

* normal approximation (an *estimate*): ``z_{1 - alpha/2} * std``;
* Bernstein (guaranteed coverage for every ``n``): the terms ``X_i - q_i`` are independent, centred
  and bounded by 1 in absolute value, so ``P(|c_j - E c_j| >= t) <= 2 exp(-t^2 / (2 (V + t/3)))``
  with ``V = Var[c_j]`` (Bernstein's inequality). Setting the right side to ``alpha`` and solving
  the quadratic ``t^2 = 2 L (V + t/3)``, ``L = log(2/alpha)``, gives
  ``t = L/3 + sqrt(L^2/9 + 2 L V)``, hence the half-width ``t / (n (p - pbar))`` on ``f_hat_j``.
  ``t`` increases with ``V``, so the worst category's ``V`` gives a half-width valid for every ``f_j``.

**Central baseline.** A trusted curator releases ``c_j + N(0, sigma^2)`` per bin, with ``sigma``
from the analytic Gaussian mechanism (Balle and Wang, ICML 2018, Theorem 8) at the same
``(eps, delta)``: :func:`shuffle_accounting.runtime.baseline.gaussian_sigma` (computed here, no diffprivlib;
L2 sensitivity ``sqrt(2)`` for replace-one neighbours). The frequency
``(c_j + noise) / n`` is unbiased with standard deviation ``sigma / n`` and its normal interval
``z sigma / n`` has exact coverage.

This module is math only: it imports no presentation code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ._validation import ParameterError, check_delta, check_int, check_probability, check_real
from .randomizers import KRR

__all__ = [
    "FrequencyAccuracy",
    "krr_frequency_variance",
    "shuffle_frequency_accuracy",
    "gaussian_frequency_accuracy",
]


def _check_confidence(confidence: Any) -> float:
    return check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)


def _z(confidence: float) -> float:
    from scipy.special import ndtri  # noqa: PLC0415 - scipy is a core dependency

    return float(ndtri(0.5 + confidence / 2.0))


def _krr_terms(k: Any, eps0: Any) -> tuple[float, float, float]:
    """``(p (1 - p), pbar (1 - pbar), p - pbar)`` for k-RR, without cancellation."""
    r = KRR(k, eps0)
    p, pbar = r.p, r.pbar
    # p - pbar = p (1 - e^-eps0); 1 - p = (k - 1) pbar.
    gap = p * -math.expm1(-r.eps0)
    return p * (r.k - 1) * pbar, pbar * (1.0 - pbar), gap


def krr_frequency_variance(k: Any, eps0: Any, n: Any, *, frequency: Any = None) -> float:
    """Exact variance of the debiased k-RR (shuffle+INV) estimate of one category's frequency.

    ``Var[f_hat_j] = (f p (1 - p) + (1 - f) pbar (1 - pbar)) / (n (p - pbar)^2)`` (derived in the
    module docstring); with ``frequency=None`` the largest value over ``f in [0, 1]``.

    Args:
        k: Number of categories, integer ``>= 2``.
        eps0: Local epsilon, finite ``> 0``.
        n: Number of reports, integer ``>= 1``.
        frequency: True frequency ``f`` of the category in ``[0, 1]``, or ``None`` (worst case).

    Returns:
        The variance (a float ``> 0``).

    Raises:
        ParameterError: On an invalid argument.

    Example:
        >>> import math
        >>> v = krr_frequency_variance(3, math.log(2), 100, frequency=0.0)  # p = 1/2, pbar = 1/4
        >>> round(v, 12)  # 0.1875 / (100 * 0.0625)
        0.03
        >>> krr_frequency_variance(3, math.log(2), 100) == krr_frequency_variance(3, math.log(2), 100, frequency=1.0)
        True
    """
    n = check_int("n", n, minimum=1)
    keep_var, other_var, gap = _krr_terms(k, eps0)
    if frequency is None:
        num = max(keep_var, other_var)
    else:
        f = check_probability("frequency", frequency)
        num = f * keep_var + (1.0 - f) * other_var
    return float(num / (n * gap * gap))


@dataclass(frozen=True)
class FrequencyAccuracy:
    """Accuracy of one estimated category frequency.

    Attributes:
        method: ``"shuffle+INV"`` or ``"central Gaussian"``.
        std: Standard deviation of the frequency estimate (exact).
        normal_half_width: ``z * std`` at ``confidence``: the normal-approximation interval
            (an estimate for shuffle+INV; exact coverage for the Gaussian baseline).
        guaranteed_half_width: A half-width whose coverage is at least ``confidence`` for every
            ``n`` (Bernstein for shuffle+INV; equal to ``normal_half_width`` for the Gaussian).
        confidence: The confidence level in ``(0, 1)``.
        frequency: The true frequency assumed, or ``None`` for the worst category.
    """

    method: str
    std: float
    normal_half_width: float
    guaranteed_half_width: float
    confidence: float
    frequency: float | None


def shuffle_frequency_accuracy(
    k: Any, eps0: Any, n: Any, *, frequency: Any = None, confidence: Any = 0.95
) -> FrequencyAccuracy:
    """Standard deviation and confidence intervals of a shuffle+INV frequency estimate.

    Args:
        k: Number of categories, integer ``>= 2``.
        eps0: Local epsilon, finite ``> 0``.
        n: Users in the shuffled batch, integer ``>= 1``.
        frequency: True frequency of the category in ``[0, 1]``, or ``None`` for the worst case.
        confidence: Confidence level in ``(0, 1)``.

    Returns:
        A :class:`FrequencyAccuracy` (normal half-width ``z std``; Bernstein half-width
        ``(L/3 + sqrt(L^2/9 + 2 L Var[c_j])) / (n (p - pbar))``, ``L = log(2 / (1 - confidence))``).

    Raises:
        ParameterError: On an invalid argument.

    Example:
        >>> a = shuffle_frequency_accuracy(10, 2.0, 10_000)
        >>> round(a.std, 5), a.normal_half_width < a.guaranteed_half_width
        (0.01276, True)
    """
    confidence = _check_confidence(confidence)
    var = krr_frequency_variance(k, eps0, n, frequency=frequency)
    n = int(n)
    _, _, gap = _krr_terms(k, eps0)
    count_var = var * (n * gap) ** 2
    log_term = math.log(2.0) - math.log1p(-confidence)
    t = log_term / 3.0 + math.sqrt(log_term * log_term / 9.0 + 2.0 * log_term * count_var)
    std = math.sqrt(var)
    return FrequencyAccuracy(
        method="shuffle+INV",
        std=std,
        normal_half_width=_z(confidence) * std,
        guaranteed_half_width=t / (n * gap),
        confidence=confidence,
        frequency=None if frequency is None else float(frequency),
    )


def gaussian_frequency_accuracy(
    epsilon: Any, delta: Any, n: Any, *, confidence: Any = 0.95, sigma: Any = None
) -> FrequencyAccuracy:
    """Accuracy of a frequency from the central analytic-Gaussian histogram at ``(epsilon, delta)``.

    ``std = sigma / n`` where ``sigma`` is the analytic Gaussian noise (Balle and Wang 2018, Thm 8)
    for L2 sensitivity ``sqrt(2)`` (:func:`shuffle_accounting.runtime.baseline.gaussian_sigma`).

    Args:
        epsilon: Central epsilon, finite ``> 0``.
        delta: Central delta in ``(0, 1)``.
        n: Number of users, integer ``>= 1``.
        confidence: Confidence level in ``(0, 1)``.
        sigma: The per-bin noise standard deviation if already known (finite ``> 0``); computed
            from ``(epsilon, delta)`` otherwise.

    Returns:
        A :class:`FrequencyAccuracy` (the normal interval is exact here).

    Raises:
        ParameterError: On an invalid argument.

    Example:
        >>> g = gaussian_frequency_accuracy(1.0, 1e-6, 10_000, sigma=5.0)
        >>> round(g.std, 6), round(g.normal_half_width, 6)
        (0.0005, 0.00098)
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    delta = check_delta("delta", delta)
    n = check_int("n", n, minimum=1)
    confidence = _check_confidence(confidence)
    if sigma is None:
        from .runtime.baseline import gaussian_sigma  # noqa: PLC0415 - layer 4, loaded on use

        sigma = gaussian_sigma(epsilon, delta)
    sigma = check_real("sigma", sigma, low=0.0, low_open=True)
    if not math.isfinite(sigma / n):
        raise ParameterError(f"sigma / n must be finite, got sigma={sigma!r}, n={n!r}")
    std = sigma / n
    half = _z(confidence) * std
    return FrequencyAccuracy(
        method="central Gaussian",
        std=std,
        normal_half_width=half,
        guaranteed_half_width=half,
        confidence=confidence,
        frequency=None,
    )
