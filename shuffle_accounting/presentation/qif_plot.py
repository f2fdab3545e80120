"""Fig. 2 / Fig. 4-style plots: single-target vulnerability against the number of users.

Jurado, Gonze, Alvim, Palamidessi, *Analyzing the Shuffle Model through the Lens of Quantitative
Information Flow*, Fig. 2 (``k = 2``) and Fig. 4 (``k = 5``): dotted lines ``V[N] = p``, solid
lines ``V[NS]`` for several ``p`` (``p = 1`` is the shuffle alone ``V[S]``). matplotlib is
imported lazily; install the ``plot`` extra (``pip install "shuffle-accounting[plot]"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._validation import ParameterError, check_int
from ..qif._common import check_p
from ..qif.vulnerability import krr_shuffle_vulnerability

__all__ = ["vulnerability_curves", "plot_vulnerability_curves"]


def vulnerability_curves(
    ns: Sequence[int], k: Any, ps: Sequence[float]
) -> dict[float, tuple[list[float], list[float]]]:
    """The data behind the plot: ``{p: (V[N] values, V[NS] values)}`` over ``ns``.

    Args:
        ns: Numbers of users (integers >= 1).
        k: Number of values (integer >= 2).
        ps: Keep probabilities in ``[1/k, 1]``.

    Returns:
        For each ``p``, the constant ``V[N] = p`` and ``V[NS]`` at each ``n``.

    Raises:
        ParameterError: On invalid arguments or empty ``ns``/``ps``.

    Example:
        >>> data = vulnerability_curves([1, 2], 2, [0.9])
        >>> [round(v, 6) for v in data[0.9][1]]
        [0.9, 0.7]
    """
    k = check_int("k", k, minimum=2)
    ns = [check_int("ns", n, minimum=1) for n in ns]
    ps = [float(check_p(p, k)) for p in ps]
    if not ns or not ps:
        raise ParameterError("ns and ps must be non-empty sequences")
    return {p: ([p] * len(ns), [krr_shuffle_vulnerability(k, p, n) for n in ns]) for p in ps}


def plot_vulnerability_curves(
    ns: Sequence[int], k: Any, ps: Sequence[float], *, path: str | None = None, ax: Any = None
) -> Any:
    """Plot ``V[N]`` (dotted) and ``V[NS]`` (solid) against ``n`` for each ``p``, like Fig. 2/4.

    Args:
        ns: Numbers of users (integers >= 1), the x axis.
        k: Number of values (integer >= 2).
        ps: Keep probabilities in ``[1/k, 1]`` (include ``1.0`` for the shuffle alone).
        path: If given, the figure is saved there (any matplotlib format).
        ax: Existing matplotlib axes to draw on; a new figure otherwise.

    Returns:
        The matplotlib ``Axes``.

    Raises:
        ImportError: If matplotlib is not installed (install the ``plot`` extra).
        ParameterError: On invalid arguments.

    Example:
        >>> ax = plot_vulnerability_curves([1, 2, 4, 8], 2, [1.0, 0.9])  # doctest: +SKIP
    """
    data = vulnerability_curves(ns, k, ps)
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            'plot_vulnerability_curves needs matplotlib: pip install "shuffle-accounting[plot]"'
        ) from exc
    ns = [int(n) for n in ns]
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for idx, (p, (vn, vns)) in enumerate(data.items()):
        color = f"C{idx % 10}"
        label = "S (shuffle only)" if p == 1.0 else f"NS, p={p:g}"
        ax.plot(ns, vns, "-", color=color, label=label)
        ax.plot(ns, vn, ":", color=color, label=f"N, p={p:g}")
    ax.axhline(1.0 / int(k), color="grey", lw=0.8, label="prior 1/k")
    ax.set_xlabel("number of users n")
    ax.set_ylabel("single-target vulnerability")
    ax.set_title(f"Posterior vulnerability, k = {int(k)}, uniform prior")
    ax.legend(fontsize="small")
    if path is not None:
        ax.figure.savefig(path, bbox_inches="tight")
    return ax
