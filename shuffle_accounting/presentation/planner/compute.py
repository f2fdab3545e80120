"""What the web planner computes, independent of the web framework (testable without a server).

Every form field arrives as text; :func:`parse_params` validates all of them (the error names the
field, its range and the value) before anything is computed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..._validation import ParameterError, check_choice
from ..report import N_MAX, Deployment

__all__ = ["FIELDS", "parse_params", "plan", "whatif", "script"]

#: Form fields of the page: name -> (kind, default).
FIELDS: dict[str, tuple[str, str]] = {
    "k": ("int", "10"),
    "n": ("int", "10000"),
    "eps0": ("real", "2"),
    "target_epsilon": ("real", "1"),
    "rounds": ("int", "1"),
    "delta": ("real", "1e-6"),
    "mode": ("choice", "eps0"),
}


def _number(name: str, text: Any) -> float:
    if not isinstance(text, str):
        raise ParameterError(f"{name} must be given as text, got {text!r}")
    try:
        value = float(text.strip())
    except ValueError:
        raise ParameterError(f"{name} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ParameterError(f"{name} must be a finite number, got {text!r}")
    return value


def parse_params(query: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the page's fields (strings) into typed parameters.

    ``mode`` is ``"eps0"`` (the user sets eps0) or ``"target"`` (the user sets a target epsilon
    and the planner calibrates the largest eps0 meeting it).

    Raises:
        ParameterError: On a missing, unknown or invalid field (the message names the field).

    Example:
        >>> parse_params({"k": "3", "n": "1e3", "eps0": "1", "rounds": "2", "delta": "1e-6"})["deployment"].n
        1000
        >>> parse_params({"n": "abc"})
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: n must be a number, got 'abc'
    """
    unknown = sorted(set(query) - set(FIELDS))
    if unknown:
        raise ParameterError(f"unknown fields {unknown}; expected some of {sorted(FIELDS)}")
    out: dict[str, Any] = {}
    for name, (kind, default) in FIELDS.items():
        text = query.get(name, default)
        if kind == "choice":
            out[name] = check_choice(name, text, ("eps0", "target"))
        else:
            out[name] = _number(name, text)
    mode = out.pop("mode")
    eps0 = out["eps0"] if mode == "eps0" else 1.0  # replaced by the calibrated value below
    dep = Deployment(
        k=out["k"],
        eps0=eps0,
        n=out["n"],
        delta=out["delta"],
        rounds=out["rounds"],
        target_epsilon=out["target_epsilon"],
    )
    return {"deployment": dep, "mode": mode}


def _calibrated(dep: Deployment) -> tuple[Deployment, dict[str, Any]]:
    from ...shuffled_krr import calibration  # noqa: PLC0415

    try:
        rtol = 1e-3 if dep.rounds == 1 else 1e-2  # a composition costs one PLD per bisection step
        e0 = calibration.calibrate_eps0(
            dep.k, dep.n, dep.target_epsilon, dep.delta, rounds=dep.rounds, rtol=rtol
        )
        capped = False
    except ParameterError:  # every eps0 up to the cap meets the target
        e0, capped = float(calibration.EPS0_CAP), True
    e0 = min(e0, 50.0)
    new = Deployment(
        k=dep.k, eps0=e0, n=dep.n, delta=dep.delta, rounds=dep.rounds, target_epsilon=dep.target_epsilon
    )
    return new, {"eps0": e0, "capped": capped, "bound": "lower"}


def _resolved(query: Mapping[str, Any]) -> tuple[Deployment, dict[str, Any] | None]:
    parsed = parse_params(query)
    dep: Deployment = parsed["deployment"]
    if parsed["mode"] == "target":
        return _calibrated(dep)
    return dep, None


def whatif(query: Mapping[str, Any]) -> dict[str, Any]:
    """The data of the page's plots: certified epsilon and accuracy over ``n / 10 .. 10 n``.

    Raises:
        ParameterError: On invalid fields.

    Example:
        >>> w = whatif({"k": "3", "n": "100", "eps0": "1", "delta": "1e-6"})
        >>> w["ns"], [s["quantity"] for s in w["series"]][:2]
        ([10, 32, 100, 316, 1000], ['certified epsilon', 'shuffle+INV std (worst category)'])
    """
    from ..whatif import whatif_grid  # noqa: PLC0415

    dep, _ = _resolved(query)
    ns = sorted({min(N_MAX, max(2, round(dep.n * 10 ** (j / 2)))) for j in range(-2, 3)})
    return whatif_grid(dep, ns=ns, eps0s=[dep.eps0], rounds=False, calibration=False).as_dict()


