"""diffprivlib (0.6.6) glue: shuffled k-RR and the d_sigma Mallows shuffler, diffprivlib style.

* :func:`shuffled_histogram` — the diffprivlib-style tool (like ``diffprivlib.tools.histogram``):
  ``epsilon`` is the central epsilon you spend, the local ``eps0`` is calibrated to it (certified,
  :func:`shuffle_accounting.calibrate_eps0`), labels are accepted and ``(hist, categories)`` is
  returned. ``n_rounds`` rounds spend their tightly composed total (privacy-loss-distribution
  composition of :class:`shuffle_accounting.ShuffleAccountant`) **once** on the
  ``BudgetAccountant``: the budget is checked first (nothing is released if it would be
  exceeded), then spent after the release.
* :class:`ShuffledKRR` — a ``diffprivlib.mechanisms.DPMechanism`` whose ``epsilon`` is the
  certified *central* epsilon of shuffled k-RR at ``delta`` for a given local ``epsilon_local``.
  :meth:`ShuffledKRR.randomise` takes a **whole dataset** (the ``n`` users' category codes) and
  returns the released histogram: amplification by shuffling only exists for the batch.
* :class:`MallowsShuffle` — the d_sigma-private Mallows shuffler of :mod:`shuffle_accounting.dsigma`
  as a mechanism whose ``epsilon`` is its d_sigma ``alpha`` (d_sigma privacy is pure DP for
  neighbouring *orderings*), and :func:`mallows_shuffle`, the tool that spends it on a dedicated
  ``BudgetAccountant`` (summing alphas is Thm A.2's composition).
* :func:`reidentification_risk` — the Bayesian re-identification bound (Su, Cheng, Wang) of a
  :class:`ShuffledKRR` mechanism (also :meth:`ShuffledKRR.reidentification_risk`).

Undeclared values never raise (the error would depend on private data): a label that is not a
declared category is counted as the first category, a number outside the bin edges goes to the
nearest end bin and a non-number to the first bin (a fixed per-record map, so the guarantee is
unchanged; see :mod:`shuffle_accounting.adapters._common`).

Randomness: ``random_state=None`` means private mode (OS CSPRNG, exact integer sampling). An int
seed, a ``numpy.random.RandomState`` or a ``Generator`` selects simulation mode, which is
reproducible and NOT private (a ``diffprivlib.utils.PrivacyLeakWarning`` says so); any other
value raises.

diffprivlib is imported lazily: ``import shuffle_accounting.adapters.diffprivlib`` works without it,
and using the mechanisms or tools raises an ``ImportError`` saying
``pip install 'shuffle-accounting[diffprivlib]'`` (diffprivlib 0.6.6 needs ``scikit-learn<1.9``).
"""

from __future__ import annotations

import math
import numbers
import secrets
import warnings
from typing import Any

import numpy as np

from .._validation import ParameterError, check_delta, check_int, check_real
from ._common import ShuffledCollection

# MallowsShuffle and ShuffledKRR subclass diffprivlib classes: built on first access by __getattr__.
__all__ = ["MallowsShuffle", "ShuffledKRR", "mallows_shuffle", "reidentification_risk", "shuffled_histogram"]  # noqa: F822

_INSTALL_HINT = (
    "shuffle_accounting.adapters.diffprivlib needs diffprivlib 0.6.6 (with scikit-learn<1.9): "
    "install it with pip install 'shuffle-accounting[diffprivlib]'"
)
#: Relative tolerance of the eps0 calibration (one round; several rounds use 1e-2, each PLD
#: build being costly). Only utility depends on it: the spend is always the certified value.
_RTOL_ONE_ROUND = 1e-4
_RTOL_ROUNDS = 1e-2


def import_diffprivlib():
    try:
        import diffprivlib  # noqa: PLC0415 - optional dependency
        from diffprivlib.accountant import BudgetAccountant  # noqa: PLC0415
        from diffprivlib.mechanisms.base import DPMechanism  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return diffprivlib, DPMechanism, BudgetAccountant


