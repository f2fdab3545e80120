"""Figures of ``shuffle-accounting report --plot FILE.png|.svg``: delta(eps) curves and the what-if grid.

matplotlib is optional (the ``plot`` extra) and imported only here, through
``matplotlib.figure.Figure`` so no global pyplot state is touched.

The delta(eps) figure shows the range that matters for the deployment: delta from
``target delta / 1e6`` to 1 (deltas above 1 are meaningless and literature curves are capped
there) and eps from 0 to where the certified curve has fallen to that floor; the target delta is a
horizontal line, the certified (upper bound) and exhibited (lower bound) epsilon at the target
are marked and annotated, and the ``rounds``-fold composition is drawn when ``rounds > 1``.
Every curve has its own colour and line style.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import ParameterError
from .report import Deployment

__all__ = ["delta_curves", "plot_delta_curves", "plot_whatif", "whatif_path", "PLOT_SUFFIXES"]

#: Image formats ``--plot`` accepts.
PLOT_SUFFIXES = (".png", ".svg")

_STYLES = ["-", "--", "-.", ":"]
_MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*", "P"]


def _literature_delta_functions(dep: Deployment) -> dict[str, Callable[[float], float]]:
    from .. import literature as lit  # noqa: PLC0415

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


def _eps_range(dep: Deployment) -> float:
    """Right end of the eps axis: where the certified curve reaches ``delta / 1e6`` (at most eps0)."""
    from ..shuffled_krr.mechanism import ShuffledKRR  # noqa: PLC0415

    floor = max(dep.delta * 1e-6, 1e-300)
    return min(dep.eps0, 1.15 * ShuffledKRR(dep.k, dep.eps0, dep.n).epsilon(floor))


def delta_curves(
    dep: Deployment, num: int = 40, *, eps_max: float | None = None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Evaluate every curve on a common eps grid in ``(0, eps_max)`` (default: the useful range).

    Points where a literature bound is not valid are NaN in its array (the plot leaves a gap);
    literature deltas are capped at 1; the certified and lower curves are defined everywhere.

    Args:
        dep: The deployment.
        num: Number of grid points.
        eps_max: Right end of the grid (default where the certified delta reaches
            ``dep.delta / 1e6``, at most ``eps0``).

    Returns:
        ``(eps_grid, {label: delta_values})``.

    Example:
        >>> eps, curves = delta_curves(Deployment(k=3, eps0=1.0, n=100), num=5)
        >>> bool(np.all(curves["lower bound (concrete datasets)"] <= curves["certified (privacy blanket)"]))
        True
    """
    from ..shuffled_krr.lower import lower_log_delta  # noqa: PLC0415
    from ..shuffled_krr.mechanism import ShuffledKRR  # noqa: PLC0415

    top = _eps_range(dep) if eps_max is None else float(eps_max)
    eps = np.linspace(0.0, top, num + 1)[1:-1] if num > 1 else np.array([top / 2])
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


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - exercised by the missing-extra test
        raise ImportError("plotting needs matplotlib: pip install 'shuffle-accounting[plot]'") from exc
    return Figure


