"""The one path from privacy curves to report rows (and, in :mod:`.plotting`, to figures).

Every bound the report, the what-if grid, the planner and the figures compare is a
:class:`~shuffle_accounting.curves.PrivacyCurve` (``delta``, ``log_delta``, ``epsilon`` and which
way it is sound). This module turns a list of them into rows:

* :class:`NamedCurve` — a curve with its label and citation, or the reason there is no curve at this
  deployment (a theorem whose conditions fail raises a
  :class:`~shuffle_accounting._validation.ParameterError` at construction; :func:`named_curve`
  records its message instead of raising);
* :func:`curve_rows` — given the curves and ``delta`` points (rows of ``epsilon(delta)``) or ``eps``
  points (rows of ``delta(eps)``), one :class:`CurveRow` per (curve, point): the number at full
  precision, its text rounded **outward** for its direction
  (:func:`~shuffle_accounting.presentation.report.format_bound`), the report's bound direction
  (:data:`REPORT_BOUND`) and the curve's citation, or ``"not valid here"`` and the reason;
* :func:`curve_section` — rows to a :class:`~shuffle_accounting.presentation.report.ReportSection`,
  which every renderer (text, Markdown, CSV, JSON schema version 1) prints the same way;
* :class:`CachedCurve` — a curve that remembers its scalar answers, so that one report computes
  each quantity once (:class:`DeploymentCurves` holds the report's curves: the certified epsilon
  is computed once and shared by every section and figure).

Bound directions: a curve's ``bound`` (``"upper"``, ``"lower"``, ``"estimate"``, ``"as-printed"``)
maps to the report schema's (:data:`REPORT_BOUND`): ``"as-printed"`` (a published formula known or
suspected to be wrong, no soundness claim) is reported as ``"estimate"`` with that said in the note;
an upper curve's epsilon is printed rounded up, a lower curve's rounded down.

Presentation only: no mathematics here, every number is the curve's own answer.

Example:
    >>> from shuffle_accounting.shuffled_krr import ShuffledKRR
    >>> from shuffle_accounting.shuffled_krr.curves import ExhibitedKRRCurve
    >>> curves = [
    ...     NamedCurve("certified", ShuffledKRR(4, 1.0, 200), citation="exact worst case"),
    ...     NamedCurve("exhibited", ExhibitedKRRCurve(4, 1.0, 200), citation="concrete datasets"),
    ...     named_curve("EFMRTT19", lambda: _raise("needs eps0 < 1/2"), citation="Erlingsson et al."),
    ... ]
    >>> for r in curve_rows(curves, delta=1e-6):
    ...     print(r.label, r.bound, r.text, "|", r.note)
    certified upper 0.276673 | exact worst case
    exhibited lower 0.27585 | concrete datasets
    EFMRTT19 none not valid here | needs eps0 < 1/2
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np

from .._validation import ParameterError, check_delta, check_real
from .report import Deployment, ReportSection, ReportValue, format_bound

__all__ = [
    "REPORT_BOUND",
    "NamedCurve",
    "CurveRow",
    "CachedCurve",
    "DeploymentCurves",
    "named_curve",
    "curve_rows",
    "value_row",
    "curve_values",
    "curve_section",
]

#: A curve's ``bound`` -> the report schema's bound direction of its numbers.
REPORT_BOUND: dict[str, str] = {
    "upper": "upper",
    "lower": "lower",
    "estimate": "estimate",
    "as-printed": "estimate",
}


def _raise(message: str) -> Any:
    """Raise ``ParameterError(message)`` (doctest helper: a curve whose theorem does not apply)."""
    raise ParameterError(message)


@dataclass(frozen=True)
class NamedCurve:
    """A privacy curve with its label and citation, or the reason there is none here.

    Attributes:
        label: Row label / legend entry.
        curve: A :class:`~shuffle_accounting.curves.PrivacyCurve`, or ``None`` when the bound does
            not apply at this deployment (then ``reason`` says why).
        citation: Paper and theorem (or how the curve is computed); the rows' note.
        reason: Why there is no curve (non-empty exactly when ``curve`` is ``None``).

    Raises:
        ParameterError: If ``label`` is empty, ``curve`` lacks the protocol's methods, or ``reason``
            is empty without a curve.

    Example:
        >>> from shuffle_accounting.shuffled_krr import ShuffledKRR
        >>> NamedCurve("certified", ShuffledKRR(3, 1.0, 100)).bound
        'upper'
    """

    label: str
    curve: Any
    _: KW_ONLY
    citation: str = ""
    reason: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise ParameterError(f"label must be a non-empty string, got {self.label!r}")
        if self.curve is None:
            if not self.reason:
                raise ParameterError(f"a NamedCurve without a curve needs a reason, got label {self.label!r}")
            return
        missing = [m for m in ("delta", "log_delta", "epsilon") if not callable(getattr(self.curve, m, None))]
        if missing or getattr(self.curve, "bound", None) not in REPORT_BOUND:
            raise ParameterError(
                f"curve must be a PrivacyCurve (delta, log_delta, epsilon and a bound in "
                f"{tuple(REPORT_BOUND)}), got {type(self.curve).__name__}"
            )

    @property
    def bound(self) -> str:
        """The curve's ``bound``, or ``"none"`` when there is no curve."""
        return "none" if self.curve is None else str(self.curve.bound)


