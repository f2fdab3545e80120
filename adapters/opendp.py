"""OpenDP (0.16.x) measurements for shuffled k-RR and the d_sigma Mallows shuffler.

OpenDP has no shuffle amplification. The constructors here follow OpenDP's conventions
(``make_*(input_domain, input_metric, ...)`` plus a ``then_*`` partial, registered in the Context
API) and wrap the runtime collection (exact-rational k-RR randomizer + uniform shuffler, histogram
release) in an OpenDP ``Measurement`` whose privacy map is our certified bound:

* :func:`make_shuffled_krr` / :func:`then_shuffled_krr` — without ``delta`` the output measure is
  ``smoothed_max_divergence()`` and ``map(d_in)`` returns the certified privacy profile
  ``epsilon -> delta`` (one round: the privacy-blanket curve of
  :class:`shuffle_accounting.ShuffledKRR`; several rounds: the tightly composed curve of
  :class:`shuffle_accounting.ShuffleAccountant`); with ``delta`` it is
  ``approximate(max_divergence())`` and ``map(d_in)`` returns ``(epsilon, delta)``, ready for
  ``dp.c.make_composition`` and a ``Context`` next to native measurements. Importing this module
  registers the constructor with ``dp.register``, so ``context.query().shuffled_krr(...)`` works.
* :func:`make_mallows_shuffle` / :func:`then_mallows_shuffle` — the d_sigma-private Mallows
  shuffler of :mod:`shuffle_accounting.dsigma` as a measurement under :func:`dsigma_distance`.
* :func:`reidentification_risk` — the Bayesian re-identification bound (Su, Cheng, Wang) of a
  measurement built by :func:`make_shuffled_krr`.

Neighbouring relation. Our bounds are for *replace-one* neighbours with a fixed number of users
``n``, so the input domain must be a **sized** ``vector_domain`` (``size=n``) under either

* ``symmetric_distance()``: replacing one user is a symmetric distance of 2; ``d_in`` is mapped to
  ``ceil(d_in / 2)`` replacements (odd distances cannot occur between vectors of equal size, so
  ``floor`` would also be valid; ``ceil`` keeps a context built with ``unit_of(contributions=1)``
  covered by the replace-one guarantee), or
* ``change_one_distance()``: ``d_in`` is the number of replaced users.

Larger distances (``d`` replacements) use group privacy (proved in
:func:`shuffle_accounting.adapters._common.group_epsilon_delta`): ``(d eps, delta sum_{i<d} e^{i eps})``,
applied to every point of the profile. An **unsized** domain is refused: the histogram's total is
the number of users, so add/remove neighbours are distinguished with certainty (no finite
epsilon). Resize first (``dp.t.then_resize(size=n, constant=...)``); see :func:`make_shuffled_krr`.

Undeclared values never raise inside the function (the error would depend on the private data):
they go to the null category (``null_category=True``, the default, like OpenDP's
``make_count_by_categories``) or, with ``null_category=False``, are counted as the first declared
category (mapping rule of :mod:`shuffle_accounting.adapters._common`).

Trust and global state. ``make_user_measurement`` and ``new_privacy_profile`` need OpenDP's
``"contrib"`` and ``"honest-but-curious"`` features. The constructors never change the global
feature set: if a feature is missing they raise :class:`FeatureNotEnabledError`, which names the
line to add, ``dp.enable_features("contrib", "honest-but-curious")``. Enabling it is a statement
that you trust this library's privacy maps (proofs in :mod:`shuffle_accounting.shuffled_krr` and
:mod:`shuffle_accounting.dsigma`).

OpenDP is imported lazily; without it, calling a constructor raises an ``ImportError`` that says
``pip install 'shuffle-accounting[opendp]'``.

Example:
    >>> import opendp.prelude as dp
    >>> dp.enable_features("contrib", "honest-but-curious")
    >>> space = dp.vector_domain(dp.atom_domain(T=str), size=200), dp.symmetric_distance()
    >>> meas = space >> then_shuffled_krr(["a", "b"], eps0=1.0)
    >>> hist = meas(["a"] * 150 + ["b"] * 49 + ["zzz"])  # undeclared value: counted, no error
    >>> len(hist), sum(hist)  # "a", "b", null
    (3, 200)
"""

from __future__ import annotations

import hashlib
import math
import numbers
import warnings
from typing import Any

