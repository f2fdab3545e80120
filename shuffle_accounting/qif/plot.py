"""Deprecated alias of :mod:`shuffle_accounting.presentation.qif_plot` (moved there with the rest of the presentation code, issue 13).

``from shuffle_accounting.qif.plot import X`` keeps working and emits a :class:`DeprecationWarning`; import from
:mod:`shuffle_accounting.presentation.qif_plot` instead.
"""

from .._deprecation import moved_module

__getattr__, __dir__ = moved_module("shuffle_accounting.qif.plot", "shuffle_accounting.presentation.qif_plot")