def named_curve(label: str, make: Callable[[], Any], *, citation: str = "") -> NamedCurve:
    """``NamedCurve(label, make())``, or a curve-less entry with the reason if ``make`` raises.

    A theorem whose conditions fail at the deployment raises a
    :class:`~shuffle_accounting._validation.ParameterError` (e.g.
    :class:`~shuffle_accounting.literature.BoundNotApplicable`) when its curve is built; that
    message becomes the entry's ``reason``. Any other exception propagates.

    Example:
        >>> named_curve("x", lambda: _raise("not here"), citation="paper").reason
        'not here'
    """
    try:
        curve = make()
    except ParameterError as exc:
        return NamedCurve(label, None, citation=citation, reason=str(exc) or type(exc).__name__)
    return NamedCurve(label, curve, citation=citation)


@dataclass(frozen=True)
class CurveRow:
    """One (curve, point) row of :func:`curve_rows`.

    Attributes:
        label: The curve's label.
        query: ``"epsilon"`` (``epsilon(delta)`` at ``at = delta``) or ``"delta"`` (``delta(eps)``).
        at: The point (a delta or an eps).
        value: The number at full precision, or ``None`` when the curve is not valid here.
        bound: The report's bound direction (:data:`REPORT_BOUND`; ``"none"`` without a number).
        text: The number printed rounded outward, or ``"not valid here"``.
        note: The curve's citation, or the reason it is not valid here.
    """

    label: str
    query: str
    at: float
    value: float | None
    bound: str
    text: str
    note: str

    def report_row(
        self, *, label: str | None = None, note: str | None = None
    ) -> tuple[str, str, str, ReportValue]:
        """``(label, text, note, ReportValue)``, a row of :func:`curve_section` (label/note overridable
        for a number that is valid)."""
        ok = self.value is not None
        return (
            self.label if label is None else label,
            self.text,
            self.note if note is None or not ok else note,
            ReportValue(self.value, self.bound),
        )


def _points(name: str, values: Any, check: Callable[[str, Any], float]) -> tuple[float, ...]:
    if np.ndim(values) == 0:
        return (check(name, values),)
    out = tuple(check(name, v) for v in np.ravel(np.asarray(values, dtype=object)).tolist())
    if not out:
        raise ParameterError(f"{name} must hold at least one point, got an empty sequence")
    return out


def _check_eps(name: str, value: Any) -> float:
    return check_real(name, value, low=0.0)