from .._validation import ParameterError, check_delta, check_int
from ._common import ShuffledCollection, group_delta, group_epsilon_delta

__all__ = [
    "FeatureNotEnabledError",
    "dsigma_distance",
    "make_mallows_shuffle",
    "make_shuffled_krr",
    "make_shuffled_krr_approx",
    "reidentification_risk",
    "then_mallows_shuffle",
    "then_shuffled_krr",
]

_INSTALL_HINT = (
    "shuffle_accounting.adapters.opendp needs OpenDP 0.16: install it with "
    "pip install 'shuffle-accounting[opendp]'"
)
_FEATURES = ("contrib", "honest-but-curious")
_ATTR = "_shuffle_accounting"


class FeatureNotEnabledError(RuntimeError):
    """An OpenDP feature that a constructor needs is not enabled (the constructor never enables it)."""


def _opendp():
    try:
        import opendp.prelude as dp  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return dp


def _require_features(dp) -> None:
    from opendp.mod import GLOBAL_FEATURES as enabled  # noqa: PLC0415

    missing = [f for f in _FEATURES if f not in enabled]
    if missing:
        raise FeatureNotEnabledError(
            f"OpenDP feature(s) {', '.join(repr(f) for f in missing)} not enabled; this constructor "
            "builds a user-defined measurement whose privacy map is shuffle_accounting's certified "
            "bound, and never changes global features itself. Add this line before it: "
            'dp.enable_features("contrib", "honest-but-curious")'
        )


def _labels(categories: Any) -> tuple[list, type]:
    if isinstance(categories, numbers.Integral) and not isinstance(categories, bool):
        return list(range(check_int("categories", categories, minimum=2))), int
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__iter__"):
        raise ParameterError(
            f"categories must be a sequence of at least two distinct strings or integers, or an integer k >= 2, got {categories!r}"
        )
    labels = list(categories)
    if labels and all(isinstance(v, str) for v in labels):
        return labels, str
    if labels and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in labels):
        return [int(v) for v in labels], int
    raise ParameterError(
        f"categories must all be strings or all be integers for an OpenDP atom domain, got {tuple(labels)!r}"
    )


_INT_CARRIERS = {"i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize"}


def _check_space(input_domain: Any, input_metric: Any, atom: type | None) -> tuple[int, str]:
    """Validate the input space; return ``(n, metric)`` with metric in {"symmetric", "change_one"}."""
    dtype = str(getattr(input_domain, "type", ""))
    if not dtype.startswith("VectorDomain<"):
        raise ParameterError(
            f"input_domain must be an OpenDP vector_domain(atom_domain(...), size=n), got {input_domain!r}"
        )
    if atom is not None:
        carrier = str(input_domain.element_domain.carrier_type)
        ok = carrier == "String" if atom is str else carrier in _INT_CARRIERS
        if not ok:
            raise ParameterError(
                f"input_domain must hold {'strings' if atom is str else 'integers'} like the categories, "
                f"got elements of type {carrier}"
            )
    metric = str(getattr(input_metric, "type", ""))
    kind = {"SymmetricDistance": "symmetric", "ChangeOneDistance": "change_one"}.get(metric)
    size = input_domain.size
    if size is None:
        raise ParameterError(
            "input_domain must be sized (vector_domain(..., size=n)): the released histogram sums to "
            "the number of users, so add/remove neighbours (an unsized domain) are distinguished with "
            "certainty and no finite epsilon exists; the certified bounds are for replace-one "
            "neighbours with n users. Resize first: "
            "(input_domain, input_metric) >> dp.t.then_resize(size=n, constant=<a category>) >> "
            "then_shuffled_krr(...) (a public n; padding adds n - len(data) copies of the constant and "
            "truncation drops random rows, which biases the counts)"
        )
    if kind is None:
        raise ParameterError(
            "input_metric must be dp.symmetric_distance() (replace one user = d_in 2) or "
            f"dp.change_one_distance() (replace one user = d_in 1), got {input_metric!r}"
        )
    return int(size), kind


def _changes(d_in: Any, kind: str) -> int:
    d = check_int("d_in", d_in, minimum=0)
    return (d + 1) // 2 if kind == "symmetric" else d


def _attach(meas, info: Any):
    setattr(meas, _ATTR, info)
    return meas


