"""The public API of each package facade: what users import works, and what it exports is documented.

* Every ``from X import a, b`` in the README and the notebooks imports, and when ``X`` is a package
  facade the names are in its ``__all__`` (so a rename or a move breaks this test, not the reader).
* Every name in a facade's ``__all__`` resolves to a real object, and every public class or function
  has a docstring of its own (a dataclass's generated signature does not count).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FACADES = ("perfembed", "loopnest", "embeddings", "embeddings.features", "database", "autotune")
IMPORT = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+([\w, ()]+)", re.MULTILINE)


def _documented_imports() -> list[tuple[str, str, str]]:
    """(where, module, name) for each ``from module import name`` of ours in the README and the notebooks."""
    texts = [("README.md", (ROOT / "README.md").read_text())]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        texts.append((path.name, "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")))
    ours = ("perfembed", "loopnest", "embeddings", "database", "autotune", "service")
    out = []
    for where, text in texts:
        for line in text.splitlines():
            for statement in line.split(";"):  # inline code such as `from x import Y; y = Y.open()`
                for module, names in IMPORT.findall(statement.strip("`")):
                    if module.split(".")[0] in ours:
                        out += [(where, module, n.strip(" ()")) for n in names.split(",") if n.strip(" ()")]
    return out


DOCUMENTED = _documented_imports()


def test_the_readme_and_the_notebooks_import_something() -> None:
    assert ("README.md", "perfembed", "Notebook") in DOCUMENTED
    assert any(where.endswith(".ipynb") for where, _, _ in DOCUMENTED)


@pytest.mark.parametrize(("where", "module", "name"), DOCUMENTED, ids=lambda v: str(v))
def test_what_users_are_told_to_import_exists(where: str, module: str, name: str) -> None:
    imported = importlib.import_module(module)
    assert hasattr(imported, name), f"{where}: `from {module} import {name}` fails"
    if module in FACADES:
        assert name in imported.__all__, f"{where} imports {name} from {module}, whose __all__ lacks it"


def _own_docstring(obj: type | object) -> str | None:
    """A class's or function's docstring; None for none, or for the signature a dataclass writes in its place."""
    doc = obj.__doc__
    if inspect.isclass(obj) and doc is not None and doc.startswith(f"{obj.__name__}("):
        return None
    return doc


@pytest.mark.parametrize("facade", FACADES)
def test_every_public_name_resolves_and_is_documented(facade: str) -> None:
    module = importlib.import_module(facade)
    assert module.__doc__, f"{facade} has no module docstring"
    assert len(set(module.__all__)) == len(module.__all__), f"{facade}.__all__ lists a name twice"
    undocumented = []
    for name in module.__all__:
        value = getattr(module, name)  # AttributeError for a name listed but not defined
        if (inspect.isclass(value) or inspect.isfunction(value)) and not _own_docstring(value):
            undocumented.append(name)
    assert not undocumented, f"{facade}: public names without a docstring: {undocumented}"


def test_facades_define_only_what_they_export() -> None:
    # The names a facade binds at import (not private, not submodules, not __future__) are its exports.
    for facade in FACADES:
        path = Path(importlib.import_module(facade).__file__ or "")
        tree = ast.parse(path.read_text())
        bound = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                 and node.module != "__future__" for alias in node.names}
        for node in tree.body:  # a star import binds the names its module lists
            if isinstance(node, ast.ImportFrom) and node.module and any(a.name == "*" for a in node.names):
                bound |= set(importlib.import_module(node.module).__all__)
        bound.discard("*")
        public = {n for n in bound if not n.startswith("_") and n not in ("TYPE_CHECKING", "Any", "importlib")}
        assert public <= set(importlib.import_module(facade).__all__), (facade, sorted(public))
