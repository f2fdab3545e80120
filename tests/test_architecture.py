"""Import layers (ARCHITECTURE.md, issue 13), checked on the source with ``ast`` (nothing is imported).

Every module of the package (``adapters/`` included) gets a layer from :data:`LAYERS`, the table of
ARCHITECTURE.md. The tests assert that

(a) no module of layers 1-4 imports the presentation package, at module level or lazily inside a
    function, and names it in a string only as the target of a deprecated alias
    (``shuffle_accounting._deprecation``);
(b) every import of a first-party module points to the same layer or a lower one;
(c) no module (package, tests, benchmarks, examples) imports a private name (``_x``) of another
    module, reads one as ``module._x`` or by name (``monkeypatch.setattr(module, "_x", ...)``),
    except :data:`PRIVATE_ALLOWED` (empty).

The checker is run on planted violations too, so the tests can fail.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Import name of a source folder.
SOURCES = {
    "shuffle_accounting": ROOT / "shuffle_accounting",
    "shuffle_accounting.adapters": ROOT / "adapters",
}
PRESENTATION = "shuffle_accounting.presentation"

#: The layer table of ARCHITECTURE.md: module or package prefix -> layer (the longest prefix wins).
#: A new module that no entry covers fails :func:`test_every_module_has_a_layer`: place it here
#: and in ARCHITECTURE.md.
LAYERS: dict[str, int] = {
    # 1. numerics and validation. The root package only defines __version__ and resolves its
    # public names lazily, by string, into layers 1-3 (importing it imports nothing else).
    "shuffle_accounting": 1,
    "shuffle_accounting._validation": 1,
    "shuffle_accounting._logmath": 1,
    "shuffle_accounting._binomial": 1,
    "shuffle_accounting._rng": 1,
    "shuffle_accounting._deprecation": 1,
    "shuffle_accounting.curves": 1,
    "shuffle_accounting._lazy": 1,
    # 2. randomizers and each paper's mathematics
    "shuffle_accounting.randomizers": 2,
    "shuffle_accounting.literature": 2,
    "shuffle_accounting.reidentification": 2,
    "shuffle_accounting.qif": 2,
    "shuffle_accounting.dsigma": 2,
    # 3. curves, accountants, calibration
    "shuffle_accounting.shuffled_krr": 3,
    # 4. adapters and runtime (accuracy compares the runtime's analyzer with runtime.baseline)
    "shuffle_accounting.accuracy": 4,
    "shuffle_accounting.runtime": 4,
    "shuffle_accounting.adapters": 4,
    # 5. presentation
    PRESENTATION: 5,
}

#: Deprecated alias modules left at the old presentation paths (layer 5; they only forward).
DEPRECATED_ALIASES = frozenset(
    {
        "shuffle_accounting.cli",
        "shuffle_accounting.report",
        "shuffle_accounting.plotting",
        "shuffle_accounting.whatif",
        "shuffle_accounting.planner",
        "shuffle_accounting.planner.compute",
        "shuffle_accounting.planner.server",
        "shuffle_accounting.qif.report",
        "shuffle_accounting.qif.plot",
        "shuffle_accounting.runtime.plot",
        "shuffle_accounting.runtime.command",
        "shuffle_accounting.dsigma.command",
        "shuffle_accounting.shuffled_krr.report",
    }
)
#: Calls of shuffle_accounting._deprecation whose string arguments may name the presentation package.
FORWARDERS = frozenset({"moved_names", "moved_attribute", "moved_module"})
#: Top-level names of the project's own modules (third-party private names are not checked).
FIRST_PARTY = frozenset({"shuffle_accounting", "_bad_inputs"})
#: (module, private name it may use from another module): documented exceptions to (c). Empty.
PRIVATE_ALLOWED: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module


def _discover() -> dict[str, Module]:
    out = {}
    for prefix, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            name = ".".join([prefix, *parts])
            out[name] = Module(name, path, is_package, ast.parse(path.read_text(encoding="utf-8")))
    return out


MODULES = _discover()
NAMES = frozenset(MODULES)


def layer_of(name: str) -> int | None:
    """Layer of a first-party module (``None`` if the table does not cover it)."""
    if name in DEPRECATED_ALIASES:
        return 5
    best = None
    for prefix, layer in LAYERS.items():
        if (name == prefix or name.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return None if best is None else best[1]


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


@dataclass(frozen=True)
class Import:
    target: str  # the imported module (a submodule when ``from pkg import sub``)
    name: str | None  # the name taken from ``target`` (None: the module itself)
    line: int


def imports(module: str, is_package: bool, tree: ast.AST, known: frozenset[str] = NAMES) -> list[Import]:
    """Every import statement anywhere in ``tree`` (functions included), resolved to absolute names."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [Import(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, is_package, node)
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in known:
                    out.append(Import(sub, None, node.lineno))
                else:
                    out.append(Import(base, a.name, node.lineno))
    return out


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _forwarder_strings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None
            if called in FORWARDERS:
                ids |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Constant)}
    return ids


