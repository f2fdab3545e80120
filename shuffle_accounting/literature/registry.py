"""All literature bounds side by side (the report's literature section is built from them).

:func:`literature_epsilons` evaluates every bound of this subpackage at one deployment and returns
one :class:`LiteratureBound` per bound, with either its epsilon or the reason it is not valid here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .._deprecation import moved_names
from .._validation import ParameterError
from ._common import LiteratureCurve
from ._common import delta_arg as _delta
from ._common import eps0_arg as _eps0
from ._common import k_arg as _k
from ._common import n_arg as _n
from .balle2019 import (
    Balle2019BennettCurve,
    Balle2019HoeffdingCurve,
    Balle2019KRRCurve,
    balle2019_bennett_epsilon,
    balle2019_hoeffding_epsilon,
    balle2019_krr_epsilon,
)
from .erlingsson2019 import Erlingsson2019Curve, erlingsson2019_epsilon
from .feldman2021 import (
    FMT2021CloneCurve,
    FMT2021ClosedFormCurve,
    fmt2021_clone_epsilon,
    fmt2021_closed_form_epsilon,
)
from .feldman2023 import (
    FMT2023KRRCloneCurve,
    FMT2023KRRClosedFormCurve,
    fmt2023_krr_clone_epsilon,
    fmt2023_krr_closed_form_epsilon,
)

__all__ = ["LiteratureBound", "LITERATURE_BOUNDS", "LITERATURE_CURVES", "literature_epsilons"]


@dataclass(frozen=True)
class LiteratureBound:
    """One published bound evaluated at a deployment.

    Attributes:
        name: Short label.
        citation: Paper and theorem.
        epsilon: The bound's epsilon at the requested delta, or ``None`` if not valid here.
        reason: Why the bound does not apply (empty when ``epsilon`` is set).
    """

    name: str
    citation: str
    epsilon: float | None
    reason: str = ""


# name -> (citation, function(k, eps0, n, delta) -> eps)
LITERATURE_BOUNDS: dict[str, tuple[str, Callable[[int, float, int, float], float]]] = {
    "EFMRTT19": (
        "Erlingsson et al., Amplification by shuffling (SODA 2019), Thm 7",
        lambda k, e0, n, d: erlingsson2019_epsilon(e0, n, d),
    ),
    "BBGN19 k-RR": (
        "Balle et al., The privacy blanket of the shuffle model (CRYPTO 2019), Thm 3.1",
        lambda k, e0, n, d: balle2019_krr_epsilon(k, e0, n, d),
    ),
    "BBGN19 Hoeffding": (
        "Balle et al. (CRYPTO 2019), Sec. 5, Hoeffding bound",
        lambda k, e0, n, d: balle2019_hoeffding_epsilon(k, e0, n, d),
    ),
    "BBGN19 Bennett": (
        "Balle et al. (CRYPTO 2019), Sec. 5, Bennett bound",
        lambda k, e0, n, d: balle2019_bennett_epsilon(k, e0, n, d),
    ),
    "FMT21 closed form": (
        "Feldman, McMillan, Talwar, Hiding among the clones (FOCS 2021), Thm 3.1",
        lambda k, e0, n, d: fmt2021_closed_form_epsilon(e0, n, d),
    ),
    "FMT21 clones (exact)": (
        "Feldman, McMillan, Talwar (FOCS 2021), clone reduction, exact numerical",
        lambda k, e0, n, d: fmt2021_clone_epsilon(e0, n, d),
    ),
    "FMT23 closed form": (
        "Feldman, McMillan, Talwar, Stronger amplification (SODA 2023), k-RR stronger clones",
        lambda k, e0, n, d: fmt2023_krr_closed_form_epsilon(e0, n, d),
    ),
    "FMT23 clones (exact)": (
        "Feldman, McMillan, Talwar (SODA 2023), k-RR stronger clones, exact numerical",
        lambda k, e0, n, d: fmt2023_krr_clone_epsilon(e0, n, d),
    ),
}


#: name -> curve factory ``(k, eps0, n) -> LiteratureCurve`` (same names and order as
#: :data:`LITERATURE_BOUNDS`; every curve here is a certified upper curve).
LITERATURE_CURVES: dict[str, Callable[[int, float, int], LiteratureCurve]] = {
    "EFMRTT19": lambda k, e0, n: Erlingsson2019Curve(e0, n),
    "BBGN19 k-RR": lambda k, e0, n: Balle2019KRRCurve(k, e0, n),
    "BBGN19 Hoeffding": lambda k, e0, n: Balle2019HoeffdingCurve(k, e0, n),
    "BBGN19 Bennett": lambda k, e0, n: Balle2019BennettCurve(k, e0, n),
    "FMT21 closed form": lambda k, e0, n: FMT2021ClosedFormCurve(e0, n),
    "FMT21 clones (exact)": lambda k, e0, n: FMT2021CloneCurve(e0, n),
    "FMT23 closed form": lambda k, e0, n: FMT2023KRRClosedFormCurve(e0, n),
    "FMT23 clones (exact)": lambda k, e0, n: FMT2023KRRCloneCurve(e0, n),
}


def literature_epsilons(k: int, eps0: float, n: int, delta: float) -> list[LiteratureBound]:
    """Every literature bound's epsilon at ``(k, eps0, n, delta)``, or why it is not valid here.

    Args:
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        delta: Target delta in (0, 1).

    Returns:
        One :class:`LiteratureBound` per entry of :data:`LITERATURE_BOUNDS`, in that order.

    Raises:
        ParameterError: On invalid numbers (a bound whose regime excludes the point is reported,
            not raised).

    Example:
        >>> rows = literature_epsilons(k=10, eps0=2.0, n=10_000, delta=1e-6)
        >>> rows[0].epsilon is None, rows[0].reason.startswith("Erlingsson")
        (True, True)
    """
    k, eps0, n, delta = _k(k), _eps0(eps0), _n(n), _delta(delta)
    out: list[LiteratureBound] = []
    for name, (citation, fn) in LITERATURE_BOUNDS.items():
        try:
            out.append(LiteratureBound(name, citation, float(fn(k, eps0, n, delta))))
        except ParameterError as exc:
            out.append(LiteratureBound(name, citation, None, str(exc)))
    return out


#: ``report_section`` moved to the presentation package (deprecated alias, issue 13).
__getattr__ = moved_names(__name__, {"report_section": "shuffle_accounting.presentation.literature_report"})
