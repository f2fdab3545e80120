"""Rehearse a shuffled collection: utility of shuffle, shuffle+INV and the central Gaussian baseline.

Reproduces the experiment of Biswas, Jung, Palamidessi, *Tight Differential Privacy Guarantees
for the Shuffle Model with k-Randomized Response* (Sec. V-C, Fig. 2): for each population size
``n``, draw a dataset, release its histogram (a) through shuffled k-RR — scored raw ("shuffle") and
after matrix inversion + simplex projection ("shuffle+INV") — and (b) through the analytic
Gaussian mechanism calibrated to the **same** ``(eps, delta)``, where ``eps`` is the certified
epsilon of one shuffled round at ``delta`` from the ``ShuffleAccountant`` (an upper bound, so the
central model gets at least the shuffle's true privacy loss: if anything the comparison favours
the Gaussian baseline). Utility is the total
variation distance to the dataset's true (empirical) distribution, as in the paper's eqs. (8)-(9).

The output (utility against the true data) is a rehearsal, never a private release. Randomness
follows the package's one policy (:mod:`shuffle_accounting._rng`): with ``rng=None`` every draw
comes from the OS CSPRNG — each trial's records are drawn by exact integer sampling and randomized
by the :class:`~shuffle_accounting.runtime.KRRRandomizer` itself (``O(n)`` work per trial), and the
Gaussian baseline uses diffprivlib's ``secrets``-based sampler; a seed or numpy Generator selects
simulation mode (reproducible, a :class:`~shuffle_accounting._rng.PrivacyLeakWarning` is
emitted), where, because every quantity is a function of the histogram only (the shuffle discards
order), each trial samples the noisy k-RR histogram directly from its exact law —
``kept_x ~ Binomial(c_x, q')`` for each true count ``c_x`` and the rest split
``Multinomial(n - sum kept, uniform)`` — with the keep probability ``q'`` of the
:class:`~shuffle_accounting.runtime.KRRRandomizer` actually implemented (as a double), in ``O(k)``
work per trial.

Data sources: the synthetic generators of :data:`GENERATORS` (a normal law binned into ``k`` bins
as in the paper, Zipf, uniform), any probability vector, or real categorical data
(:class:`CategoricalData`, e.g. from :func:`load_csv`).
"""

from __future__ import annotations

import csv
import functools
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtr
from tqdm.auto import tqdm

from .._validation import ParameterError, check_delta, check_int, check_probability_vector, check_real
from ._rng import check_rng, random_uint64
from .analyzer import project_simplex, total_variation
from .baseline import gaussian_histogram
from .randomizer import KRRRandomizer
from .shuffler import secure_permutation

__all__ = [
    "CategoricalData",
    "SimulationResult",
    "GENERATORS",
    "METHODS",
    "normal_binned_distribution",
    "zipf_distribution",
    "uniform_distribution",
    "load_csv",
    "read_csv_column",
    "simulate",
]

#: Utility columns of a simulation, in order.
METHODS = ("shuffle", "shuffle+INV", "gaussian")


def normal_binned_distribution(k: int, *, variance: float = 2.0, width: float = 3.0) -> np.ndarray:
    """``N(0, variance)`` binned into ``k`` equal-width bins on ``[-width sd, width sd]``.

    Biswas, Jung, Palamidessi (Sec. V-C) sample synthetic data from ``N(0, 2)``; the paper does
    not give its binning, so the two outer bins here also absorb the tails beyond ``width``
    standard deviations.

    Args:
        k: Number of bins, integer ``>= 2``.
        variance: Finite ``> 0`` (default 2 as in the paper).
        width: Half-width of the binned range in standard deviations, finite ``> 0``.

    Returns:
        Probability vector of length ``k`` (symmetric).

    Raises:
        ParameterError: If an argument is invalid.

    Example:
        >>> p = normal_binned_distribution(5)
        >>> round(float(p.sum()), 12), bool(p[2] == p.max())
        (1.0, True)
    """
    k = check_int("k", k, minimum=2)
    variance = check_real("variance", variance, low=0.0, low_open=True)
    width = check_real("width", width, low=0.0, low_open=True)
    edges = np.linspace(-width, width, k + 1)[1:-1]
    cdf = np.concatenate(([0.0], ndtr(edges), [1.0]))
    return np.diff(cdf)