def presentation_uses(
    module: str, is_package: bool, tree: ast.AST, known: frozenset[str] = NAMES
) -> list[str]:
    """Imports of the presentation package and strings naming it outside a deprecation forwarder."""
    found = [
        f"line {imp.line}: imports {imp.target}"
        for imp in imports(module, is_package, tree, known)
        if imp.target == PRESENTATION or imp.target.startswith(PRESENTATION + ".")
    ]
    allowed = _docstring_nodes(tree) | _forwarder_strings(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and PRESENTATION in node.value
            and id(node) not in allowed
        ):
            found.append(f"line {node.lineno}: names {PRESENTATION} in a string")
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(module: str, is_package: bool, tree: ast.AST, known: frozenset[str] = NAMES) -> list[str]:
    """Private names of other modules used by ``module``: ``from m import _x`` and ``m._x``."""
    found = []
    bound_modules: dict[str, str] = {}  # local name -> first-party module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    bound_modules[a.asname] = a.name
                else:
                    bound_modules[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, is_package, node)
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in known:
                    bound_modules[a.asname or a.name] = sub
                elif _is_private(a.name) and base != module and base.split(".")[0] in FIRST_PARTY:
                    found.append(f"line {node.lineno}: from {base} import {a.name}")
        elif (  # m = importlib.import_module("shuffle_accounting.x")
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and (
                (isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "import_module")
                or (isinstance(node.value.func, ast.Name) and node.value.func.id == "import_module")
            )
            and node.value.args
            and isinstance(node.value.args[0], ast.Constant)
            and isinstance(node.value.args[0].value, str)
        ):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    bound_modules[t.id] = node.value.args[0].value
    first_party = {k: v for k, v in bound_modules.items() if v.split(".")[0] in FIRST_PARTY}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            chain = []
            cur: ast.AST = node.value
            while isinstance(cur, ast.Attribute):
                chain.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in first_party:
                target = ".".join([first_party[cur.id], *reversed(chain)])
                if target in known or target.split(".")[0] == "_bad_inputs":
                    if f"{target}.{node.attr}" not in known and target != module:
                        found.append(f"line {node.lineno}: {target}.{node.attr}")
    for node in ast.walk(tree):  # setattr(m, "_x", ...), monkeypatch.setattr(m, "_x", ...), getattr(m, "_x")
        if not (isinstance(node, ast.Call) and len(node.args) >= 2):
            continue
        fn = node.func
        called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None
        obj, attr = node.args[0], node.args[1]
        if (
            called in ("setattr", "getattr", "hasattr", "delattr")
            and isinstance(obj, ast.Name)
            and obj.id in first_party
            and isinstance(attr, ast.Constant)
            and isinstance(attr.value, str)
            and _is_private(attr.value)
            and first_party[obj.id] != module
        ):
            found.append(f"line {node.lineno}: {first_party[obj.id]}.{attr.value} (by name)")
    return [f for f in found if (module, f.split(" ")[-1].split(".")[-1]) not in PRIVATE_ALLOWED]


# ------------------------------------------------------------------------------------ the tests


def test_the_walk_finds_the_package():
    assert {"shuffle_accounting.randomizers", "shuffle_accounting.adapters.opendp", PRESENTATION} <= NAMES
    assert f"{PRESENTATION}.report" in NAMES and len(NAMES) > 60


def test_every_module_has_a_layer():
    missing = sorted(name for name in NAMES if layer_of(name) is None)
    assert not missing, (
        f"modules not in the layer table (tests/test_architecture.py, ARCHITECTURE.md): {missing}"
    )


def test_deprecated_aliases_only_forward():
    """An alias module holds a docstring, its imports, the forwarding assignment and at most a
    ``__main__`` block: no function or class of its own."""
    for name in DEPRECATED_ALIASES:
        body = MODULES[name].tree.body
        kinds = {type(stmt).__name__ for stmt in body}
        assert kinds <= {"Expr", "ImportFrom", "Assign", "If"}, (name, kinds)
        assert any(isinstance(s, ast.Assign) and "moved_module" in ast.dump(s) for s in body), name


@pytest.mark.parametrize("name", sorted(n for n in NAMES if (layer_of(n) or 5) < 5))
def test_math_never_imports_presentation(name):
    mod = MODULES[name]
    assert presentation_uses(name, mod.is_package, mod.tree) == []


