"""Deprecated alias of :mod:`shuffle_accounting.presentation.report` (moved there with the rest of the presentation code, issue 13).

``from shuffle_accounting.report import X`` keeps working and emits a :class:`DeprecationWarning`; import from
:mod:`shuffle_accounting.presentation.report` instead.
"""

from ._deprecation import moved_module

__getattr__, __dir__ = moved_module("shuffle_accounting.report", "shuffle_accounting.presentation.report")