def plan(query: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers the page shows, as a JSON-ready dict (numbers with their bound direction).

    Raises:
        ParameterError: On invalid fields.

    Example:
        >>> out = plan({"k": "3", "n": "100", "eps0": "1", "delta": "1e-6"})
        >>> out["certified_epsilon"]["bound"], out["exhibited_epsilon"]["bound"]
        ('upper', 'lower')
    """
    from ...accuracy import gaussian_frequency_accuracy, shuffle_frequency_accuracy  # noqa: PLC0415
    from ..curve_rows import DeploymentCurves, NamedCurve, curve_rows  # noqa: PLC0415

    dep, calibrated = _resolved(query)
    # the report's curves and its one curve-to-rows path: the same numbers as `report`
    dc = DeploymentCurves(dep)
    named = [NamedCurve("certified", dc.certified), NamedCurve("exhibited", dc.exhibited)]
    if dep.rounds > 1:
        named.append(NamedCurve("composed", dc.composed()))
    rows = {r.label: {"value": r.value, "bound": r.bound} for r in curve_rows(named, delta=dep.delta)}
    eps = rows["certified"]["value"]
    composed = rows.get("composed")
    shf = shuffle_frequency_accuracy(dep.k, dep.eps0, dep.n)
    accuracy: dict[str, Any] = {
        "shuffle_std": {"value": shf.std, "bound": "upper"},
        "shuffle_ci95_normal": {"value": shf.normal_half_width, "bound": "estimate"},
        "shuffle_ci95_guaranteed": {"value": shf.guaranteed_half_width, "bound": "upper"},
        "gaussian_std": None,
        "gaussian_ci95": None,
    }
    try:
        g = gaussian_frequency_accuracy(eps, dep.delta, dep.n)
    except ImportError:
        pass
    else:
        accuracy["gaussian_std"] = {"value": g.std, "bound": "exact"}
        accuracy["gaussian_ci95"] = {"value": g.normal_half_width, "bound": "exact"}
    return {
        "deployment": dep.as_dict(),
        "calibrated_eps0": calibrated,
        "certified_epsilon": rows["certified"],
        "exhibited_epsilon": rows["exhibited"],
        "composed_epsilon": composed,
        "accuracy": accuracy,
    }


def script(query: Mapping[str, Any]) -> str:
    """A runnable Python script that recomputes the planner's numbers with the library.

    Raises:
        ParameterError: On invalid fields.

    Example:
        >>> code = script({"k": "3", "n": "100", "eps0": "1"})
        >>> "eps0 = 1.0" in code and "ShuffledKRR(k=k, eps0=eps0, n=n).epsilon(delta)" in code
        True
    """
    parsed = parse_params(query)
    dep: Deployment = parsed["deployment"]
    lines = [
        "# Generated by the shuffle-accounting web planner: recomputes its numbers.",
        "# pip install shuffle-accounting",
        "from shuffle_accounting import ShuffledKRR, ShuffleAccountant, ShuffledKRRDpEvent, calibrate_eps0",
        "from shuffle_accounting.accuracy import shuffle_frequency_accuracy, gaussian_frequency_accuracy",
        "",
        f"k, n, delta, rounds = {dep.k}, {dep.n}, {dep.delta!r}, {dep.rounds}",
    ]
    if parsed["mode"] == "target":
        lines += [
            f"target_epsilon = {dep.target_epsilon!r}",
            f"eps0 = calibrate_eps0(k, n, target_epsilon, delta, rounds=rounds, rtol={1e-3 if dep.rounds == 1 else 1e-2!r})"
            "  # rounded down",
            'print("largest eps0 meeting the target:", eps0)',
        ]
    else:
        lines.append(f"eps0 = {dep.eps0!r}")
    lines += [
        "",
        "eps = ShuffledKRR(k=k, eps0=eps0, n=n).epsilon(delta)",
        'print("certified epsilon (upper bound):", eps)',
        'print("exhibited epsilon (lower bound):", ShuffledKRR(k=k, eps0=eps0, n=n).epsilon_lower(delta))',
        "if rounds > 1:",
        "    acc = ShuffleAccountant().compose(ShuffledKRRDpEvent(k=k, eps0=eps0, n=n), rounds)",
        '    print(f"certified epsilon, {rounds} rounds (upper bound):", acc.get_epsilon(delta))',
        "a = shuffle_frequency_accuracy(k, eps0, n)",
        'print("shuffle+INV std of a frequency (worst category):", a.std)',
        'print("95% CI half-width, normal approximation:", a.normal_half_width)',
        'print("95% CI half-width, guaranteed (Bernstein):", a.guaranteed_half_width)',
        "g = gaussian_frequency_accuracy(eps, delta, n)",
        'print("central Gaussian std at the same (eps, delta):", g.std)',
        "",
    ]
    if parsed["mode"] == "eps0":
        lines[
            lines.index(
                "from shuffle_accounting.accuracy import shuffle_frequency_accuracy, gaussian_frequency_accuracy"
            )
            - 1
        ] = "from shuffle_accounting import ShuffledKRR, ShuffleAccountant, ShuffledKRRDpEvent"
    return "\n".join(lines)