def upward_imports(name: str, is_package: bool, tree: ast.AST, known: frozenset[str] = NAMES) -> list[str]:
    """First-party imports of ``name`` whose target sits in a higher layer than ``name``."""
    mine = layer_of(name)
    upward = []
    for imp in imports(name, is_package, tree, known):
        if not imp.target.startswith("shuffle_accounting"):
            continue
        target = imp.target if imp.target in known else imp.target.rsplit(".", 1)[0]
        theirs = layer_of(target)
        if theirs is not None and mine is not None and theirs > mine:
            upward.append(f"line {imp.line}: layer {mine} imports {target} (layer {theirs})")
    return upward


@pytest.mark.parametrize("name", sorted(NAMES))
def test_imports_point_down(name):
    mod = MODULES[name]
    assert upward_imports(name, mod.is_package, mod.tree) == []


def _all_python_files() -> list[tuple[str, Path, bool]]:
    out = [(m.name, m.path, m.is_package) for m in MODULES.values()]
    for folder in ("tests", "benchmarks", "examples"):
        for path in sorted((ROOT / folder).glob("*.py")):
            out.append((path.stem, path, False))
    return out


@pytest.mark.parametrize(("name", "path", "is_package"), _all_python_files(), ids=lambda v: str(v))
def test_no_private_name_of_another_module(name, path, is_package):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert private_uses(name, is_package, tree, NAMES | {"_bad_inputs"}) == []


# ------------------------------------------------------------------- the checker catches violations


def _check(code: str, module: str = "shuffle_accounting.qif.vulnerability"):
    tree = ast.parse(code)
    known = NAMES | {module}
    return presentation_uses(module, False, tree, known), private_uses(module, False, tree, known)


@pytest.mark.parametrize(
    "code",
    [
        "from ..presentation.report import Deployment\n",
        "def f():\n    from ..presentation import report\n    return report\n",
        "import shuffle_accounting.presentation.cli as cli\n",
        "import importlib\nm = importlib.import_module('shuffle_accounting.presentation.report')\n",
    ],
)
def test_planted_presentation_import_is_caught(code):
    assert _check(code)[0], code


def test_deprecation_forwarder_and_docstrings_are_not_violations():
    code = (
        '"""See :mod:`shuffle_accounting.presentation.qif_report`."""\n'
        "from .._deprecation import moved_names\n"
        "__getattr__ = moved_names(__name__, {'x': 'shuffle_accounting.presentation.qif_report'})\n"
    )
    assert _check(code) == ([], [])


@pytest.mark.parametrize(
    "code",
    [
        "from ._common import _private\n",
        "from ..shuffled_krr.blanket import _blanket_atoms as atoms\n",
        "def f():\n    from shuffle_accounting._binomial import _helper\n    return _helper\n",
        "from ..shuffled_krr import blanket\nx = blanket._blanket_atoms\n",
        "import shuffle_accounting.shuffled_krr.blanket as b\nb._U\n",
        "import shuffle_accounting\nshuffle_accounting._validation._check\n",
        "def t(monkeypatch):\n    from shuffle_accounting.literature import _clones as e\n"
        "    monkeypatch.setattr(e, '_EXACT_MAX', 1)\n",
        "import importlib\ng = importlib.import_module('shuffle_accounting.dsigma.groups')\ng._ValidGroups\n",
    ],
)
def test_planted_private_import_is_caught(code):
    assert _check(code)[1], code


@pytest.mark.parametrize(
    "code",
    [
        "from .._logmath import logsumexp\n",  # a public name of a private (internal) module
        "from . import _common\n",  # a private module itself
        "from ._common import check_p as _check_p\n",  # a local private alias of a public name
        "import numpy as np\nnp._NoValue\n",  # not first-party
        "def _mine():\n    pass\n_mine()\n",  # its own private name
        "class A:\n    def f(self):\n        return self._x\n",  # an attribute of an object
    ],
)
def test_allowed_forms_are_not_violations(code):
    assert _check(code)[1] == [], code


@pytest.mark.parametrize(
    "code",
    [
        "from ..shuffled_krr import ShuffledKRR\n",  # layer 2 -> 3
        "def f():\n    from ..runtime.analyzer import histogram\n    return histogram\n",  # 2 -> 4, lazy
        "import shuffle_accounting.adapters.opendp\n",  # 2 -> 4
    ],
)
def test_planted_upward_import_is_caught(code):
    assert upward_imports("shuffle_accounting.qif.vulnerability", False, ast.parse(code)), code


def test_downward_and_sideways_imports_are_allowed():
    code = (
        "from .._logmath import logsumexp\nfrom ..randomizers import KRR\nfrom ..literature import registry\n"
    )
    assert upward_imports("shuffle_accounting.qif.vulnerability", False, ast.parse(code)) == []
