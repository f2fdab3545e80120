"""diffprivlib (0.6.6) glue: a shuffled k-RR mechanism and a budget-spending histogram tool.

* :class:`ShuffledKRR` — a ``diffprivlib.mechanisms.DPMechanism`` whose ``epsilon`` is the
  certified *central* epsilon of shuffled k-RR at the given ``delta`` (privacy-blanket bound of
  :class:`shuffle_accounting.ShuffledKRR`, computed for the exact-rational randomizer actually run).
  Unlike diffprivlib's scalar mechanisms, :meth:`ShuffledKRR.randomise` takes a **whole dataset**
  (the ``n`` users' category codes ``0 .. k-1``) and returns the released histogram: amplification
  by shuffling only exists for the batch.
* :func:`shuffled_histogram` — a diffprivlib-style tool: it checks the budget on the (default)
  ``BudgetAccountant``, releases the histogram, then spends ``(epsilon, delta)``, like
  ``diffprivlib.tools`` do. diffprivlib mechanisms never spend budget themselves.

diffprivlib is imported lazily: ``import shuffle_accounting.adapters.diffprivlib`` works without it,
and using :class:`ShuffledKRR` or :func:`shuffled_histogram` raises an ``ImportError`` saying
``pip install 'shuffle-accounting[diffprivlib]'`` (diffprivlib 0.6.6 needs ``scikit-learn<1.9``).

Randomness: ``random_state=None`` means private mode (OS CSPRNG, exact integer sampling). An int
seed or a ``numpy.random.RandomState`` selects simulation mode, which is reproducible and NOT
private.
"""

from __future__ import annotations

import numbers
import secrets
from typing import Any

import numpy as np

from .._validation import ParameterError, check_delta, check_int, check_real

__all__ = ["ShuffledKRR", "shuffled_histogram"]

_INSTALL_HINT = (
    "shuffle_accounting.adapters.diffprivlib needs diffprivlib 0.6.6 (with scikit-learn<1.9): "
    "install it with pip install 'shuffle-accounting[diffprivlib]'"
)


def _diffprivlib():
    try:
        import diffprivlib  # noqa: PLC0415 - optional dependency
        from diffprivlib.accountant import BudgetAccountant  # noqa: PLC0415
        from diffprivlib.mechanisms.base import DPMechanism  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return diffprivlib, DPMechanism, BudgetAccountant


def _runtime_rng(random_state: Any) -> Any:
    """Map diffprivlib's ``random_state`` to the runtime's ``rng`` (None = private mode)."""
    if random_state is None or isinstance(random_state, secrets.SystemRandom):
        return None
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(0, 2**31 - 1)))
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    raise ParameterError(
        "random_state must be None (private), an int seed, a numpy RandomState or Generator "
        f"(simulation only, not private), got {random_state!r}"
    )


