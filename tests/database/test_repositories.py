"""Round trips through the repositories on every backend, and their error rules."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from database import (
    Measurement,
    MeasurementIn,
    MeasurementOrigin,
    Store,
    add_api_key,
    add_measurement,
    best_recipe_for,
    create_api_key,
    delete_api_key,
    find_api_key,
    find_program,
    find_recipe,
    find_target,
    get_embedding_model,
    get_nest,
    get_or_create_nest,
    get_or_create_program,
    get_or_create_recipe,
    get_or_create_target,
    get_program,
    get_recipe,
    get_target,
    list_api_keys,
    list_embedding_models,
    list_measurements,
    list_nests,
    list_programs,
    list_targets,
    load_embeddings,
    ranked_recipes_for,
    record_program_check,
    register_embedding_model,
    set_model_metrics,
    set_nest_features,
    source_hash,
    store_embeddings,
)
from database.errors import DuplicateError, InvalidRecordError, NotFoundError, StorageError
from database.tables import ProgramModel
from loopnest.errors import PerfembedError
from tests.database.factories import TARGET, TILE, Seed
from tests.helpers.kernels import GEMM


def test_program_round_trip_and_idempotence(store: Store) -> None:
    with store.session() as session:
        first = get_or_create_program(session, source=GEMM, name="gemm")
    with store.session() as session:
        again = get_or_create_program(session, source=GEMM.replace("\n", "\r\n"), name="other name")
        assert again == first  # same text up to line endings: same program, first name kept
        assert get_program(session, program_id=first.id) == first
        assert find_program(session, source=GEMM) == first
        assert find_program(session, source="int x;") is None
        assert list_programs(session) == [first]
        assert session.scalar(select(func.count()).select_from(ProgramModel)) == 1
    assert first.source == GEMM and first.language == "c" and first.source_hash == source_hash(GEMM)
    assert first.created_at.tzinfo is not None
    assert abs(first.created_at - datetime.now(UTC)) < timedelta(minutes=5)


def test_domain_objects_are_frozen_and_detached(store: Store, seed: Seed) -> None:
    with store.session() as session:
        nest = get_nest(session, nest_id=seed.nest_id)
    with pytest.raises(dataclasses.FrozenInstanceError):
        nest.index = 3  # type: ignore[misc]
    assert nest.normalized == {"loops": ["i", "j", "k"]}  # readable after the session closed


def test_nests_and_features(store: Store, seed: Seed) -> None:
    with store.session() as session:
        same = get_or_create_nest(session, program_id=seed.program_id, index=0, normalized={"other": 1})
        assert same.id == seed.nest_id and same.normalized == {"loops": ["i", "j", "k"]}
        second = get_or_create_nest(
            session, program_id=seed.program_id, index=1, normalized=[1, (2, 3)], static_features={"depth": 2}
        )
        assert second.normalized == [1, [2, 3]] and second.static_features == {"depth": 2.0}
        set_nest_features(session, nest_id=seed.nest_id, static_features={"depth": 3, "arrays": 3})
        set_nest_features(session, nest_id=seed.nest_id, static_features={"depth": 4})
        updated = set_nest_features(session, nest_id=seed.nest_id, dynamic_features={"l1_miss_rate": 0.25})
    assert updated.static_features == {"depth": 4.0, "arrays": 3.0}
    assert updated.dynamic_features == {"l1_miss_rate": 0.25}
    with store.session() as session:
        replaced = set_nest_features(session, nest_id=seed.nest_id, static_features={"x": 1}, replace=True)
        assert replaced.static_features == {"x": 1.0}
        assert [n.id for n in list_nests(session, program_id=seed.program_id)] == [seed.nest_id, second.id]
        assert [n.id for n in list_nests(session, nest_ids=[second.id, 10**6])] == [second.id]
        assert list_nests(session, program_id=seed.program_id, limit=1, offset=1) == [
            get_nest(session, nest_id=second.id)
        ]


def test_bad_arguments_raise_value_error(store: Store, seed: Seed) -> None:
    # InvalidRecordError: a user error (exit 2, HTTP 422), no more a bare ValueError (HTTP 500); still a ValueError.
    with store.session() as session:
        with pytest.raises(InvalidRecordError, match="'depth' is not finite") as info:
            set_nest_features(session, nest_id=seed.nest_id, static_features={"depth": float("nan")})
        assert isinstance(info.value, PerfembedError) and isinstance(info.value, ValueError)
        with pytest.raises(ValueError, match="must be JSON"):
            get_or_create_recipe(session, steps=[{"name": object()}])
        with pytest.raises(ValueError):
            get_or_create_program(session, source="   ", name="blank")
        with pytest.raises(ValueError, match="repetitions"):
            add_measurement(session, MeasurementIn(
                nest_id=seed.nest_id, recipe_id=seed.recipe_id, target_id=seed.target_id,
                median_time_s=1.0, spread_s=0.1, repetitions=0, verified=True, origin="manual",
            ))  # fmt: skip
        with pytest.raises(ValueError):
            add_measurement(session, MeasurementIn(
                nest_id=seed.nest_id, recipe_id=seed.recipe_id, target_id=seed.target_id,
                median_time_s=1.0, spread_s=0.1, repetitions=3, verified=True, origin="guess",
            ))  # fmt: skip


def test_finders_raise_not_found(store: Store) -> None:
    with store.session() as session:
        for call in (
            lambda: get_program(session, program_id=42),
            lambda: get_nest(session, nest_id=42),
            lambda: get_target(session, target_id=42),
            lambda: get_recipe(session, recipe_id=42),
            lambda: get_embedding_model(session),
            lambda: get_embedding_model(session, version="v9"),
            lambda: get_or_create_nest(session, program_id=42, index=0, normalized={}),
            lambda: delete_api_key(session, name="nobody"),
        ):
            with pytest.raises(NotFoundError):
                call()
    with pytest.raises(LookupError, match="program 7 does not exist"):
        with store.session() as session:
            get_program(session, program_id=7)


def test_targets_are_identified_by_signature(store: Store) -> None:
    with store.session() as session:
        target = get_or_create_target(session, **TARGET)
        assert target.peak_gflops is None
        measured = get_or_create_target(session, **TARGET, peak_gflops=512.0, memory_bandwidth_gbs=40.5)
        assert measured.id == target.id
        assert (measured.peak_gflops, measured.memory_bandwidth_gbs) == (512.0, 40.5)
        other = get_or_create_target(session, **{**TARGET, "cores": 16})
        assert other.id != target.id
        assert find_target(session, signature_hash=target.signature_hash) == measured
        assert [t.id for t in list_targets(session)] == [target.id, other.id]
    assert measured.cache_sizes == TARGET["cache_sizes"]


def test_recipes_are_identified_by_canonical_json(store: Store) -> None:
    with store.session() as session:
        recipe = get_or_create_recipe(session, steps=TILE)
        shuffled = [{"kwargs": {"sizes": [32, 32], "loop": "i"}, "name": "tile"}]
        assert get_or_create_recipe(session, steps=shuffled) == recipe
        assert find_recipe(session, steps=shuffled) == recipe
        assert get_or_create_recipe(session, steps=[*TILE, {"name": "parallel", "kwargs": {}}]).id != recipe.id
    assert recipe.steps == TILE
    assert recipe.canonical_json == '[{"kwargs":{"loop":"i","sizes":[32,32]},"name":"tile"}]'


def _measure(session: Session, seed: Seed, recipe_id: int, **overrides: Any) -> Measurement:
    values = {
        "nest_id": seed.nest_id,
        "recipe_id": recipe_id,
        "target_id": seed.target_id,
        "median_time_s": 1.0,
        "spread_s": 0.01,
        "repetitions": 5,
        "verified": True,
        "origin": MeasurementOrigin.AUTOTUNE,
        "params": {"n": 1024},
        **overrides,
    }
    return add_measurement(session, MeasurementIn(**values))


def test_measurements_and_best_recipe(store: Store, seed: Seed) -> None:
    with store.session() as session:
        interchange = get_or_create_recipe(session, steps=[{"name": "interchange", "kwargs": {"order": "ikj"}}])
        parallel = get_or_create_recipe(session, steps=[{"name": "parallel", "kwargs": {"loop": "i"}}])
        assert best_recipe_for(session, nest_id=seed.nest_id, target_id=seed.target_id) is None
        first = _measure(session, seed, seed.recipe_id, speedup=2.0, median_time_s=0.5)
        _measure(session, seed, seed.recipe_id, speedup=2.5, median_time_s=0.4, origin="transfer")
        _measure(session, seed, interchange.id, speedup=3.0, median_time_s=0.33, params={"n": 2048})
        _measure(session, seed, parallel.id, speedup=9.0, verified=False, origin="manual")
    with store.session() as session:
        best = best_recipe_for(session, nest_id=seed.nest_id, target_id=seed.target_id)
        assert best is not None
        assert best.recipe.id == interchange.id and best.measurement.speedup == 3.0
        ranked = ranked_recipes_for(session, nest_id=seed.nest_id, target_id=seed.target_id)
        assert [(r.recipe.id, r.measurement.speedup) for r in ranked] == [(interchange.id, 3.0), (seed.recipe_id, 2.5)]
        at_1024 = best_recipe_for(session, nest_id=seed.nest_id, target_id=seed.target_id, params={"n": 1024})
        assert at_1024 is not None and at_1024.recipe.id == seed.recipe_id
        unverified = best_recipe_for(session, nest_id=seed.nest_id, target_id=seed.target_id, verified_only=False)
        assert unverified is not None and unverified.recipe.id == parallel.id
        assert len(list_measurements(session, nest_id=seed.nest_id)) == 4
        assert len(list_measurements(session, recipe_id=seed.recipe_id, origin="transfer")) == 1
        assert len(list_measurements(session, target_id=seed.target_id, verified=False)) == 1
        assert list_measurements(session, nest_id=seed.nest_id, limit=1)[0] == first
    assert first.origin is MeasurementOrigin.AUTOTUNE and first.params == {"n": 1024}
    assert first.measured_at.tzinfo is not None


def test_a_re_measured_recipe_ranks_by_its_re_measured_figure(store: Store, seed: Seed) -> None:
    # The seed's gemm_ijk_acc_tt_f64: isl's schedule jammed 2 x 2 read 11.26x in its study (the best of
    # 40 noisy readings) and 4.78x measured again; jammed 4 x 4, 8.91x and 13.13x.
    with store.session() as session:
        jam4 = get_or_create_recipe(session, steps=[{"op": "unroll_jam", "loop": 0, "factor": 4}]).id
        _measure(session, seed, seed.recipe_id, speedup=11.26)
        _measure(session, seed, jam4, speedup=8.91)
        assert [r.recipe.id for r in ranked_recipes_for(session, nest_id=seed.nest_id,
                                                        target_id=seed.target_id)] == [seed.recipe_id, jam4]
        _measure(session, seed, seed.recipe_id, speedup=4.78, interval=(4.5, 5.1), confidence=0.95)
        ranked = ranked_recipes_for(session, nest_id=seed.nest_id, target_id=seed.target_id)
        assert [(r.recipe.id, r.measurement.speedup) for r in ranked] == [(jam4, 8.91), (seed.recipe_id, 4.78)]
        _measure(session, seed, jam4, speedup=13.13, interval=(12.0, 14.0), confidence=0.95)
        _measure(session, seed, jam4, speedup=12.5, interval=(11.9, 13.2), confidence=0.95)  # the latest counts
        _measure(session, seed, seed.recipe_id, speedup=20.0)  # a lucky screening reading: it stays re-measured
        ranked = ranked_recipes_for(session, nest_id=seed.nest_id, target_id=seed.target_id)
        assert [(r.recipe.id, r.measurement.speedup) for r in ranked] == [(jam4, 12.5), (seed.recipe_id, 4.78)]
        assert (ranked[0].measurement.speedup_low, ranked[0].measurement.speedup_high) == (11.9, 13.2)


def test_measurement_needs_existing_records(store: Store, seed: Seed) -> None:
    with store.session() as session:
        with pytest.raises(NotFoundError, match="recipe 999"):
            _measure(session, seed, 999)


def test_embedding_models_and_vectors(store: Store, seed: Seed) -> None:
    state = bytes(range(256)) * 4
    with store.session() as session:
        model = register_embedding_model(
            session, version="pca-1", hyper_parameters={"n_components": 3}, fitted_state=state
        )
        register_embedding_model(session, version="pca-2", hyper_parameters={}, fitted_state=b"")
        assert get_embedding_model(session).version == "pca-2"
        assert get_embedding_model(session, version="pca-1").fitted_state == state
        assert [(m.version, m.fitted_state) for m in list_embedding_models(session)] == [
            ("pca-1", None),
            ("pca-2", None),
        ]
        metrics = set_model_metrics(session, version="pca-1", quality_metrics={"recall@5": 0.8})
        assert metrics.quality_metrics == {"recall@5": 0.8}
        assert store_embeddings(session, model_version="pca-1", vectors={seed.nest_id: [0.1, 0.2, 1 / 3]}) == 1
    with store.session() as session:
        assert load_embeddings(session, model_version="pca-1") == {seed.nest_id: (0.1, 0.2, 1 / 3)}
        store_embeddings(session, model_version="pca-1", vectors={seed.nest_id: (1.0, 2.0, 3.0)})
        assert load_embeddings(session, model_version="pca-1", nest_ids=[seed.nest_id]) == {
            seed.nest_id: (1.0, 2.0, 3.0)
        }
        assert load_embeddings(session, model_version="pca-2") == {}
        with pytest.raises(ValueError, match="length 3"):
            store_embeddings(session, model_version="pca-1", vectors={seed.nest_id: [1.0, 2.0]})
        with pytest.raises(NotFoundError, match="nest id"):
            store_embeddings(session, model_version="pca-1", vectors={12345: [1.0, 2.0, 3.0]})
    assert model.hyper_parameters == {"n_components": 3}
    with pytest.raises(DuplicateError, match="pca-1"):
        with store.session() as session:
            register_embedding_model(session, version="pca-1", hyper_parameters={}, fitted_state=b"x")


def test_api_keys(store: Store) -> None:
    with store.session() as session:
        record, key = create_api_key(session, name="ci")
        assert find_api_key(session, key=key) == record
        assert find_api_key(session, key=key + "x") is None
        assert key not in repr(record) and record.key_hash != key
        add_api_key(session, name="ops", key="k" * 32)
        with pytest.raises(DuplicateError):
            create_api_key(session, name="ci")
        assert [k.name for k in list_api_keys(session)] == ["ci", "ops"]  # the clash left the session usable
        delete_api_key(session, name="ci")
        assert find_api_key(session, key=key) is None


def test_session_scope_rolls_back_and_translates_errors(store: Store) -> None:
    with pytest.raises(RuntimeError):
        with store.session() as session:
            get_or_create_program(session, source=GEMM, name="gemm")
            raise RuntimeError("boom")
    with store.session() as session:
        assert list_programs(session) == []
    with store.session() as session:
        session.add(ProgramModel(source_hash="h" * 64, language="c", name="a", source="x"))
    with pytest.raises(DuplicateError):
        with store.session(integrity_as_duplicate=True) as session:
            session.add(ProgramModel(source_hash="h" * 64, language="c", name="b", source="y"))
    with pytest.raises(StorageError, match="integrity"):
        with store.session() as session:
            session.add(ProgramModel(source_hash="h" * 64, language="c", name="b", source="y"))
    with pytest.raises(StorageError, match="database error"):
        with store.session() as session:
            session.execute(select(func.no_such_function()))


def test_a_recipe_the_whole_program_refused_is_no_longer_the_nests_best(store: Store, seed: Seed) -> None:
    """Issue 58: a recipe whose whole program changed its output stayed the nest's verified best (on the
    dashboard, with its drop-in download). It is stored as refused, with why, and ranked last."""
    with store.session() as session:
        jam = get_or_create_recipe(session, steps=[{"op": "unroll_jam", "loop": 0, "factor": 4}]).id
        _measure(session, seed, seed.recipe_id, speedup=5.0, interval=(4.5, 5.5), confidence=0.95)
        _measure(session, seed, jam, speedup=3.0)
        verdict = "refused: output-changed: standard output differs at line 1"
        assert record_program_check(session, nest_id=seed.nest_id, target_id=seed.target_id, steps=TILE,
                                    params={"n": 1024}, verdict=verdict) == 1
        assert record_program_check(session, nest_id=seed.nest_id, target_id=seed.target_id, steps=TILE,
                                    params={"n": 7}, verdict=verdict) == 0  # never measured at n=7
    with store.session() as session:
        best = best_recipe_for(session, nest_id=seed.nest_id, target_id=seed.target_id)
        assert best is not None and best.recipe.id == jam and best.measurement.program_check is None
        ranked = ranked_recipes_for(session, nest_id=seed.nest_id, target_id=seed.target_id)
        assert [r.recipe.id for r in ranked] == [jam, seed.recipe_id]
        assert ranked[1].measurement.refused_in_program and ranked[1].measurement.program_check == verdict
        record_program_check(session, nest_id=seed.nest_id, target_id=seed.target_id, steps={"steps": TILE},
                             params={"n": 1024}, verdict="held: whole program 2.10x [1.9, 2.3]")
    with store.session() as session:
        best = best_recipe_for(session, nest_id=seed.nest_id, target_id=seed.target_id)
        assert best is not None and best.recipe.id == seed.recipe_id
        assert best.measurement.program_check == "held: whole program 2.10x [1.9, 2.3]"
