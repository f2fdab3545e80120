"""Report building blocks and renderers (text, Markdown, CSV, JSON) for ``shuffle-accounting report``.

A module that wants a block in ``shuffle-accounting report`` exposes a function
``report_section(deployment: Deployment) -> ReportSection``; :data:`SECTION_KEYS` and
:func:`build_report` list those functions in one registry and compute the sections in order.
Every renderer prints the same content; :func:`to_json` follows the versioned schema below.

JSON schema (``schema_version`` 1)::

    {
      "schema": "shuffle-accounting/report",
      "schema_version": 1,
      "generator": "shuffle-accounting <version>",
      "deployment": {"k": int, "eps0": float, "n": int, "delta": float, "rounds": int,
                     "target_epsilon": float, "calibrate_rounds": bool},
      "skipped": [section key, ...],
      "sections": [
        {"key": str, "title": str,
         "rows": [{"label": str,
                   "value": number | [lower, upper] | null,
                   "bound": "upper" | "lower" | "estimate" | "exact" | "parameter" | "none",
                   "text": str, "note": str}]}
      ],
      "whatif": null | {"ns": [int], "eps0s": [float], "k": int, "rounds": int, "delta": float,
                        "target_epsilon": float,
                        "series": [{"quantity": str, "eps0": float, "rounds": int, "bound": str,
                                    "values": [number | null]}]}
    }

``bound`` says which way a number is sound: ``"upper"`` — a certified upper bound (the truth is at
most this; certified epsilons, published bounds), ``"lower"`` — exhibited by a concrete dataset
(the truth is at least this), ``"estimate"`` — neither (approximations, intervals ``[lower,
upper]``), ``"exact"`` — computed exactly up to floating point (k-RR probabilities, variances),
``"parameter"`` — an input, ``"none"`` — no number (``value`` is ``null``, ``text`` says why).
For calibration rows the direction is that of the answer: the largest eps0 is rounded *down*
(``"lower"``: that eps0 certainly meets the target), the fewest users rounded *up* (``"upper"``).
Non-finite numbers are written as ``null`` with their text (``"inf"``). A new field may appear in
a later version without a version change; a change of meaning increments ``schema_version``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._validation import ParameterError, check_delta, check_int, check_real

__all__ = [
    "Deployment",
    "ReportSection",
    "ReportValue",
    "BOUNDS",
    "SCHEMA_VERSION",
    "SECTION_KEYS",
    "FORMATS",
    "build_report",
    "format_sections",
    "render",
    "format_bound",
    "to_json",
    "to_markdown",
    "to_csv",
    "K_MAX",
    "N_MAX",
    "ROUNDS_MAX",
    "EPS0_MAX",
]

#: Version of the JSON schema documented in this module's docstring.
SCHEMA_VERSION = 1
#: Allowed bound directions of a reported number.
BOUNDS = ("upper", "lower", "estimate", "exact", "parameter", "none")
#: Output formats of :func:`render`.
FORMATS = ("text", "md", "csv", "json")
#: Largest deployment sizes the planner accepts (larger ones are refused up front, not computed).
K_MAX = 100_000
N_MAX = 10**9
ROUNDS_MAX = 100_000
#: Largest local epsilon the planner accepts (k-RR with eps0 = 50 already keeps the value with
#: probability 1 - k e^-50; larger values are refused instead of overflowing).
EPS0_MAX = 50.0


@dataclass(frozen=True)
class Deployment:
    """A planned shuffled k-RR collection: ``n`` users, ``k`` categories, local ``eps0``, ``rounds``.

    Args:
        k: Number of categories (integer in ``[2, K_MAX]``).
        eps0: Local privacy parameter in ``(0, EPS0_MAX]``.
        n: Number of users in one shuffled batch (integer in ``[2, N_MAX]``).
        delta: Target delta in (0, 1) for the reported epsilons.
        rounds: Number of collection rounds composed (integer in ``[1, ROUNDS_MAX]``).
        target_epsilon: Central epsilon the calibration rows aim for (finite, > 0).
        calibrate_rounds: Also calibrate the ``rounds``-fold composition (one pessimistic PLD per
            bisection step: tens of seconds); the single round is always calibrated.

    Raises:
        ParameterError: On any invalid parameter (the message names it, its range and the value).

    Example:
        >>> Deployment(k=10, eps0=2.0, n=10_000, delta=1e-6)
        Deployment(k=10, eps0=2.0, n=10000, delta=1e-06, rounds=1, target_epsilon=1.0, calibrate_rounds=False)
        >>> Deployment(rounds=1e300)
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: rounds must be an integer in [1, 100000], got 1e+300
    """

    k: int = 10
    eps0: float = 2.0
    n: int = 10_000
    delta: float = 1e-6
    rounds: int = 1
    target_epsilon: float = 1.0
    calibrate_rounds: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_int("k", self.k, minimum=2, maximum=K_MAX))
        object.__setattr__(self, "eps0", check_real("eps0", self.eps0, low=0.0, high=EPS0_MAX, low_open=True))
        object.__setattr__(self, "n", check_int("n", self.n, minimum=2, maximum=N_MAX))
        object.__setattr__(self, "delta", check_delta("delta", self.delta))
        object.__setattr__(self, "rounds", check_int("rounds", self.rounds, minimum=1, maximum=ROUNDS_MAX))
        object.__setattr__(
            self, "target_epsilon", check_real("target_epsilon", self.target_epsilon, low=0.0, low_open=True)
        )
        if not isinstance(self.calibrate_rounds, bool):
            raise ParameterError(f"calibrate_rounds must be a bool, got {self.calibrate_rounds!r}")

    def as_dict(self) -> dict[str, Any]:
        """The parameters as a JSON-ready dict."""
        return {
            "k": self.k,
            "eps0": self.eps0,
            "n": self.n,
            "delta": self.delta,
            "rounds": self.rounds,
            "target_epsilon": self.target_epsilon,
            "calibrate_rounds": self.calibrate_rounds,
        }


@dataclass(frozen=True)
class ReportValue:
    """The machine-readable number behind a row: ``value`` (float, int, ``(lower, upper)`` or
    ``None``) and its bound direction (one of :data:`BOUNDS`)."""

    value: Any
    bound: str

    def __post_init__(self) -> None:
        if self.bound not in BOUNDS:
            raise ParameterError(f"bound must be one of {BOUNDS}, got {self.bound!r}")


@dataclass(frozen=True)
class ReportSection:
    """A titled block of (label, value, note) rows.

    ``values`` (optional, parallel to ``rows``) holds each row's number at full precision with its
    bound direction; ``key`` is the section's machine name (see :data:`SECTION_KEYS`).
    """

    title: str
    rows: tuple[tuple[str, str, str], ...] = field(default_factory=tuple)
    values: tuple[ReportValue, ...] = field(default_factory=tuple)
    key: str = ""

    def __post_init__(self) -> None:
        if self.values and len(self.values) != len(self.rows):
            raise ParameterError(
                f"values must have one entry per row ({len(self.rows)}), got {len(self.values)}"
            )


def format_bound(value: Any, bound: str, *, digits: int = 6) -> str:
    """``value`` with ``digits`` significant digits, rounded outward for its direction.

    An ``"upper"`` bound is rounded up and a ``"lower"`` bound down (so the printed number is
    still a valid bound); anything else to nearest. Non-finite values print as ``inf``/``nan``.

    Example:
        >>> format_bound(0.0797917203496098, "lower"), format_bound(0.0797917203496098, "upper")
        ('0.0797917', '0.0797918')
        >>> format_bound(2.0, "upper"), format_bound(1e-7 / 3, "upper")
        ('2', '3.33334e-08')
    """
    from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal  # noqa: PLC0415

    check_int("digits", digits, minimum=1, maximum=17)
    x = float(value)
    if not math.isfinite(x):
        return str(x)
    if x == 0.0:
        return "0"
    nearest = f"{x:.{digits}g}"
    if bound not in ("upper", "lower") or (float(nearest) >= x if bound == "upper" else float(nearest) <= x):
        return nearest  # already on the right side (as a double)
    d = Decimal(x)  # exact binary value
    exp = d.adjusted() - digits + 1
    mode = {"upper": ROUND_CEILING, "lower": ROUND_FLOOR}.get(bound, ROUND_HALF_EVEN)
    q = d.quantize(Decimal(1).scaleb(exp), rounding=mode)
    return f"{float(q):.{digits}g}" if float(q) == float(f"{float(q):.{digits}g}") else str(q)


_NUMBER = r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf)"


def _parse_value(text: str) -> Any:
    """The number(s) in a row's text: a float, ``(lo, hi)`` for ``"lo .. hi"``, or None."""
    text = text.strip()
    m = re.fullmatch(rf"({_NUMBER})\s*\.\.\s*({_NUMBER})", text)
    if m:
        return (float(m.group(1)), float(m.group(2)))
    m = re.fullmatch(rf"(?:>=|>|<=|<)?\s*({_NUMBER})", text)
    return float(m.group(1)) if m else None


