"""A file on this machine, read in place as its compiler reads it (:class:`SourceFile`), and what the CLI
does with one without the database: analyse its nests, apply a recipe (the drop-in file), measure a recipe
against the original. The commands turn their options into a :class:`SourceFile` (its flags from
:func:`compile_flags`) and print what these functions answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from embeddings.features import dynamic_features, load_or_measure, static_features
from loopnest.analysis import describe_scop
from loopnest.config import Settings, get_settings
from loopnest.errors import ParameterError, RecipeError
from loopnest.frontend.compile_flags import CompileFlags, command_for
from loopnest.frontend.extract import Extraction, extract_scops
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.frontend.program import ProgramSource, local_program
from loopnest.harness import Harness, Limits
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.index_data import SparseChoice
from loopnest.parameters import missing_params
from loopnest.transform.recipe import Recipe
from service.core.dropin import dropin_source

TARGET_CACHE_NAME = "target.json"  # this machine's measured peaks, in the data directory
# A status line: the CLI passes its console's ``status`` (a context whose value has ``update(text)``).
StatusFn = Callable[[str], AbstractContextManager[Any]]
# Hears the nests a file yielded (their count, the rejected regions) before anything else happens; answers
# the regions as they are reported (the CLI names the user's file in them, and ends the command on none).
CheckNests = Callable[[int, list[dict[str, Any]]], list[dict[str, Any]]]


@dataclass(frozen=True)
class SourceFile:
    """FILE as the user's compiler reads it: its preprocessing flags (``-I``/``-D``/... or ``-p``'s
    compilation database), the nests of ``function`` (None: every function), the values of its size
    parameters, and a Python kernel's example inputs (``--inputs``)."""

    path: Path
    flags: CompileFlags = field(default_factory=CompileFlags)
    function: str | None = None
    params: Mapping[str, int] = field(default_factory=dict)
    inputs: Path | None = None

    @property
    def is_python(self) -> bool:
        """A NumPy kernel (``kernel.py --function F``): read by the Python frontend."""
        return self.path.suffix == ".py"

    def options(self, settings: Settings) -> PreprocessOptions:
        options = self.flags.preprocess_options(sandbox=settings.sandbox)
        return options if self.inputs is None else dataclasses.replace(options, inputs=str(self.inputs))

    def extract(self, settings: Settings, *, every_function: bool = False) -> Extraction:
        """The file's nests (of ``function`` unless ``every_function``) and the regions it rejected."""
        return extract_scops(self.path, self.options(settings), function=None if every_function else self.function)

    def program(self, settings: Settings, sparse: SparseChoice | None = None) -> ProgramSource:
        """The file as the core's input, extracted in place (its headers carried for a tuning job)."""
        program = local_program(self.path, self.options(settings), params=self.params, function=self.function)
        return dataclasses.replace(program, sparse=sparse)


def compile_flags(path: Path, *, include: Sequence[str] = (), define: Sequence[str] = (),
                  undefine: Sequence[str] = (), iquote: Sequence[str] = (), isystem: Sequence[str] = (),
                  std: str | None = None, build_path: Path | None = None) -> CompileFlags:
    """FILE's flags: those of its compilation database entry (``build_path``), then those given as ``cc``
    spells them. Directories become absolute, as the compiler would resolve them from here: the
    whole-program build runs elsewhere."""
    here = Path.cwd()
    given = CompileFlags.from_options(include=[str(here / d) for d in include], iquote=[str(here / d) for d in iquote],
                                      isystem=[str(here / d) for d in isystem], define=define, undefine=undefine,
                                      std=std)
    return given if build_path is None else command_for(build_path, path).flags.then(given)


def parse_params(items: Sequence[str]) -> dict[str, int]:
    """``--param NAME=INT`` values; a malformed one is a :class:`ParameterError` naming it."""
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            out[name.strip()] = int(value, 0)
        except ValueError:
            raise ParameterError(f"--param {item!r}: expected NAME=INT") from None
        if not sep or not name.strip().isidentifier():
            raise ParameterError(f"--param {item!r}: expected NAME=INT")
    return out


def sparse_choice(sparsity: str | None, density: float | None, matrix: Path | None) -> SparseChoice | None:
    """What ``--sparsity/--density/--matrix`` chose, or None when none was given (the default structure,
    and the studies of earlier runs)."""
    if sparsity is None and density is None and matrix is None:
        return None
    if matrix is not None and (sparsity is not None or density is not None):
        raise ParameterError("--matrix: the matrix fixes the structure; drop --sparsity and --density")
    return SparseChoice(sparsity=sparsity or "uniform", density=density,
                        matrix=str(matrix) if matrix is not None else None)


def read_recipe(path: Path | None) -> Recipe:
    """The recipe in a JSON file (None: the empty recipe); an unreadable one is a :class:`RecipeError`."""
    if path is None:
        return Recipe()
    try:
        return Recipe.from_json(path.read_text())
    except OSError as exc:
        raise RecipeError(f"cannot read recipe {path}: {exc.strerror}") from None


def resolve_threads(threads: int | None, settings_threads: int) -> int | None:
    """``--threads`` if given, else the settings' value; 0 (every core) becomes None for the harness."""
    value = settings_threads if threads is None else threads
    return value or None


