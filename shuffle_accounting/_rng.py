"""The one randomness policy of the package, and exact samplers built on it (internal numerics layer).

Policy (every public ``rng=`` parameter goes through :func:`check_rng`):

* ``rng=None`` — **private mode**: every random bit comes from the OS CSPRNG (``os.urandom``), and
  the samplers below produce *exact* laws from uniform 32- or 64-bit integers.
* an ``int`` seed (``>= 0``) or a ``numpy.random.Generator`` — **simulation mode**: reproducible and
  **NOT private** (a PRNG's output is predictable from its state). :func:`check_rng` emits a
  :class:`PrivacyLeakWarning` every time such a value is accepted.
* anything else (``True``, floats, strings, a legacy ``numpy.random.RandomState``, ...) raises
  :class:`~shuffle_accounting._validation.ParameterError` naming the parameter.

Exact samplers:

* ``below_threshold(t)`` is ``True`` with probability exactly ``t / 2**64``;
* ``uniform_below(bound)`` is uniform on ``{0, ..., bound - 1}`` by integer rejection sampling
  (accept a ``w``-bit ``u`` iff ``u < 2**w - (2**w mod bound)``, return ``u mod bound``; ``w = 32``
  for scalar bounds below ``2**32``, else 64).

Accounting code uses no randomness and never imports this module.
"""

from __future__ import annotations

import numbers
import os
import warnings
from typing import Any

import numpy as np

from ._validation import ParameterError

__all__ = [
    "PrivacyLeakWarning",
    "RngLike",
    "check_rng",
    "is_simulation",
    "random_uint64",
    "below_threshold",
    "uniform_below",
]

#: What ``rng=`` accepts: ``None`` (private), a seed, or a numpy Generator (simulation, NOT private).
RngLike = int | np.random.Generator | None

_MAX64 = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
_TWO32 = 1 << 32


class PrivacyLeakWarning(UserWarning):
    """A seed or a numpy Generator was given as ``rng``: simulation mode, the output is NOT private.

    Raised (as a warning) by every public function or class of the package that accepts ``rng=``
    when it is given a seed or a Generator. Filter it explicitly where simulation is intended, e.g.
    ``warnings.simplefilter("ignore", PrivacyLeakWarning)`` or ``pytest.warns(PrivacyLeakWarning)``.

    Example:
        >>> issubclass(PrivacyLeakWarning, UserWarning)
        True
    """


def is_simulation(rng: Any) -> bool:
    """Whether a *validated* ``rng`` (the output of :func:`check_rng`) selects simulation mode.

    Example:
        >>> is_simulation(None)
        False
    """
    return rng is not None


def check_rng(rng: Any, *, name: str = "rng", stacklevel: int = 3) -> np.random.Generator | None:
    """Validate ``rng`` under the package's policy; warn when it selects simulation mode.

    Args:
        rng: ``None`` (private mode, OS CSPRNG), a non-negative integer seed or a
            ``numpy.random.Generator`` (simulation mode, NOT private).
        name: Parameter name used in the error message and the warning.
        stacklevel: Passed to :func:`warnings.warn` (3 = the caller of the public function).

    Returns:
        ``None`` for private mode, else the Generator to use (a seed becomes ``default_rng(seed)``).

    Raises:
        ParameterError: For any other value (booleans, floats, strings, legacy ``RandomState``,
            negative seeds, ...).

    Warns:
        PrivacyLeakWarning: If ``rng`` is a seed or a Generator.

    Example:
        >>> check_rng(None) is None
        True
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", PrivacyLeakWarning)
        ...     type(check_rng(7)).__name__
        'Generator'
        >>> check_rng(True)
        Traceback (most recent call last):
        ...
        shuffle_accounting._validation.ParameterError: rng must be None (private mode, OS CSPRNG), a non-negative integer seed or a numpy.random.Generator (simulation mode, NOT private), got True
    """
    if rng is None:
        return None
    if isinstance(rng, np.random.Generator):
        gen = rng
    elif isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)) and int(rng) >= 0:
        gen = np.random.default_rng(int(rng))
    else:
        text = repr(rng)
        text = text if len(text) <= 80 else text[:77] + "..."
        raise ParameterError(
            f"{name} must be None (private mode, OS CSPRNG), a non-negative integer seed or a "
            f"numpy.random.Generator (simulation mode, NOT private), got {text}"
        )
    warnings.warn(
        f"{name} is a seed or a numpy Generator: simulation mode, reproducible and NOT private "
        f"(pass {name}=None for the OS CSPRNG)",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )
    return gen


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


def random_uint64(size: int, rng: np.random.Generator | None) -> np.ndarray:
    """``size`` independent uniform 64-bit integers (``numpy.uint64``), from a validated ``rng``.

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
        rng: ``None`` (OS CSPRNG) or a Generator (already validated by :func:`check_rng`).

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
        rng: ``None`` (OS CSPRNG) or a Generator (already validated by :func:`check_rng`).

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
