"""Figure of a simulation: TV distance against n for shuffle, shuffle+INV and the Gaussian baseline.

The layout follows Biswas, Jung, Palamidessi, *Tight Differential Privacy Guarantees for the
Shuffle Model with k-Randomized Response*, Fig. 2: (a) all three methods, (b) the Gaussian baseline
and shuffle+INV only. matplotlib is imported lazily (extra ``plot``).
"""

from __future__ import annotations

import os
from typing import Any

from .._validation import ParameterError
from ..runtime.simulation import METHODS, SimulationResult

__all__ = ["plot_simulation"]

_COLORS = {"shuffle": "C0", "shuffle+INV": "C1", "gaussian": "C2"}
_STYLES = {"shuffle": "-", "shuffle+INV": "--", "gaussian": "-."}
_LABELS = {"shuffle": "shuffle (raw)", "shuffle+INV": "shuffle+INV", "gaussian": "central Gaussian"}


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure  # noqa: PLC0415 - optional dependency
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "plotting needs matplotlib; install it with `pip install 'shuffle-accounting[plot]'`"
        ) from exc
    return Figure


def plot_simulation(result: SimulationResult, path: str | os.PathLike) -> str:
    """Write the mean TV distance (with min-max bars over trials) against ``n`` to ``path``.

    Panel (a) compares all three methods; panel (b) zooms on shuffle+INV and the central
    Gaussian baseline. Markers are the mean over the trials, error bars span the smallest to the
    largest TV distance observed over the trials (said in the figure's caption).

    Args:
        result: A :class:`~shuffle_accounting.runtime.simulation.SimulationResult`.
        path: Output image file (format from the extension, e.g. ``.png``).

    Returns:
        The path written, as a string.

    Raises:
        ParameterError: If ``result`` is not a SimulationResult.
        ImportError: If matplotlib is not installed.

    Example:
        >>> import tempfile, pathlib
        >>> from shuffle_accounting.runtime.simulation import simulate
        >>> res = simulate("uniform", 3, 1.0, [100, 1000], trials=2, rng=0)
        >>> out = plot_simulation(res, pathlib.Path(tempfile.mkdtemp()) / "fig.png")
        >>> pathlib.Path(out).stat().st_size > 0
        True
    """
    if not isinstance(result, SimulationResult):
        raise ParameterError(f"result must be a SimulationResult, got {type(result).__name__}")
    fig = _figure_class()(figsize=(10, 4), layout="constrained")  # no pyplot: no global state
    axes = fig.subplots(1, 2)
    panels = (METHODS, ("shuffle+INV", "gaussian"))
    tags = ("(a) all methods", "(b) shuffle+INV vs central Gaussian (zoom)")
    for ax, methods, tag in zip(axes, panels, tags):
        for m in methods:
            tv = result.tv[m]
            mean = tv.mean(axis=1)
            err = [mean - tv.min(axis=1), tv.max(axis=1) - mean]
            ax.errorbar(
                result.ns,
                mean,
                yerr=err,
                marker="o",
                capsize=3,
                label=_LABELS[m],
                color=_COLORS[m],
                ls=_STYLES[m],
            )
        ax.set_xscale("log")
        ax.set_xlabel("n (users per batch)")
        ax.set_ylabel("TV distance to the true distribution")
        ax.set_title(tag)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend()
    trials = result.tv[METHODS[0]].shape[1]
    fig.suptitle(
        f"Simulation (NOT private): k={result.k}, eps0={result.eps0:.3g}, delta={result.delta:.2g}; "
        f"markers = mean over {trials} trials, bars = min to max over the trials"
    )
    out = os.fspath(path)
    fig.savefig(out, dpi=120)
    return out
