"""Programs the service holds, extracted again the way a posted program is (in a private directory, with
confined preprocessing: :func:`loopnest.frontend.program.materialized`), and their drop-in files: the
dashboard's nest page and its tuned-file downloads go through here, not to the frontend directly."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loopnest.errors import ParameterError
from loopnest.frontend.extract import extract_scops
from loopnest.frontend.program import ProgramSource, materialized
from loopnest.ir import Scop
from loopnest.transform.recipe import Recipe
from service.core.dropin import dropin_source
from service.core.program import tuned_source

if TYPE_CHECKING:
    from database import Nest


@dataclass(frozen=True)
class Located:
    """The nest found again in its program's source: the file, its nests, and which one it is."""

    path: Path
    scops: list[Scop]
    index: int

    @property
    def scop(self) -> Scop:
        return self.scops[self.index]


@contextmanager
def locate(source: str, nest: Nest) -> Iterator[Located]:
    """The stored program extracted again in a private directory; the nest is the one with its stored
    name (``program.c:FUNCTION#I``), else the one at its index. Raises a PerfembedError when the
    source no longer yields it (a program stored without its headers, for one)."""
    function = nest.normalized.get("function") if isinstance(nest.normalized, dict) else None
    stored_name = nest.normalized.get("name") if isinstance(nest.normalized, dict) else None
    with materialized(ProgramSource(source=source)) as (path, options):
        scops = extract_scops(path, options, function=function).scops
        names = [s.name for s in scops]
        index = names.index(stored_name) if stored_name in names else nest.index
        if not 0 <= index < len(scops):
            raise ParameterError(f"the stored program no longer yields nest {nest.index} "
                                 f"(it has {len(scops)} supported nest(s))")
        yield Located(path, scops, index)


def stored_dropin(source: str, nest: Nest, recipe: Mapping[str, Any]) -> str:
    """The stored program's file with ``recipe`` (``{"steps": [...]}``) applied to ``nest``."""
    with locate(source, nest) as found:
        return dropin_source(found.path, found.scops, {found.index: Recipe.from_dict(dict(recipe))})


def tuned_program(program: ProgramSource, result: Mapping[str, Any]) -> tuple[str, int]:
    """``program`` with the recipes an evaluation's ``result`` (its JSON) applied, as
    :func:`service.core.program.tuned_source` makes it; a program whose nests are not those the result
    measured is a ParameterError."""
    with materialized(program) as (path, options):
        extraction = extract_scops(path, options, function=program.function)
        if len(extraction.scops) != len(result.get("nests", [])):
            raise ParameterError("this program is not the one the evaluation job measured: evaluate it again")
        return tuned_source(path, extraction.scops, result)
