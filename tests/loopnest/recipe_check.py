"""The check every transformation property test makes of one drawn recipe."""

from __future__ import annotations

import atexit
from collections.abc import Callable, Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopnest import PreprocessOptions, extract_scops
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.harness import Harness
from loopnest.transform.recipe import Recipe, apply_recipe
from tests.helpers.paths import ROOT, load_expected

_HARNESSES: dict[tuple[str, int, int], list[Harness]] = {}


def corpus_harnesses(rel: str, spec: dict, *, size_cap: int, min_depth: int = 0) -> list[Harness]:
    """One harness per nest of corpus kernel ``rel`` (``spec``: its entry in corpus/expected.json) of at
    least ``min_depth`` loops, every size parameter capped at ``size_cap``; built once per test process,
    so each baseline compiles and runs once."""
    key = (rel, size_cap, min_depth)
    if key not in _HARNESSES:
        options = PreprocessOptions(tuple(str(ROOT / d) for d in spec.get("include_dirs", [])))
        scops = extract_scops(ROOT / rel, options, function=spec.get("function")).scops
        params = {k: min(int(v), size_cap) for k, v in spec["params"].items()}
        _HARNESSES[key] = [Harness(s, params, reps=1, threads=2) for s in scops if s.depth >= min_depth]
        for h in _HARNESSES[key]:
            atexit.register(h.close)
    return _HARNESSES[key]


def apply_and_verify(harness: Harness, recipe: Recipe) -> bool:
    """True when ``recipe`` applied and its variant ran and verified against the original; False when it
    was refused (illegal or malformed). Anything else fails the calling test."""
    try:
        transformed = apply_recipe(harness.scop, recipe, harness.dependences)
    except (IllegalTransformError, RecipeError):
        return False
    assert harness.baseline().ok, harness.baseline().message
    result = harness.evaluate(recipe, transformed=transformed)
    assert result.variant.status == "ok", (recipe.to_dict(), result.variant.message)
    assert result.verified, (recipe.to_dict(), result.verification)
    return True


def random_corpus_outcomes(kernels: Sequence[str], recipe: Callable[[st.DataObject, Harness], Recipe], *,
                           examples: int, size_cap: int, min_depth: int = 0) -> list[str]:
    """Draw ``examples`` times, the same draws every run: a corpus kernel among ``kernels``, one of its
    nests of at least ``min_depth`` loops (every size capped at ``size_cap``: a cap no tile size or factor
    divides makes partial tiles and remainders run), and a recipe for it by ``recipe``; apply and verify
    each (:func:`apply_and_verify`).
    Returns "applied" or "refused" per draw of a kernel that has a nest."""
    expected = load_expected()
    outcomes: list[str] = []

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        rel = data.draw(st.sampled_from(kernels))
        harnesses = corpus_harnesses(rel, expected[rel], size_cap=size_cap, min_depth=min_depth)
        if not harnesses:
            return
        harness = data.draw(st.sampled_from(harnesses))
        outcomes.append("applied" if apply_and_verify(harness, recipe(data, harness)) else "refused")

    run()
    return outcomes