def check_plot_path(path: Any) -> str:
    """Check an output image path before any computation: suffix .png/.svg, existing writable folder.

    Raises:
        ParameterError: If the path cannot be written.

    Example:
        >>> check_plot_path("/nonexistent-folder/a.png")
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: plot folder does not exist: '/nonexistent-folder'
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"plot must be a file path, got {path!r}")
    out = os.fspath(path)
    suffix = os.path.splitext(out)[1].lower()
    if suffix not in PLOT_SUFFIXES:
        raise ParameterError(f"plot must end in one of {PLOT_SUFFIXES}, got {out!r}")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise ParameterError(f"plot folder does not exist: {os.path.dirname(out) or folder!r}")
    if not os.access(folder, os.W_OK):
        raise ParameterError(f"plot folder is not writable: {folder!r}")
    return out


def whatif_path(path: str) -> str:
    """Where the what-if figure goes next to ``path``: ``curves.png`` -> ``curves-whatif.png``.

    Example:
        >>> whatif_path("out/curves.svg")
        'out/curves-whatif.svg'
    """
    root, ext = os.path.splitext(path)
    return f"{root}-whatif{ext}"


def plot_delta_curves(dep: Deployment, path: str, num: int = 60) -> None:
    """Write the delta(eps) curves of :func:`delta_curves` (log scale) to ``path`` (.png or .svg).

    The target delta, the certified and exhibited epsilon at it, and (``rounds > 1``) the composed
    curve of :class:`~shuffle_accounting.shuffled_krr.accountant.ShuffleAccountant` are drawn.

    Raises:
        ImportError: If matplotlib is missing (install ``shuffle-accounting[plot]``).
        ParameterError: If ``path`` is not a writable .png/.svg path.
    """
    from ..shuffled_krr.lower import lower_epsilon  # noqa: PLC0415
    from ..shuffled_krr.mechanism import ShuffledKRR  # noqa: PLC0415

    path = check_plot_path(path)
    figure = _figure_class()
    eps_cert = ShuffledKRR(dep.k, dep.eps0, dep.n).epsilon(dep.delta)
    eps_low = lower_epsilon(dep.delta, dep.k, dep.eps0, dep.n)
    top = _eps_range(dep)
    composed = None
    if dep.rounds > 1:
        from ..shuffled_krr.accountant import ShuffleAccountant, ShuffledKRRDpEvent  # noqa: PLC0415

        acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(k=dep.k, eps0=dep.eps0, n=dep.n), dep.rounds)
        eps_comp = acc.get_epsilon(dep.delta)
        top = max(top, min(1.3 * eps_comp, dep.rounds * dep.eps0))
        composed = (acc, eps_comp)
    eps, curves = delta_curves(dep, num, eps_max=top)
    floor = max(dep.delta * 1e-6, 1e-300)

    fig = figure(figsize=(12, 5.5), layout="constrained")
    ax = fig.add_subplot()
    for i, (label, vals) in enumerate(curves.items()):
        shown = np.where(vals >= floor * 1e-3, vals, np.nan)
        if not np.any(np.isfinite(shown)):
            continue
        if "certified" in label:
            ax.semilogy(eps, shown, "-", color="black", lw=2.6, label=label + " — upper bound", zorder=5)
        elif "lower" in label:
            ax.semilogy(eps, shown, "--", color="tab:red", lw=2.2, label=label + " — lower bound", zorder=5)
        else:
            j = i - 2
            ax.semilogy(
                eps,
                shown,
                _STYLES[j % 4],
                color=f"C{j % 10}",
                lw=1.4,
                marker=_MARKERS[j % len(_MARKERS)],
                markevery=max(1, num // 8),
                ms=5,
                label=label + " (published upper bound)",
            )
    if composed is not None:
        acc, eps_comp = composed
        vals = np.array([acc.get_delta(float(e)) for e in eps])
        ax.semilogy(
            eps,
            np.where(vals >= floor * 1e-3, vals, np.nan),
            "-",
            color="tab:cyan",
            lw=2.2,
            label=f"certified, {dep.rounds} rounds composed (PLD)",
        )
        ax.axvline(eps_comp, color="tab:cyan", lw=1, ls=":")
        ax.annotate(
            f"{dep.rounds} rounds: eps <= {eps_comp:.4g}",
            (eps_comp, dep.delta),
            xytext=(6, -40),
            textcoords="offset points",
            color="darkcyan",
            fontsize=9,
            fontweight="bold",
        )
    ax.axhline(dep.delta, color="grey", lw=1.2, ls="-.", label=f"target delta = {dep.delta:.3g}")
    ax.plot([eps_cert], [dep.delta], "o", color="black", ms=8, zorder=6)
    ax.plot([eps_low], [dep.delta], "v", color="tab:red", ms=8, zorder=6)
    ax.annotate(
        f"certified eps <= {eps_cert:.5g}",
        (eps_cert, dep.delta),
        xytext=(8, 10),
        textcoords="offset points",
        fontsize=9,
        fontweight="bold",
    )
    ax.annotate(
        f"exhibited eps >= {eps_low:.5g}",
        (eps_low, dep.delta),
        xytext=(-12, -34),
        textcoords="offset points",
        fontsize=9,
        color="tab:red",
        ha="right",
        arrowprops={"arrowstyle": "->", "color": "tab:red", "lw": 0.8},
    )
    ax.set_xlim(0.0, top)
    ax.set_ylim(floor, 1.5)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("delta(epsilon)  (log scale)")
    ax.set_title(f"Shuffled k-RR, one round unless noted: k = {dep.k}, eps0 = {dep.eps0:g}, n = {dep.n}")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.savefig(path, dpi=120)


def plot_whatif(grid: Any, path: str) -> None:
    """Write the what-if figure of a :class:`~shuffle_accounting.presentation.whatif.WhatIfGrid` to ``path``.

    Three panels against ``n`` (log scales): (a) certified epsilon for each eps0 (and the composed
    rounds) with the target epsilon; (b) the largest eps0 meeting the target; (c) the standard
    deviation of a debiased frequency, shuffle+INV against the central Gaussian baseline.

    Raises:
        ImportError: If matplotlib is missing (install ``shuffle-accounting[plot]``).
        ParameterError: If ``path`` is not a writable .png/.svg path.
    """
    path = check_plot_path(path)
    figure = _figure_class()
    dep = grid.deployment
    ns = np.array(grid.ns, dtype=float)

    def arr(s: Any) -> np.ndarray:
        return np.array([np.nan if v is None else v for v in s.values], dtype=float)

    fig = figure(figsize=(15, 4.8), layout="constrained")
    ax1, ax2, ax3 = fig.subplots(1, 3)
    i = 0
    for s in grid.series:
        if s.quantity != "certified epsilon":
            continue
        lab = f"eps0 = {s.eps0:g}" + (f", {s.rounds} rounds composed" if s.rounds > 1 else ", one round")
        ax1.loglog(
            ns,
            arr(s),
            _STYLES[i % 4],
            marker=_MARKERS[i % len(_MARKERS)],
            color=f"C{i % 10}",
            lw=2 if s.eps0 == dep.eps0 else 1.4,
            label=lab,
        )
        i += 1
    ax1.axhline(
        dep.target_epsilon, color="grey", ls="-.", lw=1.2, label=f"target eps = {dep.target_epsilon:g}"
    )
    ax1.axvline(dep.n, color="grey", ls=":", lw=1, label=f"deployment n = {dep.n}")
    ax1.set_title(f"(a) certified epsilon (upper bound) at delta = {dep.delta:.3g}")
    ax1.set_xlabel("users per batch n")
    ax1.set_ylabel("epsilon")
    ax1.legend(fontsize=8)
    cal = grid.find("largest eps0 meeting target")
    if cal is not None:
        ax2.semilogx(ns, arr(cal), "-", marker="o", color="C0", lw=2, label="largest eps0 (rounded down)")
        ax2.axhline(dep.eps0, color="grey", ls=":", lw=1, label=f"deployment eps0 = {dep.eps0:g}")
        ax2.axvline(dep.n, color="grey", ls=":", lw=1)
        ax2.legend(fontsize=8)
        if any(v is None for v in cal.values):
            ax2.text(
                0.02,
                0.02,
                "missing points: every eps0 up to the search cap meets the target",
                transform=ax2.transAxes,
                fontsize=7,
                color="grey",
            )
    ax2.set_title(f"(b) eps0 meeting eps = {dep.target_epsilon:g}, delta = {dep.delta:.3g}, one round")
    ax2.set_xlabel("users per batch n")
    ax2.set_ylabel("local eps0")
    shf = grid.find("shuffle+INV std (worst category)")
    gau = grid.find("central Gaussian std")
    if shf is not None:
        ax3.loglog(
            ns,
            arr(shf),
            "-",
            marker="o",
            color="C1",
            lw=2,
            label=f"shuffle+INV, eps0 = {dep.eps0:g} (worst category)",
        )
    if gau is not None:
        ax3.loglog(
            ns,
            arr(gau),
            "--",
            marker="s",
            color="C2",
            lw=2,
            label="central Gaussian at the same (eps, delta)",
        )
    ax3.axvline(dep.n, color="grey", ls=":", lw=1)
    ax3.set_title("(c) std of a debiased frequency, one round")
    ax3.set_xlabel("users per batch n")
    ax3.set_ylabel("standard deviation")
    ax3.legend(fontsize=8)
    for ax in (ax1, ax2, ax3):
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(f"What-if for shuffled k-RR, k = {dep.k}", fontsize=11)
    fig.savefig(path, dpi=110)