def zipf_distribution(k: int, *, s: float = 1.0) -> np.ndarray:
    """Zipf law on ``k`` ranks: ``P(i) proportional to (i + 1)^-s``.

    Example:
        >>> zipf_distribution(3).round(6).tolist()
        [0.545455, 0.272727, 0.181818]
    """
    k = check_int("k", k, minimum=2)
    s = check_real("s", s, low=0.0)
    w = np.arange(1, k + 1, dtype=float) ** -s
    return w / w.sum()


def uniform_distribution(k: int) -> np.ndarray:
    """The uniform law on ``k`` categories.

    Example:
        >>> uniform_distribution(4).tolist()
        [0.25, 0.25, 0.25, 0.25]
    """
    k = check_int("k", k, minimum=2)
    return np.full(k, 1.0 / k)


#: Named synthetic distributions: name -> function of ``k`` returning a probability vector.
GENERATORS: dict[str, Callable[[int], np.ndarray]] = {
    "normal": normal_binned_distribution,
    "zipf": zipf_distribution,
    "uniform": uniform_distribution,
}


@dataclass(frozen=True)
class CategoricalData:
    """A real categorical dataset: category labels and one code per record.

    Args:
        categories: Distinct labels (at least 2).
        codes: ``int64`` codes in ``[0, len(categories))``, one per record (at least 1).

    Raises:
        ParameterError: If the labels or codes are invalid.

    Example:
        >>> d = CategoricalData.from_labels(["x", "y", "x"])
        >>> d.categories, d.codes.tolist(), d.k
        (('x', 'y'), [0, 1, 0], 2)
    """

    categories: tuple
    codes: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        rnd = KRRRandomizer(list(self.categories), 1.0)  # reuses the label validation
        codes = np.asarray(self.codes)
        if codes.ndim != 1 or codes.size == 0 or codes.dtype.kind not in "iu":
            raise ParameterError(f"codes must be a non-empty 1-D integer array, got {self.codes!r}")
        if codes.min() < 0 or codes.max() >= rnd.k:
            raise ParameterError(f"codes must be in [0, {rnd.k - 1}]")
        codes = codes.astype(np.int64)
        codes.setflags(write=False)
        object.__setattr__(self, "categories", rnd.categories)
        object.__setattr__(self, "codes", codes)

    @property
    def k(self) -> int:
        """Number of categories."""
        return len(self.categories)

    @classmethod
    def from_labels(cls, values: Sequence[Any], categories: Sequence[Any] | None = None) -> CategoricalData:
        """Build from raw labels; categories default to the sorted distinct values.

        Raises:
            ParameterError: If a value is not among ``categories`` or fewer than 2 categories.
        """
        vals = list(values)
        cats = sorted(set(vals), key=repr) if categories is None else list(categories)
        if categories is None and all(isinstance(v, str) for v in cats):
            cats = sorted(cats)
        rnd = KRRRandomizer(cats, 1.0)
        return cls(rnd.categories, rnd.encode(vals))

    def true_distribution(self) -> np.ndarray:
        """Empirical frequencies of the categories."""
        return np.bincount(self.codes, minlength=self.k) / self.codes.size


