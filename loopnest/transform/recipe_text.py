"""Recipes in the user's loop names: ``tile j by 128; parallelize i; simd k``.

The JSON form stays canonical (loops named by depth); this text is for people. :func:`loop_names`
gives the name of the loop(s) at each depth of a nest (sibling loops joined with ``/``), and
:func:`recipe_text` follows the recipe step by step, keeping track of what each depth holds as steps
insert loops (``tile`` adds ``i_tile`` loops, ``unroll_jam`` an innermost ``i_jam`` loop) or reorder
them (``interchange``), so that every step names the loop it acts on as it is at that step. After
``autoschedule`` (isl's own loops) the loops are ``loop0``, ``loop1``...

Every step kind renders; a kind without a phrase here (or a step with odd arguments) renders
generically as ``op(arg=value, ...)``, with loop depths still shown as names: never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loopnest.ir import Scop
    from loopnest.transform.recipe import Recipe

_ITERATOR = re.compile(r"\bi(\d+)\b")
# Arguments that name one loop depth, and those that name a list of depths, in any step kind.
_LOOP_ARGS = frozenset({"loop", "outer"})
_LOOPS_ARGS = frozenset({"loops"})
_MAX_DEPTH = 64  # recipe depths are bounded by 0..63 (loopnest.transform.recipe)


def loop_names(scop: Scop) -> list[str]:
    """The source name of the loop(s) at each depth of ``scop``'s schedule, outermost first.

    Sibling loops at one depth with different iterators are joined (``j/k``); a depth where the
    schedule holds a loop over several iterators (a skewed loop) lists them all.
    """
    names: list[str] = []
    for level in range(scop.schedule.n_levels):
        found: list[str] = []
        for stmt, row in zip(scop.statements, scop.schedule.rows, strict=True):
            entry = row[2 * level + 1]
            if not isinstance(entry, str):
                continue
            for depth in _ITERATOR.findall(entry):
                name = stmt.iterators[int(depth)] if int(depth) < len(stmt.iterators) else f"i{depth}"
                if name not in found:
                    found.append(name)
        names.append("/".join(found) or f"loop{level}")
    return names


class _Loops:
    """The name at each depth while a recipe is followed; unknown depths are ``loop<d>``."""

    def __init__(self, names: Sequence[str] | None) -> None:
        self.names = list(names) if names is not None else [f"loop{d}" for d in range(_MAX_DEPTH)]

    def __getitem__(self, depth: object) -> str:
        if isinstance(depth, int) and not isinstance(depth, bool) and 0 <= depth < len(self.names):
            return self.names[depth]
        return f"loop{depth}"

    def fresh(self, base: str, taken: Sequence[str] = ()) -> str:
        name, n = base, 2
        while name in self.names or name in taken:
            name, n = f"{base}{n}", n + 1
        return name

    def insert(self, depth: int, names: list[str]) -> None:
        self.names[depth:depth] = names


def _join(names: Sequence[str]) -> str:
    return ", ".join(names)


def _reduction(args: Mapping[str, Any]) -> str:
    if args.get("reduction") is False:
        return " (no reduction clause)"
    return " (reduction)" if args.get("reduction") is True else ""


def _interchange(args: Mapping[str, Any], loops: _Loops) -> str:
    order = [int(q) for q in args["order"]]
    before = [loops[q] for q in range(len(order))]
    after = [loops[q] for q in order]
    statements = args.get("statements")
    if statements is None:
        loops.names[:len(order)] = after
        return f"interchange to {_join(after)}"
    # Only some statements move: a depth now holds different loops for different statements.
    loops.names[:len(order)] = [a if a == b else f"{b}/{a}" for a, b in zip(after, before, strict=True)]
    return f"interchange to {_join(after)} for {_statements(statements)}"


def _tile(args: Mapping[str, Any], loops: _Loops) -> str:
    band = [int(d) for d in args["loops"]]
    sizes = args["sizes"]
    levels = sizes if sizes and all(isinstance(s, list) for s in sizes) else [sizes]
    phrases = []
    for k, level in enumerate(levels):
        depths = [band[0] + k * len(band) + j for j in range(len(band))]
        names = [loops[d] for d in depths]
        shown = [(n, s) for n, s in zip(names, level, strict=True) if s != 1] or list(zip(names, level, strict=True))
        phrases.append(f"{_join([n for n, _ in shown])} by {'x'.join(str(s) for _, s in shown)}")
        tiles: list[str] = []
        for name in names:
            tiles.append(loops.fresh(f"{name}_tile", taken=tiles))
        loops.insert(depths[0], tiles)
    return "tile " + ", then ".join(phrases)


def _parallelize(args: Mapping[str, Any], loops: _Loops) -> str:
    text = f"parallelize {loops[args['loop']]}"
    if args.get("schedule") is not None:
        chunk = f", {args['chunk']}" if args.get("chunk") is not None else ""
        text += f" schedule({args['schedule']}{chunk})"
    return text + _reduction(args)


def _unroll_jam(args: Mapping[str, Any], loops: _Loops) -> str:
    name = loops[args["loop"]]
    loops.names.append(loops.fresh(f"{name}_jam"))  # the point loop becomes the innermost level
    return f"unroll-and-jam {name} by {args['factor']}"


def _skew(args: Mapping[str, Any], loops: _Loops) -> str:
    loop = int(args["loop"])
    outer = loop - 1 if args.get("outer") is None else int(args["outer"])
    factor = int(args.get("factor", 1))
    return f"skew {loops[loop]} by {'' if factor == 1 else f'{factor}*'}{loops[outer]}"


def _statements(statements: Sequence[int]) -> str:
    return ", ".join(f"S{s}" for s in statements)


def _distribute(args: Mapping[str, Any], loops: _Loops) -> str:
    groups = args.get("groups")
    text = f"distribute {loops[args['loop']]}"
    return text + (" into " + " | ".join(_statements(g) for g in groups) if groups else "")


def _fuse(args: Mapping[str, Any], loops: _Loops) -> str:
    statements = args.get("statements")
    return f"fuse {loops[args['loop']]}" + (f" for {_statements(statements)}" if statements else "")


def _autoschedule(args: Mapping[str, Any], loops: _Loops) -> str:
    """isl's scheduler builds new loops (skewed, tiled): the steps after it cannot use the source names."""
    loops.names = [f"loop{d}" for d in range(_MAX_DEPTH)]
    text = "autoschedule (isl)"
    if args.get("tile") is not None:
        text += f" tiled by {int(args['tile'])}"
    elif args.get("sizes") is not None:
        text += " tiled by " + "x".join(str(int(s)) if int(s) > 1 else "-" for s in args["sizes"])
    return text + (", no parallel loop" if args.get("parallel") is False else "")


