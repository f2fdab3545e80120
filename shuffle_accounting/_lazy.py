"""Lazy public names for packages (PEP 562), shared by the root package and ``shuffled_krr``.

A package lists where each public name lives; :func:`lazy_attributes` returns the module-level
``__getattr__`` and ``__dir__`` that import a name on first access and cache it in the package's
namespace, so ``import package`` imports nothing heavy (dp_accounting, scipy.signal, ...) until a
name that needs it is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, table: dict[str, tuple[str, str | None]], namespace: dict[str, Any], public: list[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` resolving the names of ``table`` on first use.

    Args:
        package: The package's ``__name__`` (relative module names are resolved against it).
        table: ``name -> (module, attribute)``; attribute ``None`` means the module itself.
        namespace: The package's ``globals()`` (each resolved name is cached there).
        public: The package's ``__all__`` (listed by ``dir``).

    Returns:
        The two functions to assign to ``__getattr__`` and ``__dir__``.

    Example:
        >>> ns = {}
        >>> get, _ = lazy_attributes("shuffle_accounting", {"KRR": (".randomizers", "KRR")}, ns, ["KRR"])
        >>> get("KRR").__name__, "KRR" in ns
        ('KRR', True)
    """

    def __getattr__(name: str) -> Any:
        try:
            module_name, attr = table[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module = importlib.import_module(module_name, package)
        value = module if attr is None else getattr(module, attr)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
