"""What the database already holds about a nest: tuned before (exact match only), and measurement targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from database import MeasurementIn, Store, add_measurement, get_or_create_recipe, get_or_create_target, get_store
from database.neighbourhood import best_run, find_stored_nest
from database.records import register_nest
from embeddings.features.stored_form import normalized_nest
from loopnest import extract_scops
from service.core.measured import target_view, tuned_before
from tests.service.factories import GEMM, GEMM_PARAMS, GEMV

OTHER_CPU = {"cpu_model": "another CPU", "cores": 64, "isa_level": "x86-64-v3", "cache_sizes": {"l1d": 49152},
             "compiler": "gcc", "compiler_version": "gcc (Debian 12.2.0-14) 12.2.0"}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return get_store(f"sqlite:///{tmp_path / 'perfembed.db'}", create=True)


def _measure(store: Store, nest_id: int, target_id: int, speedup: float | None, **extra: object) -> None:
    params = extra.pop("params", GEMM_PARAMS)
    with store.session() as session:
        recipe = get_or_create_recipe(session, steps=extra.pop("steps", [{"op": "parallelize", "loop": 0}]))
        add_measurement(session, MeasurementIn(
            nest_id=nest_id, recipe_id=recipe.id, target_id=target_id, median_time_s=0.01, spread_s=0.0,
            repetitions=int(extra.pop("repetitions", 3)), verified=speedup is not None, origin="transfer",
            params=params, speedup=speedup, **extra))  # type: ignore[arg-type]


def test_tuned_before_is_this_nest_at_these_sizes_here_preferring_a_re_measured_figure(store: Store) -> None:
    scop = extract_scops(GEMM).scops[0]
    nest = register_nest(store, source=GEMM.read_text(), name="gemm_ijk.c", index=0, scop=scop, params=GEMM_PARAMS)
    with store.session() as session:
        here = get_or_create_target(session, **{**OTHER_CPU, "cpu_model": "this CPU"}).id
        there = get_or_create_target(session, **OTHER_CPU).id
    _measure(store, nest.id, here, 2.5, steps=[{"op": "unroll", "loop": 2, "factor": 4}])  # screening only
    _measure(store, nest.id, here, 1.3, interval=(1.2, 1.4), confidence=0.95, repetitions=10, threads=2)
    _measure(store, nest.id, here, None)  # a run that failed verification still counts as a measurement
    _measure(store, nest.id, here, 3.0, params={"ni": 8, "nj": 8, "nk": 8})  # other sizes: not this
    _measure(store, nest.id, there, 4.0)  # another machine: not this
    with store.session() as session:
        before = tuned_before(best_run(session, nest_id=nest.id, target_id=here, params=GEMM_PARAMS),
                              names=["i", "j", "k"])
        elsewhere = tuned_before(best_run(session, nest_id=nest.id, target_id=here, params={"ni": 9, "nj": 9, "nk": 9}))
    assert before is not None and elsewhere is None
    assert before["speedup"] == 1.3 and before["interval"] == [1.2, 1.4] and before["re_measured"]
    assert before["measurements"] == 3 and before["recipe_text"] == "parallelize i"
    assert before["text"] == "1.30x [1.20, 1.40] (95%, 10 pairs, 2 threads)"
    assert before["target"] == {"id": here, "name": "this CPU, 64 cores, L1d 48 KiB, gcc 12.2.0",
                                "this_machine": True}


def test_the_stored_nest_is_found_only_for_the_same_program_position_and_ir(store: Store) -> None:
    gemm = extract_scops(GEMM).scops[0]
    nest = register_nest(store, source=GEMM.read_text(), name="gemm_ijk.c", index=0, scop=gemm)
    mine = normalized_nest(gemm)
    with store.session() as session:
        assert find_stored_nest(session, source=GEMM.read_text(), index=0, normalized=mine) == nest.id
        assert find_stored_nest(session, source=GEMM.read_text(), index=1, normalized=mine) is None
        assert find_stored_nest(session, source=GEMV.read_text(), index=0, normalized=mine) is None
        # Same text, other nest (a macro would do this): not the same nest.
        assert find_stored_nest(session, source=GEMM.read_text(), index=0,
                                normalized=normalized_nest(extract_scops(GEMV).scops[0])) is None


def test_a_target_says_whether_it_is_this_machine(store: Store) -> None:
    with store.session() as session:
        target = get_or_create_target(session, **OTHER_CPU)
    assert target_view(target, target.id + 1) == {"id": target.id, "this_machine": False,
                                                  "name": "another CPU, 64 cores, L1d 48 KiB, gcc 12.2.0"}
    assert target_view(target, target.id)["this_machine"] is True  # type: ignore[index]
    assert target_view(None, 1) is None
