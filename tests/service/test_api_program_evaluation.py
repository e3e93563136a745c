"""``evaluate: "program"`` (issue 11): the request's whole program, original against tuned, in the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from loopnest.errors import ParameterError, SourceError
from loopnest.frontend.program import extract_program
from loopnest.harness.progress import Progress
from service.api.examples import WHOLE_PROGRAM
from service.config import ServiceSettings
from service.core.program import applied_recipes
from service.core.program_spec import ProgramBuildError
from service.mappers import program_source
from service.schemas import SuggestionsIn
from service.services.suggestions import evaluate_whole_program, require_whole_program

# The API's whole-program example, with its size N from a header that the request carries.
SOURCE = WHOLE_PROGRAM.replace("#define N 600\n", '#include "sizes.h"\n')
INTERCHANGED = applied_recipes([{"index": 0, "accepted": True, "best": {
    "recipe": {"steps": [{"op": "interchange", "order": [1, 0]}]}, "speedup": 2.0}}])


def test_a_whole_program_is_built_with_its_headers_run_and_compared(tmp_path: Path) -> None:
    assert '#include "sizes.h"' in SOURCE and "#define N" not in SOURCE
    body = SuggestionsIn(source=SOURCE, headers={"sizes.h": "#define N 300\n"}, function="kernel",
                         evaluate="program")
    seen: list[Progress] = []
    evaluation = evaluate_whole_program(body, INTERCHANGED, ServiceSettings(data_dir=tmp_path, threads=1, cflags="-O1"),
                                        seen.append)
    assert evaluation is not None
    program = evaluation.to_dict()
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
    evaluation = evaluate_whole_program(body, INTERCHANGED, ServiceSettings(data_dir=tmp_path, threads=1, cflags="-O1"))
    assert evaluation is not None and evaluation.status == "output-changed" and evaluation.accepted is False


# Issue 58: a project sent whole, as people lay one out: the kernel in src/ apart from main, a header under
# include/ found with angle brackets, a helper source, a Makefile that builds them all.
PROJECT = {
    "include/sizes.h": "#define N 64\nvoid kernel(double a[N][N], double b[N][N]);\n",
    "src/main.c": "#include <stdio.h>\n#include <sizes.h>\nvoid fill(double a[N][N]);\n"
                  "static double a[N][N], b[N][N];\n"
                  "int main(void) { fill(a); kernel(a, b); double s = 0; for (int i = 0; i < N; i++)\n"
                  "  for (int j = 0; j < N; j++) s += b[i][j] * (i + 1); printf(\"%.6e\\n\", s); return 0; }\n",
    "src/fill.c": "#include <sizes.h>\nvoid fill(double a[N][N]) { for (int i = 0; i < N; i++)\n"
                  "  for (int j = 0; j < N; j++) a[i][j] = (i * 3 + j) % 11; }\n",
    "Makefile": "prog: src/main.c src/kernel.c src/fill.c\n\tgcc -O1 -Iinclude src/*.c -o prog\n",
}
KERNEL = ("#include <sizes.h>\nvoid kernel(double a[N][N], double b[N][N])\n{\n"
          "    for (int i = 0; i < N; i++)\n        for (int j = 0; j < N; j++)\n"
          "            b[j][i] = 2 * a[i][j];\n}\n")


def test_a_project_sent_whole_is_built_its_way_and_compared(tmp_path: Path) -> None:
    body = SuggestionsIn(source=KERNEL, path="src/kernel.c", files=PROJECT, include_dirs=["include"],
                         function="kernel", evaluate="program", build="make", run="./prog")
    evaluation = evaluate_whole_program(body, INTERCHANGED, ServiceSettings(data_dir=tmp_path, threads=1))
    assert evaluation is not None and evaluation.status == "ok" and evaluation.nests_tuned == 1, evaluation


def test_a_project_build_that_fails_says_the_compilers_first_error(tmp_path: Path) -> None:
    files = {**PROJECT, "Makefile": PROJECT["Makefile"].replace(" src/*.c", " src/main.c src/kernel.c")}
    body = SuggestionsIn(source=KERNEL, path="src/kernel.c", files=files, include_dirs=["include"],
                         function="kernel", evaluate="program", build="make", run="./prog")
    evaluation = evaluate_whole_program(body, INTERCHANGED, ServiceSettings(data_dir=tmp_path, threads=1))
    assert evaluation is not None and evaluation.status == "build-error"
    assert "undefined reference to `fill'" in evaluation.message


def test_a_project_that_cannot_build_or_run_is_refused_before_anything_is_measured(tmp_path: Path) -> None:
    """A request whose project left out a file its Makefile includes measured every candidate for minutes,
    then ended "done" with the build error inside. The original is now built and run first: one line,
    a user error (HTTP 422 for the job), in seconds."""
    settings = ServiceSettings(data_dir=tmp_path, threads=1)
    files = {**PROJECT, "Makefile": "include rules.mk\n" + PROJECT["Makefile"]}
    body = SuggestionsIn(source=KERNEL, path="src/kernel.c", files=files, include_dirs=["include"],
                         function="kernel", evaluate="program", build="make", run="./prog")
    with pytest.raises(ProgramBuildError, match="does not build: .*rules.mk.*check the 'build' command"):
        require_whole_program(body, settings)
    wrong_run = body.model_copy(update={"files": PROJECT, "run": "./prgo"})
    with pytest.raises(ProgramBuildError, match="built but did not run .*prgo.*check 'run'") as refused:
        require_whole_program(wrong_run, settings)
    assert "\n" not in str(refused.value) and isinstance(refused.value, ParameterError)
    require_whole_program(body.model_copy(update={"files": PROJECT}), settings)  # builds and runs: no error


def test_a_projects_files_stay_inside_it() -> None:
    with pytest.raises(ValidationError, match="build needs run"):
        SuggestionsIn(source=KERNEL, evaluate="program", build="make")
    for outside in ("../etc/passwd", "/etc/passwd"):
        body = SuggestionsIn(source=KERNEL, path="src/kernel.c", files={outside: "x"}, function="kernel")
        with pytest.raises(ParameterError, match="not a plain relative path"):
            extract_program(program_source(body))
    body = SuggestionsIn(source=KERNEL.replace("<sizes.h>", "<missing.h>"), path="src/kernel.c", files=PROJECT,
                         include_dirs=["include"], function="kernel")
    with pytest.raises(SourceError, match="missing.h"):
        extract_program(program_source(body))
