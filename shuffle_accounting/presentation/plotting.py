"""Figures of ``shuffle-accounting report --plot FILE.png|.svg``: delta(eps) curves and the what-if grid.

matplotlib is optional (the ``plot`` extra) and imported only here, through
``matplotlib.figure.Figure`` so no global pyplot state is touched.

The delta(eps) figure shows the range that matters for the deployment: delta from
``target delta / 1e6`` to 1 (deltas above 1 are meaningless and literature curves are capped
there) and eps from 0 to where the certified curve has fallen to that floor; the target delta is a
horizontal line, the certified (upper bound) and exhibited (lower bound) epsilon at the target
are marked and annotated, and the ``rounds``-fold composition is drawn when ``rounds > 1``.

Every line is a :class:`~shuffle_accounting.curves.PrivacyCurve` drawn by :func:`plot_curves`
(any list of curves on any eps grid, into any matplotlib ``Axes``): the line style and the legend
say which way each curve is sound. The report's figure reads the report's own cached curves
(:class:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves`), so ``--plot`` recomputes
nothing the report printed. :func:`delta_curves` (arrays) is a thin wrapper of the same path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import ParameterError
from .curve_rows import DeploymentCurves, NamedCurve, curve_values
from .report import Deployment

__all__ = [
    "plot_curves",
    "deployment_plot_curves",
    "delta_curves",
    "plot_delta_curves",
    "plot_whatif",
    "whatif_path",
    "PLOT_SUFFIXES",
]

#: Image formats ``--plot`` accepts.
PLOT_SUFFIXES = (".png", ".svg")

_STYLES = ["-", "--", "-.", ":"]
_MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*", "P"]
#: A curve's ``bound`` -> its line style and legend suffix in :func:`plot_curves`.
_BOUND_STYLE = {
    "upper": ("-", "upper bound"),
    "lower": ("--", "lower bound (exhibited)"),
    "estimate": (":", "estimate, no guarantee"),
    "as-printed": ("-.", "as printed, no guarantee"),
}
#: Colours of the emphasised curves (:func:`plot_curves` ``primary``), by bound.
_PRIMARY_COLOUR = {"upper": "black", "lower": "tab:red", "estimate": "tab:cyan", "as-printed": "tab:grey"}


def _named(curves: Sequence[Any]) -> list[NamedCurve]:
    out = []
    for c in curves:
        if isinstance(c, NamedCurve):
            out.append(c)
        else:
            out.append(NamedCurve(str(getattr(c, "name", "") or type(c).__name__), c))
    return out


def plot_curves(
    curves: Sequence[Any],
    eps_grid: Any,
    *,
    ax: Any,
    floor: float | None = None,
    primary: int = 0,
) -> dict[str, np.ndarray]:
    """Draw ``delta(eps)`` of each privacy curve on ``ax`` (log scale), the bound direction in the style.

    Each curve is evaluated on ``eps_grid`` by
    :func:`~shuffle_accounting.presentation.curve_rows.curve_values` (NaN where it is not valid,
    capped at 1). The line style says which way it is sound (upper: solid, lower: dashed, estimate:
    dotted, as printed: dash-dot) and the legend entry ends with it ("— upper bound", "— lower
    bound (exhibited)", ...). The first ``primary`` curves are drawn thick (black for an upper
    curve, red for a lower one); the others in the colour cycle with markers. Values below
    ``floor / 1000`` are left out (a log axis).

    Args:
        curves: :class:`~shuffle_accounting.presentation.curve_rows.NamedCurve` entries or bare
            :class:`~shuffle_accounting.curves.PrivacyCurve` objects (labelled by their ``name``
            attribute or class name). Curve-less entries are skipped.
        eps_grid: The eps values (finite, ``>= 0``).
        ax: A matplotlib ``Axes``.
        floor: Smallest delta of interest (default: none).
        primary: How many leading curves to emphasise.

    Returns:
        ``{label: delta values}`` as drawn (before the floor).

    Raises:
        ParameterError: If a curve does not follow the protocol.

    Example:
        >>> from matplotlib.figure import Figure
        >>> from shuffle_accounting.shuffled_krr import ShuffledKRR
        >>> from shuffle_accounting.shuffled_krr.curves import ExhibitedKRRCurve
        >>> ax = Figure().add_subplot()
        >>> vals = plot_curves([NamedCurve("certified", ShuffledKRR(3, 1.0, 100)),
        ...                     NamedCurve("exhibited", ExhibitedKRRCurve(3, 1.0, 100))],
        ...                    np.linspace(0.1, 0.9, 5), ax=ax, primary=2)
        >>> ax.get_legend_handles_labels()[1]
        ['certified — upper bound', 'exhibited — lower bound (exhibited)']
    """
    named = _named(curves)
    eps = np.asarray(eps_grid, dtype=float)
    values = curve_values(named, eps)
    cut = -np.inf if floor is None else float(floor) * 1e-3
    j = 0
    for i, nc in enumerate(named):
        if nc.curve is None:
            continue
        vals = values[nc.label]
        shown = np.where(vals >= cut, vals, np.nan)
        if not np.any(np.isfinite(shown) & (shown > 0)):
            continue
        style, suffix = _BOUND_STYLE[nc.bound]
        label = f"{nc.label} — {suffix}"
        if i < primary:
            ax.semilogy(eps, shown, style, color=_PRIMARY_COLOUR[nc.bound], lw=2.4, label=label, zorder=5)
        else:
            ax.semilogy(
                eps,
                shown,
                style,
                color=f"C{j % 10}",
                lw=1.4,
                marker=_MARKERS[j % len(_MARKERS)],
                markevery=max(1, len(eps) // 8),
                ms=5,
                label=label,
            )
            j += 1
    return values


def _eps_range(dep: Deployment, curves: DeploymentCurves | None = None) -> float:
    """Right end of the eps axis: where the certified curve reaches ``delta / 1e6`` (at most eps0)."""
    floor = max(dep.delta * 1e-6, 1e-300)
    cert = (curves or DeploymentCurves(dep)).certified
    return min(dep.eps0, 1.15 * cert.epsilon(floor))


def deployment_plot_curves(dep: Deployment, *, curves: DeploymentCurves | None = None) -> list[NamedCurve]:
    """The one-round curves of the delta(eps) figure of ``dep``: certified, exhibited, every literature bound.

    The certified curve is ``ShuffledKRR`` (method ``"auto"``; labelled "exact worst case" where
    that is what it certifies with, else "privacy blanket"), the exhibited one the searched
    concrete datasets (:attr:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves.searched_lower`,
    cheap on a grid), then :meth:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves.literature`.

    Example:
        >>> [c.label for c in deployment_plot_curves(Deployment(k=3, eps0=1.0, n=100))][:2]
        ['certified (exact worst case)', 'exhibited (concrete datasets)']
        >>> deployment_plot_curves(Deployment(k=3, eps0=1.0, n=1000))[0].label
        'certified (privacy blanket)'
    """
    dc = curves if curves is not None and curves.deployment == dep else DeploymentCurves(dep)
    wc = dc.certified.curve.auto_method == "worst-case"
    return [
        NamedCurve("certified (exact worst case)" if wc else "certified (privacy blanket)", dc.certified),
        NamedCurve("exhibited (concrete datasets)", dc.searched_lower),
        *dc.literature(),
    ]


def delta_curves(
    dep: Deployment, num: int = 40, *, eps_max: float | None = None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Evaluate every curve of :func:`deployment_plot_curves` on a common eps grid in ``(0, eps_max)``.

    Thin wrapper of :func:`~shuffle_accounting.presentation.curve_rows.curve_values`: points where a
    literature bound is not valid are NaN in its array (the plot leaves a gap); deltas are capped at
    1; the certified and lower curves are defined everywhere. Literature curves are keyed by their
    registry names (:data:`~shuffle_accounting.literature.registry.LITERATURE_CURVES`).

    Args:
        dep: The deployment.
        num: Number of grid points.
        eps_max: Right end of the grid (default where the certified delta reaches
            ``dep.delta / 1e6``, at most ``eps0``).

    Returns:
        ``(eps_grid, {label: delta_values})``.

    Example:
        >>> eps, curves = delta_curves(Deployment(k=3, eps0=1.0, n=100), num=5)
        >>> bool(np.all(curves["exhibited (concrete datasets)"] <= curves["certified (exact worst case)"]))
        True
    """
    dc = DeploymentCurves(dep)
    top = _eps_range(dep, dc) if eps_max is None else float(eps_max)
    eps = np.linspace(0.0, top, num + 1)[1:-1] if num > 1 else np.array([top / 2])
    return eps, curve_values(deployment_plot_curves(dep, curves=dc), eps)


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


def plot_delta_curves(
    dep: Deployment, path: str, num: int = 60, *, curves: DeploymentCurves | None = None
) -> None:
    """Write the delta(eps) figure of ``dep`` (log scale) to ``path`` (.png or .svg).

    The curves of :func:`deployment_plot_curves` drawn by :func:`plot_curves`, the target delta, the
    certified and exhibited epsilon at it (the report's rows: the same cached curves when ``curves``
    is the report's), and (``rounds > 1``) the composed curve.

    Args:
        dep: The deployment.
        path: Output image path.
        num: Number of grid points.
        curves: The report's :class:`~shuffle_accounting.presentation.curve_rows.DeploymentCurves`
            of ``dep`` (nothing the report computed is computed again), or ``None``.

    Raises:
        ImportError: If matplotlib is missing (install ``shuffle-accounting[plot]``).
        ParameterError: If ``path`` is not a writable .png/.svg path.
    """
    path = check_plot_path(path)
    figure = _figure_class()
    dc = curves if curves is not None and curves.deployment == dep else DeploymentCurves(dep)
    eps_cert = dc.certified.epsilon(dep.delta)
    eps_low = dc.exhibited.epsilon(dep.delta)
    top = _eps_range(dep, dc)
    composed = None
    if dep.rounds > 1:
        comp = dc.composed()
        eps_comp = comp.epsilon(dep.delta)
        top = max(top, min(1.3 * eps_comp, dep.rounds * dep.eps0))
        composed = (comp, eps_comp)
    eps = np.linspace(0.0, top, num + 1)[1:-1] if num > 1 else np.array([top / 2])
    floor = max(dep.delta * 1e-6, 1e-300)

    fig = figure(figsize=(12, 5.5), layout="constrained")
    ax = fig.add_subplot()
    plot_curves(deployment_plot_curves(dep, curves=dc), eps, ax=ax, floor=floor, primary=2)
    if composed is not None:
        comp, eps_comp = composed
        vals = np.asarray(comp.delta(eps), dtype=float)
        ax.semilogy(
            eps,
            np.where(vals >= floor * 1e-3, vals, np.nan),
            "-",
            color="tab:cyan",
            lw=2.2,
            label=f"certified, {dep.rounds} rounds composed (PLD) — upper bound",
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