def annotate(section: ReportSection, key: str, bounds: Sequence[str]) -> ReportSection:
    """Attach a key and bound directions to a section whose rows carry only text.

    The numbers are parsed back from the text (for sections built by modules that predate
    :class:`ReportValue`); a row without a number gets bound ``"none"``.

    Example:
        >>> sec = annotate(ReportSection("A", (("x", "1.5", ""), ("y", "n/a", ""))), "a", ("upper", "upper"))
        >>> [(v.value, v.bound) for v in sec.values]
        [(1.5, 'upper'), (None, 'none')]
    """
    if len(bounds) != len(section.rows):
        raise ParameterError(f"bounds must have one entry per row ({len(section.rows)}), got {len(bounds)}")
    values = []
    for (_, text, _), bound in zip(section.rows, bounds):
        v = _parse_value(text)
        values.append(ReportValue(v, bound if v is not None else "none"))
    return ReportSection(section.title, section.rows, tuple(values), key)


def _local_section(dep: Deployment) -> ReportSection:
    from ..randomizers import KRR  # noqa: PLC0415

    r = KRR(dep.k, dep.eps0)
    rows = (
        ("users per batch n", f"{dep.n}", "", ReportValue(dep.n, "parameter")),
        ("categories k", f"{dep.k}", "", ReportValue(dep.k, "parameter")),
        (
            "local eps0",
            f"{dep.eps0:.6g}",
            "each report alone is eps0-LDP",
            ReportValue(dep.eps0, "parameter"),
        ),
        ("rounds", f"{dep.rounds}", "", ReportValue(dep.rounds, "parameter")),
        ("target delta", f"{dep.delta:.3g}", "", ReportValue(dep.delta, "parameter")),
        ("p (keep)", f"{r.p:.6g}", "e^eps0 / (e^eps0 + k - 1)", ReportValue(r.p, "exact")),
        ("blanket gamma", f"{r.gamma:.6g}", "k / (e^eps0 + k - 1)", ReportValue(r.gamma, "exact")),
    )
    return ReportSection(
        "Deployment and local randomizer (k-RR)",
        tuple(r[:3] for r in rows),
        tuple(r[3] for r in rows),
        "deployment",
    )


