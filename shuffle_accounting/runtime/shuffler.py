"""The shuffler: a uniformly random permutation of a batch, released only for batches of at least n.

The amplification guarantee of the shuffle model (e.g. Balle, Bell, Gascón, Nissim, *The Privacy
Blanket of the Shuffle Model*, CRYPTO 2019) is computed for a batch of ``n`` users, so
:class:`Shuffler` refuses to release fewer than its configured ``min_batch`` reports. It never
drops, adds or alters a report: the output is a permutation of the input (or its histogram,
which is the same information, since the shuffled sequence determines exactly the multiset).

Any object with a method ``shuffle(reports, *, rng=None)`` returning the permuted reports
(:class:`ShufflerLike`) can stand in for :class:`Shuffler` wherever a shuffler is configurable,
e.g. the d_sigma Mallows shuffler of ``shuffle_accounting.dsigma``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from .._validation import ParameterError, check_choice, check_int
from ._rng import check_rng, random_uint64, uniform_below
from .analyzer import histogram as _histogram

__all__ = ["Shuffler", "ShufflerLike", "BatchTooSmallError", "secure_permutation"]


class BatchTooSmallError(ParameterError):
    """A batch smaller than the configured minimum was offered for release; nothing was released.

    Example:
        >>> issubclass(BatchTooSmallError, ValueError)
        True
    """


@runtime_checkable
class ShufflerLike(Protocol):
    """What a session needs from a shuffler: ``shuffle(reports, *, rng=None) -> permuted reports``."""

    def shuffle(self, reports: Any, *, rng: Any = None) -> Any:  # pragma: no cover - protocol
        """Return the reports in a random order (the same multiset)."""
        ...


def _sort_permutation(n: int) -> np.ndarray:
    """Uniform permutation: argsort of ``n`` CSPRNG 64-bit keys, redrawn while any two keys tie.

    Given distinct i.i.d. keys, every ordering is equally likely (exchangeability), and
    conditioning on the symmetric event "no ties" keeps it so: the law is exactly uniform.
    """
    while True:
        keys = random_uint64(n, None)
        order = np.argsort(keys)  # ties are rejected below, so stability is irrelevant
        srt = keys[order]
        if n < 2 or not np.any(srt[1:] == srt[:-1]):
            return order


def _fisher_yates_permutation(n: int) -> np.ndarray:
    """Fisher–Yates (Durstenfeld) with every ``j_i`` uniform on ``{0..i}`` from the OS CSPRNG."""
    perm = list(range(n))
    if n < 2:
        return np.asarray(perm, dtype=np.int64)
    js = uniform_below(np.arange(n, 1, -1, dtype=np.int64), n - 1, None).tolist()
    for step, j in enumerate(js):
        i = n - 1 - step
        perm[i], perm[j] = perm[j], perm[i]
    return np.asarray(perm, dtype=np.int64)


_PRIVATE_METHODS = {"sort": _sort_permutation, "fisher-yates": _fisher_yates_permutation}


def secure_permutation(n: int, *, method: str = "sort") -> np.ndarray:
    """A uniformly random permutation of ``0..n-1`` from the OS CSPRNG (exact law).

    Args:
        n: Length, integer ``>= 0``.
        method: ``"sort"`` (argsort of random 64-bit keys with tie rejection; vectorised, the
            default) or ``"fisher-yates"`` (Durstenfeld's swaps in Python; slower). Both
            are exactly uniform.

    Returns:
        ``int64`` array, a permutation of ``0..n-1``.

    Raises:
        ParameterError: If ``n`` or ``method`` is invalid.

    Example:
        >>> sorted(secure_permutation(5).tolist())
        [0, 1, 2, 3, 4]
    """
    n = check_int("n", n, minimum=0)
    method = check_choice("method", method, tuple(_PRIVATE_METHODS))
    return _PRIVATE_METHODS[method](n)


@dataclass(frozen=True)
class Shuffler:
    """Uniform shuffler that refuses batches smaller than ``min_batch``.

    Args:
        min_batch: The ``n`` the privacy guarantee is computed for; integer ``>= 1``.
        method: Private-mode permutation algorithm, ``"sort"`` (default) or ``"fisher-yates"``;
            see :func:`secure_permutation`.

    Raises:
        ParameterError: If ``min_batch`` or ``method`` is invalid.

    Example:
        >>> s = Shuffler(min_batch=3)
        >>> sorted(s.shuffle(["b", "a", "c"]).tolist())
        ['a', 'b', 'c']
        >>> s.shuffle([1, 2])
        Traceback (most recent call last):
        ...
        shuffle_accounting.runtime.shuffler.BatchTooSmallError: batch of 2 reports is smaller than min_batch = 3; nothing released (the privacy guarantee is computed for n >= 3)
    """

    min_batch: int
    method: str = "sort"
    #: The permutation is uniform, so the shuffled-k-RR accountants apply to the sequence output.
    is_uniform: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_batch", check_int("min_batch", self.min_batch, minimum=1))
        object.__setattr__(self, "method", check_choice("method", self.method, tuple(_PRIVATE_METHODS)))

    def check_batch(self, size: int) -> None:
        """Raise :class:`BatchTooSmallError` if ``size < min_batch``.

        Example:
            >>> Shuffler(2).check_batch(2)
        """
        if size < self.min_batch:
            raise BatchTooSmallError(
                f"batch of {size} reports is smaller than min_batch = {self.min_batch}; nothing "
                f"released (the privacy guarantee is computed for n >= {self.min_batch})"
            )

    def shuffle(self, reports: Any, *, rng: Any = None) -> np.ndarray:
        """Return the reports in uniformly random order.

        Args:
            reports: 1-D sequence or array of reports (any labels).
            rng: ``None`` (private mode, OS CSPRNG) or a seed / numpy Generator
                (simulation mode, NOT private).

        Returns:
            A numpy array holding exactly the same reports, permuted.

        Raises:
            BatchTooSmallError: If there are fewer than ``min_batch`` reports.
            ParameterError: If ``reports`` is not 1-D or ``rng`` is invalid.

        Example:
            >>> out = Shuffler(4).shuffle([0, 1, 2, 3])  # private mode (OS CSPRNG)
            >>> sorted(out.tolist())
            [0, 1, 2, 3]
            >>> Shuffler(4).shuffle([5, 6, 7, 8], rng=0).tolist() == Shuffler(4).shuffle([5, 6, 7, 8], rng=0).tolist()
            True
        """
        gen = check_rng(rng)
        arr = _as_reports(reports)
        self.check_batch(arr.size)
        if gen is not None:
            return gen.permuted(arr)
        return arr[_PRIVATE_METHODS[self.method](arr.size)]

    def histogram(self, codes: Any, k: int) -> np.ndarray:
        """Release the histogram of a batch of category codes (no permutation needed: it is symmetric).

        Args:
            codes: 1-D integer array of category codes in ``[0, k)``.
            k: Number of categories.

        Returns:
            ``int64`` counts of length ``k``.

        Raises:
            BatchTooSmallError: If there are fewer than ``min_batch`` reports.

        Example:
            >>> Shuffler(3).histogram([1, 1, 0], 2).tolist()
            [1, 2]
        """
        arr = _as_reports(codes)
        self.check_batch(arr.size)
        return _histogram(arr, k)


def _as_reports(reports: Any) -> np.ndarray:
    if isinstance(reports, (str, bytes)):
        raise ParameterError(f"reports must be a 1-D sequence, got the string {reports!r}")
    arr: np.ndarray | None
    if isinstance(reports, np.ndarray):
        arr = reports
    else:
        try:
            seq = list(reports)
        except TypeError:
            raise ParameterError(f"reports must be a 1-D sequence, got {reports!r}") from None
        arr = None
        if seq and type(seq[0]) in (int, str) and all(type(v) is type(seq[0]) for v in seq):
            try:  # homogeneous ints/strings: a typed array (never mixes types into strings)
                arr = np.asarray(seq)
            except OverflowError:
                arr = None
        if arr is None or arr.ndim != 1:
            arr = np.empty(len(seq), dtype=object)
            arr[:] = seq
    if arr.ndim != 1:
        raise ParameterError(f"reports must be a 1-D sequence, got shape {arr.shape}")
    return arr