def make_shuffled_krr(
    input_domain,
    input_metric,
    categories: Any,
    eps0: float,
    *,
    rounds: int = 1,
    delta: float | None = None,
    null_category: bool = True,
):
    """Measurement: vector of values -> shuffled k-RR histogram, with a certified privacy map.

    The function maps every value to a category code (undeclared values go to the null category,
    or to the first category with ``null_category=False``), randomizes it with k-RR (exact
    rational law, OS CSPRNG), shuffles and releases the histogram: a list of counts, declared
    categories in order then the null count (a list of ``rounds`` such histograms when
    ``rounds > 1``). It never raises on a value of the input domain.

    Privacy map (``d`` = replaced users, see the module docstring; ``k`` counts the null bin):

    * ``delta=None``: output measure ``smoothed_max_divergence()``; ``map(d_in)`` is the profile
      ``epsilon -> delta`` certified by the privacy-blanket bound (Balle, Bell, Gascon, Nissim,
      *The Privacy Blanket of the Shuffle Model*, CRYPTO 2019; evaluated exactly, see
      :class:`shuffle_accounting.ShuffledKRR`) or, for several rounds, by the pessimistic PLD
      composition of :class:`shuffle_accounting.ShuffleAccountant`; group privacy for ``d > 1``
      (:func:`~shuffle_accounting.adapters._common.group_delta`).
    * ``delta`` given: output measure ``approximate(max_divergence())``; ``map(d_in)`` is
      ``(epsilon, delta)`` with the certified epsilon (rounded up) at ``delta`` for ``d = 1`` and
      the group-privacy pair for ``d > 1``.

    Unsized data. The domain must be sized; for data of unknown size use
    ``dp.t.then_resize(size=n, constant=c)`` in front (stability 2 per added/removed record, i.e.
    one replacement): it pads short data with ``c`` and drops random records from long data, so
    the count of ``c`` is biased up by ``n - len(data)`` (before randomization) and the others are
    subsampled; estimate counts with that in mind.

    Args:
        input_domain: ``dp.vector_domain(dp.atom_domain(T=str or int), size=n)``.
        input_metric: ``dp.symmetric_distance()`` or ``dp.change_one_distance()``.
        categories: The declared categories (all strings or all integers), or an integer ``k``.
        eps0: Local epsilon of each report (finite, > 0); the accounting uses the effective
            epsilon of the implemented exact-rational mechanism (rounded up).
        rounds: Number of independent k-RR rounds released on the same data.
        delta: ``None`` for the profile measure, or the delta in (0, 1) of an approximate-DP
            measurement.
        null_category: Whether to add a null category for undeclared values (default ``True``).

    Returns:
        An OpenDP ``Measurement``.

    Raises:
        ParameterError: On invalid parameters or input space (before any OpenDP call).
        FeatureNotEnabledError: If ``"contrib"`` or ``"honest-but-curious"`` is not enabled.
        ImportError: If OpenDP is not installed.

    Example:
        >>> import opendp.prelude as dp
        >>> dp.enable_features("contrib", "honest-but-curious")
        >>> space = dp.vector_domain(dp.atom_domain(T=str), size=100), dp.symmetric_distance()
        >>> meas = make_shuffled_krr(*space, ["a", "b", "c"], eps0=1.0)
        >>> hist = meas(["a"] * 60 + ["b"] * 40)
        >>> len(hist), sum(hist)
        (4, 100)
        >>> profile = meas.map(2)  # replace one user
        >>> 0 < profile.delta(0.5) < 1e-2
        True
    """
    labels, atom = _labels(categories)
    coll = ShuffledCollection(labels, eps0, 1, rounds, null_category)  # validates before OpenDP
    if delta is not None:
        delta = check_delta("delta", delta)
    dp = _opendp()
    _require_features(dp)
    n, kind = _check_space(input_domain, input_metric, atom)
    coll = ShuffledCollection(labels, eps0, n, rounds, null_category)

    def function(values):
        hists = coll.release(values)
        return hists[0] if coll.rounds == 1 else hists

    if delta is None:

        def privacy_map(d_in):
            d = _changes(d_in, kind)

            def curve(epsilon):
                return group_delta(coll.delta, epsilon, d)

            # A fresh profile on every call: OpenDP takes ownership of the returned object.
            return dp.new_privacy_profile(curve).curve

        measure = dp.smoothed_max_divergence()
    else:
        eps1 = coll.epsilon(delta)

        def privacy_map(d_in):
            eps_d, delta_d = group_epsilon_delta(eps1, delta, _changes(d_in, kind))
            return float(eps_d), float(delta_d)

        measure = dp.approximate(dp.max_divergence())
    meas = dp.m.make_user_measurement(input_domain, input_metric, measure, function, privacy_map)
    return _attach(meas, coll)


