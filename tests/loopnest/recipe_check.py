"""The check every transformation property test makes of one drawn recipe."""

from __future__ import annotations

from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.harness import Harness
from loopnest.transform.recipe import Recipe, apply_recipe


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
