"""Generic quantitative-information-flow core: channels, cascade, g-vulnerability, refinement.

Definitions follow Alvim et al., *The Science of Quantitative Information Flow* (2020), as
recalled in Jurado, Gonze, Alvim, Palamidessi, *Analyzing the Shuffle Model through the Lens of
Quantitative Information Flow* (CSF 2023), Sec. II-A:

* a channel ``C`` is a row-stochastic matrix, ``C[x, y] = Pr(y | x)``;
* cascade ``CD`` is the matrix product (Def. 3);
* prior g-vulnerability ``V_g(pi) = max_w sum_x pi_x g(w, x)`` (Def. 1, eq. (1));
* posterior ``V_g[pi > C] = sum_y max_w sum_x pi_x C[x, y] g(w, x)`` (Def. 2, eq. (2));
* Bayes vulnerability is ``V_g`` with the identity gain;
* additive leakage ``V_g[pi > C] - V_g(pi)``, multiplicative ``V_g[pi > C] / V_g(pi)``;
* refinement ``C ⊑ C'`` iff ``C' = C D`` for some channel ``D`` (Thm. 4, data-processing);
* equivalence ``C ≡ C'`` iff their reduced forms (zero columns dropped, proportional columns
  merged, columns ordered canonically) coincide.

Matrices are numpy arrays. Entries may also be ``fractions.Fraction`` (numpy ``object`` arrays or
nested lists of Fractions/ints); then every operation is exact and comparisons are exact.
Gain matrices are indexed ``gain[w, x]`` (actions by secrets).
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import ParameterError, check_probability_vector, check_real, check_stochastic_matrix

__all__ = [
    "as_channel",
    "is_exact",
    "cascade",
    "uniform_prior",
    "identity_gain",
    "prior_g_vulnerability",
    "posterior_g_vulnerability",
    "prior_bayes_vulnerability",
    "posterior_bayes_vulnerability",
    "additive_leakage",
    "multiplicative_leakage",
    "posterior_distributions",
    "reduce_channel",
    "equivalent",
    "refines",
]


#: Largest number of secrets of :func:`uniform_prior` (a vector of that length is built).
MAX_SECRETS = 10**8
#: Largest size of :func:`identity_gain` (a ``size x size`` matrix is built).
MAX_GAIN_SIZE = 4096


def _all_exact(values: Any) -> bool:
    return all(
        isinstance(v, (Fraction, numbers.Integral)) and not isinstance(v, (bool, np.bool_)) for v in values
    )


def is_exact(matrix: Any) -> bool:
    """True if ``matrix`` is an object array whose entries are all Fractions/ints.

    Example:
        >>> is_exact(as_channel([[Fraction(1, 2), Fraction(1, 2)]]))
        True
        >>> is_exact(as_channel([[0.5, 0.5]]))
        False
    """
    arr = np.asarray(matrix, dtype=object) if not isinstance(matrix, np.ndarray) else matrix
    return arr.dtype == object and arr.size > 0 and _all_exact(arr.ravel())


def _exact_array(name: str, value: Any) -> np.ndarray | None:
    """Return an object array of Fractions if ``value`` holds only Fractions/ints with >= 1 Fraction."""
    if isinstance(value, np.ndarray) and value.dtype != object:
        return None
    try:
        arr = np.array(value, dtype=object)
    except Exception:  # pragma: no cover - ragged input is rejected by the float path
        return None
    flat = list(arr.ravel())
    is_object_input = isinstance(value, np.ndarray) and value.dtype == object
    if (
        not flat
        or not _all_exact(flat)
        or not (is_object_input or any(isinstance(v, Fraction) for v in flat))
    ):
        return None
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = Fraction(v)
    return out


def as_channel(matrix: Any, *, name: str = "channel", atol: float = 1e-9) -> np.ndarray:
    """Validate a channel matrix (2-D, non-negative, finite, each row summing to 1).

    A matrix of Fractions (with ints) is checked exactly and returned as an object array of
    Fractions; anything else is checked by
    :func:`shuffle_accounting._validation.check_stochastic_matrix` and returned as float64.

    Args:
        matrix: The candidate channel ``C[x, y] = Pr(y | x)``.
        name: Parameter name for error messages.
        atol: Row-sum tolerance for float matrices.

    Returns:
        The validated matrix.

    Raises:
        ParameterError: If the matrix is not row-stochastic.

    Example:
        >>> as_channel([[0.9, 0.1], [0.1, 0.9]])
        array([[0.9, 0.1],
               [0.1, 0.9]])
        >>> as_channel([[0.5, 0.6]])
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: channel must be row-stochastic (each row sums to 1, tolerance 1e-09), got row 0 summing to 1.1
    """
    exact = _exact_array(name, matrix)
    if exact is not None:
        if exact.ndim != 2 or exact.shape[0] == 0 or exact.shape[1] == 0:
            raise ParameterError(
                f"{name} must be a non-empty 2-D row-stochastic matrix, got shape {exact.shape}"
            )
        if any(v < 0 for v in exact.ravel()):
            raise ParameterError(f"{name} must have non-negative entries")
        for r in range(exact.shape[0]):
            if sum(exact[r]) != 1:
                raise ParameterError(
                    f"{name} must be row-stochastic (each row sums to 1 exactly), got row {r} summing to {sum(exact[r])}"
                )
        return exact
    return check_stochastic_matrix(name, matrix, atol=atol)


def _as_prior(prior: Any, size: int | None, name: str = "prior") -> np.ndarray:
    exact = _exact_array(name, prior)
    if exact is not None:
        if exact.ndim != 1 or any(v < 0 for v in exact) or sum(exact) != 1:
            raise ParameterError(f"{name} must be a probability vector (non-negative, summing to 1)")
        arr = exact
    else:
        arr = check_probability_vector(name, prior)
    if size is not None and arr.shape[0] != size:
        raise ParameterError(f"{name} must have length {size} (the number of secrets), got {arr.shape[0]}")
    return arr


def _to_exact(arr: np.ndarray) -> np.ndarray:
    """Object array of Fractions (float entries converted exactly)."""
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = v if isinstance(v, Fraction) else Fraction(v)
    return out


def _as_gain(gain: Any, n_secrets: int | None) -> np.ndarray:
    exact = _exact_array("gain", gain)
    if exact is not None:
        arr = exact
    else:
        from .._validation import check_real_array

        arr = check_real_array("gain", gain)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ParameterError(f"gain must be a non-empty 2-D matrix gain[w, x], got shape {arr.shape}")
    if n_secrets is not None and arr.shape[1] != n_secrets:
        raise ParameterError(f"gain must have {n_secrets} columns (one per secret), got {arr.shape[1]}")
    return arr


def cascade(first: Any, second: Any) -> np.ndarray:
    """Cascade ``first`` then ``second``: the matrix product (Def. 3 of Jurado et al.).

    Args:
        first: Channel ``C : X -> Y``.
        second: Channel ``D : Y -> Z``.

    Returns:
        The channel ``CD : X -> Z`` (exact if both inputs are exact).

    Raises:
        ParameterError: If either is not a channel or the inner dimensions differ.

    Example:
        >>> cascade([[1.0, 0.0], [0.0, 1.0]], [[0.75, 0.25], [0.25, 0.75]])
        array([[0.75, 0.25],
               [0.25, 0.75]])
    """
    c = as_channel(first, name="first")
    d = as_channel(second, name="second")
    if c.shape[1] != d.shape[0]:
        raise ParameterError(
            f"second must have as many rows as first has columns ({c.shape[1]}), got {d.shape[0]}"
        )
    if c.dtype == object or d.dtype == object:
        return np.dot(_to_exact(c), _to_exact(d))
    return c @ d


def uniform_prior(size: Any, *, exact: bool = False) -> np.ndarray:
    """The uniform prior on ``size`` secrets (Fractions with ``exact=True``).

    Example:
        >>> uniform_prior(4)
        array([0.25, 0.25, 0.25, 0.25])
    """
    from .._validation import check_bool

    exact = check_bool("exact", exact)
    from .._validation import check_int

    size = check_int("size", size, minimum=1, maximum=MAX_SECRETS)
    if exact:
        return np.array([Fraction(1, size)] * size, dtype=object)
    return np.full(size, 1.0 / size)


def identity_gain(size: Any) -> np.ndarray:
    """The identity gain ``g(w, x) = [w == x]`` whose g-vulnerability is Bayes vulnerability.

    Example:
        >>> identity_gain(2)
        array([[1, 0],
               [0, 1]])
    """
    from .._validation import check_int

    # a size x size matrix: bounded so that it fits in memory (4096^2 entries = 128 MiB)
    return np.eye(check_int("size", size, minimum=1, maximum=MAX_GAIN_SIZE), dtype=int)


def prior_g_vulnerability(prior: Any, gain: Any) -> float | Fraction:
    """Prior g-vulnerability ``V_g(pi) = max_w sum_x pi_x g(w, x)`` (Def. 1, eq. (1)).

    Args:
        prior: Probability vector on secrets.
        gain: Gain matrix ``gain[w, x]``.

    Returns:
        The vulnerability (a ``Fraction`` if both inputs are exact).

    Raises:
        ParameterError: On invalid or mismatched inputs.

    Example:
        >>> prior_g_vulnerability([0.5, 0.25, 0.25], identity_gain(3))
        0.5
    """
    g = _as_gain(gain, None)
    pi = _as_prior(prior, g.shape[1])
    if g.dtype == object or pi.dtype == object:
        vals = np.dot(_to_exact(g), _to_exact(pi))
    else:
        vals = g @ pi
    return _scalar(max(vals))


def _joint(prior: Any, channel: Any) -> np.ndarray:
    c = as_channel(channel)
    pi = _as_prior(prior, c.shape[0])
    if c.dtype == object or pi.dtype == object:
        return _to_exact(c) * _to_exact(pi)[:, None]
    return c * pi[:, None]


def _scalar(v: Any) -> float | Fraction:
    return v if isinstance(v, Fraction) else float(v)


def posterior_g_vulnerability(prior: Any, channel: Any, gain: Any) -> float | Fraction:
    """Posterior g-vulnerability ``sum_y max_w sum_x pi_x C[x, y] g(w, x)`` (Def. 2, eq. (2)).

    Args:
        prior: Probability vector on secrets.
        channel: Channel matrix ``C[x, y]``.
        gain: Gain matrix ``gain[w, x]``.

    Returns:
        The vulnerability (exact ``Fraction`` when all inputs are exact).

    Raises:
        ParameterError: On invalid or mismatched inputs.

    Example:
        >>> posterior_g_vulnerability([0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]], identity_gain(2))
        0.9
    """
    joint = _joint(prior, channel)
    g = _as_gain(gain, joint.shape[0])
    if joint.dtype == object or g.dtype == object:
        m = np.dot(_to_exact(g), _to_exact(joint))
        return _scalar(sum(max(m[:, y]) for y in range(m.shape[1])))
    return float((g @ joint).max(axis=0).sum())


def prior_bayes_vulnerability(prior: Any) -> float | Fraction:
    """Prior Bayes vulnerability ``max_x pi_x``.

    Example:
        >>> prior_bayes_vulnerability([0.2, 0.8])
        0.8
    """
    pi = _as_prior(prior, None)  # validates first: a scalar, string or None is a ParameterError
    return _scalar(max(pi))


def posterior_bayes_vulnerability(prior: Any, channel: Any) -> float | Fraction:
    """Posterior Bayes vulnerability ``sum_y max_x pi_x C[x, y]``.

    Example:
        >>> posterior_bayes_vulnerability([0.5, 0.5], [[1.0, 0.0], [0.5, 0.5]])
        0.75
    """
    joint = _joint(prior, channel)
    if joint.dtype == object:
        return _scalar(sum(max(joint[:, y]) for y in range(joint.shape[1])))
    return float(joint.max(axis=0).sum())


def additive_leakage(prior: Any, channel: Any, gain: Any | None = None) -> float | Fraction:
    """Additive g-leakage ``V_g[pi > C] - V_g(pi)`` (Bayes vulnerability when ``gain`` is None).

    Example:
        >>> round(additive_leakage([0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]]), 12)
        0.4
    """
    if gain is None:
        return posterior_bayes_vulnerability(prior, channel) - prior_bayes_vulnerability(prior)
    return posterior_g_vulnerability(prior, channel, gain) - prior_g_vulnerability(prior, gain)


def multiplicative_leakage(prior: Any, channel: Any, gain: Any | None = None) -> float | Fraction:
    """Multiplicative g-leakage ``V_g[pi > C] / V_g(pi)`` (Bayes when ``gain`` is None).

    Raises:
        ParameterError: If the prior vulnerability is zero (the ratio is undefined).

    Example:
        >>> round(multiplicative_leakage([0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]]), 12)
        1.8
    """
    if gain is None:
        post, pre = posterior_bayes_vulnerability(prior, channel), prior_bayes_vulnerability(prior)
    else:
        post, pre = posterior_g_vulnerability(prior, channel, gain), prior_g_vulnerability(prior, gain)
    if pre == 0:
        raise ParameterError(
            "gain must give a positive prior vulnerability for multiplicative leakage, got 0"
        )
    return post / pre


def posterior_distributions(prior: Any, channel: Any) -> tuple[np.ndarray, np.ndarray]:
    """The hyper-distribution ``[pi > C]``: outer probabilities and posterior columns.

    Outputs of probability zero are dropped.

    Returns:
        ``(outer, inners)`` with ``outer[j] = Pr(y_j)`` and ``inners[:, j] = Pr(x | y_j)``.

    Example:
        >>> outer, inners = posterior_distributions([0.5, 0.5], [[1.0, 0.0], [0.5, 0.5]])
        >>> outer
        array([0.75, 0.25])
    """
    joint = _joint(prior, channel)
    outer = joint.sum(axis=0)
    keep = [j for j in range(joint.shape[1]) if outer[j] != 0]
    outer = outer[keep]
    inners = joint[:, keep] / outer[None, :]
    return outer, inners


def reduce_channel(channel: Any, *, rtol: float = 1e-12) -> np.ndarray:
    """Reduced form: drop all-zero columns, merge proportional columns, sort columns.

    Merging columns that are multiples of each other preserves every g-vulnerability for every
    prior (Jurado et al., Sec. II-A; Prop. 9 uses it for the shuffle). Columns are ordered
    canonically (lexicographically by their normalised shape), so two channels are equivalent
    iff their reduced forms are equal. Exact for Fraction matrices; floats use relative
    tolerance ``rtol`` to decide proportionality.

    Args:
        channel: Channel matrix.
        rtol: Relative tolerance for float matrices (finite, in ``[0, 1e-3]``).

    Returns:
        The reduced channel (same rows, fewer or equal columns).

    Raises:
        ParameterError: On an invalid channel or tolerance.

    Example:
        >>> reduce_channel([[0.5, 0.25, 0.25], [0.5, 0.25, 0.25]])
        array([[1.],
               [1.]])
    """
    c = as_channel(channel)
    rtol = check_real("rtol", rtol, low=0.0, high=1e-3)
    if c.dtype == object:
        groups: dict[tuple, Any] = {}
        for j in range(c.shape[1]):
            col = c[:, j]
            tot = sum(col)
            if tot == 0:
                continue
            key = tuple(v / tot for v in col)
            groups[key] = groups.get(key, Fraction(0)) + tot
        keys = sorted(groups)
        out = np.empty((c.shape[0], len(keys)), dtype=object)
        for j, key in enumerate(keys):
            for i, v in enumerate(key):
                out[i, j] = v * groups[key]
        return out
    tot = c.sum(axis=0)
    nz = tot > 0
    cols = c[:, nz] / tot[nz]
    weights = tot[nz]
    # canonical order: sort by the normalised column (lexicographic), then merge neighbours.
    order = np.lexsort(cols[::-1])
    cols = cols[:, order]
    weights = weights[order]
    merged_cols: list[np.ndarray] = []
    merged_w: list[float] = []
    for j in range(cols.shape[1]):
        if merged_cols and np.allclose(cols[:, j], merged_cols[-1], rtol=rtol, atol=rtol):
            merged_w[-1] += weights[j]
        else:
            merged_cols.append(cols[:, j])
            merged_w.append(float(weights[j]))
    # A second pass catches proportional columns that lexsort did not put side by side.
    final_cols: list[np.ndarray] = []
    final_w: list[float] = []
    for col, w in zip(merged_cols, merged_w):
        for idx, other in enumerate(final_cols):
            if np.allclose(col, other, rtol=rtol, atol=rtol):
                final_w[idx] += w
                break
        else:
            final_cols.append(col)
            final_w.append(w)
    return np.column_stack([col * w for col, w in zip(final_cols, final_w)])


def equivalent(first: Any, second: Any, *, rtol: float = 1e-9) -> bool:
    """True iff the channels leak the same for every prior and gain (``C ≡ C'``).

    Decided by comparing reduced forms (:func:`reduce_channel`); exact for Fractions.

    Args:
        first: A channel.
        second: A channel with the same number of rows.
        rtol: Comparison tolerance for float matrices (finite, in ``[0, 1e-3]``).

    Raises:
        ParameterError: If the channels have different numbers of rows (input sets), or on an
            invalid ``rtol``.

    Example:
        >>> equivalent([[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
        True
    """
    rtol = check_real("rtol", rtol, low=0.0, high=1e-3)
    # validated under their own names first (reduce_channel would call both "channel")
    a = reduce_channel(as_channel(first, name="first"))
    b = reduce_channel(as_channel(second, name="second"))
    if a.shape[0] != b.shape[0]:
        raise ParameterError(
            f"second must have the same input set size as first ({a.shape[0]}), got {b.shape[0]}"
        )
    if a.shape != b.shape:
        return False
    if a.dtype == object and b.dtype == object:
        return bool(all(x == y for x, y in zip(a.ravel(), b.ravel())))
    return bool(np.allclose(a.astype(float), b.astype(float), rtol=rtol, atol=rtol))


def refines(first: Any, second: Any, *, atol: float = 1e-9) -> bool:
    """True iff ``second`` refines ``first`` (``first ⊑ second``): ``second = first @ D``.

    By the data-processing inequality (Jurado et al., Thm. 4) this holds iff ``second`` leaks no
    more than ``first`` for every prior and gain. Decided as a linear-programming feasibility
    problem for a row-stochastic ``D`` (scipy HiGHS) on the reduced form of ``first``; the answer
    is numerical, with equality tolerance ``atol`` (Fractions are converted to floats).

    Args:
        first: Channel ``C : X -> Y``.
        second: Channel ``C' : X -> Z``.
        atol: Feasibility tolerance on ``C D = C'`` (finite, in ``[0, 1e-3]``).

    Returns:
        Whether a post-processing ``D`` with ``C D = C'`` exists.

    Raises:
        ParameterError: On invalid channels or different input sets.

    Example:
        >>> C = [[0.9, 0.1], [0.1, 0.9]]
        >>> refines(C, cascade(C, [[0.8, 0.2], [0.2, 0.8]])), refines(cascade(C, [[0.8, 0.2], [0.2, 0.8]]), C)
        (True, False)
    """
    from scipy.optimize import linprog

    c = reduce_channel(as_channel(first, name="first")).astype(float)
    cp = as_channel(second, name="second").astype(float)
    atol = check_real("atol", atol, low=0.0, high=1e-3)
    if c.shape[0] != cp.shape[0]:
        raise ParameterError(
            f"second must have the same input set size as first ({c.shape[0]}), got {cp.shape[0]}"
        )
    ny, nz = c.shape[1], cp.shape[1]
    nx = c.shape[0]
    # variables D[y, z] (row-major); constraints: C D = C' (nx*nz), D 1 = 1 (ny).
    a_rows = []
    b_vals = []
    for x in range(nx):
        for z in range(nz):
            row = np.zeros(ny * nz)
            row[np.arange(ny) * nz + z] = c[x]
            a_rows.append(row)
            b_vals.append(cp[x, z])
    a_eq_main = np.array(a_rows)
    b_main = np.array(b_vals)
    a_sum = np.zeros((ny, ny * nz))
    for y in range(ny):
        a_sum[y, y * nz : (y + 1) * nz] = 1.0
    # Slack formulation: minimise the total violation of C D = C' subject to D stochastic.
    n_var = ny * nz
    n_eq = nx * nz
    # variables: D (n_var), s_plus (n_eq), s_minus (n_eq)
    a_eq = np.block(
        [
            [a_eq_main, np.eye(n_eq), -np.eye(n_eq)],
            [a_sum, np.zeros((ny, 2 * n_eq))],
        ]
    )
    b_eq = np.concatenate([b_main, np.ones(ny)])
    cost = np.concatenate([np.zeros(n_var), np.ones(2 * n_eq)])
    res = linprog(cost, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover - the slack LP is always feasible and bounded
        raise ParameterError(f"refinement LP failed: {res.message}")
    return bool(res.fun <= atol * max(1, n_eq))