def then_shuffled_krr(
    categories: Any,
    eps0: float,
    *,
    rounds: int = 1,
    delta: float | None = None,
    null_category: bool = True,
):
    """Partial of :func:`make_shuffled_krr` (fixes the input space when chained with ``>>``).

    Example:
        >>> import opendp.prelude as dp
        >>> dp.enable_features("contrib", "honest-but-curious")
        >>> space = dp.vector_domain(dp.atom_domain(T=int), size=50), dp.change_one_distance()
        >>> meas = space >> then_shuffled_krr(3, eps0=1.0, delta=1e-6, null_category=False)
        >>> eps, delta = meas.map(1)
        >>> 0 < eps <= 1.0 + 1e-9, delta
        (True, 1e-06)
    """
    from opendp.mod import _PartialConstructor  # noqa: PLC0415 - optional dependency

    return _PartialConstructor(
        lambda input_domain, input_metric: make_shuffled_krr(
            input_domain,
            input_metric,
            categories,
            eps0,
            rounds=rounds,
            delta=delta,
            null_category=null_category,
        )
    )


def reidentification_risk(measurement):
    """Bayesian re-identification risk of a shuffled measurement built by :func:`make_shuffled_krr`.

    Returns :class:`shuffle_accounting.reidentification.ReidentificationRisk` for the k-RR that
    the measurement actually runs (``k`` values including the null bin, effective ``eps0``) and
    its ``n`` users: ``.bound()`` is the certified upper bound on the probability that a Bayesian
    adversary picks out the target user's report from one shuffled batch (Su, Cheng, Wang,
    *Bayesian Advantage of Re-Identification Attack in the Shuffle Model*, Thms 7-10); with
    ``rounds > 1`` it holds for each round's batch.

    Encoding (why a companion function): ``beta_n`` is not a divergence between the outputs on
    two ``d_in``-close inputs, so it is not an OpenDP measure: encoding it as a privacy map would
    break what OpenDP assumes of every measure (monotone in ``d_in``, closed under post-processing
    and composition). It is a property of the measurement itself, so it is read from the
    measurement, like ``meas.map``: the constructor records its randomizer and ``n`` on the
    object it returns. A measurement chained *after* other steps (``t >> meas``) is a new object:
    read the shuffled measurement itself.

    Args:
        measurement: A measurement returned by :func:`make_shuffled_krr` / :func:`then_shuffled_krr`.

    Returns:
        A ``ReidentificationRisk``.

    Raises:
        ParameterError: If ``measurement`` was not built by :func:`make_shuffled_krr`.

    Example:
        >>> import opendp.prelude as dp
        >>> dp.enable_features("contrib", "honest-but-curious")
        >>> space = dp.vector_domain(dp.atom_domain(T=str), size=100), dp.change_one_distance()
        >>> risk = reidentification_risk(space >> then_shuffled_krr(["a", "b"], eps0=1.0))
        >>> round(risk.bound(), 4)  # about e^eps0 / n: k = 3 values with the null bin
        0.0272
    """
    from ..reidentification import ReidentificationRisk  # noqa: PLC0415

    coll = getattr(measurement, _ATTR, None)
    if not isinstance(coll, ShuffledCollection):
        raise ParameterError(
            "measurement must be one returned by make_shuffled_krr / then_shuffled_krr (chained "
            f"measurements are new objects: pass the shuffled measurement itself), got {measurement!r}"
        )
    return ReidentificationRisk(coll.randomizer.krr, coll.n_min)


# ------------------------------------------------------------------------------------------------
# d_sigma: the Mallows shuffler
# ------------------------------------------------------------------------------------------------


def _groups_digest(groups) -> str:
    h = hashlib.sha256()
    for g in groups:
        h.update(",".join(str(int(v)) for v in g).encode())
        h.update(b";")
    return h.hexdigest()[:16]


