"""Issue 58: a user's project as people lay it out (headers under include/ found with angle brackets through
-I, a helper .c, dataset macros, a Makefile, a compilation database, the kernel in a file apart from main),
read as their compiler reads it, built and run their way, with an outcome that never passes the original off
as tuned. Real preprocessing, builds and runs throughout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopnest.config import get_settings
from loopnest.frontend.compile_flags import command_for, parse_compile_flags, read_compile_commands
from loopnest.frontend.extract import extract_scops
from loopnest.harness.program import ProgramComparison, ProgramSpec, compare_programs, program_error
from loopnest.harness.project import Project
from loopnest.transform.recipe import Recipe
from service.core.dropin import dropin_header, dropin_source
from service.core.program import ProgramEvaluation, applied_recipes, evaluate_program, program_outcome, tuned_source
from service.core.program_spec import WholeProgram, program_spec

PARAMS_H = """#ifndef PARAMS_H
#define PARAMS_H
#ifdef SMALL_DATASET
#define N 48
#else
#define N 160
#endif
#endif
"""
UTIL_H = """#ifndef UTIL_H
#define UTIL_H
double *alloc_matrix(int n);
void print_checksum(int n, const double *a);
#endif
"""
UTIL_C = """#include <stdio.h>
#include <stdlib.h>
#include <util.h>
double *alloc_matrix(int n) { double *p = malloc(sizeof(double) * n * n); if (!p) abort(); return p; }
void print_checksum(int n, const double *a) { double s = 0; for (int i = 0; i < n * n; i++) s += a[i];
  printf("%.6e\\n", s); }
"""
KERNEL_C = """#include <params.h>
#include <util.h>

void kernel_mm(double C[N][N], double A[N][N], double B[N][N])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < N; k++)
                s += A[i][k] * B[k][j];
            C[i][j] = s;
        }
}
"""
MAIN_C = """#include <params.h>
#include <util.h>
void kernel_mm(double C[N][N], double A[N][N], double B[N][N]);
int main(void)
{
    double (*A)[N] = (double (*)[N])alloc_matrix(N), (*B)[N] = (double (*)[N])alloc_matrix(N);
    double (*C)[N] = (double (*)[N])alloc_matrix(N);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) { A[i][j] = (i * j % 7) / 7.0; B[i][j] = ((i + 2 * j) % 5) / 5.0; }
    kernel_mm(C, A, B);
    print_checksum(N, &C[0][0]);
    return 0;
}
"""
MAKEFILE = """CC = gcc
CFLAGS = -O2 -fopenmp
DATASET = -DSMALL_DATASET
prog: src/main.c src/kernel.c src/util.c
\t$(CC) $(CFLAGS) -I include $(DATASET) src/main.c src/kernel.c src/util.c -o prog -lm
"""
TILE = Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A two-source project (kernel apart from main, a helper .c), its headers included with angle brackets."""
    root = tmp_path / "proj"
    for rel, text in {"include/params.h": PARAMS_H, "include/util.h": UTIL_H, "src/util.c": UTIL_C,
                      "src/kernel.c": KERNEL_C, "src/main.c": MAIN_C, "Makefile": MAKEFILE}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    build = root / "build"
    build.mkdir()
    # What CMake's CMAKE_EXPORT_COMPILE_COMMANDS writes: absolute paths, an output under the build dir.
    (build / "compile_commands.json").write_text(json.dumps([
        {"directory": str(build), "file": str(root / "src" / name),
         "command": f"/usr/bin/gcc -DSMALL_DATASET -I{root}/include -O2 -fopenmp -o CMakeFiles/p.dir/{name}.o "
                    f"-c {root}/src/{name}"} for name in ("main.c", "kernel.c", "util.c")]))
    return root


