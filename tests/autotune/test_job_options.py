"""A job's options are one typed object, built by the service and read by the worker, and rows
written before it (the core's and the API's dicts) still read the same."""

from __future__ import annotations

import dataclasses

import pytest

from autotune.workers.job_options import JobOptions
from loopnest.errors import ParameterError
from loopnest.frontend.program import ProgramSource
from loopnest.harness.index_data import SparseChoice

PROGRAM = ProgramSource("void f(int n, double a[n]) { for (int i = 0; i < n; i++) a[i] = K; }\n",
                        headers={"k.h": "#define K 1.0\n"}, defines={"K": "2.0", "FAST": None}, function="f")
STEPS = [{"op": "tile", "loop": "i", "size": 32}]


def test_options_round_trip_through_the_stored_json() -> None:
    options = JobOptions(params={"n": 64}, reps=1, seed=0, timeout=2.5, warm_start=(STEPS,)).with_program(
        PROGRAM, 0, with_source=True)
    stored = options.to_json()
    assert stored == {"params": {"n": 64}, "source": PROGRAM.source, "filename": "program.c",
                      "headers": {"k.h": "#define K 1.0\n"}, "defines": ["K=2.0", "FAST"], "nest_index": 0,
                      "function": "f", "timeout": 2.5, "reps": 1, "seed": 0, "warm_start": [STEPS]}
    assert JobOptions.from_json(stored) == options


def test_a_chosen_sparse_structure_round_trips_and_is_the_harness_choice() -> None:
    sparse = SparseChoice(sparsity="banded", density=0.05)
    options = JobOptions(params={"n": 8}).with_program(dataclasses.replace(PROGRAM, sparse=sparse), 0,
                                                       with_source=False)
    stored = options.to_json()
    assert (stored["sparsity"], stored["density"]) == ("banded", 0.05) and "matrix" not in stored
    assert JobOptions.from_json(stored).sparse == sparse
    assert JobOptions(params={"n": 8}).sparse is None  # nothing chosen: the default structure
    with pytest.raises(ParameterError, match="--sparsity 'dense'"):
        _ = JobOptions.from_json({"sparsity": "dense"}).sparse


def test_a_program_stored_with_the_job_leaves_its_source_out() -> None:
    stored = JobOptions(params={"n": 8}).with_program(PROGRAM, 2, with_source=False).to_json()
    assert "source" not in stored and "filename" not in stored and stored["nest_index"] == 2


def test_rows_written_before_the_class_read_the_same() -> None:
    core_row = {"source": "s", "filename": "program.c", "headers": {}, "defines": [], "nest_index": 1,
                "function": None, "params": {"n": 10}, "warm_start": [{"steps": STEPS}]}
    api_row = {"params": {"n": 10}, "reps": 2, "threads": 4, "timeout": 30, "seed": 7, "heartbeat_interval": 5,
               "grace_period": 20, "study_name": "mine", "unknown": True}
    core = JobOptions.from_json(core_row)
    assert (core.source, core.nest_index, core.function, core.warm_start) == ("s", 1, None, ({"steps": STEPS},))
    api = JobOptions.from_json(api_row)
    assert (api.reps, api.threads, api.timeout, api.seed, api.heartbeat_interval, api.grace_period,
            api.study_name) == (2, 4, 30.0, 7, 5, 20, "mine")
    assert JobOptions.from_json(None) == JobOptions()


@pytest.mark.parametrize(("row", "message"), [
    ({"timeout": "soon"}, "options.timeout must be a number, got 'soon'"),
    ({"reps": 1.5}, "options.reps must be an integer, got 1.5"),
    ({"params": [1, 2]}, "options.params must be an object of NAME: INT"),
    ({"warm_start": "tile"}, "options.warm_start must be a list, got 'tile'"),
])
def test_a_malformed_option_is_named(row: dict[str, object], message: str) -> None:
    with pytest.raises(ParameterError) as info:
        JobOptions.from_json(row)
    assert str(info.value) == message