def dsigma_distance(groups: Any):
    """The d_sigma metric of a grouping ``G`` as an OpenDP ``user_distance``.

    Two sequences ``y, y'`` are at distance 1 when ``y' = sigma(y)`` for a permutation that only
    moves the positions of one group ``G_i`` (neighbouring sequences, Meehan, Roy-Chowdhury,
    Chaudhuri, Jha, *Privacy Implications of Shuffling*, ICLR 2022, Defs. 4.2-4.3); the distance is
    the length of the shortest chain of such steps (``inf`` between different multisets), a
    metric. (alpha, G)-d_sigma privacy is then exactly ``alpha``-DP (``max_divergence``) under
    this metric at ``d_in = 1``. Two metrics are equal iff their groupings are, so releases for
    different groupings cannot be composed by mistake. Needs the ``"honest-but-curious"`` feature.

    Args:
        groups: Group assignment (``groups[i]`` contains ``i``).

    Returns:
        An OpenDP ``Metric`` whose descriptor holds the validated groups.

    Raises:
        ParameterError: On an invalid grouping.
        FeatureNotEnabledError: If ``"honest-but-curious"`` is not enabled.

    Example:
        >>> import opendp.prelude as dp
        >>> dp.enable_features("contrib", "honest-but-curious")
        >>> dsigma_distance([[0, 1], [0, 1]]) == dsigma_distance([[0, 1], [0, 1]])
        True
    """
    from ..dsigma import validate_groups  # noqa: PLC0415

    checked = validate_groups(groups)
    dp = _opendp()
    _require_features(dp)
    listed = tuple(tuple(int(v) for v in g) for g in checked)
    return dp.user_distance(
        f"DSigmaDistance(n={len(listed)}, groups={_groups_digest(listed)})", descriptor=listed
    )


def make_mallows_shuffle(input_domain, input_metric, shuffler):
    """Measurement: the d_sigma-private Mallows shuffler (Alg. 1 of Meehan et al.) on a sized vector.

    The function releases the ``n`` reports in the order drawn by ``shuffler`` (exact sampler, OS
    CSPRNG). The input metric is :func:`dsigma_distance` of a grouping ``G'`` and the output
    measure is OpenDP's native ``max_divergence()``: ``map(d_in) = alpha' * d_in`` (rounded up),
    where ``alpha'`` is the d_sigma parameter w.r.t. ``G'`` computed by
    :meth:`shuffle_accounting.dsigma.DSigmaAccountant.add_shuffler` (the shuffler's own ``alpha``
    when ``G' = G``, Thm 4.4 regrouping otherwise); a chain of ``d_in`` neighbouring steps
    multiplies the likelihood ratio at most ``d_in`` times.

    Encoding (why): d_sigma privacy *is* pure DP for the neighbouring-sequence relation, so a
    user-defined *metric* plus the native measure is the most OpenDP-native form: composition over
    several releases is ``dp.c.make_composition`` (adds the alphas: Thm A.2, which needs the same
    grouping -- guaranteed because the metrics must be equal), and the measurement works in a
    ``Context`` whose privacy unit is ``(dsigma_distance(G), 1)``.

    Args:
        input_domain: ``dp.vector_domain(dp.atom_domain(...), size=shuffler.n)``.
        input_metric: ``dsigma_distance(G')`` for the grouping the guarantee is stated for.
        shuffler: A :class:`shuffle_accounting.dsigma.MallowsShuffler`.

    Returns:
        An OpenDP ``Measurement`` with output measure ``max_divergence()``.

    Raises:
        ParameterError: On a wrong shuffler, domain size or metric.
        FeatureNotEnabledError: If ``"contrib"`` or ``"honest-but-curious"`` is not enabled.

    Example:
        >>> import opendp.prelude as dp
        >>> from shuffle_accounting.dsigma import MallowsShuffler
        >>> dp.enable_features("contrib", "honest-but-curious")
        >>> G = [[0, 1], [0, 1], [2, 3], [2, 3]]
        >>> sh = MallowsShuffler(G, alpha=1.0)
        >>> space = dp.vector_domain(dp.atom_domain(T=str), size=4), dsigma_distance(G)
        >>> meas = space >> then_mallows_shuffle(sh)
        >>> sorted(meas(["a", "b", "c", "d"])), round(meas.map(1), 12)  # alpha (rounded up)
        (['a', 'b', 'c', 'd'], 1.0)
        >>> round(dp.c.make_composition([meas, meas]).map(1), 12)  # Thm A.2: alphas add
        2.0
    """
    from ..dsigma import DSigmaAccountant, MallowsShuffler  # noqa: PLC0415

    if not isinstance(shuffler, MallowsShuffler):
        raise ParameterError(
            f"shuffler must be a shuffle_accounting.dsigma.MallowsShuffler, got {shuffler!r}"
        )
    dp = _opendp()
    _require_features(dp)
    if (
        not str(getattr(input_domain, "type", "")).startswith("VectorDomain<")
        or input_domain.size != shuffler.n
    ):
        raise ParameterError(
            f"input_domain must be a vector_domain(..., size={shuffler.n}) (one report per user), got {input_domain!r}"
        )
    groups = getattr(input_metric, "descriptor", None)
    if not str(input_metric).startswith("DSigmaDistance(") or not isinstance(groups, tuple):
        raise ParameterError(f"input_metric must be dsigma_distance(groups), got {input_metric!r}")
    if len(groups) != shuffler.n:
        raise ParameterError(
            f"input_metric must describe a grouping of the shuffler's {shuffler.n} users, got {len(groups)} groups"
        )
    alpha = DSigmaAccountant([list(g) for g in groups]).add_shuffler(shuffler).alpha

    def function(values):
        return shuffler.shuffle(list(values))

    def privacy_map(d_in):
        d = check_int("d_in", d_in, minimum=0)
        if d == 0:
            return 0.0
        if math.isinf(alpha):
            return math.inf
        return alpha if d == 1 else math.nextafter(math.nextafter(d * alpha, math.inf), math.inf)

    meas = dp.m.make_user_measurement(input_domain, input_metric, dp.max_divergence(), function, privacy_map)
    return _attach(meas, shuffler)


