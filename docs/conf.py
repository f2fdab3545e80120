"""Sphinx configuration of the shuffle_accounting documentation.

Build:  python -m sphinx -W --keep-going -b html docs docs/_build/html   (what .ci/run does;
needs the package installed, e.g. ``pip install -e ".[docs]"``).

The API reference (docs/api/*.rst, not versioned) is generated here at every build by walking the
package, so a new public module is documented without touching the docs: one page per
subpackage, each listing its public modules with their members (``__all__``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import pkgutil
from pathlib import Path

# The package must be installed (pip install -e ".[docs]"): adapters/ is mapped into it by setuptools.
import shuffle_accounting

DOCS = Path(__file__).resolve().parent

project = "shuffle_accounting"
author = "shuffle_accounting contributors"
copyright = "the shuffle_accounting contributors, Apache-2.0"
release = version = importlib.metadata.version("shuffle-accounting")

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
html_theme = "alabaster"
html_title = f"shuffle_accounting {release}"

napoleon_google_docstring = True
napoleon_numpy_docstring = False
# "Attributes:" sections as :ivar: fields, so dataclass fields are not described twice.
napoleon_use_ivar = True
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Optional extras are imported lazily by the library; mock any that are missing so the reference
# builds from a plain install too.
_OPTIONAL = [
    "opendp",
    "diffprivlib",
    "sklearn",
    "matplotlib",
    "dask",
    "distributed",
    "pyspark",
    "starlette",
    "uvicorn",
]
autodoc_mock_imports = [m for m in _OPTIONAL if importlib.util.find_spec(m) is None]
nitpicky = False
suppress_warnings = ["myst.header"]

# ---------------------------------------------------------------------------- API reference
# Internal helpers, console-script plumbing (the subcommands, the planner's server, the small
# plot helpers) and the deprecated alias modules left at the old presentation paths are left out
# of the reference.
_SKIP = {"server", "cli"}


def _deprecated_alias(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    return bool(spec and spec.origin) and "moved_module(" in Path(spec.origin).read_text(encoding="utf-8")


def _public(name: str) -> bool:
    parts = name.split(".")[1:]
    if any(p.startswith("_") or p in _SKIP or p.endswith(("command", "plot")) for p in parts):
        return False
    return not _deprecated_alias(name)


def _write_api() -> None:
    import shuffle_accounting.adapters as adapters

    api = DOCS / "api"
    api.mkdir(exist_ok=True)
    pages: dict[str, list[str]] = {"shuffle_accounting": []}
    for pkg in (shuffle_accounting, adapters):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if not _public(info.name):
                continue
            parent = info.name if info.ispkg else info.name.rsplit(".", 1)[0]
            pages.setdefault(parent, [])
            if not info.ispkg:
                pages[parent].append(info.name)
    toc = []
    for page, modules in sorted(pages.items()):
        title = page if page != "shuffle_accounting" else "shuffle_accounting (top level)"
        lines = [title, "=" * len(title), "", f".. automodule:: {page}", "   :no-members:", ""]
        for mod in sorted(set(modules)):
            lines += [mod, "-" * len(mod), "", f".. automodule:: {mod}", ""]
        (api / f"{page}.rst").write_text("\n".join(lines))
        toc.append(f"   {page}")
    (api / "index.rst").write_text(
        "API reference\n=============\n\nGenerated from the docstrings (Google style). Every public module, "
        "by subpackage.\n\n.. toctree::\n   :maxdepth: 2\n\n" + "\n".join(toc) + "\n"
    )


_write_api()
