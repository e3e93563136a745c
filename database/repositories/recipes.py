"""Recipes: transformation lists stored once, by the hash of their canonical JSON."""

from __future__ import annotations

from sqlalchemy.orm import Session

from database.domain import JsonValue, Recipe, canonical_json, recipe_hash
from database.repositories._common import get_or_create, json_value
from database.tables import RecipeModel


def _steps_list(steps: JsonValue) -> JsonValue:
    """Recipes are stored as their steps list; ``{"steps": [...]}`` (the recipe file form) is unwrapped
    so that one recipe never has two records."""
    if isinstance(steps, dict) and set(steps) == {"steps"}:
        return steps["steps"]
    return steps


def get_or_create_recipe(session: Session, *, steps: JsonValue) -> Recipe:
    """The recipe with these steps, created if new; key order and spacing do not matter."""
    value = json_value(_steps_list(steps), what="recipe steps")
    text = canonical_json(value)
    digest = recipe_hash(value)
    row, _ = get_or_create(
        session,
        lambda: RecipeModel.find_by_hash(session, digest),
        lambda: RecipeModel(recipe_hash=digest, canonical_json=text),
    )
    return row.to_domain()


def get_recipe(session: Session, *, recipe_id: int) -> Recipe:
    """Raises :class:`NotFoundError` for an unknown id."""
    return RecipeModel.find_or_raise_by_id(session, recipe_id).to_domain()


def find_recipe(session: Session, *, steps: JsonValue) -> Recipe | None:
    """The stored recipe with these steps, or None."""
    row = RecipeModel.find_by_hash(session, recipe_hash(json_value(_steps_list(steps), what="recipe steps")))
    return None if row is None else row.to_domain()