def _curves(dep: Deployment, memo: dict[str, Any]) -> Any:
    """The report's :class:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves` (one per
    :func:`build_report` call, in ``memo``): every section and figure reads the same cached curves,
    so the certified epsilon is computed once per report."""
    if "curves" not in memo:
        from .curve_rows import DeploymentCurves  # noqa: PLC0415

        memo["curves"] = DeploymentCurves(dep)
    return memo["curves"]


def _shuffled(dep: Deployment, skip: frozenset[str], memo: dict[str, Any]) -> ReportSection:
    from .shuffled_krr_report import report_section  # noqa: PLC0415

    return report_section(dep, lower="lower" not in skip, curves=_curves(dep, memo))


def _calibration(dep: Deployment, skip: frozenset[str], memo: dict[str, Any]) -> ReportSection:
    from .shuffled_krr_report import calibration_section  # noqa: PLC0415

    return calibration_section(dep)


def _accuracy(dep: Deployment, skip: frozenset[str], memo: dict[str, Any]) -> ReportSection:
    from .shuffled_krr_report import accuracy_section  # noqa: PLC0415

    return accuracy_section(dep, epsilon=_curves(dep, memo).certified.epsilon(dep.delta))


def _literature(dep: Deployment, skip: frozenset[str], memo: dict[str, Any]) -> ReportSection:
    from .literature_report import report_section  # noqa: PLC0415

    return report_section(dep, curves=_curves(dep, memo))


def _reidentification(dep: Deployment, skip: frozenset[str], memo: dict[str, Any]) -> ReportSection:
    from .reidentification_report import report_section  # noqa: PLC0415

    return report_section(dep)  # each row annotated with its bound direction


def _qif(dep: Deployment, skip: frozenset[str], memo: dict[str, Any]) -> ReportSection:
    from .qif_report import report_section  # noqa: PLC0415

    return report_section(dep)  # carries its values: prior and p exact, the rest upper ends


