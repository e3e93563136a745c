"""Sample records shared by the database tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from database import Store

P = ParamSpec("P")
T = TypeVar("T")

GEMM = """
void gemm(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}
"""

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


def committed(store: Store, operation: Callable[Concatenate[Session, P], T], /, *args: P.args,
              **kwargs: P.kwargs) -> T:
    """Run one repository function in a transaction of its own, as a worker runs its job calls."""
    with store.session() as session:
        return operation(session, *args, **kwargs)
