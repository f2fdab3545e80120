"""Plain-text report building blocks shared by the CLI and the modules that feed it.

A module that wants a block in ``shuffle-accounting report`` exposes a function
``report_section(deployment: Deployment) -> ReportSection``; :mod:`shuffle_accounting.cli` lists
those functions in one registry and prints the sections in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._validation import ParameterError, check_delta, check_int, check_real

__all__ = ["Deployment", "ReportSection", "format_sections"]


@dataclass(frozen=True)
class Deployment:
    """A planned shuffled k-RR collection: ``n`` users, ``k`` categories, local ``eps0``, ``rounds``.

    Args:
        k: Number of categories (integer >= 2).
        eps0: Local privacy parameter (finite, > 0).
        n: Number of users in one shuffled batch (integer >= 2).
        delta: Target delta in (0, 1) for the reported epsilons.
        rounds: Number of collection rounds composed (integer >= 1).
        target_epsilon: Central epsilon the calibration rows aim for (finite, > 0).
        calibrate_rounds: Also calibrate the ``rounds``-fold composition (one pessimistic PLD per
            bisection step: tens of seconds); the single round is always calibrated.

    Raises:
        ParameterError: On any invalid parameter.

    Example:
        >>> Deployment(k=10, eps0=2.0, n=10_000, delta=1e-6)
        Deployment(k=10, eps0=2.0, n=10000, delta=1e-06, rounds=1, target_epsilon=1.0, calibrate_rounds=False)
    """

    k: int = 10
    eps0: float = 2.0
    n: int = 10_000
    delta: float = 1e-6
    rounds: int = 1
    target_epsilon: float = 1.0
    calibrate_rounds: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_int("k", self.k, minimum=2))
        object.__setattr__(self, "eps0", check_real("eps0", self.eps0, low=0.0, low_open=True))
        object.__setattr__(self, "n", check_int("n", self.n, minimum=2))
        object.__setattr__(self, "delta", check_delta("delta", self.delta))
        object.__setattr__(self, "rounds", check_int("rounds", self.rounds, minimum=1))
        object.__setattr__(
            self, "target_epsilon", check_real("target_epsilon", self.target_epsilon, low=0.0, low_open=True)
        )
        if not isinstance(self.calibrate_rounds, bool):
            raise ParameterError(f"calibrate_rounds must be a bool, got {self.calibrate_rounds!r}")


@dataclass(frozen=True)
class ReportSection:
    """A titled block of (label, value, note) rows."""

    title: str
    rows: tuple[tuple[str, str, str], ...] = field(default_factory=tuple)


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
