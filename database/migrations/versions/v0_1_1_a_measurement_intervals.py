"""Measurements carry how far they can be trusted: the speedup's interval, the threads, and the CPU
pressure of the machine while they were taken (a measurement under load is flagged).

Revision ID: v0.1.1.a
Revises: v0.1.0.b
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "v0.1.1.a"
down_revision: str | Sequence[str] | None = "v0.1.0.b"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("measurements") as batch:
        batch.add_column(sa.Column("speedup_low", sa.Double(), nullable=True))
        batch.add_column(sa.Column("speedup_high", sa.Double(), nullable=True))
        batch.add_column(sa.Column("confidence", sa.Double(), nullable=True))
        batch.add_column(sa.Column("threads", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("cpu_pressure", sa.Double(), nullable=True))
        batch.add_column(sa.Column("loaded", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("measurements") as batch:
        for column in ("loaded", "cpu_pressure", "threads", "confidence", "speedup_high", "speedup_low"):
            batch.drop_column(column)
