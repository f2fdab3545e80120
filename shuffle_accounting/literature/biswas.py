"""Biswas, Jung, Palamidessi, *Tight Differential Privacy Guarantees for the Shuffle Model with
k-Randomized Response* — reproductions of their published tables (NOT accountants).

* :func:`biswas_as_printed_delta` evaluates their Definition IV.2 / Theorem IV.1 (eq. (6)) exactly
  as printed, which reproduces their Table IV and the "Our delta" column of Table II for n = 100.

  ERRATUM: the printed closed form of ``v_s`` in Theorem IV.1 (and the last line of the appendix's
  eq. (15)) applies the identity ``C(N-1, j-1) = (j/N) C(N, j)`` twice — it multiplies by
  ``(s - r)/(n - n_x0)`` *and* lowers the binomial to ``C(n - 1 - n_x0, s - 1 - r)``. The second line
  of eq. (15) is correct. The printed form makes the privacy-loss values too small, so the printed
  deltas are far too small: at ``n = 100, n_x0 = 80, k = 10, eps0 = 2, eps = 0.1`` it gives
  ~2.48e-15 (Table IV: 2.49E-15) while the exact hockey-stick divergence of the two count
  distributions is 6.1467e-3. The correct computation lives in
  ``shuffle_accounting.shuffled_krr`` (``dataset_delta(..., output="count")``). Their Table II
  column for n = 1000 is not reproduced by the printed formula for any k <= 40 and n_x0 (a
  numerical artefact of their computation), and their Table IV row labelled "n=50" uses
  ``n_x0 = 80 > n - 1``, which is impossible: this function raises on such input.

* The three "literature" columns of their Table II are reproduced by the simplified forms
  ``delta = exp(-n eps^2 / c)`` with ``c = 144 eps0^2`` (column [11], Erlingsson et al.),
  ``c = e^(2 eps0)`` (column [10], Balle et al.) and ``c = e^eps0 - 1`` (column [12], Feldman et al.).
  These simplified forms are what reproduce the table; they are NOT the cited theorems (see
  :mod:`.erlingsson2019`, :mod:`.balle2019`, :mod:`.feldman2021` for those), carry no validity
  conditions and must not be used as privacy guarantees.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._logmath import log_binom as _lbinom
from .._logmath import logsumexp
from .._validation import ParameterError, check_choice, check_int, check_real, check_work
from ._common import LiteratureCurve
from ._common import eps0_arg as _eps0
from ._common import eps_arg as _eps
from ._common import k_arg as _k
from ._common import n_arg as _n

__all__ = [
    "BiswasAsPrintedCurve",
    "BiswasSimplifiedCurve",
    "biswas_as_printed_delta",
    "biswas_table2_erlingsson_simplified_delta",
    "biswas_table2_balle_simplified_delta",
    "biswas_table2_feldman_simplified_delta",
]


_LEGACY_ORDER = ("n", "n_x0", "k", "eps0")


def biswas_as_printed_delta(
    eps: float,
    *args: Any,
    n: int | None = None,
    n_x0: int | None = None,
    k: int | None = None,
    eps0: float | None = None,
    max_work: int | None = None,
) -> float:
    """Biswas et al.'s eq. (6) with the printed Theorem IV.1 ``v_s`` — reproduces Table IV as printed.

    ``delta = sum_s 1{v_s > eps} (1 - e^(eps - v_s)) P_s`` with ``P_s`` their eq. (12) (correct) and
    ``v_s`` as printed (wrong, see the module docstring's ERRATUM). Computed in log space in
    O(n^2). Use only to reproduce the published numbers; it is not a privacy bound.

    Args:
        eps: Epsilon, finite and >= 0.
        n: Number of users, integer >= 2.
        n_x0: Number of *other* users holding ``x0``, integer in ``[0, n - 2]`` (the printed
            formula divides by ``n - n_x0`` and uses ``C(n - 1 - n_x0, .)``, so ``n_x0 <= n - 2``).
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite, in (0, 500] (``e^eps0 n`` must be a finite float).
        max_work: Work budget (``None``: 1e8); the work is ``(n + 1)(n_x0 + 1)`` (the grid).

    Every argument after ``eps`` is keyword only: the old positional order
    ``(eps, n, n_x0, k, eps0)`` (unlike the ``(k, eps0, n)`` of the rest of the package) still works
    but emits a ``DeprecationWarning``. :class:`BiswasAsPrintedCurve` takes ``(k, eps0, n, *, n_x0)``.

    Returns:
        The as-printed delta.

    Raises:
        ParameterError: On invalid numbers, including ``n_x0 > n - 2`` (e.g. their "n=50" row
            with ``n_x0 = 80``), a missing argument or one given twice.
        WorkBudgetExceeded: If ``(n + 1)(n_x0 + 1) > max_work``.

    Example:
        >>> f"{biswas_as_printed_delta(0.5, n=100, n_x0=80, k=10, eps0=2.0):.2e}"
        '3.25e-22'
    """
    given: dict[str, Any] = {"n": n, "n_x0": n_x0, "k": k, "eps0": eps0}
    if args:
        if len(args) > len(_LEGACY_ORDER):
            raise ParameterError(
                f"biswas_as_printed_delta takes eps and the keywords n, n_x0, k, eps0, got {1 + len(args)} positional arguments"
            )
        warnings.warn(
            "positional n, n_x0, k, eps0 in biswas_as_printed_delta are deprecated: pass them as "
            "keywords (n=..., n_x0=..., k=..., eps0=...)",
            DeprecationWarning,
            stacklevel=2,
        )
        for name, value in zip(_LEGACY_ORDER, args):
            if given[name] is not None:
                raise ParameterError(
                    f"{name} was given both positionally and as a keyword ({value!r}, {given[name]!r})"
                )
            given[name] = value
    for name in ("n", "k", "eps0", "n_x0"):
        if given[name] is None:
            raise ParameterError(
                f"{name} is required (a keyword argument of biswas_as_printed_delta), got None"
            )
    eps = _eps(eps)
    n, n_x0, k, eps0 = given["n"], given["n_x0"], given["k"], given["eps0"]
    return BiswasAsPrintedCurve(k, eps0, n, n_x0=n_x0, max_work=max_work).delta(eps)


@dataclass(frozen=True)
class BiswasAsPrintedCurve(LiteratureCurve):
    """Biswas et al.'s eq. (6) with the printed Theorem IV.1 as a curve: ``bound="as-printed"``.

    NOT a privacy bound (see the module docstring's ERRATUM): kept to reproduce their Table IV;
    ``delta`` is :func:`biswas_as_printed_delta`, ``epsilon`` the root finder on it.

    Args:
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite, in (0, 500].
        n: Number of users, integer >= 2.
        n_x0: Number of other users holding ``x0``, integer in ``[0, n - 2]`` (keyword only).
        max_work: Work budget (keyword only).

    Example:
        >>> c = BiswasAsPrintedCurve(10, 2.0, 100, n_x0=80)
        >>> c.bound, f"{c.delta(0.5):.2e}"
        ('as-printed', '3.25e-22')
    """

    k: int
    eps0: float
    n: int
    n_x0: int = 0
    max_work: int | None = None
    name = "Biswas et al. as printed"
    citation = "Biswas, Jung, Palamidessi, eq. (6) with the printed Theorem IV.1 (wrong, see ERRATUM)"
    bound = "as-printed"

    def __post_init__(self) -> None:
        n, k, eps0, n_x0 = _n(self.n), _k(self.k), _eps0(self.eps0), self.n_x0
        if isinstance(n_x0, (int, np.integer)) and not isinstance(n_x0, bool) and n_x0 > n - 2:
            raise ParameterError(
                f"n_x0 must be an integer in [0, n - 2] = [0, {n - 2}] (the other n - 1 users hold x0 "
                f"at most n - 1 times, and the printed formula needs n - 1 - n_x0 >= 1), got n_x0 = {n_x0}"
            )
        nx = check_int("n_x0", n_x0, minimum=0, maximum=n - 2)
        eps0 = check_real("eps0", eps0, low=0.0, low_open=True, high=500.0)
        check_work(
            f"biswas_as_printed_delta(n={n}, n_x0={nx})",
            (n + 1) * (nx + 1),
            max_work=self.max_work,
            alternative="it is a reproduction of a published table, not a bound: use a smaller n",
        )
        for name, value in (("k", k), ("eps0", eps0), ("n", n), ("n_x0", nx)):
            object.__setattr__(self, name, value)

    def _delta(self, eps: float) -> float:
        n, nx, k, eps0 = self.n, self.n_x0, self.k, self.eps0
        N = n - nx
        E = math.exp(eps0)
        lk1 = eps0 + math.log(E + k - 2) - math.log(k - 1)  # log kappa1
        k2 = (k - 1) / (E + k - 2)
        s = np.arange(n + 1, dtype=float)[:, None]
        r = np.arange(nx + 1, dtype=float)[None, :]
        base = _lbinom(nx, r) + r * lk1  # log C(n_x0, r) kappa1^r
        log_den = logsumexp(base + _lbinom(N, s - r), axis=1)
        # printed numerator: (1/N) sum_r (s - r) C(n_x0, r) C(N - 1, s - 1 - r) kappa1^r
        with np.errstate(divide="ignore"):
            log_num = logsumexp(
                base + np.log(np.maximum(s - r, 0.0)) + _lbinom(N - 1, s - 1 - r), axis=1
            ) - math.log(N)
        ratio = np.exp(log_num - log_den)
        v = np.log(k2 + (E - k2) * ratio)
        # P_s = kappa3 * sum_r C(n_x0,r) kappa1^r [kappa2 C(N, s-r) + (e^eps0 - kappa2)(s-r)/N C(N, s-r)]
        log_k3 = nx * math.log(k - 1) + (N - s[:, 0]) * math.log(E + k - 2) - n * math.log(E + k - 1)
        with np.errstate(divide="ignore"):
            weight = np.log(k2 + (E - k2) * np.maximum(s - r, 0.0) / N)
        log_p = log_k3 + logsumexp(base + _lbinom(N, s - r) + weight, axis=1)
        mask = v > eps
        if not mask.any():
            return 0.0
        terms = log_p[mask] + np.log(-np.expm1(eps - v[mask]))
        return float(np.exp(logsumexp(terms)))


def _simplified(eps: float, eps0: float, n: int, log_c: float) -> float:
    # exp(-n eps^2 / c) with the exponent formed in log space (no overflow of c or eps^2)
    if eps == 0.0:
        return 1.0
    log_t = math.log(n) + 2.0 * math.log(eps) - log_c
    return math.exp(-math.exp(min(log_t, 709.0)))


_COLUMNS = ("erlingsson", "balle", "feldman")


@dataclass(frozen=True)
class BiswasSimplifiedCurve(LiteratureCurve):
    """One "literature" column of Biswas et al.'s Table II: ``delta = exp(-n eps^2 / c)`` with
    ``c = 144 eps0^2`` (``column="erlingsson"``), ``e^(2 eps0)`` (``"balle"``) or ``e^eps0 - 1``
    (``"feldman"``). ``bound="as-printed"``: simplified forms that reproduce the table, NOT the cited
    theorems, with no validity conditions; never use them as privacy guarantees.

    Args:
        eps0: Local privacy parameter, finite and > 0.
        n: Number of users, integer >= 2.
        column: ``"erlingsson"``, ``"balle"`` or ``"feldman"`` (keyword only).

    Example:
        >>> c = BiswasSimplifiedCurve(0.49, 100, column="feldman")
        >>> c.bound, f"{c.delta(0.3):.3e}"
        ('as-printed', '6.584e-07')
    """

    eps0: float
    n: int
    column: str = "erlingsson"
    name = "Biswas et al. Table II simplified form"
    citation = "Biswas, Jung, Palamidessi, Table II literature columns (simplified forms, not theorems)"
    bound = "as-printed"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", _eps0(self.eps0))
        object.__setattr__(self, "n", _n(self.n))
        object.__setattr__(self, "column", check_choice("column", self.column, _COLUMNS))

    @property
    def log_c(self) -> float:
        """``log c`` of the column's form."""
        eps0 = self.eps0
        if self.column == "erlingsson":
            return math.log(144.0) + 2.0 * math.log(eps0)
        if self.column == "balle":
            return 2.0 * eps0
        return math.log(math.expm1(eps0)) if eps0 < 1.0 else eps0 + math.log1p(-math.exp(-eps0))

    def _delta(self, eps: float) -> float:
        return _simplified(eps, self.eps0, self.n, self.log_c)


def biswas_table2_erlingsson_simplified_delta(eps: float, eps0: float, n: int) -> float:
    """Table II column [11]: ``delta = exp(-n eps^2 / (144 eps0^2))`` — simplified form, not a theorem.

    This is the form that reproduces Biswas et al.'s Table II column attributed to Erlingsson et
    al.; the actual theorem (:func:`.erlingsson2019_delta`) needs ``n >= 1000``, ``eps0 < 1/2`` and
    ``delta < 1/100``, which this form ignores.

    Example:
        >>> round(biswas_table2_erlingsson_simplified_delta(0.1, 0.49, 100), 2)
        0.97
    """
    eps = _eps(eps)
    return BiswasSimplifiedCurve(eps0, n, column="erlingsson").delta(eps)


def biswas_table2_balle_simplified_delta(eps: float, eps0: float, n: int) -> float:
    """Table II column [10]: ``delta = exp(-n eps^2 / e^(2 eps0))`` — simplified form, not a theorem.

    Reproduces the column Biswas et al. attribute to Balle et al.; the actual k-RR theorem is
    :func:`.balle2019_krr_delta`.

    Example:
        >>> round(biswas_table2_balle_simplified_delta(0.2, 0.49, 100), 2)
        0.22
    """
    eps = _eps(eps)
    return BiswasSimplifiedCurve(eps0, n, column="balle").delta(eps)


def biswas_table2_feldman_simplified_delta(eps: float, eps0: float, n: int) -> float:
    """Table II column [12]: ``delta = exp(-n eps^2 / (e^eps0 - 1))`` — simplified form, not a theorem.

    Reproduces the column Biswas et al. attribute to Feldman et al.; the actual theorem is
    :func:`.fmt2021_closed_form_delta`.

    Example:
        >>> f"{biswas_table2_feldman_simplified_delta(0.3, 0.49, 100):.3e}"
        '6.584e-07'
    """
    eps = _eps(eps)
    return BiswasSimplifiedCurve(eps0, n, column="feldman").delta(eps)