def _runtime_rng(random_state: Any, *, warn: bool = False) -> Any:
    """Map diffprivlib's ``random_state`` to the runtime's ``rng`` (None = private mode)."""
    if random_state is None or isinstance(random_state, secrets.SystemRandom):
        return None
    if isinstance(random_state, np.random.RandomState):
        rng = np.random.default_rng(int(random_state.randint(0, 2**31 - 1)))
    elif isinstance(random_state, np.random.Generator):
        rng = random_state
    elif isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_)):
        rng = np.random.default_rng(int(random_state))
    else:
        raise ParameterError(
            "random_state must be None (private), an int seed, a numpy RandomState or Generator "
            f"(simulation only, not private), got {random_state!r}"
        )
    if warn:
        from diffprivlib.utils import PrivacyLeakWarning  # noqa: PLC0415

        warnings.warn(
            "random_state set: simulation mode (reproducible pseudo-randomness), the release is NOT "
            "private; use random_state=None for the OS CSPRNG",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    return rng


def _build_classes():
    _, DPMechanism, _ = import_diffprivlib()

    class ShuffledKRR(DPMechanism):  # type: ignore[valid-type,misc]  # imported lazily
        """Shuffled k-ary randomized response as a diffprivlib mechanism.

        Each of the ``n`` users applies k-RR with local epsilon ``epsilon_local``; the reports are
        shuffled and only their histogram is released. ``epsilon`` is the certified central
        epsilon at ``delta`` (an upper bound; privacy-blanket divergence, Balle, Bell, Gascon,
        Nissim, CRYPTO 2019), computed for the implemented mechanism's effective local epsilon.

        Args:
            epsilon_local: Local epsilon of each report (finite, > 0).
            k: Number of categories (integer >= 2); data are codes ``0 .. k-1``.
            n: Users per batch (integer >= 1); :meth:`randomise` needs at least ``n`` values.
            delta: Central delta in (0, 1).
            random_state: ``None`` (private) or a seed/``RandomState`` (simulation, NOT private).

        Raises:
            ParameterError: On invalid parameters (before diffprivlib checks them).

        Example:
            >>> mech = ShuffledKRR(epsilon_local=2.0, k=4, n=1000, delta=1e-6)
            >>> 0 < mech.epsilon < 2.0, mech.delta
            (True, 1e-06)
            >>> hist = mech.randomise([0] * 500 + [1] * 499 + [17])  # 17: counted as code 0
            >>> hist.shape, int(hist.sum())
            ((4,), 1000)
        """

        def __init__(self, *, epsilon_local, k, n, delta, random_state=None):
            eps_local = check_real("epsilon_local", epsilon_local, low=0.0, low_open=True)
            k = check_int("k", k, minimum=2)
            n = check_int("n", n, minimum=1)
            delta = check_delta("delta", delta)
            rng = _runtime_rng(random_state)
            coll = ShuffledCollection(k, eps_local, n)
            epsilon = coll.epsilon(delta)
            super().__init__(epsilon=epsilon, delta=delta, random_state=random_state)
            self.epsilon_local = eps_local
            self.k = k
            self.n = n
            self._collection = coll
            self._randomizer = coll.randomizer
            self._sim_rng = rng

        def __repr__(self):
            return (
                f"ShuffledKRR(epsilon_local={self.epsilon_local!r}, k={self.k}, n={self.n}, "
                f"delta={self.delta!r}) with central epsilon={self.epsilon!r}"
            )

        def _codes(self, value):
            codes = self._collection.encode(value)  # total: undeclared codes -> code 0
            if codes.size < self.n:
                raise ParameterError(
                    f"value must be a dataset of at least n = {self.n} category codes, got {codes.size}"
                )
            return codes

        def randomise(self, value):
            """Release the shuffled k-RR histogram of a whole dataset.

            Args:
                value: Sequence of at least ``n`` category codes in ``[0, k)`` (any other value
                    is counted as code 0; it never raises because of a value).

            Returns:
                ``int64`` array of ``k`` counts.
            """
            from ..runtime import Shuffler  # noqa: PLC0415

            reports = self._randomizer.randomize_codes(self._codes(value), rng=self._sim_rng)
            return Shuffler(self.n).histogram(reports, self.k)

        def estimate(self, histogram):
            """Unbiased count estimate from a released histogram (k-RR matrix inversion)."""
            counts = np.asarray(histogram, dtype=float)
            freqs = self._randomizer.estimate(counts)
            return freqs * counts.sum()

        def _moments(self, value):
            codes = self._codes(value)
            true = np.bincount(codes, minlength=self.k).astype(float)
            n = float(codes.size)
            p = float(self._randomizer.p_exact)
            pbar = float(self._randomizer.pbar_exact)
            var_counts = true * p * (1 - p) + (n - true) * pbar * (1 - pbar)
            return var_counts / (p - pbar) ** 2

        def bias(self, value):
            """Bias of the denoised count estimate at dataset ``value``: zero (unbiased)."""
            self._codes(value)  # validates the dataset size
            return np.zeros(self.k)

        def variance(self, value):
            """Variance of each denoised count at dataset ``value``.

            ``Var = (c_j p(1-p) + (n - c_j) pbar(1-pbar)) / (p - pbar)^2`` with the exact ``p, pbar``
            of the implemented randomizer and ``c_j`` the true counts.
            """
            return self._moments(value)

        def reidentification_risk(self):
            """Bayesian re-identification risk of one shuffled batch (Su, Cheng, Wang).

            Returns :class:`shuffle_accounting.reidentification.ReidentificationRisk` for the
            implemented k-RR (effective ``eps0``) and ``n`` users; ``.bound()`` is the certified
            upper bound on the adversary's success probability.
            """
            from ..reidentification import ReidentificationRisk  # noqa: PLC0415

            return ReidentificationRisk(self._randomizer.krr, self.n)

    class MallowsShuffle(DPMechanism):  # type: ignore[valid-type,misc]  # imported lazily
        """The d_sigma-private Mallows shuffler as a diffprivlib mechanism.

        ``epsilon`` is the shuffler's d_sigma ``alpha`` w.r.t. ``groups`` (default: its own
        grouping; another grouping is accounted by Thm 4.4 through
        :meth:`shuffle_accounting.dsigma.DSigmaAccountant.add_shuffler`), ``delta = 0``:
        (alpha, G)-d_sigma privacy is pure DP between *orderings* of the same reports that differ
        within one group (Meehan et al., *Privacy Implications of Shuffling*, Def. 4.3). It is
        NOT a guarantee about the values: keep its budget on a dedicated ``BudgetAccountant``
        (one per grouping), never on the one holding DP spends (see :func:`mallows_shuffle`).

        Args:
            shuffler: A :class:`shuffle_accounting.dsigma.MallowsShuffler` with ``0 < alpha < inf``.
            groups: The grouping the guarantee is stated for (default: the shuffler's).
            random_state: ``None`` (private) or a seed/``RandomState`` (simulation, NOT private).

        Raises:
            ParameterError: On a wrong shuffler or grouping, or an alpha of 0 or inf (which
                diffprivlib cannot express: 0 is a uniform shuffle, inf no shuffle at all).

        Example:
            >>> from shuffle_accounting.dsigma import MallowsShuffler
            >>> mech = MallowsShuffle(MallowsShuffler([[0, 1], [0, 1], [2]], alpha=1.0))
            >>> round(mech.epsilon, 12), mech.delta
            (1.0, 0.0)
            >>> sorted(mech.randomise(["x", "y", "z"]))
            ['x', 'y', 'z']
        """

        def __init__(self, shuffler, *, groups=None, random_state=None):
            from ..dsigma import DSigmaAccountant, MallowsShuffler  # noqa: PLC0415

            if not isinstance(shuffler, MallowsShuffler):
                raise ParameterError(
                    f"shuffler must be a shuffle_accounting.dsigma.MallowsShuffler, got {shuffler!r}"
                )
            rng = _runtime_rng(random_state)
            alpha = (
                DSigmaAccountant(shuffler.groups if groups is None else groups).add_shuffler(shuffler).alpha
            )
            if not 0.0 < alpha < math.inf:
                raise ParameterError(
                    f"alpha must be in (0, inf) to be a diffprivlib epsilon, got {alpha!r} "
                    "(0: uniform shuffle, inf: identity)"
                )
            super().__init__(epsilon=alpha, delta=0.0, random_state=random_state)
            self.shuffler = shuffler
            self.alpha = alpha
            self._sim_rng = rng

        def __repr__(self):
            return f"MallowsShuffle({self.shuffler!r}) with d_sigma alpha={self.alpha!r}"

        def randomise(self, value):
            """Release the ``n`` reports (``value[i]`` from user ``i``) in d_sigma-private order."""
            return self.shuffler.shuffle(value, rng=self._sim_rng)

        def bias(self, value):
            """Order-agnostic statistics are unbiased; a permutation has no numeric bias."""
            raise NotImplementedError("a shuffle has no numeric bias")

        def variance(self, value):
            """Not defined for a permutation."""
            raise NotImplementedError("a shuffle has no numeric variance")

    for cls in (ShuffledKRR, MallowsShuffle):
        cls.__module__ = __name__
    return {"ShuffledKRR": ShuffledKRR, "MallowsShuffle": MallowsShuffle}


def __getattr__(name: str) -> Any:
    """Build the mechanism classes on first access (lazy import of diffprivlib, PEP 562)."""
    if name in ("ShuffledKRR", "MallowsShuffle"):
        if name in globals():
            return globals()[name]
        classes = _build_classes()
        globals().update(classes)  # later look-ups bypass __getattr__
        return classes[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def reidentification_risk(mechanism):
    """Bayesian re-identification risk of a :class:`ShuffledKRR` mechanism (Su, Cheng, Wang).

    Same reading as :func:`shuffle_accounting.adapters.opendp.reidentification_risk`.

    Raises:
        ParameterError: If ``mechanism`` is not a :class:`ShuffledKRR`.

    Example:
        >>> mech = __getattr__("ShuffledKRR")(epsilon_local=1.0, k=2, n=100, delta=1e-6)
        >>> round(reidentification_risk(mech).bound(), 4)
        0.0272
    """
    if not isinstance(mechanism, __getattr__("ShuffledKRR")):
        raise ParameterError(f"mechanism must be a ShuffledKRR mechanism of this module, got {mechanism!r}")
    return mechanism.reidentification_risk()


def bin_codes(sample, edges: np.ndarray) -> np.ndarray:
    """Total binning like ``numpy.histogram`` (last bin closed); outside -> end bins, non-numbers -> 0."""
    nbins = edges.size - 1
    out = np.zeros(len(sample), dtype=np.int64)
    for i, v in enumerate(sample):
        try:
            x = float(v)
        except (TypeError, ValueError):
            continue
        if math.isnan(x):
            continue
        j = int(np.searchsorted(edges, x, side="right")) - 1
        out[i] = min(max(j, 0), nbins - 1)
    return out


def _check_bins(categories, bins) -> tuple[Any, np.ndarray | None]:
    """Return ``(labels, edges)``: labels for the randomizer, edges when numeric bins are used."""
    if (categories is None) == (bins is None):
        raise ParameterError(
            "categories or bins must be given (exactly one of them): categories = the declared "
            "labels, bins = an integer k (codes 0..k-1) or increasing bin edges"
        )
    if categories is not None:
        if isinstance(categories, (str, bytes)) or not hasattr(categories, "__len__"):
            raise ParameterError(
                f"categories must be a sequence of at least two distinct labels, got {categories!r}"
            )
        return list(categories), None
    if isinstance(bins, numbers.Integral) and not isinstance(bins, (bool, np.bool_)):
        return check_int("bins", bins, minimum=2), None
    try:
        edges = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        edges = np.array([])
    if edges.ndim != 1 or edges.size < 3 or not np.all(np.isfinite(edges)) or not np.all(np.diff(edges) > 0):
        raise ParameterError(
            f"bins must be an integer k >= 2 or at least 3 finite, strictly increasing edges, got {bins!r}"
        )
    return edges.size - 1, edges


def _label_array(labels: tuple) -> np.ndarray:
    """Labels as a 1-D array, keeping mixed types as Python objects."""
    same = len({type(v) for v in labels}) == 1
    arr = np.asarray(labels) if same else None
    if arr is None or arr.shape != (len(labels),):
        arr = np.empty(len(labels), dtype=object)
        arr[:] = labels
    return arr


def calibrated_collection(labels, n: int, epsilon: float, delta: float, rounds: int) -> ShuffledCollection:
    """Collection whose certified composed epsilon (at its effective eps0) is ``<= epsilon``."""
    from ..shuffled_krr import calibrate_eps0  # noqa: PLC0415
    from ..shuffled_krr.calibration import EPS0_CAP  # noqa: PLC0415

    k = len(labels) if not isinstance(labels, int) else labels
    rtol = _RTOL_ONE_ROUND if rounds == 1 else _RTOL_ROUNDS
    try:
        eps0 = calibrate_eps0(k, n, epsilon, delta, rounds, rtol=rtol)
    except ParameterError:
        if ShuffledCollection(labels, EPS0_CAP, n, rounds).epsilon(delta) > epsilon:
            raise
        eps0 = EPS0_CAP  # local privacy does not limit this deployment
    for _ in range(8):
        coll = ShuffledCollection(labels, eps0, n, rounds)
        if coll.epsilon(delta) <= epsilon:
            return coll
        eps0 *= 1 - 1e-9  # the sampler's exact eps0 is a hair above the calibrated one
    coll = ShuffledCollection(labels, epsilon / rounds, n, rounds)  # pure DP: rounds * eps0 <= epsilon
    return coll


def shuffled_histogram(
    sample,
    epsilon: float | None = None,
    *,
    delta: float | None = None,
    categories: Any = None,
    bins: Any = None,
    n_rounds: int = 1,
    accountant=None,
    random_state=None,
    **legacy,
):
    """Shuffled k-RR histogram of ``sample`` that spends ``epsilon`` (central) on a ``BudgetAccountant``.

    Like ``diffprivlib.tools.histogram``: the budget is checked first (nothing is released if it
    would be exceeded), the release is made, then the spend is recorded. The local ``eps0`` is the
    largest certified for ``(epsilon, delta)`` over ``n_rounds`` rounds on ``n = len(sample)``
    users (:func:`shuffle_accounting.calibrate_eps0`; the exact sampler's ``eps0``, a hair above,
    is checked again). The amount spent is the certified composed epsilon of the rounds actually
    run (``ShuffledKRR.epsilon`` for one round, ``ShuffleAccountant`` PLD composition for several),
    which is ``<= epsilon``, with ``delta``: all rounds are spent **once**, as one entry.
    With ``n_rounds > 1`` the calibration bisects over PLD builds (seconds each, to a relative
    1e-2 in eps0); only utility depends on that tolerance, never the spend.

    Args:
        sample: The dataset, a 1-D sequence (labels, integer codes or numbers).
        epsilon: Central epsilon to spend (finite, > 0).
        delta: Central delta in (0, 1).
        categories: The declared labels (undeclared values count as the first one).
        bins: Instead of ``categories``: an integer ``k`` (codes ``0..k-1``) or increasing edges
            (values binned like ``numpy.histogram``; outside -> nearest end bin, non-numbers -> bin 0).
        n_rounds: Number of independent rounds on the same users (integer >= 1).
        accountant: A ``diffprivlib.accountant.BudgetAccountant``; ``None`` uses the default one.
        random_state: ``None`` (private, OS CSPRNG) or a seed / ``RandomState`` / ``Generator``
            (simulation, NOT private, warned with ``PrivacyLeakWarning``).

    Returns:
        ``(hist, categories)``: ``hist`` an ``int64`` array of ``k`` counts (shape
        ``(n_rounds, k)`` for several rounds), ``categories`` the labels (``categories``), the
        codes ``0..k-1`` (integer ``bins``) or the edges.

    Raises:
        ParameterError: On invalid parameters (before diffprivlib is imported).
        diffprivlib.utils.BudgetError: If the accountant's budget would be exceeded.

    Example:
        >>> from diffprivlib.accountant import BudgetAccountant
        >>> acc = BudgetAccountant(epsilon=5, delta=1e-3)
        >>> hist, cats = shuffled_histogram(["x", "y", "z", "w"] * 100, 1.0, delta=1e-6,
        ...                                 categories=["x", "y", "z"], accountant=acc)
        >>> int(hist.sum()), cats.tolist(), len(acc)
        (400, ['x', 'y', 'z'], 1)
        >>> 0.99 < acc.total()[0] <= 1.0  # the certified spend, calibrated to epsilon
        True
    """
    if legacy:
        return _legacy_histogram(
            sample, delta=delta, accountant=accountant, random_state=random_state, **legacy
        )
    if isinstance(sample, (str, bytes)) or not hasattr(sample, "__len__"):
        raise ParameterError(f"sample must be a 1-D sequence of values, got {sample!r}")
    if epsilon is None:
        raise ParameterError("epsilon must be a finite real number > 0 (the central epsilon spent), got None")
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    if delta is None:
        raise ParameterError("delta must be a real number in (0, 1) (the central delta spent), got None")
    delta = check_delta("delta", delta)
    n_rounds = check_int("n_rounds", n_rounds, minimum=1)
    n = check_int("n", len(sample), minimum=1)
    labels, edges = _check_bins(categories, bins)
    ShuffledCollection(labels, 1.0, n)  # validates the labels before any import or computation
    _runtime_rng(random_state)
    _, _, BudgetAccountant = import_diffprivlib()
    rng = _runtime_rng(random_state, warn=True)
    acc = BudgetAccountant.load_default(accountant)
    coll = calibrated_collection(labels, n, epsilon, delta, n_rounds)
    spent = coll.epsilon(delta)
    acc.check(spent, delta)
    values = bin_codes(sample, edges) if edges is not None else sample
    hists = np.asarray(coll.release(values, rng=rng), dtype=np.int64)
    acc.spend(spent, delta)
    if edges is not None:
        out_categories = edges
    elif isinstance(labels, int):
        out_categories = np.arange(labels)
    else:
        out_categories = _label_array(coll.labels)
    return (hists[0] if n_rounds == 1 else hists), out_categories


def _legacy_histogram(
    x, *, epsilon_local=None, k=None, delta=None, accountant=None, random_state=None, **extra
):
    """The 0.1 signature ``shuffled_histogram(x, *, epsilon_local, k, delta, ...)`` (deprecated)."""
    if extra:
        raise TypeError(f"shuffled_histogram() got unexpected keyword arguments {sorted(extra)}")
    warnings.warn(
        "shuffled_histogram(x, epsilon_local=..., k=..., delta=...) is deprecated; use "
        "shuffled_histogram(sample, epsilon, delta=..., bins=k) (epsilon = central epsilon spent; "
        "returns (hist, categories))",
        DeprecationWarning,
        stacklevel=3,
    )
    n = len(x) if hasattr(x, "__len__") else None
    if n is None:
        raise ParameterError(f"x must be a sequence of category codes, got {x!r}")
    check_real("epsilon_local", epsilon_local, low=0.0, low_open=True)
    check_int("k", k, minimum=2)
    check_int("n", n, minimum=1)
    check_delta("delta", delta)
    _runtime_rng(random_state)
    _, _, BudgetAccountant = import_diffprivlib()
    mech = __getattr__("ShuffledKRR")(
        epsilon_local=epsilon_local, k=k, n=n, delta=delta, random_state=random_state
    )
    acc = BudgetAccountant.load_default(accountant)
    acc.check(mech.epsilon, mech.delta)
    hist = mech.randomise(x)
    acc.spend(mech.epsilon, mech.delta)
    return hist


def mallows_shuffle(reports, shuffler, *, accountant, groups=None, random_state=None):
    """Release ``reports`` in d_sigma-private order, spending the shuffler's alpha on ``accountant``.

    ``accountant`` is required and must be a ``BudgetAccountant`` dedicated to this grouping's
    d_sigma ledger (d_sigma alphas are not DP epsilons about the values; Thm A.2 composition over
    several releases for the same grouping is the sum of the alphas, which is what
    ``BudgetAccountant`` computes for pure spends). Checked before, spent after the release.

    Args:
        reports: The ``n`` reports, ``reports[i]`` from user ``i``.
        shuffler: A :class:`shuffle_accounting.dsigma.MallowsShuffler`.
        accountant: The d_sigma ``BudgetAccountant``.
        groups: Grouping of the guarantee (default: the shuffler's).
        random_state: ``None`` (private) or a seed (simulation, NOT private, warned).

    Returns:
        The shuffled reports (a list, or an array for array input).

    Raises:
        ParameterError: On invalid arguments.
        diffprivlib.utils.BudgetError: If the alpha budget would be exceeded.

    Example:
        >>> from diffprivlib.accountant import BudgetAccountant
        >>> from shuffle_accounting.dsigma import MallowsShuffler
        >>> ledger = BudgetAccountant(epsilon=3.0, delta=0.0)
        >>> sh = MallowsShuffler([[0, 1], [0, 1], [2, 3], [2, 3]], alpha=1.0)
        >>> out = mallows_shuffle(["a", "b", "c", "d"], sh, accountant=ledger)
        >>> _ = mallows_shuffle(["a", "b", "c", "d"], sh, accountant=ledger)
        >>> round(ledger.total()[0], 12)  # Thm A.2: alphas add
        2.0
    """
    _, _, BudgetAccountant = import_diffprivlib()
    if not isinstance(accountant, BudgetAccountant):
        raise ParameterError(
            f"accountant must be a diffprivlib BudgetAccountant dedicated to the d_sigma ledger, got {accountant!r}"
        )
    _runtime_rng(random_state)
    if random_state is not None:
        _runtime_rng(random_state, warn=True)
    mech = __getattr__("MallowsShuffle")(shuffler, groups=groups, random_state=random_state)
    accountant.check(mech.epsilon, 0.0)
    out = mech.randomise(reports)
    accountant.spend(mech.epsilon, 0.0)
    return out
