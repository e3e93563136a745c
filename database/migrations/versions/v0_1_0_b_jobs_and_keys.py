"""Service tables: tuning jobs (with worker leases) and API keys.

Revision ID: v0.1.0.b
Revises: v0.1.0.a
Create Date: 2026-11-21
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "v0.1.0.b"
down_revision: str | Sequence[str] | None = "v0.1.0.a"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tuning_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("nest_id", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("budget", sa.Integer(), nullable=False),
        sa.Column("progress", sa.Integer(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("best_recipe_id", sa.Integer(), nullable=True),
        sa.Column("best_speedup", sa.Double(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("lease_owner", sa.String(length=255), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'done', 'failed', 'cancelled')",
            name=op.f("ck_tuning_jobs_status"),
        ),
        sa.CheckConstraint("budget >= 0 AND progress >= 0", name=op.f("ck_tuning_jobs_counts")),
        sa.ForeignKeyConstraint(
            ["best_recipe_id"],
            ["recipes.id"],
            name=op.f("fk_tuning_jobs_best_recipe_id_recipes"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["nest_id"], ["nests.id"], name=op.f("fk_tuning_jobs_nest_id_nests"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["target_id"], ["targets.id"], name=op.f("fk_tuning_jobs_target_id_targets"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tuning_jobs")),
    )
    op.create_index(op.f("ix_tuning_jobs_status_lease_expires_at"), "tuning_jobs", ["status", "lease_expires_at"])
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
        sa.UniqueConstraint("name", name=op.f("uq_api_keys_name")),
    )


def downgrade() -> None:
    op.drop_table("api_keys")
    op.drop_index(op.f("ix_tuning_jobs_status_lease_expires_at"), table_name="tuning_jobs")
    op.drop_table("tuning_jobs")
