"""Deprecated alias of :mod:`shuffle_accounting.presentation.planner.compute` (moved there with the rest of the presentation code, issue 13).

``from shuffle_accounting.planner.compute import X`` keeps working and emits a :class:`DeprecationWarning`; import from
:mod:`shuffle_accounting.presentation.planner.compute` instead.
"""

from .._deprecation import moved_module

__getattr__, __dir__ = moved_module(
    "shuffle_accounting.planner.compute", "shuffle_accounting.presentation.planner.compute"
)
