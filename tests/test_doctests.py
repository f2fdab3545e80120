"""Run every docstring example in the package (adapters included) and the README tour."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import shuffle_accounting

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list[str]:
    import shuffle_accounting.adapters as adapters

    names = ["shuffle_accounting", "shuffle_accounting.adapters"]
    # adapters/ is mapped into the package by setuptools, so walk it separately.
    for pkg in (shuffle_accounting, adapters):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            names.append(info.name)
    return sorted(set(names))


MODULES = _modules()


def test_module_list_is_not_empty():
    assert "shuffle_accounting.randomizers" in MODULES
    assert "shuffle_accounting.adapters" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


def test_readme_examples():
    result = doctest.testfile(
        str(ROOT / "README.md"),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted > 0, "README.md has no runnable examples"
    assert result.failed == 0


DOC_PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)


def test_docs_pages_found():
    assert "docs/getting-started.md" in DOC_PAGES


@pytest.mark.parametrize("page", DOC_PAGES)
def test_docs_examples(page):
    """The ``>>>`` examples of the documentation site's pages (Markdown) run as doctests."""
    result = doctest.testfile(
        str(ROOT / page), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.failed == 0