def target_cache_path(data_dir: Path | None = None) -> Path:
    """Where this machine's measured peaks are cached: ``<data_dir>/target.json``."""
    return Path(get_settings().data_dir if data_dir is None else data_dir) / TARGET_CACHE_NAME


@dataclass(frozen=True)
class FileAnalysis:
    """``perfembed analyze``: each nest described (:func:`loopnest.analysis.describe_scop`, with its static
    and, profiled, dynamic features when asked), the rejected regions, and the parameters without a value."""

    nests: list[dict[str, Any]]
    rejected: list[dict[str, Any]]
    missing_params: list[str]


def analyze_file(src: SourceFile, *, features: bool = False, profile: bool = False,
                 status: StatusFn | None = None) -> FileAnalysis:
    """The nests of ``src``; with ``features`` each carries its static features (when every parameter has a
    value), with ``profile`` also its dynamic features, measured against this machine's cached peaks."""
    settings = get_settings()
    extraction = src.extract(settings)
    nests = [describe_scop(s, src.params) for s in extraction.scops]
    missing = sorted({p for s in extraction.scops for p in missing_params(s.params, src.params)})
    if features or profile:
        _add_features(extraction, nests, src.params, settings, profile=profile, status=status or no_status)
    return FileAnalysis(nests, [r.to_dict() for r in extraction.rejected], missing)


def no_status(_text: str) -> AbstractContextManager[Any]:
    """A :data:`StatusFn` that shows nothing."""
    return nullcontext()


def _add_features(extraction: Extraction, nests: list[dict[str, Any]], params: Mapping[str, int], settings: Settings,
                  *, profile: bool, status: StatusFn) -> None:
    peaks = None
    if profile:
        with status("measuring this machine's peaks (cached afterwards)"):
            peaks = load_or_measure(target_cache_path(settings.data_dir), cc=settings.cc)
    for scop, nest in zip(extraction.scops, nests, strict=True):
        if missing_params(scop.params, params):
            nest["static_features"] = None  # features need every parameter value
            continue
        nest["static_features"] = static_features(scop, params).to_dict()
        if profile:
            with status(f"profiling {scop.name}"):
                nest["dynamic_features"] = dynamic_features(scop, params, target=peaks, cc=settings.cc,
                                                            limits=Limits.from_settings(settings)).to_dict()


def selected(extraction: Extraction, nest: int | None) -> list[int]:
    """The nests a command works on: ``--nest N`` alone, else every one."""
    if nest is None:
        return list(range(len(extraction.scops)))
    if not 0 <= nest < len(extraction.scops):
        raise ParameterError(f"--nest {nest}: the file has {len(extraction.scops)} supported nest(s)")
    return [nest]


@dataclass(frozen=True)
class AppliedFile:
    """``perfembed apply``: the drop-in text, how many nests it transforms, and the rejected regions."""

    text: str
    transformed: int
    nests: int
    rejected: list[dict[str, Any]]


def apply_file(src: SourceFile, recipe: Recipe, nest: int | None,
               check_nests: CheckNests | None = None) -> AppliedFile:
    """``src`` with ``recipe`` applied to nest ``nest`` (None: every nest). ``check_nests(count, rejected)``
    hears what the extraction found before anything is applied (the CLI reports the rejected regions)."""
    extraction = src.extract(get_settings())
    rejected = [r.to_dict() for r in extraction.rejected]
    if check_nests is not None:
        check_nests(len(extraction.scops), rejected)
    chosen = selected(extraction, nest)
    text = dropin_source(src.path, extraction.scops, dict.fromkeys(chosen, recipe))
    return AppliedFile(text, len(chosen), len(extraction.scops), rejected)


def measure_file(src: SourceFile, recipe: Recipe, nest: int | None, *, reps: int, threads: int | None,
                 sparse: SparseChoice | None,
                 check_nests: CheckNests | None = None) -> list[dict[str, Any]]:
    """``perfembed measure``: each chosen nest's original and ``recipe``'s variant compiled and timed, the
    variant's outputs verified, and (verified) both interleaved in fresh runs for the speedup users quote.
    ``check_nests(count, rejected)`` hears what the extraction found before anything is measured."""
    settings = get_settings()
    extraction = src.extract(settings)
    if check_nests is not None:
        check_nests(len(extraction.scops), [r.to_dict() for r in extraction.rejected])
    results = []
    for i in selected(extraction, nest):
        scop = extraction.scops[i]
        with Harness(scop, src.params, reps=reps, threads=resolve_threads(threads, settings.threads),
                     limits=Limits.from_settings(settings), cc=settings.cc, cflags=settings.cflags,
                     sparse=sparse) as h:
            base = h.baseline()
            ev = h.evaluate(recipe)
            paired = h.compare(recipe, policy=AcceptancePolicy.from_settings(settings)) if ev.verified else None
            results.append({"nest": i, "name": scop.name, "params": dict(h.params), "threads": h.threads,
                            "reps": reps, "baseline": base.to_dict(), **ev.to_dict(),
                            "paired": None if paired is None else paired.to_dict()})
    return results