_Render = Callable[[Mapping[str, Any], _Loops], str]

RENDERERS: dict[str, _Render] = {
    "interchange": _interchange,
    "tile": _tile,
    "parallelize": _parallelize,
    "vectorize": lambda args, loops: (f"simd {loops[args['loop']]}{_reduction(args)}"
                                      + (f" of {args['simdlen']} lanes" if "simdlen" in args else "")),
    "unroll": lambda args, loops: f"unroll {loops[args['loop']]} by {args['factor']}",
    "unroll_jam": _unroll_jam,
    "skew": _skew,
    "distribute": _distribute,
    "fuse": _fuse,
    "expand": lambda args, loops: f"expand {args['scalar']} into its destination",
    "autoschedule": _autoschedule,
}


def _value(name: str, value: Any, loops: _Loops) -> str:
    if name in _LOOP_ARGS and isinstance(value, int) and not isinstance(value, bool):
        return loops[value]
    if name in _LOOPS_ARGS and isinstance(value, list):
        return "[" + ", ".join(loops[d] for d in value) + "]"
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def _generic(op: str, args: Mapping[str, Any], loops: _Loops) -> str:
    return f"{op}({', '.join(f'{k}={_value(k, v, loops)}' for k, v in args.items())})"


def step_text(step: Mapping[str, Any], loops: _Loops) -> str:
    """One step in words; updates ``loops`` for the steps after it."""
    op = str(step.get("op", "?"))
    args = {k: v for k, v in step.items() if k != "op"}
    render = RENDERERS.get(op)
    if render is not None:
        saved = list(loops.names)
        try:
            return render(args, loops)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            loops.names = saved  # odd arguments: said as they are, and the loops left as they were
    return _generic(op, args, loops)


def _steps(recipe: Recipe | Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Sequence[Any] | None:
    """The steps of a recipe in any of its forms; None when it is not a list of steps."""
    if hasattr(recipe, "to_dict"):
        recipe = recipe.to_dict()
    steps = recipe.get("steps", []) if isinstance(recipe, Mapping) else recipe
    return steps if isinstance(steps, Sequence) and not isinstance(steps, str | bytes) else None


def _follow(steps: Sequence[Any], names: Sequence[str] | None) -> tuple[list[str], _Loops]:
    loops = _Loops(names)
    return [step_text(s, loops) if isinstance(s, Mapping) else str(s) for s in steps], loops


def recipe_text(recipe: Recipe | Mapping[str, Any] | Sequence[Mapping[str, Any]] | None,
                names: Sequence[str] | None = None) -> str:
    """``recipe`` (a :class:`Recipe`, its JSON dict or a list of steps) in words, ``; `` between steps.

    ``names`` are the loop names at each depth of the nest the recipe is for (:func:`loop_names`);
    without them loops are called ``loop0``, ``loop1``... The empty recipe is ``original code``.
    """
    if recipe is None:
        return "-"
    steps = _steps(recipe)
    if steps is None:
        return str(recipe)
    return "; ".join(_follow(steps, names)[0]) if steps else "original code"


def names_after(recipe: Recipe | Mapping[str, Any] | Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    """The loop names at each depth once ``recipe`` is applied, as :func:`recipe_text` follows them."""
    return _follow(_steps(recipe) or [], names)[1].names


def stored_loop_names(normalized: object) -> list[str] | None:
    """The loop names a stored nest's ``normalized`` form holds (None for nests stored without them)."""
    names = normalized.get("loop_names") if isinstance(normalized, Mapping) else None
    return [str(n) for n in names] if isinstance(names, list) else None
