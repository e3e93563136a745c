"""Sample records shared by the database tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from database import get_or_create_nest, get_or_create_program, get_or_create_recipe, get_or_create_target
from tests.helpers.kernels import GEMM

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from database import Store

P = ParamSpec("P")
T = TypeVar("T")

TARGET: dict[str, Any] = {
    "cpu_model": "Test CPU 9000",
    "cores": 8,
    "isa_level": "x86-64-v3",
    "cache_sizes": {"l1d": 49152, "l2": 1310720, "l3": 12582912},
    "compiler": "gcc",
    "compiler_version": "12.2.0",
}

TILE = [{"name": "tile", "kwargs": {"loop": "i", "sizes": [32, 32]}}]


@dataclass(frozen=True)
class Seed:
    program_id: int
    nest_id: int
    target_id: int
    recipe_id: int


def add_seed(session: Session, *, name: str = "gemm", normalized: dict[str, Any] | None = None,
             steps: list[dict[str, Any]] = TILE) -> Seed:
    """Get or create GEMM's program (as ``name``), its nest 0, :data:`TARGET` and the recipe ``steps``."""
    program = get_or_create_program(session, source=GEMM, name=name)
    nest = get_or_create_nest(session, program_id=program.id, index=0,
                              normalized=normalized if normalized is not None else {"loops": ["i", "j", "k"]})
    target = get_or_create_target(session, **TARGET)
    recipe = get_or_create_recipe(session, steps=steps)
    return Seed(program_id=program.id, nest_id=nest.id, target_id=target.id, recipe_id=recipe.id)


def committed(store: Store, operation: Callable[Concatenate[Session, P], T], /, *args: P.args,
              **kwargs: P.kwargs) -> T:
    """Run one repository function in a transaction of its own, as a worker runs its job calls."""
    with store.session() as session:
        return operation(session, *args, **kwargs)
