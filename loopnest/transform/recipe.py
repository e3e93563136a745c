"""Recipes: JSON lists of transformation steps, validated, applied in order and checked for legality.

Loops are named by depth (0 = outermost) and statements by source order, so a recipe written for
one nest applies to another. A step on depth ``d`` acts on every loop at that depth: in an imperfect
nest, sibling loops at one depth are transformed together; ``statements`` (where a step takes it)
narrows a step to some statements.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence, ScheduleSpace, compute_dependences
from loopnest.transform.autoschedule import autoschedule
from loopnest.transform.data_dependent import dynamic_loop_problem
from loopnest.transform.expand import expand
from loopnest.transform.fusion import distribute, fuse
from loopnest.transform.interchange import interchange
from loopnest.transform.pack import pack, pack_dependences
from loopnest.transform.parallel import (
    MAX_CHUNK,
    SCHEDULE_KINDS,
    mark_independent_loops,
    parallelize,
    recheck,
    unroll,
    vectorize,
)
from loopnest.transform.skew import skew
from loopnest.transform.tiling import tile
from loopnest.transform.unroll_jam import unroll_jam


@dataclass(frozen=True)
class StepKind:
    function: Callable[..., Scop]
    required: frozenset[str]
    optional: frozenset[str]
    needs_space: bool = False


STEP_KINDS: dict[str, StepKind] = {
    "interchange": StepKind(interchange, frozenset({"order"}), frozenset({"statements"})),
    "tile": StepKind(tile, frozenset({"loops", "sizes"}), frozenset()),
    "parallelize": StepKind(parallelize, frozenset({"loop"}), frozenset({"reduction", "schedule", "chunk"}),
                            needs_space=True),
    "vectorize": StepKind(vectorize, frozenset({"loop"}), frozenset({"reduction", "simdlen"}), needs_space=True),
    "unroll": StepKind(unroll, frozenset({"loop", "factor"}), frozenset()),
    "distribute": StepKind(distribute, frozenset({"loop"}), frozenset({"groups"})),
    "fuse": StepKind(fuse, frozenset({"loop"}), frozenset({"statements"})),
    "skew": StepKind(skew, frozenset({"loop"}), frozenset({"outer", "factor"})),
    "unroll_jam": StepKind(unroll_jam, frozenset({"loop", "factor"}), frozenset(), needs_space=True),
    "expand": StepKind(expand, frozenset({"scalar"}), frozenset()),
    "pack": StepKind(pack, frozenset({"array", "loop"}), frozenset({"transpose"}), needs_space=True),
    "autoschedule": StepKind(autoschedule, frozenset(), frozenset({"tile", "sizes", "parallel"}), needs_space=True),
}


# Bounds of every argument, checked before a step is applied, so no number a client sends reaches
# generated C unchecked: loop depths and statement indices, tile sizes, unroll and skew factors.
MAX_TILE = 65536
_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "loop": (0, 63), "outer": (0, 63), "order": (0, 63), "loops": (0, 63), "statements": (0, 9999),
    "groups": (0, 9999), "sizes": (1, MAX_TILE), "factor": (2, 64),
    "chunk": (1, MAX_CHUNK), "tile": (2, 1024), "simdlen": (2, 16),
}
_OP_BOUNDS: dict[tuple[str, str], tuple[int, int]] = {("skew", "factor"): (-64, 64), ("unroll_jam", "factor"): (2, 16)}
_LIST_ARGS = frozenset({"order", "loops", "statements", "sizes"})


def _check_int(value: object, bounds: tuple[int, int], what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecipeError(f"{what} must be an integer, not {type(value).__name__}")
    if not bounds[0] <= value <= bounds[1]:
        raise RecipeError(f"{what} = {value} is out of range [{bounds[0]}, {bounds[1]}]")


def _check_arguments(index: int, op: str, args: dict[str, Any]) -> None:
    for name, value in args.items():
        what = f"step {index} ({op}): {name}"
        if name in ("reduction", "schedule", "scalar", "array", "transpose", "parallel"):
            _check_word(name, value, what)
        else:
            _check_numbers(name, value, _OP_BOUNDS.get((op, name), _INT_BOUNDS[name]), what)


def _check_word(name: str, value: object, what: str) -> None:
    """A flag, a schedule kind or a C identifier (a scalar or an array)."""
    if name in ("reduction", "transpose", "parallel") and not isinstance(value, bool):
        raise RecipeError(f"{what} must be true or false")
    if name == "schedule" and value not in SCHEDULE_KINDS:
        raise RecipeError(f"{what} must be one of {', '.join(SCHEDULE_KINDS)}")
    if name in ("scalar", "array") and not (isinstance(value, str) and value.isidentifier() and len(value) <= 255):
        raise RecipeError(f"{what} must be a C identifier")


def _check_numbers(name: str, value: object, bounds: tuple[int, int], what: str) -> None:
    """An integer, a list of them, or (``groups``; ``sizes`` of multi-level tiling) a list of lists of them,
    each within ``bounds``."""
    nested_sizes = name == "sizes" and isinstance(value, list) and any(isinstance(v, list) for v in value)
    if name == "groups" or nested_sizes:
        if not isinstance(value, list) or len(value) > 64 or not all(isinstance(g, list) and len(g) <= 64
                                                                       for g in value):
            items = "statement indices" if name == "groups" else "tile sizes (one list per level)"
            raise RecipeError(f"{what} must be a list of lists of {items}")
        for group in value:
            for item in group:
                _check_int(item, bounds, f"{what} item")
    elif name in _LIST_ARGS:
        if not isinstance(value, list) or len(value) > 64:
            raise RecipeError(f"{what} must be a list of at most 64 integers")
        for item in value:
            _check_int(item, bounds, f"{what} item")
    else:
        _check_int(value, bounds, what)


@dataclass(frozen=True)
class Step:
    """One transformation of a recipe: the operation and its arguments (``{"op": ..., ...}`` in JSON)."""

    op: str
    args: tuple[tuple[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, **dict(self.args)}


@dataclass(frozen=True)
class Recipe:
    """An ordered list of steps (:class:`Step`), applied by :func:`apply_recipe` after a legality check."""

    steps: tuple[Step, ...] = ()

    @classmethod
    def from_dict(cls, data: object) -> Recipe:
        if isinstance(data, list):
            data = {"steps": data}
        if not isinstance(data, dict) or not isinstance(data.get("steps", []), list):
            raise RecipeError('a recipe is {"steps": [{"op": ...}, ...]}')
        extra = set(data) - {"steps"}
        if extra:
            raise RecipeError(f"unknown recipe keys: {sorted(extra)}")
        return cls(tuple(_parse_step(k, s) for k, s in enumerate(data.get("steps", []))))

    @classmethod
    def from_json(cls, text: str) -> Recipe:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecipeError(f"recipe is not valid JSON: line {exc.lineno}: {exc.msg}") from exc
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        return {"steps": [s.to_dict() for s in self.steps]}

    def canonical_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    @property
    def is_identity(self) -> bool:
        return not self.steps


def _parse_step(index: int, raw: object) -> Step:
    if not isinstance(raw, dict) or "op" not in raw:
        raise RecipeError(f"step {index}: each step is an object with an 'op'")
    op = raw["op"]
    kind = STEP_KINDS.get(op) if isinstance(op, str) else None
    if kind is None:
        raise RecipeError(f"step {index}: unknown op {op!r}; known: {', '.join(sorted(STEP_KINDS))}")
    args = {k: v for k, v in raw.items() if k != "op"}
    missing = kind.required - set(args)
    unknown = set(args) - kind.required - kind.optional
    if missing:
        raise RecipeError(f"step {index} ({op}): missing {sorted(missing)}")
    if unknown:
        raise RecipeError(f"step {index} ({op}): unknown arguments {sorted(unknown)}")
    _check_arguments(index, op, args)
    return Step(op, tuple(sorted(args.items())))


def apply_recipe(scop: Scop, recipe: Recipe, deps: list[Dependence] | None = None) -> Scop:
    """``scop`` with every step applied; raises :class:`IllegalTransformError` naming the
    dependence the first illegal step would violate, before any code is generated."""
    deps = compute_dependences(scop) if deps is None else deps
    original, space = scop, None
    for index, step in enumerate(recipe.steps):
        kind = STEP_KINDS[step.op]
        args = dict(step.args)
        if step.op == "expand" and any(s.op != "expand" for s in recipe.steps[:index]):
            raise RecipeError(f"step {index} (expand): expand must come before every other step")
        if step.op == "autoschedule" and any(s.op != "expand" for s in recipe.steps[:index]):
            raise RecipeError(f"step {index} (autoschedule): only expand may come before autoschedule")
        if kind.needs_space:
            args["space"] = ScheduleSpace(scop, deps)
        try:
            scop = kind.function(scop, **args)
        except IllegalTransformError as exc:
            raise IllegalTransformError(f"step {index}: {exc}", step=index, dependence=exc.dependence) from None
        except RecipeError as exc:
            raise RecipeError(f"step {index}: {exc}") from None
        if step.op == "expand":  # later steps are checked against the expanded nest's dependences
            deps = compute_dependences(scop)
        elif step.op == "pack":  # ... and against the copies' and the buffer's
            deps = pack_dependences(scop, deps, args["array"])
        scop, space = _check_legal(scop, deps, index, step.op)
    # A recipe that changes nothing (none, or ``fuse`` of loops already fused) leaves the original as
    # written: its code is the baseline's, so transfer never measures it.
    return scop if space is None or scop == original else mark_independent_loops(scop, space)


def _check_legal(scop: Scop, deps: list[Dependence], index: int, op: str) -> tuple[Scop, ScheduleSpace]:
    """Refuse a schedule that reverses a dependence or a parallel/simd mark that became illegal;
    returns ``scop`` with the privatized scalars and reduction clauses of each marked loop recomputed,
    and the dependences seen through its schedule (marks aside, the same schedule)."""
    space = ScheduleSpace(scop, deps)
    dep = space.violated()
    if dep is not None:
        raise IllegalTransformError(
            f"step {index} ({op}) is illegal: it would reverse the dependence {dep.describe()} "
            f"({dep.relation})", step=index, dependence=dep.describe())
    problem = dynamic_loop_problem(scop)
    if problem is not None:
        raise IllegalTransformError(f"step {index} ({op}) is illegal: {problem}", step=index)
    private: dict[int, tuple[str, ...]] = {}
    all_marks = dict(scop.schedule.marks)
    for level, marks in scop.schedule.marks.items():
        if "parallel" in marks or "simd" in marks:
            blocking, scalars, all_marks[level] = recheck(scop, space, level, marks)
            if scalars:
                private[level] = tuple(scalars)
            if blocking:
                raise IllegalTransformError(
                    f"step {index} ({op}) is illegal: loop {level} is marked {'/'.join(marks)} but now "
                    f"carries the dependence {blocking[0].describe()}", step=index,
                    dependence=blocking[0].describe())
    return scop.replace(schedule=scop.schedule.replace(private=private, marks=all_marks)), space
