"""Client-side k-ary randomized response with exact rational output probabilities.

:class:`KRRRandomizer` implements k-RR over a declared category list as the mixture

    ``R(x) = x``                        with probability ``q' = T / 2**64``,
    ``R(x) = Uniform(categories)``      with probability ``1 - q'``,

where the keep threshold ``T = 2**64 - ceil(gamma * 2**64)`` (that is ``floor(q * 2**64)``) is
computed exactly in integers from the double nearest to the nominal blanket mass
``gamma = 1 - q = k / (e^eps0 + k - 1)`` (the blanket decomposition of Balle, Bell, Gascón,
Nissim, *The Privacy Blanket of the Shuffle Model*, CRYPTO 2019, Sec. 4.1: ``1 - q`` is the blanket
mass ``gamma``). The mechanism actually run therefore has

    ``p'    = q' + (1 - q') / k``  (report the true value),
    ``pbar' = (1 - q') / k``       (report one given other value),

both exact rationals, and local privacy ``ln(p' / pbar') = ln((2**64 + (k-1) T) / (2**64 - T))``.
That value, rounded *up* to the next double, is :attr:`KRRRandomizer.effective_eps0`; it is what a
privacy accountant must be given. No floating-point Bernoulli is ever drawn: "keep" is the event
``U < T`` for a uniform 64-bit integer ``U``, and the uniform value is drawn by integer rejection
sampling.

Private mode (``rng=None``, the default) reads its bits from the OS CSPRNG. Passing a seed or a
``numpy.random.Generator`` selects **simulation mode**: same output law, reproducible, and
**NOT private** (a PRNG is predictable from its state). Use it only to rehearse.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from .._validation import ParameterError, check_int, check_real
from ..randomizers import KRR
from ._rng import below_threshold, check_rng, uniform_below
from .analyzer import invert_counts

__all__ = ["KRRRandomizer", "RejectedReport", "EncodedReports", "exact_log_upper", "randomize_codes_checked"]

_TWO64 = 1 << 64


@dataclass(frozen=True)
class RejectedReport:
    """One malformed report.

    Attributes:
        position: Index of the report in the submitted sequence.
        value: The value received.
        reason: Why it was rejected (unknown category or wrong type).
    """

    position: int
    value: Any
    reason: str


@dataclass(frozen=True)
class EncodedReports:
    """Result of encoding a sequence of reports into category codes.

    Attributes:
        codes: ``int64`` codes (indices into the category list) of the valid reports, in order.
        positions: Positions of those valid reports in the input.
        rejected: The malformed reports, in order.
    """

    codes: np.ndarray = field(repr=False)
    positions: np.ndarray = field(repr=False)
    rejected: tuple[RejectedReport, ...]


def exact_log_upper(ratio: Fraction) -> float:
    """A double ``>= ln(ratio)`` for a rational ``ratio >= 1``, at most 2 ulp above it.

    ``ln`` is evaluated with mpmath at 200 bits (error far below a double's ulp), converted to the
    nearest double and moved one double up, so the result is never below the true logarithm.

    Args:
        ratio: A ``Fraction`` ``>= 1``.

    Returns:
        An upper bound on ``ln(ratio)``; ``0.0`` when ``ratio == 1`` exactly.

    Raises:
        ParameterError: If ``ratio`` is not a ``Fraction`` ``>= 1``.

    Example:
        >>> b = exact_log_upper(Fraction(2))
        >>> b >= math.log(2) and b - math.log(2) < 1e-15
        True
    """
    if not isinstance(ratio, Fraction) or ratio < 1:
        raise ParameterError(f"ratio must be a Fraction >= 1, got {ratio!r}")
    if ratio == 1:
        return 0.0
    with mpmath.workprec(200):
        value = mpmath.log(mpmath.mpf(ratio.numerator) / mpmath.mpf(ratio.denominator))
        nearest = float(value)
    return math.nextafter(nearest, math.inf)


def _kind(value: Any) -> Any:
    """Coarse type used to tell 'wrong type' from 'unknown category' (bool is not an int here)."""
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, numbers.Integral):
        return "integer"
    if isinstance(value, numbers.Real):
        return "real number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    return type(value)


def _kind_name(kind: Any) -> str:
    return kind if isinstance(kind, str) else kind.__name__


@dataclass(frozen=True)
class KRRRandomizer:
    """k-RR local randomizer over declared categories, exact rational law, CSPRNG by default.

    Args:
        categories: Either an integer ``k >= 2`` (categories ``0 .. k-1``, reports are ``int64``
            arrays) or a sequence of at least two distinct hashable labels (strings, ints, ...;
            reports are arrays of labels). NaN labels and strings-as-sequences are rejected.
        eps0: Nominal local privacy parameter, finite and ``> 0``.

    Attributes:
        k: Number of categories.
        keep_threshold: ``T = 2**64 - max(ceil(gamma * 2**64), 1)``, exact integer, with
            ``gamma = k / (e^eps0 + k - 1)`` the nominal blanket mass (as a double).
        p_exact: ``p'`` as a ``Fraction``. ``pbar_exact``: ``pbar'`` as a ``Fraction``.
        effective_eps0: ``ln(p'/pbar')`` of the implemented mechanism, rounded up. Give this to
            the accountant. It equals ``eps0`` up to about 1e-15 relative for moderate ``eps0``;
            64-bit resolution caps it near ``44.4 + ln k`` for huge ``eps0``.

    Raises:
        ParameterError: If ``categories`` or ``eps0`` is invalid.

    Example:
        >>> r = KRRRandomizer(["red", "green", "blue"], math.log(2))
        >>> r.k, r.p_exact, r.pbar_exact
        (3, Fraction(1, 2), Fraction(1, 4))
        >>> 0 <= r.effective_eps0 - math.log(2) < 1e-15
        True
        >>> out = r.randomize(["red", "blue", "blue"])  # private mode (OS CSPRNG)
        >>> out.shape, set(out.tolist()) <= {"red", "green", "blue"}
        ((3,), True)
        >>> x = ["red"] * 5  # a seed selects simulation mode: reproducible, NOT private
        >>> bool((r.randomize(x, rng=1) == r.randomize(x, rng=1)).all())
        True
    """

    categories: Any
    eps0: float
    k: int = field(init=False)
    keep_threshold: int = field(init=False, repr=False)
    _labels: tuple = field(init=False, repr=False, compare=False)
    _label_array: np.ndarray | None = field(init=False, repr=False, compare=False)
    _index: dict = field(init=False, repr=False, compare=False)
    _kinds: frozenset = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cats = self.categories
        if isinstance(cats, numbers.Integral) and not isinstance(cats, (bool, np.bool_)):
            k = check_int("categories", cats, minimum=2)
            labels: tuple = tuple(range(k))
            label_array = None
            object.__setattr__(self, "categories", k)
        else:
            labels = self._check_labels(cats)
            k = len(labels)
            label_array = np.array(labels) if self._homogeneous(labels) else None
            if label_array is None or label_array.shape != (k,):
                label_array = np.empty(k, dtype=object)
                label_array[:] = labels
            label_array.setflags(write=False)
            object.__setattr__(self, "categories", labels)
        eps0 = check_real("eps0", self.eps0, low=0.0, low_open=True)
        object.__setattr__(self, "eps0", eps0)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "_labels", labels)
        object.__setattr__(self, "_label_array", label_array)
        object.__setattr__(self, "_index", {lab: i for i, lab in enumerate(labels)})
        object.__setattr__(self, "_kinds", frozenset(_kind(lab) for lab in labels))
        object.__setattr__(self, "keep_threshold", self._threshold(k, eps0))

    @staticmethod
    def _check_labels(cats: Any) -> tuple:
        if isinstance(cats, (str, bytes)) or not isinstance(cats, (Sequence, np.ndarray)):
            raise ParameterError(
                "categories must be an integer k >= 2 or a sequence of at least 2 distinct "
                f"hashable labels, got {cats!r}"
            )
        labels = tuple(cats.tolist() if isinstance(cats, np.ndarray) else cats)
        if len(labels) < 2:
            raise ParameterError(f"categories must contain at least 2 labels, got {len(labels)}")
        for lab in labels:
            try:
                hash(lab)
            except TypeError:
                raise ParameterError(f"categories must be hashable labels, got {lab!r}") from None
            if isinstance(lab, numbers.Real) and not isinstance(lab, numbers.Integral) and math.isnan(lab):
                raise ParameterError("categories must not contain NaN (it never equals itself)")
        if len({(_kind(lab), lab) for lab in labels}) != len(labels) or len(set(labels)) != len(labels):
            raise ParameterError(f"categories must be distinct, got {labels!r}")
        return labels

    @staticmethod
    def _homogeneous(labels: tuple) -> bool:
        kinds = {_kind(lab) for lab in labels}
        return kinds == {"string"} or kinds == {"integer"}

    @staticmethod
    def _threshold(k: int, eps0: float) -> int:
        # T = floor(q 2^64) = 2^64 - ceil(gamma 2^64) with gamma = 1 - q = k / (e^eps0 + k - 1),
        # evaluated through gamma (a double with a few ulp of *relative* error even when gamma
        # is tiny), then exactly in integers; at least one 64-bit value always re-randomizes.
        gamma = Fraction(k / (math.expm1(eps0) + k)) if eps0 <= 700.0 else Fraction(0)
        blanket = -((-gamma.numerator << 64) // gamma.denominator)  # ceil(gamma * 2^64)
        return _TWO64 - max(blanket, 1)

    # ----- exact law -------------------------------------------------------------------------
    @property
    def keep_probability(self) -> Fraction:
        """``q' = T / 2**64``, the exact probability of the 'keep' branch."""
        return Fraction(self.keep_threshold, _TWO64)

    @property
    def p_exact(self) -> Fraction:
        """``p' = q' + (1 - q') / k``: exact probability of reporting the true category."""
        q = self.keep_probability
        return q + (1 - q) / self.k

    @property
    def pbar_exact(self) -> Fraction:
        """``pbar' = (1 - q') / k``: exact probability of reporting one given other category."""
        return (1 - self.keep_probability) / self.k

    @property
    def effective_eps0(self) -> float:
        """``ln(p'/pbar') = ln((2**64 + (k-1) T) / (2**64 - T))`` rounded up to a double."""
        t = self.keep_threshold
        return exact_log_upper(Fraction(_TWO64 + (self.k - 1) * t, _TWO64 - t))

    @property
    def krr(self) -> KRR:
        """The :class:`~shuffle_accounting.randomizers.KRR` with ``eps0 = effective_eps0``."""
        return KRR(self.k, self.effective_eps0)

    @property
    def matrix(self) -> np.ndarray:
        """The implemented channel ``M[x, y] = P[R(x) = y]`` (doubles nearest to the exact values)."""
        m = np.full((self.k, self.k), float(self.pbar_exact))
        np.fill_diagonal(m, float(self.p_exact))
        return m

    # ----- encoding --------------------------------------------------------------------------
    def encode_partial(self, values: Any) -> EncodedReports:
        """Encode reports into category codes, separating out the malformed ones.

        A report is valid iff it equals (``==`` and same hash, as a dict key) a declared category
        and has the same coarse type (booleans only match boolean labels, reals do not match
        integer labels). With ``categories = k`` the valid reports are the integers ``0..k-1``.

        Args:
            values: 1-D sequence or array of reports.

        Returns:
            :class:`EncodedReports` with the codes of the valid reports and the rejected ones.

        Raises:
            ParameterError: If ``values`` is not a 1-D sequence.

        Example:
            >>> r = KRRRandomizer(["a", "b"], 1.0)
            >>> e = r.encode_partial(["a", "z", 3, "b"])
            >>> e.codes.tolist(), [x.reason for x in e.rejected]
            ([0, 1], ['unknown category', 'wrong type (integer)'])
        """
        arr = self._as_1d(values)
        fast = self._encode_fast(arr)
        if fast is not None:
            codes, ok = fast
            bad = np.flatnonzero(~ok)
            rejected = tuple(RejectedReport(int(i), arr[i].item(), self._reason(arr[i].item())) for i in bad)
            return EncodedReports(codes[ok], np.flatnonzero(ok), rejected)
        codes_list: list[int] = []
        pos: list[int] = []
        rej: list[RejectedReport] = []
        for i, v in enumerate(arr.tolist() if arr.dtype != object else arr):
            c = self._lookup(v)
            if c is None:
                rej.append(RejectedReport(i, v, self._reason(v)))
            else:
                codes_list.append(c)
                pos.append(i)
        return EncodedReports(
            np.asarray(codes_list, dtype=np.int64), np.asarray(pos, dtype=np.int64), tuple(rej)
        )

    def encode(self, values: Any) -> np.ndarray:
        """Encode reports into ``int64`` category codes; any malformed report raises.

        Raises:
            ParameterError: Naming ``values``, the first bad position, value and reason.

        Example:
            >>> KRRRandomizer(["a", "b"], 1.0).encode(["b", "a"]).tolist()
            [1, 0]
        """
        enc = self.encode_partial(values)
        if enc.rejected:
            first = enc.rejected[0]
            raise ParameterError(
                f"values must all be declared categories {self._short_labels()}; "
                f"{len(enc.rejected)} malformed, first at position {first.position}: "
                f"{first.value!r} ({first.reason})"
            )
        return enc.codes

    def decode(self, codes: Any) -> np.ndarray:
        """Map ``int64`` codes back to labels (identity when ``categories`` is an integer).

        Example:
            >>> KRRRandomizer(["a", "b"], 1.0).decode([1, 0]).tolist()
            ['b', 'a']
        """
        c = self._check_codes(codes)
        return c if self._label_array is None else self._label_array[c]

    def _as_1d(self, values: Any) -> np.ndarray:
        if isinstance(values, (str, bytes)):
            raise ParameterError(f"values must be a 1-D sequence of reports, got the string {values!r}")
        if isinstance(values, np.ndarray):
            arr = values
        else:
            try:
                seq = list(values)
            except TypeError:
                raise ParameterError(f"values must be a 1-D sequence of reports, got {values!r}") from None
            arr = np.empty(len(seq), dtype=object)
            arr[:] = seq
            if seq and self._homogeneous(tuple(seq[:1])) and all(type(v) is type(seq[0]) for v in seq):
                arr = np.asarray(seq)
        if arr.ndim != 1:
            raise ParameterError(f"values must be a 1-D sequence of reports, got shape {arr.shape}")
        return arr

    def _encode_fast(self, arr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        kind = arr.dtype.kind
        if self._label_array is None:
            if kind in "iu":
                ok = (arr >= 0) & (arr < self.k)
                return arr.astype(np.int64), ok
            return None
        lk = self._label_array.dtype.kind
        if lk in "iu" and kind in "iu" and arr.dtype != self._label_array.dtype:
            lo, hi = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
            info = np.iinfo(self._label_array.dtype)
            if lo < info.min or hi > info.max:
                return None  # out of the labels' range: exact per-element path
            arr = arr.astype(self._label_array.dtype)
        if (lk == "U" and kind == "U") or (lk in "iu" and kind in "iu"):
            order = np.argsort(self._label_array, kind="stable")
            srt = self._label_array[order]
            pos = np.clip(np.searchsorted(srt, arr), 0, self.k - 1)
            ok = srt[pos] == arr
            return order[pos].astype(np.int64), ok
        return None

    def _lookup(self, v: Any) -> int | None:
        if _kind(v) not in self._kinds:
            return None
        try:
            return self._index.get(v)
        except TypeError:
            return None

    def _reason(self, v: Any) -> str:
        kind = _kind(v)
        if kind not in self._kinds:
            return f"wrong type ({_kind_name(kind)})"
        return "unknown category"

    def _short_labels(self) -> str:
        if self._label_array is None:
            return f"0..{self.k - 1}"
        text = repr(self._labels)
        return text if len(text) <= 60 else text[:57] + "..."

    def _check_codes(self, codes: Any, keep_dtype: bool = False) -> np.ndarray:
        c = np.asarray(codes)
        if c.ndim != 1 or (c.size and c.dtype.kind not in "iu"):
            raise ParameterError(f"codes must be a 1-D integer array of category codes, got {codes!r}")
        if not (keep_dtype and c.dtype.kind in "iu" and np.iinfo(c.dtype).max >= self.k - 1):
            c = c.astype(np.int64, copy=False)
        if c.size and (c.min() < 0 or c.max() >= self.k):
            raise ParameterError(f"codes must be in [0, {self.k - 1}], got values outside")
        return c

    # ----- sampling --------------------------------------------------------------------------
    def randomize_codes(self, codes: Any, *, rng: Any = None) -> np.ndarray:
        """Randomize category codes (``int64`` in ``[0, k)``); the vectorised core.

        Args:
            codes: 1-D integer array of true category codes.
            rng: ``None`` (private mode, OS CSPRNG) or a seed / numpy Generator
                (simulation mode, NOT private).

        Returns:
            Array of randomized codes, same length; same integer dtype as ``codes`` when that
            dtype can hold ``k - 1`` (e.g. ``uint8`` for ``k <= 256``), else ``int64``.

        Raises:
            ParameterError: If ``codes`` or ``rng`` is invalid.

        Example:
            >>> r = KRRRandomizer(4, 50.0)  # huge eps0: keeps with probability 1 - 2**-64
            >>> r.randomize_codes([0, 1, 2, 3]).tolist()
            [0, 1, 2, 3]
        """
        return randomize_codes_checked(self, codes, check_rng(rng))

    def randomize(self, values: Any, rng: Any = None) -> np.ndarray:
        """Randomize a batch of true values (labels); every value must be a declared category.

        Args:
            values: 1-D sequence/array of declared categories.
            rng: ``None`` (private mode, OS CSPRNG) or a seed / numpy Generator
                (simulation mode, NOT private).

        Returns:
            Array of randomized labels (``int64`` when ``categories`` is an integer).

        Raises:
            ParameterError: If a value is not a declared category or ``rng`` is invalid.

        Example:
            >>> r = KRRRandomizer(3, 1.0)
            >>> out = r.randomize([0, 1, 2, 2])
            >>> out.shape, bool(((out >= 0) & (out < 3)).all())
            ((4,), True)
        """
        return self.decode(self.randomize_codes(self.encode(values), rng=rng))

    def estimate(self, counts: Any) -> np.ndarray:
        """Unbiased frequency estimate for counts produced by *this* mechanism (exact ``p'``, ``pbar'``).

        ``pi_hat = (counts / n - pbar') / (p' - pbar')`` (matrix inversion, Biswas, Jung,
        Palamidessi, *Tight Differential Privacy Guarantees for the Shuffle Model with
        k-Randomized Response*, eq. (7)).

        Example:
            >>> r = KRRRandomizer(3, math.log(2))
            >>> r.estimate([50, 25, 25]).tolist()
            [1.0, 0.0, 0.0]
        """
        return invert_counts(counts, self.k, float(self.pbar_exact), float(self.keep_probability))


def randomize_codes_checked(
    randomizer: KRRRandomizer, codes: Any, gen: np.random.Generator | None
) -> np.ndarray:
    """:meth:`KRRRandomizer.randomize_codes` for a generator already validated by ``check_rng``.

    For callers that resolved (and warned about) their ``rng`` once, e.g. a collection whose
    partitions each get a derived Generator: no second warning, no global warning-filter changes
    (which would not be thread-safe). "keep" is the event ``U < T`` for a uniform 64-bit ``U``
    and the uniform value is drawn by integer rejection sampling (module docstring).

    Args:
        randomizer: The :class:`KRRRandomizer`.
        codes: 1-D integer array of true category codes in ``[0, k)``.
        gen: ``None`` (OS CSPRNG) or a ``numpy.random.Generator`` (simulation, NOT private).

    Returns:
        The randomized codes (dtype as :meth:`KRRRandomizer.randomize_codes`).

    Raises:
        ParameterError: If ``codes`` or ``gen`` is invalid.

    Example:
        >>> randomize_codes_checked(KRRRandomizer(4, 50.0), [0, 1, 2, 3], None).tolist()
        [0, 1, 2, 3]
    """
    if gen is not None and not isinstance(gen, np.random.Generator):
        raise ParameterError(f"gen must be None or a numpy.random.Generator, got {gen!r}")
    c = randomizer._check_codes(codes, keep_dtype=True)
    keep = below_threshold(randomizer.keep_threshold, c.size, gen)
    out = c.copy()
    redo = ~keep
    out[redo] = uniform_below(randomizer.k, int(np.count_nonzero(redo)), gen)
    return out
