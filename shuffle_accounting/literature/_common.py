"""Shared pieces of :mod:`shuffle_accounting.literature`: the error type, validation, the curve base.

Every published bound in this subpackage is a :class:`LiteratureCurve` (a privacy curve of
:mod:`shuffle_accounting.curves`) with thin function aliases of plain numbers; epsilon(delta) is
found by the one root finder :func:`shuffle_accounting.curves.epsilon_from_delta` or a closed form. Validity conditions of the
cited theorems are enforced by raising :class:`BoundNotApplicable` (a
:class:`~shuffle_accounting._validation.ParameterError`), never by printing or returning NaN.
"""

from __future__ import annotations

from typing import ClassVar

from .._validation import ParameterError, check_delta, check_int, check_real
from ..curves import CurveBase, prob_from_log

__all__ = ["BoundNotApplicable", "LiteratureCurve"]


class BoundNotApplicable(ParameterError):
    """The parameters are valid numbers but outside the regime in which the cited theorem holds.

    The message names the violated condition and the values involved.

    Example:
        >>> from shuffle_accounting.literature import erlingsson2019_epsilon
        >>> erlingsson2019_epsilon(eps0=1.0, n=10_000, delta=1e-6)
        Traceback (most recent call last):
        ...
        shuffle_accounting.literature._common.BoundNotApplicable: Erlingsson et al. 2019 requires eps0 < 1/2, got eps0 = 1.0
    """


def eps0_arg(value: object) -> float:
    """``eps0`` validated: finite and > 0 (``ParameterError`` naming ``eps0`` otherwise)."""
    return check_real("eps0", value, low=0.0, low_open=True)


def eps_arg(value: object) -> float:
    """``eps`` validated: finite and >= 0."""
    return check_real("eps", value, low=0.0)


#: Largest ``n`` of the numerical bounds: every count must be exact in float64 (2**53 ~ 9e15).
MAX_N = 2**53


def n_arg(value: object, minimum: int = 2) -> int:
    """``n`` validated: an integer in ``[minimum, MAX_N]``."""
    return check_int("n", value, minimum=minimum, maximum=MAX_N)


def k_arg(value: object) -> int:
    """``k`` validated: an integer in ``[2, MAX_N]``."""
    return check_int("k", value, minimum=2, maximum=MAX_N)


def delta_arg(value: object) -> float:
    """``delta`` validated: finite and in the open interval ``(0, 1)``."""
    return check_delta("delta", value)


def log_clip_to_prob(log_value: float) -> float:
    """``exp(log_value)`` capped at 1, rounded up: :func:`shuffle_accounting.curves.prob_from_log`
    with ``bound="upper"`` (a delta >= 1 is trivially valid; a finite log never gives 0.0)."""
    return prob_from_log(log_value, bound="upper")


class LiteratureCurve(CurveBase):
    """Base of the published bounds as privacy curves (:class:`shuffle_accounting.curves.PrivacyCurve`).

    Every subclass is a frozen dataclass of the deployment's parameters, validated at
    construction (:class:`BoundNotApplicable` where the cited theorem's conditions fail for every
    eps); ``bound`` says which way its numbers are sound (``"upper"`` for a theorem's bound,
    ``"as-printed"`` for a reproduction of a published formula). ``eps_max`` is ``eps0``: shuffled
    ``eps0``-LDP reports are ``eps0``-DP, so ``epsilon`` never exceeds it. The public functions of
    this subpackage (``*delta_arg``, ``*_log_delta``, ``*_epsilon``) are thin aliases of these classes.
    """

    #: Short label of the bound.
    name: ClassVar[str] = ""
    #: Paper and theorem.
    citation: ClassVar[str] = ""
    bound: ClassVar[str] = "upper"
    #: The theorem's name in error messages.
    _label: ClassVar[str] = ""

    @property
    def eps_max(self) -> float:  # type: ignore[override]
        """``eps0`` (the local guarantee is a valid epsilon on its own)."""
        return float(self.eps0)  # type: ignore[attr-defined]
