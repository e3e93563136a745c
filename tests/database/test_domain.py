"""The hashing rules behind identity, without a database (property-based)."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from database import canonical_json, recipe_hash, source_hash, target_signature
from database.domain import JobStatus
from database.tables import NestEmbeddingModel
from tests.database.factories import TARGET

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


def _reverse_keys(value: object) -> object:
    if isinstance(value, dict):
        return {k: _reverse_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(v) for v in value]
    return value


@given(json_values)
def test_canonical_json_ignores_key_order_and_round_trips(value: object) -> None:
    assert canonical_json(_reverse_keys(value)) == canonical_json(value)
    assert recipe_hash(_reverse_keys(value)) == recipe_hash(value)
    assert json.loads(canonical_json(value)) == value


@given(st.lists(st.text(alphabet="ab \t;{}", max_size=8), max_size=6))
def test_source_hash_ignores_line_endings_only(lines: list[str]) -> None:
    unix = "\n".join(lines)
    assert source_hash(unix.replace("\n", "\r\n")) == source_hash(unix)
    assert source_hash(unix + "x") != source_hash(unix)


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=64))
def test_vectors_pack_exactly(values: list[float]) -> None:
    row = NestEmbeddingModel(dim=len(values), vector=NestEmbeddingModel.pack(tuple(values)))
    assert all(math.copysign(1, a) == math.copysign(1, b) and a == b for a, b in zip(row.unpack(), values, strict=True))


def test_target_signature_depends_on_identity_only() -> None:
    base = target_signature(**TARGET)
    assert target_signature(**{**TARGET, "cache_sizes": dict(reversed(TARGET["cache_sizes"].items()))}) == base
    assert target_signature(**{**TARGET, "compiler_version": "13.1.0"}) != base


def test_terminal_job_states() -> None:
    assert {s for s in JobStatus if s.is_terminal} == {JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED}