def read_csv_column(
    path: str | os.PathLike, column: str | int = 0, *, header: bool = True, strict: bool = True
) -> list[str | None]:
    """The whitespace-stripped cells of one CSV column, one per non-blank row.

    Args:
        path: CSV file path, ``str`` or ``os.PathLike`` (integers, which ``open`` would take as file
            descriptors, and other types are rejected).
        column: Column name (needs ``header=True``) or 0-based index.
        header: Whether the first row is a header.
        strict: If ``True``, a missing or empty cell raises; if ``False`` it is returned as
            ``None`` (a collection then counts it as a malformed report instead of failing).

    Returns:
        The cells, in file order.

    Raises:
        ParameterError: If ``path`` is not a ``str``/``os.PathLike``, the column is missing from
            the header, or (``strict``) a cell is missing or empty.
        OSError: If the file cannot be read.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
        >>> _ = f.write_text("city,age\\nParis,3\\n,4\\n")
        >>> read_csv_column(f, "city", strict=False)
        ['Paris', None]
    """
    if not isinstance(path, (str, os.PathLike)):  # an int would be taken as a file descriptor
        raise ParameterError(
            f"path must be a file path (str or os.PathLike), got {type(path).__name__} {path!r}"
        )
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if header:
        if not rows:
            raise ParameterError(f"path {os.fspath(path)!r} is empty (no header row)")
        head, rows = [h.strip() for h in rows[0]], rows[1:]
    if isinstance(column, str):
        if not header or column not in head:
            raise ParameterError(f"column {column!r} not found in the header of {os.fspath(path)!r}")
        idx = head.index(column)
    else:
        idx = check_int("column", column, minimum=0)
    values: list[str | None] = []
    for line, row in enumerate(rows, start=2 if header else 1):
        if not row:
            continue
        if idx >= len(row) or not row[idx].strip():
            if strict:
                raise ParameterError(
                    f"column {column!r} is missing or empty on line {line} of {os.fspath(path)!r}"
                )
            values.append(None)
            continue
        values.append(row[idx].strip())
    return values


def load_csv(path: str | os.PathLike, column: str | int = 0, *, header: bool = True) -> CategoricalData:
    """Read one categorical column of a CSV file (see :func:`read_csv_column`).

    Args:
        path: CSV file path, ``str`` or ``os.PathLike`` (integers, which ``open`` would take as file
            descriptors, and other types are rejected).
        column: Column name (needs ``header=True``) or 0-based index.
        header: Whether the first row is a header.

    Returns:
        :class:`CategoricalData` with the sorted distinct (whitespace-stripped) values as categories.

    Raises:
        ParameterError: If ``path`` is not a ``str``/``os.PathLike``, the column is missing, a cell
            is empty, or fewer than 2 categories.
        OSError: If the file cannot be read.

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
        >>> _ = f.write_text("city,age\\nParis,3\\nSF,4\\nParis,5\\n")
        >>> load_csv(f, "city").categories
        ('Paris', 'SF')
    """
    values = read_csv_column(path, column, header=header, strict=True)
    if len(set(values)) < 2:
        raise ParameterError(
            f"column {column!r} must hold at least 2 distinct categories, got {sorted(set(values), key=str)}"
        )
    return CategoricalData.from_labels(values)


@dataclass(frozen=True)
class SimulationResult:
    """Total variation distances per method, population size and trial.

    Attributes:
        ns: Population sizes.
        epsilons: Certified epsilon of one shuffled round at ``delta`` for each ``n`` (the
            Gaussian baseline is calibrated to it).
        delta: The delta.
        k: Number of categories.
        eps0: The ``effective_eps0`` of the implemented k-RR.
        trials: Trials per ``n``.
        tv: Method name (see :data:`METHODS`) -> array of shape ``(len(ns), trials)``.
    """

    ns: tuple[int, ...]
    epsilons: tuple[float, ...]
    delta: float
    k: int
    eps0: float
    trials: int
    tv: dict = field(repr=False)

    def mean(self, method: str) -> np.ndarray:
        """Mean TV distance over trials for each ``n``."""
        if method not in self.tv:
            raise ParameterError(f"method must be one of {METHODS}, got {method!r}")
        return self.tv[method].mean(axis=1)

    def table(self) -> str:
        """Plain-text table: ``n``, certified eps, mean TV of each method."""
        lines = [f"{'n':>10}  {'eps':>9}  " + "  ".join(f"{m:>12}" for m in METHODS)]
        for i, (n, eps) in enumerate(zip(self.ns, self.epsilons)):
            cells = "  ".join(f"{self.tv[m][i].mean():12.5f}" for m in METHODS)
            lines.append(f"{n:>10}  {eps:9.4f}  {cells}")
        return "\n".join(lines)


_CHUNK = 1 << 20  # records per chunk of the private-mode (OS CSPRNG) samplers