def then_mallows_shuffle(shuffler):
    """Partial of :func:`make_mallows_shuffle` (fixes the input space when chained with ``>>``)."""
    from opendp.mod import _PartialConstructor  # noqa: PLC0415 - optional dependency

    return _PartialConstructor(
        lambda input_domain, input_metric: make_mallows_shuffle(input_domain, input_metric, shuffler)
    )


# ------------------------------------------------------------------------------------------------
# Deprecated constructor of the 0.1 adapter
# ------------------------------------------------------------------------------------------------


def make_shuffled_krr_approx(
    categories: Any, eps0: float, n_min: int | None = None, rounds: int = 1, *, delta: float
):
    """Deprecated: use ``make_shuffled_krr(domain, metric, categories, eps0, delta=...)``.

    Same measurement as before on ``vector_domain(atom_domain(T), size=n_min)`` with
    ``symmetric_distance()``; undeclared values are now counted as the first category instead of
    raising (``null_category=False`` keeps the ``k``-bin output), and the OpenDP features are no
    longer enabled for you.

    Example:
        >>> import warnings, opendp.prelude as dp
        >>> dp.enable_features("contrib", "honest-but-curious")
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     meas = make_shuffled_krr_approx(["a", "b", "c"], eps0=1.0, n_min=100, delta=1e-6)
        >>> meas.map(2)[1]
        1e-06
    """
    warnings.warn(
        "make_shuffled_krr_approx(categories, eps0, n_min, rounds, delta=...) is deprecated; use "
        "make_shuffled_krr(dp.vector_domain(dp.atom_domain(T=...), size=n), dp.symmetric_distance(), "
        "categories, eps0, rounds=..., delta=...)",
        DeprecationWarning,
        stacklevel=2,
    )
    labels, atom = _labels(categories)
    ShuffledCollection(labels, eps0, 1, rounds)  # validate before OpenDP
    delta = check_delta("delta", delta)
    if n_min is None:
        raise ParameterError("n_min must be an integer >= 1 (the batch size, the domain's size), got None")
    n_min = check_int("n_min", n_min, minimum=1)
    dp = _opendp()
    _require_features(dp)
    domain = dp.vector_domain(dp.atom_domain(T=atom), size=n_min)
    return make_shuffled_krr(
        domain, dp.symmetric_distance(), labels, eps0, rounds=rounds, delta=delta, null_category=False
    )


def _register() -> None:
    """Register the constructors in OpenDP's Context API (``query().shuffled_krr(...)``)."""
    try:
        from opendp import context  # noqa: PLC0415
    except ImportError:
        return
    for constructor in (make_shuffled_krr, make_mallows_shuffle):
        name = constructor.__name__[len("make_") :]
        if name not in context.constructors:  # idempotent (module reloads)
            context.register(constructor)


_register()
