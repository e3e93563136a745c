"""Analysis: each nest of a program analysed once per request.

Extraction (the nests' IR), exact dependences, loop names and, at the request's parameter values, the
static features and the form the database stores (loop roles included) make one
:class:`ProgramAnalysis`. The service computes it in the budgeted analysis worker
(:mod:`service.analysis_budget`), which bounds its time and memory, and hands it to the core; every
later stage (ingest, neighbours, adapted recipes, evaluation) takes it and recomputes none of it. The
CLI, which has no budget, lets the core compute it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from embeddings.features import static_features
from embeddings.features.stored_form import normalized_nest
from loopnest.errors import ParameterError
from loopnest.frontend.extract import RejectedRegion
from loopnest.frontend.limits import AnalysisLimits
from loopnest.frontend.program import ProgramSource, extract_program
from loopnest.ir import Scop
from loopnest.parameters import missing_params, require_params
from loopnest.polyhedral import Dependence, compute_dependences
from loopnest.transform.recipe_text import loop_names


@dataclass(frozen=True)
class NestAnalysis:
    """One nest of the program (the ``index``-th, in source order), analysed."""

    index: int
    scop: Scop
    dependences: tuple[Dependence, ...]
    loop_names: tuple[str, ...]  # the source names of the loops at each depth, outermost first
    # Every parameter's value as an integer; None when the request gives no value for one (or not an
    # integer): the stage that needs them says so, naming the nest as the user knows it.
    params: Mapping[str, int] | None
    features: Mapping[str, float | None] | None  # static features at ``params``
    normalized: Mapping[str, Any]  # the database's form of the nest, with its loop roles at ``params``

    @property
    def deps(self) -> list[Dependence]:
        """The dependences as the transformation functions take them."""
        return list(self.dependences)

    def static_features(self) -> Mapping[str, float | None]:
        """The static features, for a stage that has checked the parameter values (a bug otherwise)."""
        if self.features is None:
            raise RuntimeError(f"{self.scop.name} was analysed without parameter values")
        return self.features


@dataclass(frozen=True)
class ProgramAnalysis:
    """Every supported nest of a program, analysed, and the regions the frontend refused."""

    program_key: Mapping[str, Any]  # :meth:`ProgramSource.key` of the program analysed
    nests: tuple[NestAnalysis, ...]
    rejected: tuple[RejectedRegion, ...]

    def check_for(self, program: ProgramSource) -> ProgramAnalysis:
        """This analysis, after checking that it is ``program``'s (a mix-up would answer for another program)."""
        if dict(self.program_key) != program.key():
            raise ValueError("the analysis passed to the core is not the program's")
        return self

    def scops_in(self, path: Path) -> tuple[Scop, ...]:
        """Its nests' IR, in source order, placed in ``path``, a copy of the analysed program's file: the
        analysis ran in a directory of its own, and a drop-in edit checks that a nest lives in the file it
        edits."""
        return tuple(n.scop.replace(region=replace(n.scop.region, file=str(path))) for n in self.nests)


def analyse_program(program: ProgramSource, limits: AnalysisLimits | None = None) -> ProgramAnalysis:
    """Extract the program's nests (within ``limits``) and analyse each: what every stage of a request
    needs, computed once. Picklable, so that it comes back from the analysis worker."""
    extraction = extract_program(program, limits)
    nests = tuple(analyse_nest(index, scop, program.params) for index, scop in enumerate(extraction.scops))
    return ProgramAnalysis(program.key(), nests, tuple(extraction.rejected))


def analyse_nest(index: int, scop: Scop, values: Mapping[str, Any]) -> NestAnalysis:
    """One nest: dependences and loop names, and with ``values`` for its parameters its static features
    and stored form."""
    deps = compute_dependences(scop)
    params = _params(scop, values)
    features = None if params is None else static_features(scop, params, deps=deps).to_dict()
    return NestAnalysis(index=index, scop=scop, dependences=tuple(deps), loop_names=tuple(loop_names(scop)),
                        params=params, features=features, normalized=normalized_nest(scop, params, deps=deps))


def _params(scop: Scop, values: Mapping[str, Any]) -> dict[str, int] | None:
    if missing_params(scop.params, values):
        return None
    try:
        return require_params(scop.params, values, what=scop.name)
    except ParameterError:  # not an integer: the stage that needs it reports it with the nest's label
        return None