def csprng_multinomial(n: int, p: np.ndarray) -> np.ndarray:
    """``Multinomial(n, p')`` from the OS CSPRNG, ``p'`` = ``p`` with cumulative sums rounded to ``2**-64``.

    Each record is the category ``i`` with ``cut_{i-1} <= U < cut_i`` for a uniform 64-bit ``U``
    and integer cut points ``cut_i = round(2**64 (p_0 + ... + p_i))`` (``cut_{k-1} = 2**64``).
    """
    cum = np.cumsum(p)[:-1]
    cuts = np.array([min(int(round(c * 2.0**64)), 2**64 - 1) for c in cum], dtype=np.uint64)
    counts = np.zeros(p.size, dtype=np.int64)
    for start in range(0, n, _CHUNK):
        u = random_uint64(min(_CHUNK, n - start), None)
        counts += np.bincount(np.searchsorted(cuts, u, side="right"), minlength=p.size)
    return counts


def _krr_histogram(
    rnd: KRRRandomizer, true: np.ndarray, q: float, gen: np.random.Generator | None
) -> np.ndarray:
    """Histogram of the k-RR reports of records with true histogram ``true``.

    Private mode randomizes every record with ``rnd`` (OS CSPRNG, exact law); simulation mode
    samples the histogram's exact law (up to ``q'`` as a double) in ``O(k)``.
    """
    k = true.size
    if gen is None:
        out = np.zeros(k, dtype=np.int64)
        codes = np.repeat(np.arange(k, dtype=np.int64), true)
        for start in range(0, codes.size, _CHUNK):
            out += np.bincount(rnd.randomize_codes(codes[start : start + _CHUNK]), minlength=k)
        return out
    kept = gen.binomial(true, q)
    return kept + gen.multinomial(int(true.sum()) - int(kept.sum()), np.full(k, 1.0 / k))


@functools.singledispatch
def _source_sampler(source: Any, k: int | None) -> tuple[int, Callable[[int, Any], np.ndarray]]:
    """Return ``(k, sample)`` with ``sample(n, gen)`` the true histogram of ``n`` records (``gen=None``: OS CSPRNG)."""
    p = check_probability_vector("source", source)
    if p.size < 2:
        raise ParameterError(
            f"source must be a probability vector over k >= 2 categories, got length {p.size}"
        )
    p = p / p.sum()
    return p.size, lambda n, gen: csprng_multinomial(n, p) if gen is None else gen.multinomial(n, p)


@_source_sampler.register
def _(source: str, k: int | None) -> tuple[int, Callable[[int, np.random.Generator], np.ndarray]]:
    if source not in GENERATORS:
        raise ParameterError(
            f"source must be one of {tuple(GENERATORS)} (or a distribution/data), got {source!r}"
        )
    if k is None:
        raise ParameterError(f"k must be given for the synthetic source {source!r}, got None")
    return _source_sampler(GENERATORS[source](k), k)


@_source_sampler.register
def _(source: CategoricalData, k: int | None) -> tuple[int, Callable[[int, np.random.Generator], np.ndarray]]:
    def sample(n: int, gen: np.random.Generator) -> np.ndarray:
        if n > source.codes.size:
            raise ParameterError(f"n must be <= the {source.codes.size} records of the data, got {n}")
        if gen is None:
            idx = secure_permutation(source.codes.size)[:n]
        else:
            idx = gen.choice(source.codes.size, size=n, replace=False)
        return np.bincount(source.codes[idx], minlength=source.k)

    return source.k, sample


def _shuffle_epsilon(k: int, eps0: float, n: int, delta: float, factory: Callable[[], Any] | None) -> float:
    from ..shuffled_krr.accountant import ShuffleAccountant, ShuffledKRRDpEvent  # noqa: PLC0415

    acct = (factory or ShuffleAccountant)()
    acct.compose(ShuffledKRRDpEvent(k=k, eps0=eps0, n=n), count=1)
    return float(acct.get_epsilon(delta))