def perfembed(*args: str, cwd: Path, data: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PERFEMBED_DATA_DIR": str(data), "COLUMNS": "300"}
    env.pop("PERFEMBED_DATABASE_URL", None)
    return subprocess.run([sys.executable, "-m", "service.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False, env=env)


def _tuned(project: Path, recipe: Recipe = TILE) -> str:
    kernel = project / "src" / "kernel.c"
    extraction = extract_scops(kernel, parse_compile_flags(["-I", str(project / "include"),
                                                            "-DSMALL_DATASET"]).preprocess_options())
    return dropin_source(kernel, extraction.scops, {0: recipe})


def test_angle_includes_resolve_through_I_and_through_a_compilation_database(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    by_flags = perfembed("analyze", "src/kernel.c", "-I", "include", "-D", "SMALL_DATASET", "--json", cwd=project,
                         data=data)
    assert by_flags.returncode == 0, by_flags.stderr
    (nest,) = json.loads(by_flags.stdout)["nests"]
    assert [loop["condition"] for loop in nest["loops"]] == ["i < 48", "j < 48", "k < 48"]  # -D SMALL_DATASET held
    by_database = perfembed("analyze", "src/kernel.c", "-p", "build", "--json", cwd=project, data=data)
    assert by_database.returncode == 0, by_database.stderr
    assert json.loads(by_database.stdout)["nests"][0]["loops"] == nest["loops"]
    # suggest reads the user's files in place too (it refused <util.h> as "not one of the program's own
    # headers" of a "program.c" the user never named).
    suggested = perfembed("suggest", "src/kernel.c", "-I", "include", "--json", cwd=project, data=data)
    assert suggested.returncode == 0, suggested.stderr
    assert "program.c" not in suggested.stdout + suggested.stderr


def test_a_missing_header_is_the_compilers_line(project: Path, tmp_path: Path) -> None:
    missing = perfembed("suggest", "src/kernel.c", cwd=project, data=tmp_path / "data")
    assert missing.returncode == 2
    assert "src/kernel.c:1" in missing.stderr and "params.h" in missing.stderr and "server" not in missing.stderr
    assert "Traceback" not in missing.stderr


def test_compile_commands_give_each_units_flags(project: Path) -> None:
    entry = command_for(project / "build", project / "src" / "kernel.c")
    assert entry.flags.include_dirs == (f"{project}/include",) and entry.flags.defines == (("SMALL_DATASET", None),)
    assert "-O2" in entry.flags.other and "-fopenmp" in entry.flags.other
    assert len(read_compile_commands(project / "build")) == 3


def test_a_two_file_project_is_built_and_compared_the_users_way(project: Path) -> None:
    original = (project / "src" / "kernel.c").read_text()
    spec = ProgramSpec(project=Project.locate(project / "src" / "kernel.c"), build="make", run="./prog")
    same = compare_programs(original, _tuned(project), spec)
    assert same.status == "ok" and same.speedup is not None and same.speedup.pairs >= 3, same
    assert same.message == ""  # built with -fopenmp: its parallel loop ran on the threads said
    # Built from the compilation database alone: every unit with its flags, linked by perfembed.
    commands = tuple(read_compile_commands(project / "build"))
    synthesized = ProgramSpec(project=Project.locate(project / "src" / "kernel.c"), compile_commands=commands)
    assert compare_programs(original, _tuned(project), synthesized).status == "ok"
    wrong = compare_programs(original, original.replace("* B[k][j]", "* B[k][j] * 1.5"), spec)
    assert wrong.status == "output-changed"


def test_a_build_without_openmp_is_said_on_the_figure(project: Path) -> None:
    """A new user's Makefile had no -fopenmp: the tuned program's parallel loops ran on one thread while the
    figure said 2 threads, and nothing said so."""
    (project / "Makefile").write_text(MAKEFILE.replace("-O2 -fopenmp", "-O2"))
    spec = ProgramSpec(project=Project.locate(project / "src" / "kernel.c"), build="make", run="./prog", threads=2)
    compared = compare_programs((project / "src" / "kernel.c").read_text(), _tuned(project), spec)
    assert compared.status == "ok" and compared.message.startswith("built without OpenMP"), compared
    assert "add -fopenmp" in compared.message


def test_a_build_that_cannot_link_is_one_line_naming_the_missing_function(project: Path) -> None:
    (project / "Makefile").write_text(MAKEFILE.replace(" src/util.c -o", " -o"))
    spec = ProgramSpec(project=Project.locate(project / "src" / "kernel.c"), build="make", run="./prog")
    failed = program_error((project / "src" / "kernel.c").read_text(), spec)
    assert failed is not None and failed.status == "build-error"
    assert "undefined reference" in failed.message and "\n" not in failed.message
    assert "perfembed-program-" not in failed.message  # the copy's path is not the user's


def test_suggest_says_a_failed_build_in_one_line_with_exit_2_before_measuring(project: Path, tmp_path: Path) -> None:
    (project / "Makefile").write_text(MAKEFILE.replace(" src/util.c -o", " -o"))
    out = tmp_path / "tuned.c"
    proc = perfembed("suggest", "src/kernel.c", "-I", "include", "--evaluate", "--build", "make", "--run", "./prog",
                     "--write-best", str(out), cwd=project, data=tmp_path / "data")
    assert proc.returncode == 2 and not out.exists()
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "undefined reference to `alloc_matrix'" in lines[0] and "--build" in lines[0]


def test_a_run_command_that_fails_is_one_line_with_exit_2_before_measuring(project: Path, tmp_path: Path) -> None:
    """A mistyped --run was found only after every candidate was measured (103 s), then exit 0. It is now
    run once with the build check, before anything is measured; and --write-best alone asks for the
    measurements (without --evaluate it said "no nest held up" when none had been measured)."""
    out = tmp_path / "tuned.c"
    proc = perfembed("suggest", "src/kernel.c", "-I", "include", "--build", "make", "--run", "./prgo",
                     "--write-best", str(out), cwd=project, data=tmp_path / "data")
    assert proc.returncode == 2 and not out.exists()
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "built but did not run" in lines[0] and "--run" in lines[0], proc.stderr
    assert "prgo" in lines[0] and "Traceback" not in proc.stderr


def test_write_best_without_a_whole_program_is_refused_up_front(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "tuned.c"
    proc = perfembed("suggest", "src/kernel.c", "-I", "include", "--evaluate", "--write-best", str(out),
                     cwd=project, data=tmp_path / "data")
    assert proc.returncode == 2 and not out.exists()
    assert "--no-program-check" in proc.stderr and "--build" in proc.stderr


def _answer(accepted: bool, program: dict[str, object] | None) -> dict[str, object]:
    best = {"recipe": TILE.to_dict(), "speedup": 2.0, "text": "2.00x [1.9, 2.1]"}
    answer: dict[str, object] = {"nests": [{"index": 0, "accepted": accepted, "best": best}]}
    if program is not None:
        answer["program"] = program
    return answer


def _refused(status: str, message: str) -> ProgramEvaluation:
    return ProgramEvaluation(ProgramComparison(status, message=message), accepted=False, nests_tuned=1)


def test_the_original_is_never_handed_back_as_tuned(project: Path) -> None:
    kernel = project / "src" / "kernel.c"
    extraction = extract_scops(kernel, parse_compile_flags(["-I", str(project / "include")]).preprocess_options())
    refused = _refused("output-changed", "standard output differs at line 1")
    assert tuned_source(kernel, extraction.scops, _answer(True, refused.to_dict())) == ("", 0)
    outcome = program_outcome(1, refused, unchecked_ok=False)
    assert outcome.status == "not-tuned" and not outcome.writes and "output-changed" in outcome.reason
    assert not applied_recipes(_answer(False, None)["nests"])  # type: ignore[arg-type]
    nothing = program_outcome(0, None, unchecked_ok=True)
    assert nothing.status == "not-tuned" and not nothing.writes
    broken = program_outcome(1, _refused("build-error", "original: ld: cannot find -lfoo"), unchecked_ok=False)
    assert broken.status == "build-failed" and broken.exit_code == 2 and "-lfoo" in broken.reason


def test_a_dropin_file_says_its_recipe_whether_it_was_checked_and_the_flags_it_needs(project: Path) -> None:
    kernel = project / "src" / "kernel.c"
    extraction = extract_scops(kernel, parse_compile_flags(["-I", str(project / "include")]).preprocess_options())
    parallel = Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]})
    answer = _answer(True, None)
    answer["nests"][0]["best"]["recipe"] = parallel.to_dict()  # type: ignore[index]
    applied = applied_recipes(answer["nests"])  # type: ignore[arg-type]
    text = dropin_source(kernel, extraction.scops, {0: parallel})
    assert program_outcome(len(applied), None, unchecked_ok=True).status == "nest-verified"
    header = dropin_header(extraction.scops, applied, text, checked=None)
    assert "NOT checked as a whole program" in header and "-fopenmp" in header
    assert "lines 6-12 (kernel_mm): parallelize" in header and "2.00x" in header


def test_several_nests_are_judged_together_and_each_ones_share_is_measured(project: Path) -> None:
    """Every accepted nest is applied at once in the whole program; with two, each one's share is said too."""
    main = project / "src" / "main.c"
    main.write_text(KERNEL_C + MAIN_C.replace("void kernel_mm(double C[N][N], double A[N][N], double B[N][N]);\n", ""))
    flags = parse_compile_flags(["-I", str(project / "include"), "-DSMALL_DATASET"])
    extraction = extract_scops(main, flags.preprocess_options())
    assert len(extraction.scops) == 2  # the product and main's initialization
    answer = _answer(True, None)
    first = answer["nests"][0]  # type: ignore[index]
    answer["nests"] = [first, {**first, "index": 1}]
    for index, nest in enumerate(answer["nests"]):  # type: ignore[arg-type]
        nest["name"] = f"main.c#{index}"
    (project / "Makefile").write_text(MAKEFILE.replace(" src/kernel.c", ""))
    spec = ProgramSpec(project=Project.locate(main), build="make", run="./prog")
    # Any figure is kept here (margin 0): the shares are measured only for a program that held up.
    settings = get_settings().model_copy(update={"min_speedup": 0.0})
    applied = applied_recipes(answer["nests"])  # type: ignore[arg-type]
    evaluation = evaluate_program(main, extraction.scops, applied, spec, settings)
    assert evaluation is not None
    program = evaluation.to_dict()
    assert program["nests_tuned"] == 2 and program["accepted"], program
    assert [alone["name"] for alone in program["per_nest"]] == ["main.c#0", "main.c#1"]
    assert all(alone["status"] == "ok" and alone["speedup"]["pairs"] >= 3 for alone in program["per_nest"])


def test_whole_program_options_are_refused_with_server_not_ignored(project: Path, tmp_path: Path) -> None:
    proc = perfembed("suggest", "src/kernel.c", "-I", "include", "--server", "http://127.0.0.1:9", "--build", "make",
                     "--run", "./prog", cwd=project, data=tmp_path / "data")
    assert proc.returncode == 2 and "--build, --run: not with --server" in proc.stderr


def test_a_one_file_programs_build_takes_the_users_flags_once_in_their_order(tmp_path: Path) -> None:
    """An -iquote directory is for quoted includes only, as cc has it: the whole-program build had also passed
    every directory as -I, so <only_quoted.h> was found where the user's compiler would not find it."""
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "only_quoted.h").write_text("#define N 4\n")
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include "only_quoted.h"\nint main(void) { printf("%d\\n", N); return 0; }\n')
    flags = parse_compile_flags(["-iquote", str(tmp_path / "q")])
    spec = program_spec(main, flags, get_settings(), WholeProgram())
    assert program_error(main.read_text(), spec, name="main.c") is None
    main.write_text(main.read_text().replace('"only_quoted.h"', "<only_quoted.h>"))
    failed = program_error(main.read_text(), spec, name="main.c")
    assert failed is not None and "only_quoted.h" in failed.message
