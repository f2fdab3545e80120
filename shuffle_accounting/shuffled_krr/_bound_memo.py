"""Bounded, thread-safe memo of single-eps bound evaluations, shared by the worst-case searches.

The branch and bound of :mod:`~shuffle_accounting.shuffled_krr.worst_case` (``k = 2``) and of
:mod:`~shuffle_accounting.shuffled_krr.worst_case_k` (``k = 3``) evaluate certified bounds on
boxes of datasets; ``ShuffledKRR.epsilon`` with a worst-case method runs an epsilon query, then
a delta query at its answer (the round trip), and the second meets the same boxes at the same
eps. Each module keeps one :class:`BoundMemo`, keyed by *every* input of one evaluation (the
mechanism, the truncation level, the box, ``eps`` and the module's tunables): an evaluation is a
deterministic function of its key, so a hit returns exactly what the evaluation would compute and
a certificate does not depend on earlier calls, only its cost does. The ``verify`` functions never
read a memo. :func:`canonical_level` puts the truncation level of both queries of a round trip on
one grid, so that they build the same problem.

This module holds no mathematics: the soundness of every bound is proved where it is computed.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple

__all__ = ["BoundMemo", "MemoInfo", "canonical_level", "LEVEL_STEP"]

#: Grid of the canonical truncation level (:func:`canonical_level`), in nats.
LEVEL_STEP: float = 0.125


def canonical_level(log_level: float) -> float:
    """``log_level`` rounded up to the grid :data:`LEVEL_STEP` (and at most 0).

    A truncation level only sizes the windows of a bound evaluation (the dropped mass, at most
    ``e^(level - 25)``, is always added), so any level is sound, and rounding it up by less than
    ``1/8`` keeps the truncation below ``e^-24.875`` of the level of interest. The epsilon query
    at ``delta`` and the delta query at the certified epsilon (levels ``log delta`` and the
    witness's ``log delta(eps)``, within ``1e-3`` of each other) then build the same problem.

    Args:
        log_level: A log level (``-inf`` < it; values above 0 give 0).

    Returns:
        The smallest multiple of :data:`LEVEL_STEP` that is ``>= log_level``, capped at 0.

    Example:
        >>> canonical_level(-13.8155), canonical_level(-13.75), canonical_level(0.5)
        (-13.75, -13.75, 0.0)
    """
    return min(math.ceil(log_level / LEVEL_STEP) * LEVEL_STEP, 0.0)


class MemoInfo(NamedTuple):
    """State of a :class:`BoundMemo`."""

    #: Lookups answered from the memo since it was last cleared.
    hits: int
    #: Lookups that found nothing (the bound was then computed and stored).
    misses: int
    #: Entries held now.
    size: int


class BoundMemo:
    """Bounded, thread-safe memo ``key -> value`` (least recently used dropped).

    Args:
        max_size: Called at every insertion; the memo keeps at most that many entries (so a
            module constant read through it can be changed at run time).
        copy: Applied to a value when it is stored and when it is returned (default: none; pass
            one for mutable values such as arrays).

    Example:
        >>> m = BoundMemo(lambda: 2)
        >>> m.put(("a",), 1.0); m.put(("b",), 2.0); m.put(("c",), 3.0)
        >>> m.get(("a",)) is None, m.get(("c",)), m.info()
        (True, 3.0, MemoInfo(hits=1, misses=1, size=2))
    """

    def __init__(self, max_size: Callable[[], int], copy: Callable[[Any], Any] | None = None) -> None:
        self._d: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._max_size = max_size
        self._copy = copy
        self.hits = self.misses = 0

    def get(self, key: Hashable) -> Any | None:
        """The stored value (a copy, if ``copy`` was given), or ``None``; counts a hit or a miss."""
        with self._lock:
            v = self._d.get(key)
            if v is None:
                self.misses += 1
                return None
            self._d.move_to_end(key)
            self.hits += 1
        return self._copy(v) if self._copy is not None else v

    def put(self, key: Hashable, value: Any) -> None:
        """Store ``value`` under ``key``, dropping the least recently used beyond ``max_size()``."""
        v = self._copy(value) if self._copy is not None else value
        with self._lock:
            self._d[key] = v
            self._d.move_to_end(key)
            while len(self._d) > max(0, self._max_size()):
                self._d.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry and reset the counters."""
        with self._lock:
            self._d.clear()
            self.hits = self.misses = 0

    def info(self) -> MemoInfo:
        """Hits, misses and size, read under the lock."""
        with self._lock:
            return MemoInfo(self.hits, self.misses, len(self._d))

    def __len__(self) -> int:
        return len(self._d)
