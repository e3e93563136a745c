"""Catalog: programs, nests, targets, recipes, measurements, embedding models and embeddings.

Revision ID: v0.1.0.a
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "v0.1.0.a"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id() -> sa.Column[int]:
    return sa.Column("id", sa.Integer(), nullable=False)


def _created_at(name: str = "created_at") -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "programs",
        _id(),
        sa.Column("source_hash", sa.String(length=64), nullable=False),
        sa.Column("language", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        _created_at(),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_programs")),
        sa.UniqueConstraint("source_hash", name=op.f("uq_programs_source_hash")),
    )
    op.create_table(
        "nests",
        _id(),
        sa.Column("program_id", sa.Integer(), nullable=False),
        sa.Column("nest_index", sa.Integer(), nullable=False),
        sa.Column("normalized", sa.JSON(), nullable=False),
        sa.Column("static_features", sa.JSON(), nullable=False),
        sa.Column("dynamic_features", sa.JSON(), nullable=False),
        _created_at(),
        sa.ForeignKeyConstraint(
            ["program_id"], ["programs.id"], name=op.f("fk_nests_program_id_programs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nests")),
        sa.UniqueConstraint("program_id", "nest_index", name=op.f("uq_nests_program_id_nest_index")),
    )
    op.create_table(
        "targets",
        _id(),
        sa.Column("signature_hash", sa.String(length=64), nullable=False),
        sa.Column("cpu_model", sa.String(length=255), nullable=False),
        sa.Column("cores", sa.Integer(), nullable=False),
        sa.Column("isa_level", sa.String(length=32), nullable=False),
        sa.Column("cache_sizes", sa.JSON(), nullable=False),
        sa.Column("compiler", sa.String(length=64), nullable=False),
        sa.Column("compiler_version", sa.String(length=64), nullable=False),
        sa.Column("peak_gflops", sa.Double(), nullable=True),
        sa.Column("memory_bandwidth_gbs", sa.Double(), nullable=True),
        _created_at(),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_targets")),
        sa.UniqueConstraint("signature_hash", name=op.f("uq_targets_signature_hash")),
    )
    op.create_table(
        "recipes",
        _id(),
        sa.Column("recipe_hash", sa.String(length=64), nullable=False),
        sa.Column("canonical_json", sa.Text(), nullable=False),
        _created_at(),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recipes")),
        sa.UniqueConstraint("recipe_hash", name=op.f("uq_recipes_recipe_hash")),
    )
    op.create_table(
        "measurements",
        _id(),
        sa.Column("nest_id", sa.Integer(), nullable=False),
        sa.Column("recipe_id", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("median_time_s", sa.Double(), nullable=False),
        sa.Column("spread_s", sa.Double(), nullable=False),
        sa.Column("repetitions", sa.Integer(), nullable=False),
        sa.Column("speedup", sa.Double(), nullable=True),
        sa.Column("verified", sa.Boolean(), nullable=False),
        sa.Column("origin", sa.String(length=16), nullable=False),
        _created_at("measured_at"),
        sa.CheckConstraint("origin IN ('autotune', 'transfer', 'manual')", name=op.f("ck_measurements_origin")),
        sa.CheckConstraint("median_time_s >= 0 AND spread_s >= 0", name=op.f("ck_measurements_times")),
        sa.CheckConstraint("repetitions >= 1", name=op.f("ck_measurements_repetitions")),
        sa.ForeignKeyConstraint(
            ["nest_id"], ["nests.id"], name=op.f("fk_measurements_nest_id_nests"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["recipe_id"], ["recipes.id"], name=op.f("fk_measurements_recipe_id_recipes"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["target_id"], ["targets.id"], name=op.f("fk_measurements_target_id_targets"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_measurements")),
    )
    op.create_index(op.f("ix_measurements_nest_id_target_id"), "measurements", ["nest_id", "target_id"])
    op.create_index(op.f("ix_measurements_recipe_id"), "measurements", ["recipe_id"])
    op.create_table(
        "embedding_models",
        _id(),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("hyper_parameters", sa.JSON(), nullable=False),
        sa.Column("fitted_state", sa.LargeBinary(), nullable=False),
        sa.Column("quality_metrics", sa.JSON(), nullable=False),
        _created_at(),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_embedding_models")),
        sa.UniqueConstraint("version", name=op.f("uq_embedding_models_version")),
    )
    op.create_table(
        "nest_embeddings",
        _id(),
        sa.Column("nest_id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        _created_at(),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["embedding_models.id"],
            name=op.f("fk_nest_embeddings_model_id_embedding_models"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["nest_id"], ["nests.id"], name=op.f("fk_nest_embeddings_nest_id_nests"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nest_embeddings")),
        sa.UniqueConstraint("nest_id", "model_id", name=op.f("uq_nest_embeddings_nest_id_model_id")),
    )
    op.create_index(op.f("ix_nest_embeddings_model_id"), "nest_embeddings", ["model_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_nest_embeddings_model_id"), table_name="nest_embeddings")
    op.drop_table("nest_embeddings")
    op.drop_table("embedding_models")
    op.drop_index(op.f("ix_measurements_recipe_id"), table_name="measurements")
    op.drop_index(op.f("ix_measurements_nest_id_target_id"), table_name="measurements")
    op.drop_table("measurements")
    op.drop_table("recipes")
    op.drop_table("targets")
    op.drop_table("nests")
    op.drop_table("programs")