def simulate(
    source: Any,
    k: int | None,
    eps0: float,
    n: int | Sequence[int],
    trials: int = 10,
    delta: float = 1e-6,
    *,
    rng: Any = None,
    accountant_factory: Callable[[], Any] | None = None,
    progress: bool = False,
) -> SimulationResult:
    """TV utility of shuffle, shuffle+INV and the Gaussian baseline across ``n`` (Fig. 2 style).

    For each ``n`` the certified single-round epsilon ``eps(n)`` of shuffled k-RR at ``delta`` is
    computed with the ``ShuffleAccountant`` (with the randomizer's ``effective_eps0``); then, per
    trial, a dataset of ``n`` records is drawn and scored (see the module docstring). SIMULATION
    ONLY, NOT PRIVATE.

    Args:
        source: A name in :data:`GENERATORS` (``"normal"``, ``"zipf"``, ``"uniform"``; needs ``k``),
            a probability vector, or :class:`CategoricalData` (records are drawn without
            replacement, so ``n`` must not exceed the number of records).
        k: Number of categories; ``None`` to infer it from a vector or data (must match if given).
        eps0: Local k-RR privacy, finite ``> 0``.
        n: A population size or a sequence of them (integers ``>= 1``).
        trials: Trials per ``n``, integer ``>= 1``.
        delta: Delta in ``(0, 1)``.
        rng: ``None`` (every draw from the OS CSPRNG, ``O(n)`` per trial), or a seed / numpy
            Generator (reproducible, ``O(k)`` per trial; emits a ``PrivacyLeakWarning``).
        accountant_factory: Zero-argument callable returning an accountant (default the real
            ``ShuffleAccountant``).
        progress: Show a tqdm progress bar on stderr.

    Returns:
        :class:`SimulationResult`.

    Raises:
        ParameterError: If an argument is invalid, or the certified epsilon is not a finite
            positive number (the Gaussian baseline needs one).

    Example:
        >>> res = simulate("zipf", 5, 2.0, [200, 2000], trials=3, delta=1e-6, rng=1)
        >>> res.ns, sorted(res.tv)
        ((200, 2000), ['gaussian', 'shuffle', 'shuffle+INV'])
        >>> bool(res.mean("shuffle+INV")[1] < res.mean("shuffle")[1])
        True
    """
    k_in = None if k is None else check_int("k", k, minimum=2)
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True)
    ns_raw = [n] if isinstance(n, (int, np.integer, float)) and not isinstance(n, bool) else n
    if isinstance(ns_raw, (str, bytes)) or not isinstance(ns_raw, (Sequence, np.ndarray)) or len(ns_raw) == 0:
        raise ParameterError(f"n must be a positive integer or a non-empty sequence of them, got {n!r}")
    ns = tuple(check_int("n", v, minimum=1) for v in ns_raw)
    trials = check_int("trials", trials, minimum=1)
    delta = check_delta("delta", delta)
    gen = check_rng(rng)
    k_src, sample = _source_sampler(source, k_in)
    if k_in is not None and k_in != k_src:
        raise ParameterError(f"k must match the source's {k_src} categories, got {k_in}")
    rnd = KRRRandomizer(k_src, eps0)
    q = float(rnd.keep_probability)
    eff = rnd.effective_eps0
    epsilons = []
    for size in ns:
        eps = _shuffle_epsilon(k_src, eff, size, delta, accountant_factory)
        if not (math.isfinite(eps) and eps > 0):
            raise ParameterError(
                f"the certified epsilon for n = {size} at delta = {delta!r} is {eps!r}; the Gaussian "
                "baseline needs a finite epsilon > 0 (choose a smaller delta)"
            )
        epsilons.append(eps)
    tv = {m: np.empty((len(ns), trials)) for m in METHODS}
    with tqdm(total=len(ns) * trials, disable=not progress, desc="simulate", unit="trial") as bar:
        for i, (size, eps) in enumerate(zip(ns, epsilons)):
            for t in range(trials):
                true = sample(size, gen)
                truth = true / size
                noisy = _krr_histogram(rnd, true, q, gen)
                tv["shuffle"][i, t] = total_variation(noisy / size, truth)
                tv["shuffle+INV"][i, t] = total_variation(project_simplex(rnd.estimate(noisy)), truth)
                central = gaussian_histogram(true, eps, delta, rng=gen)
                tv["gaussian"][i, t] = total_variation(central / size, truth)
                bar.update(1)
    for arr in tv.values():
        arr.setflags(write=False)
    return SimulationResult(ns, tuple(epsilons), delta, k_src, eff, trials, tv)