def curve_rows(curves: Iterable[NamedCurve], *, delta: Any = None, eps: Any = None) -> list[CurveRow]:
    """Rows comparing ``curves`` at ``delta`` points (their epsilons) or ``eps`` points (their deltas).

    Exactly one of ``delta`` and ``eps`` is given (a number or a sequence). For each curve (in
    order) and each point: ``curve.epsilon(delta)`` or ``curve.delta(eps)``, printed with
    :func:`~shuffle_accounting.presentation.report.format_bound` for the curve's direction (an upper
    bound rounded up, a lower bound down, so the printed number is still a bound); a curve-less entry,
    or a curve that raises :class:`~shuffle_accounting._validation.ParameterError` at that point,
    gives ``"not valid here"`` with the reason. An ``"as-printed"`` curve's note says it carries no
    guarantee.

    Args:
        curves: :class:`NamedCurve` entries.
        delta: Delta point(s) in ``(0, 1)``: rows of ``epsilon(delta)``.
        eps: Eps point(s), finite ``>= 0``: rows of ``delta(eps)``.

    Returns:
        One :class:`CurveRow` per (curve, point), curve-major.

    Raises:
        ParameterError: If not exactly one of ``delta``/``eps`` is given, a point is invalid, or an
            entry is not a :class:`NamedCurve`.

    Example:
        >>> from shuffle_accounting.literature import Balle2019KRRCurve
        >>> rows = curve_rows([NamedCurve("BBGN19", Balle2019KRRCurve(10, 2.0, 10_000))], eps=[0.5, 1.0])
        >>> [(r.query, r.at, r.bound, r.text) for r in rows]
        [('delta', 0.5, 'upper', '3.71133e-05'), ('delta', 1.0, 'upper', '2.37153e-19')]
    """
    if (delta is None) == (eps is None):
        raise ParameterError("give exactly one of delta (rows of epsilon) and eps (rows of delta)")
    if delta is not None:
        query, points = "epsilon", _points("delta", delta, check_delta)
    else:
        query, points = "delta", _points("eps", eps, _check_eps)
    rows: list[CurveRow] = []
    for nc in curves:
        if not isinstance(nc, NamedCurve):
            raise ParameterError(f"curves must hold NamedCurve entries, got {type(nc).__name__}")
        for at in points:
            rows.append(_row(nc, query, at))
    return rows


def _row(nc: NamedCurve, query: str, at: float) -> CurveRow:
    if nc.curve is None:
        return CurveRow(nc.label, query, at, None, "none", "not valid here", nc.reason)
    try:
        value = float(nc.curve.epsilon(at) if query == "epsilon" else nc.curve.delta(at))
    except ParameterError as exc:
        return CurveRow(nc.label, query, at, None, "none", "not valid here", str(exc) or type(exc).__name__)
    return value_row(nc, query, at, value)


def value_row(nc: NamedCurve, query: str, at: float, value: float) -> CurveRow:
    """The :class:`CurveRow` of ``nc`` whose number ``value`` is already known (e.g. computed once
    for the whole report): printed rounded outward for the curve's direction, as in :func:`curve_rows`.

    Raises:
        ParameterError: If ``nc`` has no curve or ``query`` is not ``"epsilon"`` or ``"delta"``.

    Example:
        >>> from shuffle_accounting.shuffled_krr import ShuffledKRR
        >>> value_row(NamedCurve("c", ShuffledKRR(3, 1.0, 100)), "epsilon", 1e-6, 0.0797917203496098).text
        '0.0797918'
    """
    if nc.curve is None:
        raise ParameterError(f"value_row needs a curve, got the curve-less entry {nc.label!r}")
    if query not in ("epsilon", "delta"):
        raise ParameterError(f"query must be 'epsilon' or 'delta', got {query!r}")
    bound = REPORT_BOUND[nc.curve.bound]
    note = nc.citation
    if nc.curve.bound == "as-printed":
        note = (note + "; " if note else "") + "as printed, no guarantee"
    value = float(value)
    if math.isnan(value):
        return CurveRow(nc.label, query, at, None, "none", "nan", note)
    return CurveRow(nc.label, query, at, value, bound, format_bound(value, bound), note)


def curve_values(curves: Iterable[NamedCurve], eps: Any, *, cap: float = 1.0) -> dict[str, np.ndarray]:
    """``{label: delta(eps)}`` on an eps grid (a figure's data), NaN where a curve is not valid.

    A curve-less entry gives all NaN; a curve is evaluated on the whole grid at once and, if that
    raises :class:`~shuffle_accounting._validation.ParameterError`, point by point (NaN where it
    raises). Deltas above ``cap`` (default 1, where a delta means nothing) are capped.

    Example:
        >>> from shuffle_accounting.shuffled_krr import ShuffledKRR
        >>> v = curve_values([NamedCurve("c", ShuffledKRR(3, 1.0, 100))], [0.1, 0.2])
        >>> bool(v["c"][0] >= v["c"][1] > 0)
        True
    """
    grid = np.asarray(eps, dtype=float)
    out: dict[str, np.ndarray] = {}
    for nc in curves:
        if not isinstance(nc, NamedCurve):
            raise ParameterError(f"curves must hold NamedCurve entries, got {type(nc).__name__}")
        vals = np.full(grid.shape, np.nan)
        if nc.curve is not None:
            try:
                vals = np.array(nc.curve.delta(grid), dtype=float).reshape(grid.shape)
            except ParameterError:
                for i, e in enumerate(grid.ravel().tolist()):
                    try:
                        vals.flat[i] = float(nc.curve.delta(e))
                    except ParameterError:
                        continue
        out[nc.label] = np.minimum(vals, cap)
    return out


