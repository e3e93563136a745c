"""``evaluate: "program"`` (issue 11): the request's whole program, original against tuned, in the sandbox."""

from __future__ import annotations

from pathlib import Path

from loopnest.harness.progress import Progress
from service.api.examples import WHOLE_PROGRAM
from service.config import ServiceSettings
from service.schemas import SuggestionsIn
from service.services import evaluate_whole_program

# The API's whole-program example, with its size N from a header that the request carries.
SOURCE = WHOLE_PROGRAM.replace("#define N 600\n", '#include "sizes.h"\n')
INTERCHANGED = {"nests": [{"index": 0, "accepted": True,
                           "best": {"recipe": {"steps": [{"op": "interchange", "order": [1, 0]}]}, "speedup": 2.0}}]}


def test_a_whole_program_is_built_with_its_headers_run_and_compared(tmp_path: Path) -> None:
    assert '#include "sizes.h"' in SOURCE and "#define N" not in SOURCE
    body = SuggestionsIn(source=SOURCE, headers={"sizes.h": "#define N 300\n"}, function="kernel",
                         evaluate="program")
    raw = {"nests": [dict(n) for n in INTERCHANGED["nests"]]}
    seen: list[Progress] = []
    evaluate_whole_program(body, raw, ServiceSettings(data_dir=tmp_path, threads=1, cflags="-O1"), seen.append)
    program = raw["program"]
    assert program["status"] == "ok" and program["nests_tuned"] == 1
    steps = [p.describe() for p in seen]
    assert steps[:3] == ["whole program: building original", "whole program: building tuned",
                         "whole program: timing pair 1"]
    assert len(steps) == 2 + program["speedup"]["runs"]  # one step per timed pair
    assert program["speedup"]["pairs"] >= 3 and program["speedup"]["threads"] == 1
    assert program["accepted"] == (program["speedup"]["low"] > 1.1)


def test_a_run_command_that_changes_the_output_refuses_the_program(tmp_path: Path) -> None:
    body = SuggestionsIn(source=SOURCE, headers={"sizes.h": "#define N 64\n"}, function="kernel",
                         evaluate="program", run="{program}; basename $PWD")  # run0 vs run1
    raw = {"nests": [dict(n) for n in INTERCHANGED["nests"]]}
    evaluate_whole_program(body, raw, ServiceSettings(data_dir=tmp_path, threads=1, cflags="-O1"))
    assert raw["program"]["status"] == "output-changed" and raw["program"]["accepted"] is False