#: Registered sections in print order: key -> builder(dep, skip, memo); ``memo`` is one dict per
#: :func:`build_report` call, so a quantity two sections show is computed once. ``lower`` is not a
#: section but the exhibited lower bound inside ``shuffled`` (the slowest single computation),
#: skippable alone.
_SECTIONS: dict[str, Callable[[Deployment, frozenset[str], dict[str, Any]], ReportSection]] = {
    "shuffled": _shuffled,
    "calibration": _calibration,
    "accuracy": _accuracy,
    "literature": _literature,
    "reidentification": _reidentification,
    "qif": _qif,
}
#: Keys accepted by ``report --skip`` (the deployment block is always printed).
SECTION_KEYS: tuple[str, ...] = ("lower",) + tuple(_SECTIONS)


def check_skip(skip: Any) -> frozenset[str]:
    """Validate a collection of section keys to skip.

    Example:
        >>> sorted(check_skip(["qif", "lower"]))
        ['lower', 'qif']
    """
    if isinstance(skip, str) or not hasattr(skip, "__iter__"):
        raise ParameterError(f"skip must be a collection of section keys from {SECTION_KEYS}, got {skip!r}")
    out = frozenset(skip)
    bad = sorted(str(s) for s in out if s not in SECTION_KEYS)
    if bad:
        raise ParameterError(f"skip must contain only section keys from {SECTION_KEYS}, got {bad}")
    return out


def build_report(dep: Deployment, *, skip: Any = (), curves: Any = None) -> list[ReportSection]:
    """Compute the report's sections for ``dep`` in print order, leaving out ``skip``.

    Args:
        dep: The deployment.
        skip: Section keys (from :data:`SECTION_KEYS`) not to compute.
        curves: A :class:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves` of ``dep``
            to read the curves from (and fill), e.g. to draw the figures from the same cached
            curves afterwards; ``None`` for new ones.

    Returns:
        The sections, the deployment block first.

    Raises:
        ParameterError: On an invalid ``dep``, ``skip`` or ``curves`` (of another deployment).

    Example:
        >>> secs = build_report(Deployment(k=3, eps0=1.0, n=100), skip=["literature", "qif", "reidentification"])
        >>> [s.key for s in secs]
        ['deployment', 'shuffled', 'calibration', 'accuracy']
    """
    if not isinstance(dep, Deployment):
        raise ParameterError(f"dep must be a Deployment, got {type(dep).__name__}")
    skip = check_skip(skip)
    sections = [_local_section(dep)]
    memo: dict[str, Any] = {}  # this report's shared values: its curves (the certified epsilon)
    if curves is not None:
        if getattr(curves, "deployment", None) != dep:
            raise ParameterError("curves must be a DeploymentCurves of the same deployment")
        memo["curves"] = curves
    for key, builder in _SECTIONS.items():
        if key not in skip:
            sections.append(builder(dep, skip, memo))
    return sections


def format_sections(sections: list[ReportSection]) -> str:
    """Render sections as aligned plain text.

    Example:
        >>> print(format_sections([ReportSection("A", (("x", "1", "note"),))]))
        A
        -
          x  1  note
    """
    lines: list[str] = []
    for sec in sections:
        if lines:
            lines.append("")
        lines.append(sec.title)
        lines.append("-" * len(sec.title))
        if not sec.rows:
            continue
        w0 = max(len(r[0]) for r in sec.rows)
        w1 = max(len(r[1]) for r in sec.rows)
        for label, value, note in sec.rows:
            lines.append(f"  {label:<{w0}}  {value:<{w1}}  {note}".rstrip())
    return "\n".join(lines)


def _row_values(sec: ReportSection) -> tuple[ReportValue, ...]:
    if sec.values:
        return sec.values
    return annotate(sec, sec.key, ["estimate"] * len(sec.rows)).values


def _json_number(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, (tuple, list)):
        return [_json_number(x) for x in v]
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    f = float(v)
    return f if math.isfinite(f) else None


def _section_records(sections: list[ReportSection]) -> list[dict[str, Any]]:
    out = []
    for sec in sections:
        rows = []
        for (label, text, note), val in zip(sec.rows, _row_values(sec)):
            number = _json_number(val.value)
            bound = val.bound if number is not None else "none"
            rows.append({"label": label, "value": number, "bound": bound, "text": text, "note": note})
        out.append({"key": sec.key, "title": sec.title, "rows": rows})
    return out


