"""Local randomizers as exact mathematical objects (no sampling here; see ``runtime``).

* :class:`KRR` — k-ary randomized response with local privacy ``eps0``: a user holding ``x`` reports
  ``x`` with probability ``p = e^eps0 / (e^eps0 + k - 1)`` and each other value with probability
  ``pbar = 1 / (e^eps0 + k - 1)``.
* :class:`FiniteRandomizer` — any finite randomizer given by its row-stochastic channel matrix
  (rows = inputs, columns = outputs).

Both expose the *privacy-blanket* decomposition of Balle, Bell, Gascón, Nissim, *The Privacy
Blanket of the Shuffle Model* (CRYPTO 2019), Sec. 3: ``R(x) = (1 - gamma) W_x + gamma * omega``
with ``omega(y) = min_x R(x)(y) / gamma`` and ``gamma = sum_y min_x R(x)(y)``. For k-RR,
``gamma = k / (e^eps0 + k - 1)`` and ``omega`` is uniform.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._validation import ParameterError, check_int, check_real, check_stochastic_matrix

__all__ = ["KRR", "FiniteRandomizer", "CloneDecomposition", "BlanketDecomposition"]


@dataclass(frozen=True)
class BlanketDecomposition:
    """``R(x) = (1 - gamma) * residual[x] + gamma * blanket`` for every input ``x``.

    Attributes:
        gamma: Total blanket mass ``sum_y min_x R(x)(y)`` in ``[0, 1]``.
        blanket: The blanket distribution ``omega`` over outputs (length = number of outputs).
        residual: Row-stochastic matrix of the input-dependent parts (rows = inputs); a row is
            arbitrary (uniform) when ``gamma == 1``.
    """

    gamma: float
    blanket: np.ndarray = field(repr=False)
    residual: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class CloneDecomposition:
    """Clone decomposition for a fixed pair of inputs ``(x0, x1)``.

    Every row ``x`` of the channel satisfies
    ``R(x) = beta * R(x0) + beta * R(x1) + (1 - 2 beta) * residual[x]``
    (rows ``x0`` and ``x1`` are only given for completeness: for them the identity is trivial
    with their own row as residual). For k-RR the largest such ``beta`` is
    ``pbar / (p + pbar) = 1 / (e^eps0 + 1)`` (Feldman, McMillan, Talwar 2023, k-RR case); the
    generic eps0-LDP value is ``e^-eps0 / 2`` (Feldman, McMillan, Talwar 2021, Lemma 3.3).

    Attributes:
        x0: First reference input.
        x1: Second reference input.
        beta: Probability of each clone.
        residual: Row-stochastic matrix of leftover distributions (rows = inputs).
    """

    x0: int
    x1: int
    beta: float
    residual: np.ndarray = field(repr=False)


#: Largest k of :class:`KRR`: every count must be exact in float64.
MAX_K = 2**53
#: Largest k for which :class:`KRR` builds ``k x k`` arrays (matrix, decompositions): 4096^2
#: doubles = 128 MiB.
MAX_MATRIX_K = 4096


@dataclass(frozen=True)
class KRR:
    """k-ary randomized response with local privacy ``eps0``.

    ``P[R(x) = x] = p = e^eps0 / (e^eps0 + k - 1)`` and ``P[R(x) = y] = pbar = 1 / (e^eps0 + k - 1)``
    for each ``y != x``; ``p / pbar = e^eps0``.

    Args:
        k: Number of categories, an integer >= 2.
        eps0: Local privacy parameter, finite and > 0.

    Raises:
        ParameterError: If ``k`` is not an integer >= 2 or ``eps0`` is not finite and > 0.

    Example:
        >>> r = KRR(k=3, eps0=math.log(2))
        >>> round(r.p, 12), round(r.pbar, 12), round(r.gamma, 12)
        (0.5, 0.25, 0.75)
        >>> r.matrix.sum(axis=1)
        array([1., 1., 1.])
    """

    k: int
    eps0: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_int("k", self.k, minimum=2, maximum=MAX_K))
        object.__setattr__(self, "eps0", check_real("eps0", self.eps0, low=0.0, low_open=True))

    def _check_matrix_size(self, what: str) -> None:
        if self.k > MAX_MATRIX_K:
            raise ParameterError(
                f"k must be <= {MAX_MATRIX_K} for {what} (a k x k array), got k = {self.k}; "
                "use p, pbar and gamma, which are O(1)"
            )

    @property
    def log_p(self) -> float:
        """``log p = eps0 - log(e^eps0 + k - 1)``, computed without overflow."""
        return -math.log1p((self.k - 1) * math.exp(-self.eps0))

    @property
    def log_pbar(self) -> float:
        """``log pbar = -log(e^eps0 + k - 1)``, computed without overflow."""
        return -self.eps0 + self.log_p

    @property
    def p(self) -> float:
        """Probability of reporting the true value."""
        return math.exp(self.log_p)

    @property
    def pbar(self) -> float:
        """Probability of reporting one given other value."""
        return math.exp(self.log_pbar)

    @property
    def p_minus_pbar(self) -> float:
        """``p - pbar = 1 - gamma = (e^eps0 - 1) pbar``, computed without cancellation.

        The weight of the true value in the debiasing ``(c/n - pbar) / (p - pbar)`` and the
        non-blanket mass ``1 - gamma`` of the blanket decomposition.

        Example:
            >>> r = KRR(3, 1e-9)
            >>> abs(r.p_minus_pbar * 3e9 - 1) < 1e-8  # ~ eps0 / k; r.p - r.pbar loses 7 digits here
            True
        """
        return math.expm1(self.eps0) * self.pbar if self.eps0 < 700 else 1.0 - self.gamma

    @property
    def other_given_not_pair(self) -> float:
        """``(k - 2) pbar / (1 - 2 pbar) = (k - 2) / (e^eps0 - 1 + k - 2)``, never above 1.

        For the blanket counts of two values ``x0, x1``: the probability that a user whose report
        is not a blanket draw of ``x0`` or ``x1`` reports a third value by a blanket draw. Under the i.i.d. model of
        the blanket (each user reports ``x0`` or ``x1`` w.p. ``pbar`` each by a blanket draw, a third
        value w.p. ``(k - 2) pbar``, or its own value w.p. ``1 - gamma``), the conditional
        probability of "a third value" given "not a blanket draw of ``x0`` or ``x1``". Written with
        ``expm1`` so that it never rounds above 1 (at ``k = 3, eps0 = 1e-250`` the quotient form gave
        ``1 + 2^-52`` and a domain error downstream).

        Example:
            >>> KRR(3, 1e-250).other_given_not_pair <= 1.0
            True
        """
        return (self.k - 2) / (math.expm1(self.eps0) + (self.k - 2)) if self.k > 2 else 0.0

    @property
    def gamma(self) -> float:
        """Blanket mass ``k * pbar = k / (e^eps0 + k - 1)`` (Balle et al. 2019, Sec. 4.1)."""
        return self.k * self.pbar

    @property
    def matrix(self) -> np.ndarray:
        """The ``k x k`` channel matrix ``M[x, y] = P[R(x) = y]`` (``k <= MAX_MATRIX_K``)."""
        self._check_matrix_size("matrix")
        m = np.full((self.k, self.k), self.pbar)
        np.fill_diagonal(m, self.p)
        return m

    def blanket_decomposition(self) -> BlanketDecomposition:
        """``R(x) = (1 - gamma) * delta_x + gamma * Uniform([k])``.

        Returns:
            The decomposition, with ``residual`` the identity matrix.

        Example:
            >>> d = KRR(4, 1.0).blanket_decomposition()
            >>> bool(np.allclose((1 - d.gamma) * d.residual + d.gamma * d.blanket, KRR(4, 1.0).matrix))
            True
        """
        self._check_matrix_size("blanket_decomposition")
        return BlanketDecomposition(
            gamma=self.gamma, blanket=np.full(self.k, 1.0 / self.k), residual=np.eye(self.k)
        )

    def clone_decomposition(self, x0: int = 0, x1: int = 1) -> CloneDecomposition:
        """Clone decomposition with the k-RR-optimal ``beta = 1 / (e^eps0 + 1)``.

        For ``x`` not in ``{x0, x1}``: ``residual[x]`` puts ``pbar (e^eps0 + 2)`` on ``x``, ``pbar`` on
        every value outside ``{x0, x1, x}`` and 0 on ``x0, x1``.

        Args:
            x0: First reference input in ``[0, k)``.
            x1: Second reference input in ``[0, k)``, different from ``x0``.

        Raises:
            ParameterError: If ``x0``/``x1`` are out of range or equal.

        Example:
            >>> r = KRR(5, 1.5)
            >>> d = r.clone_decomposition(0, 1)
            >>> m = r.matrix
            >>> bool(np.allclose(d.beta * m[0] + d.beta * m[1] + (1 - 2 * d.beta) * d.residual[3], m[3]))
            True
        """
        x0 = check_int("x0", x0, minimum=0, maximum=self.k - 1)
        x1 = check_int("x1", x1, minimum=0, maximum=self.k - 1)
        if x0 == x1:
            raise ParameterError(f"x1 must differ from x0, got x0 = x1 = {x0}")
        self._check_matrix_size("clone_decomposition")
        beta = 1.0 / (math.exp(self.eps0) + 1.0) if self.eps0 < 700 else 0.0
        res = np.full((self.k, self.k), self.pbar)
        res[:, [x0, x1]] = 0.0
        np.fill_diagonal(res, self.pbar * (math.exp(self.eps0) + 2.0) if self.eps0 < 700 else 1.0)
        m = self.matrix
        res[x0] = m[x0]
        res[x1] = m[x1]
        return CloneDecomposition(x0=x0, x1=x1, beta=beta, residual=res)


@dataclass(frozen=True, eq=False)
class FiniteRandomizer:
    """Any finite local randomizer, given by its row-stochastic channel matrix.

    ``matrix[x, y] = P[R(x) = y]`` (rows = inputs, columns = outputs).

    Args:
        matrix: Row-stochastic matrix with at least 2 rows, finite non-negative entries.

    Raises:
        ParameterError: If the matrix is not a valid channel with at least two inputs.

    Example:
        >>> fr = FiniteRandomizer([[0.75, 0.25], [0.25, 0.75]])
        >>> round(fr.eps0, 12) == round(math.log(3), 12)
        True
        >>> round(fr.blanket_decomposition().gamma, 12)
        0.5
    """

    matrix: np.ndarray

    def __post_init__(self) -> None:
        m = check_stochastic_matrix("matrix", self.matrix)
        if m.shape[0] < 2:
            raise ParameterError(f"matrix must have at least 2 rows (inputs), got {m.shape[0]}")
        m = m.copy()
        m.setflags(write=False)
        object.__setattr__(self, "matrix", m)

    @classmethod
    def from_krr(cls, krr: KRR) -> FiniteRandomizer:
        """The channel matrix of a :class:`KRR`."""
        return cls(krr.matrix)

    @property
    def n_inputs(self) -> int:
        """Number of inputs (rows)."""
        return int(self.matrix.shape[0])

    @property
    def n_outputs(self) -> int:
        """Number of outputs (columns)."""
        return int(self.matrix.shape[1])

    @property
    def eps0(self) -> float:
        """Local DP level ``max_{x, x', y} log(R(x)(y) / R(x')(y))`` (``inf`` if a zero meets a non-zero)."""
        m = self.matrix
        hi = m.max(axis=0)
        lo = m.min(axis=0)
        if np.any((lo == 0) & (hi > 0)):
            return math.inf
        mask = hi > 0
        return float(np.max(np.log(hi[mask]) - np.log(lo[mask])))

    def blanket_decomposition(self) -> BlanketDecomposition:
        """Balle et al. (2019) blanket: ``gamma = sum_y min_x R(x)(y)``, ``omega = min_x R(x) / gamma``."""
        m = self.matrix
        lo = m.min(axis=0)
        gamma = float(lo.sum())
        k = self.n_outputs
        blanket = lo / gamma if gamma > 0 else np.full(k, 1.0 / k)
        if gamma < 1.0:
            residual = (m - lo[None, :]) / (1.0 - gamma)
        else:
            residual = np.tile(blanket, (self.n_inputs, 1))
        return BlanketDecomposition(gamma=min(gamma, 1.0), blanket=blanket, residual=residual)
