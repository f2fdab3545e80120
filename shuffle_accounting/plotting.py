"""delta(eps) curves for ``shuffle-accounting report --plot FILE.png``.

matplotlib is optional (the ``plot`` extra) and imported only here, through
``matplotlib.figure.Figure`` so no global pyplot state is touched.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ._validation import ParameterError
from .report import Deployment

__all__ = ["delta_curves", "plot_delta_curves"]


def _literature_delta_functions(dep: Deployment) -> dict[str, Callable[[float], float]]:
    from . import literature as lit  # noqa: PLC0415

    k, e0, n = dep.k, dep.eps0, dep.n
    return {
        "Erlingsson et al. 2019": lambda e: lit.erlingsson2019_delta(e, e0, n),
        "Balle et al. 2019 (k-RR thm)": lambda e: lit.balle2019_krr_delta(e, k, e0, n),
        "Balle et al. 2019 (Hoeffding)": lambda e: lit.balle2019_hoeffding_delta(e, k, e0, n),
        "Balle et al. 2019 (Bennett)": lambda e: lit.balle2019_bennett_delta(e, k, e0, n),
        "FMT 2021 (closed form)": lambda e: lit.fmt2021_closed_form_delta(e, e0, n),
        "FMT 2021 (clones, exact)": lambda e: lit.fmt2021_clone_delta(e, e0, n),
        "FMT 2023 (k-RR clones, exact)": lambda e: lit.fmt2023_krr_clone_delta(e, e0, n),
    }


def delta_curves(dep: Deployment, num: int = 40) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Evaluate every curve on a common eps grid in (0, eps0).

    Points where a literature bound is not valid are NaN in its array (the plot leaves a gap);
    the certified and lower curves are defined everywhere.

    Args:
        dep: The deployment.
        num: Number of grid points.

    Returns:
        ``(eps_grid, {label: delta_values})``.

    Example:
        >>> eps, curves = delta_curves(Deployment(k=3, eps0=1.0, n=100), num=5)
        >>> bool(np.all(curves["lower bound (concrete datasets)"] <= curves["certified (privacy blanket)"]))
        True
    """
    from .shuffled_krr.lower import lower_log_delta  # noqa: PLC0415
    from .shuffled_krr.mechanism import ShuffledKRR  # noqa: PLC0415

    eps = np.linspace(0.0, dep.eps0, num + 1)[1:-1] if num > 1 else np.array([dep.eps0 / 2])
    curves = {
        "certified (privacy blanket)": np.exp(ShuffledKRR(dep.k, dep.eps0, dep.n).log_delta(eps)),
        "lower bound (concrete datasets)": np.exp(lower_log_delta(eps, dep.k, dep.eps0, dep.n)),
    }
    for label, fn in _literature_delta_functions(dep).items():
        vals = np.full(eps.shape, np.nan)
        for i, e in enumerate(eps):
            try:
                vals[i] = min(float(fn(float(e))), 1.0)
            except ParameterError:
                continue
        curves[label] = vals
    return eps, curves


def plot_delta_curves(dep: Deployment, path: str, num: int = 40) -> None:
    """Write the delta(eps) curves (log scale) of :func:`delta_curves` to ``path``.

    Raises:
        ImportError: If matplotlib is missing (install ``shuffle-accounting[plot]``).
    """
    try:
        from matplotlib.figure import Figure  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - exercised by the missing-extra test
        raise ImportError("plotting needs matplotlib: pip install 'shuffle-accounting[plot]'") from exc
    eps, curves = delta_curves(dep, num)
    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    for label, vals in curves.items():
        style = "-" if "certified" in label else ("--" if "lower" in label else ":")
        width = 2.2 if ("certified" in label or "lower" in label) else 1.2
        shown = np.where(vals > 0, vals, np.nan)
        if np.any(np.isfinite(shown)):
            ax.semilogy(eps, shown, style, lw=width, label=label)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("delta(epsilon)")
    ax.set_title(f"shuffled k-RR: k={dep.k}, eps0={dep.eps0:g}, n={dep.n}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
