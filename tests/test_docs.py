"""The docs: every variable the code reads is on the configuration page, the README stays short and
readable, and the committed pages rendered from results (the README's headline table, the benchmark
reports) are what their JSON renders to. The site itself is built by ``make docs`` (``mkdocs build --strict``)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("loopnest", "embeddings", "database", "autotune", "service", "benchmarks")
VARIABLE = re.compile(r"\bPERFEMBED_[A-Z0-9_]*[A-Z0-9]\b")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def _load_generator() -> ModuleType:
    if "perfembed_docs" in sys.modules:
        return sys.modules["perfembed_docs"]
    spec = importlib.util.spec_from_file_location("perfembed_docs", ROOT / "docs" / "gen" / "perfembed_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["perfembed_docs"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return _load_generator()


def _prose(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of a markdown text outside fenced code blocks and HTML comments."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and not line.lstrip().startswith("<!--"):
            lines.append((number, line))
    return lines


def variables_the_code_reads() -> set[str]:
    """Every ``PERFEMBED_*`` name in the source of the packages (``os.environ``, ``envvar=``, messages), and
    every field of every settings class (read through ``env_prefix``), found independently of the docs."""
    import autotune.config  # noqa: F401
    import database.config  # noqa: F401
    import service.config  # noqa: F401
    from loopnest.config import Settings

    found: set[str] = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            found.update(VARIABLE.findall(path.read_text(encoding="utf-8")))
    classes, todo = set(), [Settings]
    while todo:
        cls = todo.pop()
        classes.add(cls)
        todo.extend(cls.__subclasses__())
    for cls in classes:
        found.update(f"PERFEMBED_{name.upper()}" for name in cls.model_fields)
    return found


def test_every_variable_the_code_reads_is_on_the_configuration_page(gen: ModuleType) -> None:
    page = gen.configuration_page()
    documented = set(re.findall(r"`(PERFEMBED_[A-Z0-9_]+)`", page))
    missing = sorted(variables_the_code_reads() - documented)
    assert not missing, (f"not on the configuration page: {missing}. A settings field is listed by itself; a "
                         "variable read with os.environ needs a line in OTHER_VARIABLES of docs/gen/perfembed_docs.py")


def test_every_setting_has_a_meaning(gen: ModuleType) -> None:
    unexplained = [row[1] for row in gen.configuration_rows() if not row[4].strip()]
    assert not unexplained, (f"no meaning for {unexplained}: give the field a description= in its settings class "
                             "(or a line in FIELD_MEANINGS of docs/gen/perfembed_docs.py)")


def test_readme_is_short_and_readable() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 250
    long_lines = [n for n, line in _prose(text) if len(line) > 200]
    assert not long_lines, f"README lines over 200 characters outside code blocks: {long_lines}"


@pytest.mark.parametrize("page", ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in
                                                          (ROOT / "docs").glob("*.md"))])
def test_no_dates_or_commit_hashes_in_prose(page: str) -> None:
    """History lives in git and in the benchmark results, not in prose someone must keep true by hand."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found = [(n, m.group()) for n, line in _prose(text) for m in (*DATE.finditer(line), *HASH.finditer(line))]
    assert not found, f"{page}: dates or commit hashes in prose (line, text): {found}"


def test_committed_pages_are_rendered_from_their_results(gen: ModuleType) -> None:
    stale = [path.relative_to(ROOT).as_posix() for path, text in gen.written_files().items()
             if path.read_text(encoding="utf-8") != text]
    assert not stale, (f"{stale} differ from what their JSON renders: "
                       "run .venv/bin/python docs/gen/perfembed_docs.py --write")


def test_readme_headline_figures_come_from_committed_results(gen: ModuleType) -> None:
    rows = gen.headline_rows()
    assert rows, "no committed result in docs/benchmarks/*.json"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert gen.headline_table() in readme
    for name in gen.BENCH_PAGES:
        if gen.load_result(name) is not None:
            assert f"docs/benchmarks/{name}.md" in readme


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")))
def test_what_the_docs_import_exists(page: str) -> None:
    """Every ``from X import a, b`` of ours in a docs page's code imports."""
    import importlib

    text = (ROOT / page).read_text(encoding="utf-8")
    for module, names in re.findall(r"^\s*from\s+((?:loopnest|embeddings|database|autotune|service)[\w.]*)\s+"
                                    r"import\s+([\w, ]+)", text, re.MULTILINE):
        imported = importlib.import_module(module)
        for name in (n.strip() for n in names.split(",") if n.strip()):
            assert hasattr(imported, name), f"{page}: `from {module} import {name}` fails"


def test_cli_reference_lists_every_command(gen: ModuleType) -> None:
    import typer

    from service.cli import app

    page = gen.cli_reference()
    root = typer.main.get_command(app)
    for path, _ in gen._commands(root, ["perfembed"]):
        assert f"`{' '.join(path)}`" in page
    assert "`--write-best`" in page and "PERFEMBED_SERVER" in page


def test_rejection_page_has_every_example_and_its_message(gen: ModuleType) -> None:
    page = gen.rejections_page()
    for path in sorted((ROOT / "corpus" / "kernels" / "reject").glob("*.c")):
        assert f"corpus/kernels/reject/{path.name}:" in page
    assert page.count("rejected corpus/kernels/reject/") >= len(list((ROOT / "corpus/kernels/reject").glob("*.c")))
