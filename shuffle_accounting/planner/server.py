"""Deprecated alias of :mod:`shuffle_accounting.presentation.planner.server` (moved there with the rest of the presentation code, issue 13).

``from shuffle_accounting.planner.server import X`` keeps working and emits a :class:`DeprecationWarning`; import from
:mod:`shuffle_accounting.presentation.planner.server` instead.
"""

from .._deprecation import moved_module

__getattr__, __dir__ = moved_module(
    "shuffle_accounting.planner.server", "shuffle_accounting.presentation.planner.server"
)
