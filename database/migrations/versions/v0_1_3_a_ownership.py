"""Whose data is it: a program sent through the API with a key is private to the keys that sent it
(``program_owners``), a tuning job remembers the key that enqueued it, and an admin key acts on all.

Programs stored before this revision (the seed's, the CLI's) stay public.

Revision ID: v0.1.3.a
Revises: v0.1.2.a
Create Date: 2026-12-08
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "v0.1.3.a"
down_revision: str | Sequence[str] | None = "v0.1.2.a"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("admin", sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table("programs") as batch:
        batch.add_column(sa.Column("private", sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table("tuning_jobs") as batch:
        batch.add_column(sa.Column("owner_key_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(op.f("fk_tuning_jobs_owner_key_id_api_keys"), "api_keys", ["owner_key_id"],
                                 ["id"], ondelete="SET NULL")
    op.create_table(
        "program_owners",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("program_id", sa.Integer(), nullable=False),
        sa.Column("api_key_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["api_key_id"], ["api_keys.id"], name=op.f("fk_program_owners_api_key_id_api_keys"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["program_id"], ["programs.id"], name=op.f("fk_program_owners_program_id_programs"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_program_owners")),
        sa.UniqueConstraint("program_id", "api_key_id", name=op.f("uq_program_owners_program_id_api_key_id")),
    )
    op.create_index(op.f("ix_program_owners_api_key_id"), "program_owners", ["api_key_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_program_owners_api_key_id"), table_name="program_owners")
    op.drop_table("program_owners")
    with op.batch_alter_table("tuning_jobs") as batch:
        batch.drop_constraint(op.f("fk_tuning_jobs_owner_key_id_api_keys"), type_="foreignkey")
        batch.drop_column("owner_key_id")
    with op.batch_alter_table("programs") as batch:
        batch.drop_column("private")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("admin")
