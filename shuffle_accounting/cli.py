"""Deprecated alias of :mod:`shuffle_accounting.presentation.cli` (moved there with the rest of the presentation code, issue 13).

``from shuffle_accounting.cli import X`` keeps working and emits a :class:`DeprecationWarning`; import from
:mod:`shuffle_accounting.presentation.cli` instead.
"""

from ._deprecation import moved_module

__getattr__, __dir__ = moved_module("shuffle_accounting.cli", "shuffle_accounting.presentation.cli")

if __name__ == "__main__":  # pragma: no cover - ``python -m shuffle_accounting.cli`` (deprecated)
    import sys

    from ._deprecation import warn_moved

    warn_moved(
        "python -m shuffle_accounting.cli", "python -m shuffle_accounting.presentation.cli", stacklevel=2
    )
    from .presentation.cli import main

    sys.exit(main())
