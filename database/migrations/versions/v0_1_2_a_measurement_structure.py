"""Measurements of a sparse nest name the index structure they ran on (``--sparsity/--density`` or a
Matrix Market file's hash): a result on one matrix is not a result on another.

Revision ID: v0.1.2.a
Revises: v0.1.1.b
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "v0.1.2.a"
down_revision: str | Sequence[str] | None = "v0.1.1.b"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("measurements") as batch:
        batch.add_column(sa.Column("structure", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("measurements") as batch:
        batch.drop_column("structure")
