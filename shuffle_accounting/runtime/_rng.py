"""Randomness sources for the runtime: the OS CSPRNG (private mode) or a numpy Generator (simulation).

Every sampler here produces *exact* laws from uniform 32- or 64-bit integers:

* ``below_threshold(t)`` is ``True`` with probability exactly ``t / 2**64``;
* ``uniform_below(bound)`` is uniform on ``{0, ..., bound - 1}`` by integer rejection sampling
  (accept a ``w``-bit ``u`` iff ``u < 2**w - (2**w mod bound)``, return ``u mod bound``; ``w = 32``
  for scalar bounds below ``2**32``, else 64).

Private mode (``rng=None``) reads its bits from ``os.urandom`` (the kernel CSPRNG). A seed or a
``numpy.random.Generator`` selects simulation mode, which is reproducible and **not private**: a
PRNG's output can be predicted from its state.
"""

from __future__ import annotations

import numbers
import os
from typing import Any, Union

import numpy as np

from .._validation import ParameterError

__all__ = ["RngLike", "check_rng", "random_uint64", "below_threshold", "uniform_below"]

#: What ``rng=`` accepts: ``None`` (private), a seed, or a numpy Generator (simulation, NOT private).
RngLike = Union[None, int, np.random.Generator]

_MAX64 = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
_TWO32 = 1 << 32


def _uniform_below_scalar(bound: int, size: int) -> np.ndarray:
    """Private-mode fast path for ``bound < 2**32``: rejection sampling on 32-bit words.

    A word ``u`` is accepted iff ``u < bound * floor(2**32 / bound)``; then ``u mod bound`` is
    exactly uniform. Rejected positions are redrawn.
    """
    limit = np.uint32((_TWO32 // bound) * bound - 1)  # accept u <= limit
    u = np.frombuffer(os.urandom(4 * size), dtype=np.uint32)
    out = (u % np.uint32(bound)).astype(np.int64)
    todo = np.flatnonzero(u > limit)
    while todo.size:
        u = np.frombuffer(os.urandom(4 * todo.size), dtype=np.uint32)
        ok = u <= limit
        out[todo[ok]] = (u[ok] % np.uint32(bound)).astype(np.int64)
        todo = todo[~ok]
    return out


def check_rng(rng: Any) -> np.random.Generator | None:
    """Validate ``rng``: ``None`` stays ``None`` (private mode), a seed becomes a Generator.

    Args:
        rng: ``None``, a non-negative integer seed, or a ``numpy.random.Generator``.

    Returns:
        ``None`` for private mode, else the Generator to use (simulation mode, NOT private).

    Raises:
        ParameterError: For any other value (booleans, floats, legacy ``RandomState``, ...).

    Example:
        >>> check_rng(None) is None
        True
        >>> type(check_rng(7)).__name__
        'Generator'
    """
    if rng is None or isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise ParameterError(
        "rng must be None (private mode, OS CSPRNG), a non-negative integer seed or a "
        f"numpy.random.Generator (simulation mode, NOT private), got {rng!r}"
    )


def random_uint64(size: int, rng: np.random.Generator | None) -> np.ndarray:
    """``size`` independent uniform 64-bit integers (``numpy.uint64``).

    Example:
        >>> random_uint64(3, None).dtype
        dtype('uint64')
    """
    if rng is None:
        return np.frombuffer(os.urandom(8 * size), dtype=np.uint64)
    return rng.integers(0, _MAX64, size=size, dtype=np.uint64, endpoint=True)


def below_threshold(threshold: int, size: int, rng: np.random.Generator | None) -> np.ndarray:
    """Boolean array, each entry ``True`` with probability exactly ``threshold / 2**64``.

    Args:
        threshold: Integer in ``[0, 2**64)``.
        size: Number of draws.
        rng: ``None`` (OS CSPRNG) or a Generator.

    Example:
        >>> bool(below_threshold(0, 5, None).any())
        False
    """
    if threshold == 0:
        return np.zeros(size, dtype=bool)
    return random_uint64(size, rng) < np.uint64(threshold)


def uniform_below(bound: Any, size: int, rng: np.random.Generator | None) -> np.ndarray:
    """Uniform integers on ``{0, ..., bound - 1}`` (``bound`` a scalar or an array of length ``size``).

    Private mode uses integer rejection sampling: a 32-bit word (64-bit for array or huge bounds)
    ``u`` is accepted iff ``u <= 2**w - 1 - (2**w mod bound)``, so ``u mod bound`` is exactly
    uniform; rejected positions are redrawn. Simulation mode calls ``Generator.integers`` (also exact).

    Args:
        bound: Positive integer, or int64 array of positive integers (one per draw).
        size: Number of draws.
        rng: ``None`` (OS CSPRNG) or a Generator.

    Returns:
        ``int64`` array of length ``size``.

    Example:
        >>> x = uniform_below(3, 1000, None)
        >>> sorted(set(x.tolist()))
        [0, 1, 2]
    """
    if rng is not None:
        return rng.integers(0, bound, size=size, dtype=np.int64)
    if np.ndim(bound) == 0 and 1 <= int(bound) < _TWO32:
        return _uniform_below_scalar(int(bound), size)
    b = np.broadcast_to(np.asarray(bound, dtype=np.uint64), (size,))
    rem = (_MAX64 % b + np.uint64(1)) % b  # 2**64 mod b, computed without overflow
    limit = _MAX64 - rem  # accept u <= limit
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        u = random_uint64(todo.size, None)
        ok = u <= limit[todo]
        out[todo[ok]] = (u[ok] % b[todo[ok]]).astype(np.int64)
        todo = todo[~ok]
    return out