def curve_section(title: str, key: str, rows: Sequence[tuple[str, str, str, ReportValue]]) -> ReportSection:
    """A :class:`~shuffle_accounting.presentation.report.ReportSection` from ``(label, text, note,
    ReportValue)`` rows (e.g. :meth:`CurveRow.report_row`).

    Example:
        >>> sec = curve_section("T", "t", [("a", "1", "n", ReportValue(1.0, "upper"))])
        >>> sec.rows, sec.values[0].bound
        ((('a', '1', 'n'),), 'upper')
    """
    return ReportSection(title, tuple(r[:3] for r in rows), tuple(r[3] for r in rows), key)


class CachedCurve:
    """A :class:`~shuffle_accounting.curves.PrivacyCurve` that remembers its scalar answers.

    ``epsilon(delta)`` and scalar ``delta(eps)`` / ``log_delta(eps)`` are computed once per argument
    (array arguments are passed through); ``bound`` is the wrapped curve's. One report shares one
    :class:`CachedCurve` per curve, so the certified epsilon shown by several sections and figures is
    computed once.

    Example:
        >>> from shuffle_accounting.shuffled_krr import ShuffledKRR
        >>> c = CachedCurve(ShuffledKRR(3, 1.0, 100))
        >>> c.epsilon(1e-6) == c.epsilon(1e-6) == ShuffledKRR(3, 1.0, 100).epsilon(1e-6), c.bound
        (True, 'upper')
    """

    def __init__(self, curve: Any) -> None:
        NamedCurve("curve", curve)  # validates the protocol
        self._curve = curve
        self._eps: dict[float, float] = {}
        self._delta: dict[float, float] = {}
        self._log_delta: dict[float, float] = {}

    @property
    def curve(self) -> Any:
        """The wrapped curve."""
        return self._curve

    @property
    def bound(self) -> str:
        """The wrapped curve's bound direction."""
        return str(self._curve.bound)

    def epsilon(self, delta: float) -> float:
        """The wrapped ``epsilon(delta)``, computed once per ``delta``."""
        delta = check_delta("delta", delta)
        if delta not in self._eps:
            self._eps[delta] = float(self._curve.epsilon(delta))
        return self._eps[delta]

    def delta(self, eps: Any) -> Any:
        """The wrapped ``delta(eps)`` (a scalar computed once)."""
        if np.ndim(eps) != 0:
            return self._curve.delta(eps)
        key = _check_eps("eps", eps)
        if key not in self._delta:
            self._delta[key] = float(self._curve.delta(key))
        return self._delta[key]

    def log_delta(self, eps: Any) -> Any:
        """The wrapped ``log_delta(eps)`` (a scalar computed once)."""
        if np.ndim(eps) != 0:
            return self._curve.log_delta(eps)
        key = _check_eps("eps", eps)
        if key not in self._log_delta:
            self._log_delta[key] = float(self._curve.log_delta(key))
        return self._log_delta[key]


