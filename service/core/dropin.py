"""The drop-in file: the user's source with recipes applied to its nests, region by region
(:func:`dropin_source`, the one place that does it for the CLI, the API, the dashboard and ``tune``), and
the header comment a written file carries (:func:`dropin_header`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from loopnest.dropin import replace_regions
from loopnest.ir import Scop
from loopnest.transform.recipe import Recipe, apply_recipe
from loopnest.transform.recipe_text import loop_names, recipe_text

if TYPE_CHECKING:
    from service.core.program import AppliedRecipe


def dropin_source(path: Path, scops: Sequence[Scop], recipes: Mapping[int, Recipe | Scop]) -> str:
    """``path``'s text with each nest ``i`` of ``recipes`` replaced by its code under that recipe (or by a
    nest already transformed); every other line stays as the user wrote it."""
    transformed = {i: r if isinstance(r, Scop) else apply_recipe(scops[i], r) for i, r in recipes.items()}
    return replace_regions(path, transformed, list(scops))


def applied_source(path: Path, scops: Sequence[Scop], applied: Mapping[int, AppliedRecipe],
                   only: int | None = None) -> str:
    """:func:`dropin_source` with each nest's applied recipe (verified nest by nest; nest ``only`` alone when
    given), whatever the whole program said of them."""
    return dropin_source(path, scops, {i: a.recipe for i, a in applied.items() if only in (None, i)})


def dropin_header(scops: Sequence[Scop], applied: Mapping[int, AppliedRecipe], text: str, *, checked: str | None,
                  built_with: str | None = None, unchecked: str = "--no-program-check") -> str:
    """A C comment for the top of a drop-in file: the recipe applied to each region with its figure, what
    the whole program showed (``checked``: the outcome's reason; None when it was not checked, because of
    ``unchecked``), and the compiler flags the code needs."""
    lines = ["Tuned by perfembed."]
    for index in sorted(applied):
        nest, scop = applied[index], scops[index]
        lines.append(f"  lines {scop.region.first_line}-{scop.region.last_line} ({scop.region.function}): "
                     f"{recipe_text(nest.steps, loop_names(scop))}"
                     + (f", nest alone {nest.figure}" if nest.figure else ""))
    if checked is not None:
        lines.append(f"Whole program: {checked}" + (f" (built with: {built_with})" if built_with else "") + ".")
    else:
        lines.append(f"NOT checked as a whole program ({unchecked}): each nest was verified alone.")
    lines.append(f"Build with: {needed_flags(text)}.")
    body = "\n".join(f" * {line}".rstrip() for line in lines)
    return f"/*\n{body.replace('*/', '* /')}\n */\n"


def needed_flags(text: str) -> str:
    """The compiler flags the generated code needs to run as measured: OpenMP for parallel loops, OpenMP's
    SIMD for simd pragmas alone (without them gcc drops the pragmas silently)."""
    pragmas = re.findall(r"#\s*pragma\s+omp\s+(\w+)", text)
    if any(p != "simd" for p in pragmas):
        return "-O3 -fopenmp (OpenMP parallel loops)"
    if pragmas:
        return "-O3 -fopenmp-simd or -fopenmp (OpenMP simd loops)"
    return "-O3"
