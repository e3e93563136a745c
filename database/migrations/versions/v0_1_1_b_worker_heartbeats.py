"""Worker heartbeats: each running tuning worker keeps a row fresh, so the service can tell whether
any worker is alive (``/readyz``, "waiting for a worker" in a job's status).

Revision ID: v0.1.1.b
Revises: v0.1.1.a
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "v0.1.1.b"
down_revision: str | Sequence[str] | None = "v0.1.1.a"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("cpus", sa.String(length=255), nullable=True),
        sa.Column("job_id", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["tuning_jobs.id"], name=op.f("fk_workers_job_id_tuning_jobs"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workers")),
        sa.UniqueConstraint("name", name=op.f("uq_workers_name")),
    )
    op.create_index(op.f("ix_workers_last_seen_at"), "workers", ["last_seen_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_workers_last_seen_at"), table_name="workers")
    op.drop_table("workers")
