"""Deprecated import paths: an old name forwards to its new home and warns once per use.

The presentation code (report sections, plots, command-line subcommands) moved out of the math
packages into :mod:`shuffle_accounting.presentation` (issue 13). Users' old imports keep working
through the two helpers here:

* :func:`moved_module` — the ``__getattr__``/``__dir__`` pair of a module that now only forwards
  (``shuffle_accounting/report.py`` forwards every name to
  ``shuffle_accounting.presentation.report``);
* :func:`moved_names` — the ``__getattr__`` of a math module or package that keeps a few old
  names (``shuffle_accounting.qif.report_section``) without importing their new home;
* :func:`moved_attribute` — a deprecated method that now calls a presentation function
  (``ReidentificationRisk.report()``).

Both import the new module by its *name* only when an old name is used, so a math module never
imports the presentation package (``tests/test_architecture.py`` checks that the only mentions
of ``shuffle_accounting.presentation`` in layers 1-4 are these string arguments). Every
forwarded access emits a :class:`DeprecationWarning` naming the new path.

Example:
    >>> import warnings
    >>> getattr_, _ = moved_module("old.place", "shuffle_accounting._validation")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     cls = getattr_("ParameterError")
    >>> cls.__name__, caught[0].category.__name__
    ('ParameterError', 'DeprecationWarning')
"""

from __future__ import annotations

import functools
import importlib
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "moved_module",
    "moved_names",
    "moved_attribute",
    "warn_moved",
    "old_positional_order",
    "keyword_only_now",
]