def report_dict(
    dep: Deployment, sections: list[ReportSection], *, skip: Any = (), whatif: Any = None
) -> dict[str, Any]:
    """The JSON-ready report (schema in the module docstring).

    Args:
        dep: The deployment.
        sections: Output of :func:`build_report`.
        skip: The skipped section keys (recorded).
        whatif: A :class:`~shuffle_accounting.presentation.whatif.WhatIfGrid` or ``None``.
    """
    from .. import __version__  # noqa: PLC0415

    return {
        "schema": "shuffle-accounting/report",
        "schema_version": SCHEMA_VERSION,
        "generator": f"shuffle-accounting {__version__}",
        "deployment": dep.as_dict(),
        "skipped": sorted(check_skip(skip)),
        "sections": _section_records(sections),
        "whatif": None if whatif is None else whatif.as_dict(),
    }


def to_json(dep: Deployment, sections: list[ReportSection], *, skip: Any = (), whatif: Any = None) -> str:
    """The report as JSON text (schema version :data:`SCHEMA_VERSION`).

    Example:
        >>> dep = Deployment(k=3, eps0=1.0, n=100)
        >>> doc = json.loads(to_json(dep, build_report(dep, skip=["literature", "qif", "reidentification"])))
        >>> doc["schema_version"], doc["sections"][1]["rows"][0]["bound"]
        (1, 'upper')
    """
    return json.dumps(report_dict(dep, sections, skip=skip, whatif=whatif), indent=2, allow_nan=False)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(sections: list[ReportSection], *, whatif: Any = None) -> str:
    """The report as Markdown: one ``##`` heading and one table (quantity, value, bound, note) per section.

    Example:
        >>> print(to_markdown([ReportSection("A", (("x", "1", "note"),), (ReportValue(1.0, "upper"),))]))
        ## A
        <BLANKLINE>
        | quantity | value | bound | note |
        |---|---|---|---|
        | x | 1 | upper | note |
    """
    parts = []
    for sec in sections:
        lines = [f"## {sec.title}", "", "| quantity | value | bound | note |", "|---|---|---|---|"]
        for (label, text, note), val in zip(sec.rows, _row_values(sec)):
            lines.append(f"| {_md_cell(label)} | {_md_cell(text)} | {val.bound} | {_md_cell(note)} |")
        parts.append("\n".join(lines))
    if whatif is not None:
        parts.append(whatif.to_markdown())
    return "\n\n".join(parts)


#: Columns of :func:`to_csv`: one quantity per line, at the (n, eps0, rounds) it was computed for.
CSV_COLUMNS = ("section", "label", "n", "eps0", "rounds", "value", "bound", "text", "note")


def to_csv(dep: Deployment, sections: list[ReportSection], *, whatif: Any = None) -> str:
    """The report as one tidy CSV table (columns :data:`CSV_COLUMNS`), what-if grid rows appended.

    An interval is written as ``lower..upper`` in ``value``; a missing number as an empty cell.

    Example:
        >>> dep = Deployment(k=3, eps0=1.0, n=100)
        >>> print(to_csv(dep, [ReportSection("A", (("x", "1", "note"),), (ReportValue(1.0, "upper"),), "a")]))
        section,label,n,eps0,rounds,value,bound,text,note
        a,x,100,1.0,1,1.0,upper,1,note
        <BLANKLINE>
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for rec in _section_records(sections):
        for row in rec["rows"]:
            v = row["value"]
            cell = "" if v is None else (f"{v[0]!r}..{v[1]!r}" if isinstance(v, list) else repr(v))
            w.writerow(
                [
                    rec["key"],
                    row["label"],
                    dep.n,
                    dep.eps0,
                    dep.rounds,
                    cell,
                    row["bound"],
                    row["text"],
                    row["note"],
                ]
            )
    if whatif is not None:
        for row in whatif.csv_rows():
            w.writerow(row)
    return buf.getvalue()


def render(
    fmt: str, dep: Deployment, sections: list[ReportSection], *, skip: Any = (), whatif: Any = None
) -> str:
    """Render the report in ``fmt`` (one of :data:`FORMATS`).

    Raises:
        ParameterError: On an unknown format.

    Example:
        >>> dep = Deployment(k=3, eps0=1.0, n=100)
        >>> secs = [ReportSection("A", (("x", "1", "note"),), (ReportValue(1.0, "upper"),), "a")]
        >>> print(render("text", dep, secs))
        A
        -
          x  1  note
    """
    if fmt == "text":
        out = format_sections(sections)
        return out if whatif is None else out + "\n\n" + whatif.to_text()
    if fmt == "md":
        return to_markdown(sections, whatif=whatif)
    if fmt == "csv":
        return to_csv(dep, sections, whatif=whatif)
    if fmt == "json":
        return to_json(dep, sections, skip=skip, whatif=whatif)
    raise ParameterError(f"format must be one of {FORMATS}, got {fmt!r}")
