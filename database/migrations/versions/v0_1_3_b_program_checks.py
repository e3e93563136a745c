"""A measurement says what its recipe did in the user's whole program: held (with the program's figure) or
refused (with why: the output changed, it was slower); a refused recipe is no longer a nest's best.

Revision ID: v0.1.3.b
Revises: v0.1.3.a
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "v0.1.3.b"
down_revision: str | Sequence[str] | None = "v0.1.3.a"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("measurements") as batch:
        batch.add_column(sa.Column("program_check", sa.String(length=400), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("measurements") as batch:
        batch.drop_column("program_check")