def warn_moved(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Emit the :class:`DeprecationWarning` saying ``old`` is now ``new``.

    Args:
        old: The deprecated dotted path.
        new: The dotted path to use instead.
        stacklevel: Passed to :func:`warnings.warn` (3: the caller of the forwarding function).
    """
    warnings.warn(
        f"{old} is deprecated: it moved to {new} (the presentation package, issue 13); "
        "the old path will be removed in a future release",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def moved_module(old: str, new: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for a module ``old`` whose whole content moved to module ``new``.

    Args:
        old: Dotted name of the deprecated module (its ``__name__``).
        new: Dotted name of the module that now holds everything.

    Returns:
        A PEP 562 ``__getattr__`` that imports ``new``, warns and returns ``new.<name>`` (dunder
        names are not forwarded), and a ``__dir__`` listing ``new``'s public names.
    """

    def __getattr__(name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        target = importlib.import_module(new)
        try:
            value = getattr(target, name)
        except AttributeError:
            raise AttributeError(f"module {old!r} has no attribute {name!r}") from None
        warn_moved(f"{old}.{name}", f"{new}.{name}")
        return value

    def __dir__() -> list[str]:
        return sorted(getattr(importlib.import_module(new), "__all__", ()))

    return __getattr__, __dir__


def moved_names(old: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """``__getattr__`` for a module ``old`` that keeps a few names which moved elsewhere.

    Args:
        old: Dotted name of the module keeping the old names (its ``__name__``).
        names: Old attribute name -> dotted name of the module that now defines it (same name).

    Returns:
        A PEP 562 ``__getattr__``: for a name of ``names`` it imports the new module, warns and
        returns the attribute; any other name raises :class:`AttributeError` as usual.
    """
    table = dict(names)

    def __getattr__(name: str) -> Any:
        try:
            new = table[name]
        except KeyError:
            raise AttributeError(f"module {old!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(new), name)
        warn_moved(f"{old}.{name}", f"{new}.{name}")
        return value

    return __getattr__


def moved_attribute(old: str, new_module: str, name: str) -> Any:
    """Warn that ``old`` is now ``new_module.name`` and return that attribute (imported by name).

    Args:
        old: The deprecated dotted path (e.g. ``"...ReidentificationRisk.report"``).
        new_module: Dotted name of the module that now defines it.
        name: The attribute's name there.

    Returns:
        ``new_module.name``.
    """
    value = getattr(importlib.import_module(new_module), name)
    warn_moved(old, f"{new_module}.{name}")
    return value


def old_positional_order(
    old: tuple[str, ...], *, detect: Callable[[tuple[Any, ...], dict[str, Any]], bool] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: a function whose argument order changed still accepts its former positional calls.

    The decorated function has its *new* signature (what ``inspect.signature`` and the docs show).
    A call is read in the former order ``old`` — its positional arguments bound to the old names,
    in order, and passed on as keywords, with a :class:`DeprecationWarning` showing the new call —
    when ``detect(args, kwargs)`` is true. ``detect=None`` reads *every* positional call in the
    old order: for a new signature that is keyword-only because no test can tell the two orders
    apart (``f(n, k)`` versus ``f(k, n)``, both integers). Keyword calls are never reinterpreted
    (the names did not change), so they work before and after the change.

    Args:
        old: The former positional parameter names, in order.
        detect: ``(args, kwargs) -> True`` when the positional arguments can only be in the old
            order (e.g. "the second one is an integer >= 2, so it is ``k``, not the probability
            ``p``"); ``None``: every positional call.

    Returns:
        The decorator.

    Example:
        >>> @old_positional_order(("n", "k"))
        ... def size(*, k, n):
        ...     return (k, n)
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     old_call = size(10, 3)
        >>> old_call == size(k=3, n=10), caught[0].category.__name__
        (True, 'DeprecationWarning')
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        new_call = ", ".join(
            f"{name}=..." if par.kind is inspect.Parameter.KEYWORD_ONLY else name
            for name, par in inspect.signature(fn).parameters.items()
            if par.default is inspect.Parameter.empty
        )

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if args and (detect is None or detect(args, kwargs)):
                if len(args) > len(old):
                    raise TypeError(
                        f"{fn.__name__}() takes at most {len(old)} positional arguments in its former "
                        f"order ({', '.join(old)}), got {len(args)}"
                    )
                _bind_as_keywords(
                    fn,
                    kwargs,
                    old[: len(args)],
                    args,
                    f"{fn.__name__}({', '.join(old)}) with positional arguments in this order is "
                    f"deprecated (issue 13: the library's order is k, the randomizer parameter, then n): "
                    f"call {fn.__name__}({new_call}) (keywords work with both orders)",
                )
                args = ()
            return fn(*args, **kwargs)

        return wrapper

    return decorate


def _bind_as_keywords(
    fn: Callable[..., Any],
    kwargs: dict[str, Any],
    names: tuple[str, ...],
    values: tuple[Any, ...],
    message: str,
) -> None:
    """Move deprecated positional ``values`` into ``kwargs`` under ``names``, warning with ``message``.

    The one binding step of :func:`old_positional_order` and :func:`keyword_only_now`: a name
    also given as a keyword raises ``TypeError`` (as Python does), then one
    :class:`DeprecationWarning` is issued at the caller of the decorated function.
    """
    for name in names:
        if name in kwargs:
            raise TypeError(f"{fn.__name__}() got multiple values for argument {name!r}")
    warnings.warn(message, DeprecationWarning, stacklevel=3)
    kwargs.update(zip(names, values))


def keyword_only_now(
    positional: int, names: tuple[str, ...]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: parameters that became keyword-only still accept their former positional use.

    The decorated function has its new signature (``names`` keyword-only after its first
    ``positional`` parameters). A call with more than ``positional`` positional arguments binds
    the extra ones to ``names`` in order, with a :class:`DeprecationWarning` naming the keyword.

    Args:
        positional: How many leading parameters stay positional.
        names: The parameters that became keyword-only, in their former positional order.

    Returns:
        The decorator.

    Example:
        >>> @keyword_only_now(1, ("scale",))
        ... def f(x, *, scale=1.0):
        ...     return x * scale
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     old_call = f(2.0, 3.0)
        >>> old_call == f(2.0, scale=3.0), caught[0].category.__name__
        (True, 'DeprecationWarning')
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if len(args) > positional:
                extra = args[positional:]
                if len(extra) > len(names):
                    raise TypeError(
                        f"{fn.__name__}() takes at most {positional + len(names)} positional arguments "
                        f"(the last {len(names)} deprecated), got {len(args)}"
                    )
                bound = names[: len(extra)]
                _bind_as_keywords(
                    fn,
                    kwargs,
                    bound,
                    extra,
                    f"passing {', '.join(bound)} positionally to {fn.__name__}() is deprecated: pass "
                    f"{', '.join(f'{b}=...' for b in bound)} (secondary arguments are keyword-only)",
                )
                args = args[:positional]
            return fn(*args, **kwargs)

        return wrapper

    return decorate
