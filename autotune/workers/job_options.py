"""A tuning job's options: what a worker needs to rebuild and run the nest, typed.

The service builds them (field by field, then :meth:`JobOptions.with_program` for a program sent
along), stores them as JSON in the job's row (:meth:`JobOptions.to_json`), and the worker
reads them back (:meth:`JobOptions.from_json`), which accepts every row written before this class
(the same keys; ``warm_start`` recipes as steps lists or ``{"steps": ...}``) and ignores keys it
does not know.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from loopnest.errors import ParameterError
from loopnest.frontend.program import PROGRAM_FILE, ProgramSource
from loopnest.harness.index_data import SparseChoice

JsonDict = dict[str, Any]


@dataclass(frozen=True)
class JobOptions:
    """What a job asks of its worker; every field is optional.

    ``params``
        parameter values, ``{"n": 1000}``; missing ones default to the values the nest was stored
        with (a seed nest's are those it was tuned at).
    ``source``, ``filename``
        the C text and a file name for messages; default: the nest's program from the database.
    ``headers``, ``defines``
        quoted includes by relative file name (as the API's ``headers``); ``NAME[=VALUE]`` macros as ``-D``.
    ``nest_index``, ``function``
        the nest's index among every nest of the file (default: the database nest's index);
        ``function``, if given, is checked against it.
    ``timeout``, ``reps``, ``threads``, ``seed``
        time budget in seconds for this run of the job, repetitions per variant (default 3), OpenMP
        threads, sampler seed.
    ``warm_start``
        recipes to try first (the neighbours' adapted recipes), as steps lists or ``{"steps": ...}``.
    ``study_name``, ``heartbeat_interval``, ``grace_period``
        override the study (default: one per nest, target and parameter values) and Optuna's trial
        heartbeat settings.
    ``sparsity``, ``density``, ``matrix``
        the index structures a sparse nest runs on (:class:`~loopnest.harness.index_data.SparseChoice`;
        ``matrix`` is a path on the worker's machine, so only a local ``suggest --fallback`` sets it).
    """

    params: Mapping[str, int] = field(default_factory=dict)
    source: str | None = None
    filename: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    defines: tuple[str, ...] = ()
    nest_index: int | None = None
    function: str | None = None
    timeout: float | None = None
    reps: int | None = None
    threads: int | None = None
    seed: int | None = None
    warm_start: tuple[Any, ...] = ()
    study_name: str | None = None
    heartbeat_interval: int | None = None
    grace_period: int | None = None
    sparsity: str | None = None
    density: float | None = None
    matrix: str | None = None

    @property
    def sparse(self) -> SparseChoice | None:
        """The index structures of a sparse nest, when the request chose them."""
        if self.sparsity is None and self.density is None and self.matrix is None:
            return None
        return SparseChoice(sparsity=self.sparsity or "uniform", density=self.density, matrix=self.matrix)

    def to_json(self) -> JsonDict:
        """The options as stored in the job's row: only those that are set."""
        out: JsonDict = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or (not isinstance(value, int | float) and not value):
                continue
            if isinstance(value, Mapping):
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    def with_program(self, program: ProgramSource, nest_index: int, *, with_source: bool) -> JobOptions:
        """These options for nest ``nest_index`` of a program sent along: its headers, macros and function
        (and, ``with_source``, its text, called ``program.c``; else the worker reads the stored program)."""
        sparse = program.sparse
        return replace(self, source=program.source if with_source else None,
                       filename=PROGRAM_FILE if with_source else None, headers=dict(program.headers),
                       defines=tuple(program.define_flags()), nest_index=nest_index, function=program.function,
                       sparsity=sparse.sparsity if sparse else None, density=sparse.density if sparse else None,
                       matrix=sparse.matrix if sparse else None)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None) -> JobOptions:
        """The options of a stored row; a malformed one is a :class:`ParameterError` naming the option."""
        raw = dict(raw or {})
        params = raw.get("params") or {}
        if not isinstance(params, Mapping):
            raise ParameterError("options.params must be an object of NAME: INT")
        headers = raw.get("headers") or {}
        if not isinstance(headers, Mapping):
            raise ParameterError("options.headers must be an object of NAME: TEXT")
        return cls(
            params=dict(params), source=_text(raw, "source"), filename=_text(raw, "filename"),
            headers={str(k): str(v) for k, v in headers.items()},
            defines=tuple(str(d) for d in _sequence(raw, "defines")),
            nest_index=_integer(raw, "nest_index"), function=_text(raw, "function"),
            timeout=_number(raw, "timeout"), reps=_integer(raw, "reps"), threads=_integer(raw, "threads"),
            seed=_integer(raw, "seed"), warm_start=tuple(_sequence(raw, "warm_start")),
            study_name=_text(raw, "study_name"), heartbeat_interval=_integer(raw, "heartbeat_interval"),
            grace_period=_integer(raw, "grace_period"), sparsity=_text(raw, "sparsity"),
            density=_number(raw, "density"), matrix=_text(raw, "matrix"))


def _text(raw: Mapping[str, Any], name: str) -> str | None:
    value = raw.get(name)
    return None if value is None or value == "" else str(value)


def _sequence(raw: Mapping[str, Any], name: str) -> Sequence[Any]:
    value = raw.get(name) or ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ParameterError(f"options.{name} must be a list, got {value!r}")
    return value


def _number(raw: Mapping[str, Any], name: str) -> float | None:
    """A number or absent; anything else is the job's error, naming the option."""
    value = raw.get(name)
    if value is None:
        return None
    try:
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            return float(value)
    except ValueError:
        pass
    raise ParameterError(f"options.{name} must be a number, got {value!r}")


def _integer(raw: Mapping[str, Any], name: str) -> int | None:
    number = _number(raw, name)
    if number is None:
        return None
    if not number.is_integer():
        raise ParameterError(f"options.{name} must be an integer, got {raw[name]!r}")
    return int(number)