class DeploymentCurves:
    """The curves of one report of ``dep``, each built once and cached (:class:`CachedCurve`).

    Built lazily, so a section imports only what it needs:

    * :attr:`certified` — ``ShuffledKRR(k, eps0, n)`` (method ``"auto"``), the certified curve;
    * :attr:`exhibited` — :class:`~shuffle_accounting.shuffled_krr.curves.ExhibitedKRRCurve`
      (concrete datasets; for ``k = 2`` with the worst-case certificate's witness);
    * :attr:`searched_lower` — the searched concrete datasets alone
      (:func:`~shuffle_accounting.shuffled_krr.lower.lower_log_delta`), cheap on a whole eps grid
      (the figures draw it);
    * :meth:`composed` — the ``rounds``-fold composition
      (:class:`~shuffle_accounting.shuffled_krr.curves.AccountantCurve` of a
      :class:`~shuffle_accounting.shuffled_krr.accountant.ShuffleAccountant`);
    * :meth:`literature` — every bound of
      :data:`~shuffle_accounting.literature.registry.LITERATURE_CURVES` as a :class:`NamedCurve`.

    Args:
        dep: The deployment.

    Example:
        >>> from shuffle_accounting.presentation.report import Deployment
        >>> dc = DeploymentCurves(Deployment(k=3, eps0=1.0, n=100))
        >>> dc.certified.epsilon(1e-6) >= dc.exhibited.epsilon(1e-6), dc.certified is dc.certified
        (True, True)
    """

    def __init__(self, dep: Deployment) -> None:
        if not isinstance(dep, Deployment):
            raise ParameterError(f"dep must be a Deployment, got {type(dep).__name__}")
        self.deployment = dep
        self._cache: dict[Any, Any] = {}

    def _get(self, key: Any, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def certified(self) -> CachedCurve:
        """The certified curve (``ShuffledKRR``, method ``"auto"``), cached."""

        def make() -> CachedCurve:
            from ..shuffled_krr.mechanism import ShuffledKRR  # noqa: PLC0415

            d = self.deployment
            return CachedCurve(ShuffledKRR(d.k, d.eps0, d.n))

        return self._get("certified", make)

    @property
    def exhibited(self) -> CachedCurve:
        """The exhibited lower curve (:class:`~shuffle_accounting.shuffled_krr.curves.ExhibitedKRRCurve`), cached."""

        def make() -> CachedCurve:
            from ..shuffled_krr.curves import ExhibitedKRRCurve  # noqa: PLC0415

            d = self.deployment
            return CachedCurve(ExhibitedKRRCurve(d.k, d.eps0, d.n))

        return self._get("exhibited", make)

    @property
    def searched_lower(self) -> CachedCurve:
        """The searched concrete datasets' lower curve (no worst-case witness: cheap on a grid), cached."""

        def make() -> CachedCurve:
            d = self.deployment
            return CachedCurve(_SearchedLowerCurve(d.k, d.eps0, d.n))

        return self._get("searched_lower", make)

    def composed(self, rounds: int | None = None) -> CachedCurve:
        """The ``rounds``-fold composition (default ``dep.rounds``) as a certified curve, cached."""
        d = self.deployment
        r = d.rounds if rounds is None else int(rounds)

        def make() -> CachedCurve:
            from ..shuffled_krr.accountant import ShuffleAccountant, ShuffledKRRDpEvent  # noqa: PLC0415
            from ..shuffled_krr.curves import AccountantCurve  # noqa: PLC0415

            acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(k=d.k, eps0=d.eps0, n=d.n), r)
            return CachedCurve(AccountantCurve(acc))

        return self._get(("composed", r), make)

    def literature(self) -> list[NamedCurve]:
        """Every published bound at the deployment (registry order), curve-less where it does not apply."""

        def make() -> list[NamedCurve]:
            from ..literature.registry import LITERATURE_BOUNDS, LITERATURE_CURVES  # noqa: PLC0415

            d = self.deployment
            out = []
            for name, factory in LITERATURE_CURVES.items():

                def build(f: Callable[[int, float, int], Any] = factory) -> Any:
                    return f(d.k, d.eps0, d.n)

                nc = named_curve(name, build, citation=LITERATURE_BOUNDS[name][0])
                if nc.curve is not None:
                    nc = NamedCurve(name, CachedCurve(nc.curve), citation=nc.citation)
                out.append(nc)
            return out

        return list(self._get("literature", make))


class _SearchedLowerCurve:
    """Lower curve of the searched concrete datasets (:mod:`shuffle_accounting.shuffled_krr.lower`).

    ``log_delta`` = :func:`~shuffle_accounting.shuffled_krr.lower.lower_log_delta` (vectorised over
    an eps grid), ``epsilon`` = :func:`~shuffle_accounting.shuffled_krr.lower.lower_epsilon`; both
    exhibited by concrete datasets, so ``bound == "lower"``. (For ``k = 2`` the exhibited curve of
    the report also uses the worst-case certificate's witness, one branch and bound per point: too
    slow for a figure's grid.)
    """

    bound = "lower"

    def __init__(self, k: int, eps0: float, n: int) -> None:
        self.k, self.eps0, self.n = k, eps0, n

    def log_delta(self, eps: Any) -> Any:
        from ..shuffled_krr.lower import lower_log_delta  # noqa: PLC0415

        return lower_log_delta(eps, self.k, self.eps0, self.n)

    def delta(self, eps: Any) -> Any:
        ld = self.log_delta(eps)
        with np.errstate(under="ignore"):
            out = np.exp(ld)
        return float(out) if np.ndim(out) == 0 else out

    def epsilon(self, delta: float) -> float:
        from ..shuffled_krr.lower import lower_epsilon  # noqa: PLC0415

        return lower_epsilon(delta, self.k, self.eps0, self.n)