def _build_mechanism_class():
    _, DPMechanism, _ = _diffprivlib()

    class ShuffledKRR(DPMechanism):
        """Shuffled k-ary randomized response as a diffprivlib mechanism.

        Each of the ``n`` users applies k-RR with local epsilon ``epsilon_local``; the reports are
        shuffled and only their histogram is released. ``epsilon`` is the certified central
        epsilon at ``delta`` (an upper bound; privacy-blanket divergence, Balle, Bell, Gascon,
        Nissim, CRYPTO 2019), computed for the implemented mechanism's effective local epsilon.

        Args:
            epsilon_local: Local epsilon of each report (finite, > 0).
            k: Number of categories (integer >= 2); data are codes ``0 .. k-1``.
            n: Users per batch (integer >= 2); :meth:`randomise` needs at least ``n`` values.
            delta: Central delta in (0, 1).
            random_state: ``None`` (private) or a seed/``RandomState`` (simulation, NOT private).

        Raises:
            ParameterError: On invalid parameters (before diffprivlib checks them).

        Example:
            >>> mech = ShuffledKRR(epsilon_local=2.0, k=4, n=1000, delta=1e-6, random_state=0)
            >>> 0 < mech.epsilon < 2.0, mech.delta
            (True, 1e-06)
            >>> hist = mech.randomise([0] * 500 + [1] * 500)
            >>> hist.shape, int(hist.sum())
            ((4,), 1000)
        """

        def __init__(self, *, epsilon_local, k, n, delta, random_state=None):
            from ..runtime import KRRRandomizer  # noqa: PLC0415
            from ..shuffled_krr import ShuffledKRR as _Certified  # noqa: PLC0415

            eps_local = check_real("epsilon_local", epsilon_local, low=0.0, low_open=True)
            k = check_int("k", k, minimum=2)
            n = check_int("n", n, minimum=2)
            delta = check_delta("delta", delta)
            rng = _runtime_rng(random_state)
            randomizer = KRRRandomizer(k, eps_local)
            epsilon = float(_Certified(k, randomizer.effective_eps0, n).epsilon(delta))
            super().__init__(epsilon=epsilon, delta=delta, random_state=random_state)
            self.epsilon_local = eps_local
            self.k = k
            self.n = n
            self._randomizer = randomizer
            self._sim_rng = rng

        def __repr__(self):
            return (
                f"ShuffledKRR(epsilon_local={self.epsilon_local!r}, k={self.k}, n={self.n}, "
                f"delta={self.delta!r}) with central epsilon={self.epsilon!r}"
            )

        def _codes(self, value):
            codes = self._randomizer.encode(value)
            if codes.size < self.n:
                raise ParameterError(
                    f"value must be a dataset of at least n = {self.n} category codes, got {codes.size}"
                )
            return codes

        def randomise(self, value):
            """Release the shuffled k-RR histogram of a whole dataset.

            Args:
                value: Sequence of at least ``n`` category codes in ``[0, k)``.

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
            self._codes(value)  # validates the dataset
            return np.zeros(self.k)

        def variance(self, value):
            """Variance of each denoised count at dataset ``value``.

            ``Var = (c_j p(1-p) + (n - c_j) pbar(1-pbar)) / (p - pbar)^2`` with the exact ``p, pbar``
            of the implemented randomizer and ``c_j`` the true counts.
            """
            return self._moments(value)

    ShuffledKRR.__module__ = __name__
    return ShuffledKRR


def __getattr__(name: str) -> Any:
    """Build :class:`ShuffledKRR` on first access (lazy import of diffprivlib, PEP 562)."""
    if name == "ShuffledKRR":
        cls = _build_mechanism_class()
        globals()[name] = cls  # later look-ups bypass __getattr__
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def shuffled_histogram(x, *, epsilon_local, k, delta, accountant=None, random_state=None):
    """Release a shuffled k-RR histogram of ``x``, checking and spending a diffprivlib budget.

    The spend is the certified central ``(epsilon, delta)`` of :class:`ShuffledKRR` with
    ``n = len(x)``. Like diffprivlib's tools, the budget is checked first (nothing is released if
    it would be exceeded) and spent after the release.

    Args:
        x: The dataset: category codes ``0 .. k-1`` (at least 2 users).
        epsilon_local: Local epsilon of each report (finite, > 0).
        k: Number of categories (integer >= 2).
        delta: Central delta in (0, 1).
        accountant: A ``diffprivlib.accountant.BudgetAccountant``; ``None`` uses the default one.
        random_state: ``None`` (private) or a seed/``RandomState`` (simulation, NOT private).

    Returns:
        ``int64`` array of ``k`` counts of the shuffled reports.

    Raises:
        ParameterError: On invalid parameters.
        diffprivlib.utils.BudgetError: If the accountant's budget would be exceeded.

    Example:
        >>> from diffprivlib.accountant import BudgetAccountant
        >>> acc = BudgetAccountant(epsilon=5, delta=1e-3)
        >>> hist = shuffled_histogram([0, 1, 2] * 100, epsilon_local=2.0, k=3, delta=1e-6,
        ...                           accountant=acc, random_state=1)
        >>> int(hist.sum()), len(acc)
        (300, 1)
    """
    n = len(x) if hasattr(x, "__len__") else None
    if n is None:
        raise ParameterError(f"x must be a sequence of category codes, got {x!r}")
    # bad parameters are reported before diffprivlib is imported (it may be missing)
    check_real("epsilon_local", epsilon_local, low=0.0, low_open=True)
    check_int("k", k, minimum=2)
    check_int("n", n, minimum=2)
    check_delta("delta", delta)
    _runtime_rng(random_state)
    _, _, BudgetAccountant = _diffprivlib()
    mech = __getattr__("ShuffledKRR")(
        epsilon_local=epsilon_local, k=k, n=n, delta=delta, random_state=random_state
    )
    acc = BudgetAccountant.load_default(accountant)
    acc.check(mech.epsilon, mech.delta)
    hist = mech.randomise(x)
    acc.spend(mech.epsilon, mech.delta)
    return hist
