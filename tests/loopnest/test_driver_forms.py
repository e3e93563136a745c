"""The measurement driver in the user's form, and the independence generated code states.

``experiments/driver_forms.py`` over the 432 corpus nests: with the driver's static arrays (what
the seed was measured with) the best stored recipes reached 2.68x (geometric mean); in the user's form, the
arrays passed to a function as its source declares them, the same recipes reached 1.92x, and
jacobi2d_9pt_box_f32's best recipe ran slower than the original (0.76x). In the user's function gcc must
assume the arrays may alias, and left the transformed innermost loops scalar; the dependence analysis had
already assumed they do not, so the generated code now says so (``#pragma GCC ivdep``).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from loopnest import Harness, Recipe, apply_recipe, extract_scops, generate_c, verify_outputs
from loopnest.codegen.overlap_guard import guarded_c
from loopnest.harness.driver import synthesize_driver
from loopnest.harness.sandbox import RunResult, run_limited
from loopnest.polyhedral import ScheduleSpace, compute_dependences
from tests.helpers.dropin import reports_its_choice
from tests.helpers.kernels import JACOBI_1D
from tests.helpers.scops import nest

ROOT = Path(__file__).resolve().parents[2]
GEMM_TN = ROOT / "corpus" / "generated" / "gemm_orders" / "gemm_ijk_tn_alpha_f32.c"
GEMM = ROOT / "corpus" / "kernels" / "blas3" / "gemm_ijk.c"
# A global array beside parameter arrays: only the parameters travel as parameters.
MIXED = """
static double bias[64];
void f(int n, int m, double s, double A[n][m], double B[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      B[i][j] = s * A[i][j] + bias[j];
}
"""
AUTOSCHEDULE_JAM = {"steps": [{"op": "autoschedule"}, {"op": "unroll_jam", "loop": 0, "factor": 2},
                              {"op": "unroll_jam", "loop": 1, "factor": 4}]}


def _body(source: str, w: int) -> str:
    """Kernel ``w``'s function, in the nest's own names (the driver prefixes them: driver_names)."""
    return source[source.index(f"perfembed_body_{w}("):].split("\nstatic", 1)[0].replace("perfembed_v_", "")


def _kernels_that_ran_and_agree(h: Harness, source: str, kernels: int) -> tuple[RunResult, list[int]]:
    """Compile the driver ``source``, run it twice over at the harness's sizes, check that every kernel's
    outputs match the first's, and return the run and the kernels that printed a time."""
    src, exe = h.workdir / "driver.c", h.workdir / "driver"
    src.write_text(source)
    assert run_limited([h.cc, *shlex.split(h.cflags), "-o", str(exe), str(src), "-lm"], cwd=h.workdir,
                       limits=h.limits).ok
    outs = [h.workdir / f"out.{k}" for k in range(kernels)]
    sizes = [str(h.params[p]) for p in h.scop.params]
    ran = run_limited([str(exe), *sizes, "2", *map(str, outs)], cwd=h.workdir, limits=h.limits)
    assert ran.ok, ran.describe()
    assert all(verify_outputs(outs[0], out, h.layouts).verified for out in outs[1:])
    return ran, sorted({int(line.split()[0]) for line in ran.stdout.splitlines()})


def test_the_parameters_form_passes_what_the_source_declares_as_parameters(tmp_path: Path) -> None:
    scop = nest(tmp_path, MIXED)
    with Harness(scop, {"n": 40, "m": 64}, reps=1, threads=1) as h:
        kernels = [generate_c(scop)] * 3
        source = synthesize_driver(scop, kernels, h.params, h.layouts, forms=["global", "parameters", "restrict"])
        signature = _body(source, 1).split("{", 1)[0]
        assert "double (*A)[m]" in signature and "double (*B)[m]" in signature and "double s" in signature
        assert "bias" not in signature  # a global of the user's file stays a global
        assert "double (*restrict A)[m]" in _body(source, 2)
        assert _kernels_that_ran_and_agree(h, source, 3)[1] == [0, 1, 2]


def test_a_form_per_kernel_is_checked() -> None:
    with pytest.raises(ValueError, match="one of"):
        synthesize_driver(None, ["", ""], {}, [], forms=["global"])  # type: ignore[arg-type]


def _ivdep_levels(scop: object) -> set[int]:
    return {lvl for lvl, marks in scop.schedule.marks.items() if "ivdep" in marks}  # type: ignore[attr-defined]


def test_ivdep_marks_exactly_the_loops_that_carry_no_dependence(tmp_path: Path) -> None:
    gemm = nest(tmp_path, GEMM_TN.read_text())
    assert _ivdep_levels(apply_recipe(gemm, Recipe.from_dict({"steps": []}))) == set()  # the original as written
    swapped = apply_recipe(gemm, Recipe.from_dict({"steps": [{"op": "interchange", "order": [0, 2, 1]}]}))
    # i and j carry nothing; k (now the middle loop) carries the reduction into C[i][j].
    assert _ivdep_levels(swapped) == {0, 2}
    space = ScheduleSpace(swapped, compute_dependences(gemm))
    assert all(not space.carried_deps(lvl) for lvl in _ivdep_levels(swapped))
    assert "#pragma GCC ivdep" in generate_c(swapped)
    stencil = nest(tmp_path, JACOBI_1D)
    unrolled = apply_recipe(stencil, Recipe.from_dict({"steps": [{"op": "unroll", "loop": 1, "factor": 2}]}))
    assert _ivdep_levels(unrolled) == set()  # A[i-1] and A[i+1]: both loops carry a dependence
    parallel = apply_recipe(gemm, Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]}))
    assert 0 not in _ivdep_levels(parallel)  # already an OpenMP loop


def test_a_transformed_gemm_vectorizes_in_the_users_form(tmp_path: Path) -> None:
    """The reproduction: gemm_ijk_tn_alpha_f32's best stored recipe, compiled as the user has it. Without the
    pragma gcc reported its jammed j loop "not vectorized: complicated access pattern" (a load of A it could
    not hoist past the stores to C, which might alias it) and the variant ran 16x slower than in the driver."""
    scop = nest(tmp_path, GEMM_TN.read_text())
    with Harness(scop, {"ni": 96, "nj": 96, "nk": 160}, reps=1, threads=2) as h:
        variant = apply_recipe(scop, Recipe.from_dict(AUTOSCHEDULE_JAM), h.dependences)
        source = synthesize_driver(scop, generate_c(variant), h.params, h.layouts, forms="parameters")
        src = h.workdir / "variant.c"
        src.write_text(source)
        report = subprocess.run([h.cc, *shlex.split(h.cflags), "-fopt-info-vec-optimized", "-c", "-o",
                                 str(h.workdir / "variant.o"), str(src)], capture_output=True, text=True, check=True)
    first = source[: source.index("perfembed_body_0(")].count("\n") + 1
    last = first + _body(source, 0).count("\n")
    vectorized = {int(m) for m in re.findall(r"variant\.c:(\d+):\d+: optimized: loop vectorized", report.stderr)}
    assert any(first <= line <= last for line in vectorized), report.stderr


def test_a_loop_whose_iterations_reuse_a_pack_buffer_is_not_marked() -> None:
    """Review finding: a pack buffer is one array that every iteration of the loops around its copy
    overwrites; ``parallelize`` makes it private, but ``ivdep`` would tell gcc those iterations are
    independent. gemm in ikj order, tiled; with packing, A's block copied at the k tile loop and B's at the
    j tile loop (experiments/pack.py)."""
    gemm = extract_scops(GEMM).scops[0]
    head = [{"op": "interchange", "order": [0, 2, 1]}, {"op": "tile", "loops": [0, 1, 2], "sizes": [32, 64, 256]}]
    packs = [{"op": "pack", "array": "A", "loop": 1}, {"op": "pack", "array": "B", "loop": 2}]
    tiled = apply_recipe(gemm, Recipe.from_dict({"steps": head}))
    packed = apply_recipe(gemm, Recipe.from_dict({"steps": head + packs}))
    assert 2 in _ivdep_levels(tiled)  # the j tile loop: nothing carried
    assert not {0, 1, 2} & _ivdep_levels(packed)
    assert 3 in _ivdep_levels(packed)  # the i point loop, inside every copy


HALO = """
void smooth(int n, int m, float A[n + 2][m + 2], float B[n + 2][2 * m + 4], float C[n][n * m]) {
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= m; j++)
      B[i][j] = 0.25f * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]) + C[i - 1][j];
}
"""


def test_an_extent_computed_from_the_sizes_stays_a_run_time_value(tmp_path: Path) -> None:
    """The user's ``float A[n + 2][m + 2]`` has a row stride known only at run time; the driver used to pass
    the measured value (``(*A)[66]``), a stride gcc could fold. An affine extent is now printed from isl;
    one that is not affine (``n * m``) keeps its value. Both forms compute the same outputs."""
    scop = nest(tmp_path, HALO)
    with Harness(scop, {"n": 40, "m": 64}, reps=1, threads=1) as h:
        kernels = [generate_c(scop)] * 2
        source = synthesize_driver(scop, kernels, h.params, h.layouts, forms=["global", "parameters"])
        signature = _body(source, 1).split("{", 1)[0]
        assert "float (*A)[(m + 2)]" in signature and "float (*B)[((2 * m) + 4)]" in signature
        assert "float (*C)[2560]" in signature
        src, exe = h.workdir / "forms.c", h.workdir / "forms"
        src.write_text(source)
        assert run_limited([h.cc, *shlex.split(h.cflags), "-o", str(exe), str(src), "-lm"], cwd=h.workdir,
                           limits=h.limits).ok
        outs = [h.workdir / f"out.{k}" for k in range(2)]
        ran = run_limited([str(exe), *(str(h.params[p]) for p in scop.params), "2", *map(str, outs)],
                          cwd=h.workdir, limits=h.limits)
        assert ran.ok, ran.stderr
        assert outs[0].read_bytes() == outs[1].read_bytes()


ROWS = """
void f(int n, int m, double **a, double **b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      a[j][i] = 2.0 * b[j][i] + a[j][i];
}
"""
# The same with the written table a variable of the file.
GLOBAL_ROWS = "double **a;\n" + ROWS.replace("double **a, ", "")


@pytest.mark.parametrize("source", [ROWS, GLOBAL_ROWS], ids=["parameter", "global"])
@pytest.mark.parametrize("form", ["parameters", "global"])
def test_an_array_of_pointers_is_a_table_of_rows(tmp_path: Path, source: str, form: str) -> None:
    """Found 2026-11-27: the driver declared ``double **a`` as one block of rows of a fixed length
    (``double (*a)[40]``), where the user's function loads each row's pointer; and the drop-in code's
    check, which the paired comparison times, saw that block's table span over its own rows and ran the
    original's schedule (review of eb11ade). Now every array of pointers is a table of row pointers
    into a block the driver initializes and dumps, and the check runs the tuned code."""
    scop = nest(tmp_path, source)
    swapped = apply_recipe(scop, Recipe.from_dict({"steps": [{"op": "interchange", "order": [1, 0]}]}))
    with Harness(scop, {"n": 30, "m": 40}, reps=1, threads=1) as h:
        kernels = [generate_c(scop), reports_its_choice(guarded_c(scop, swapped))]
        driver = synthesize_driver(scop, kernels, h.params, h.layouts, forms=form)
        assert "static double *perfembed_v_a[40];" in driver and "static double perfembed_rows_of_a[40][30];" in driver
        if form == "parameters" and source == ROWS:
            assert "double **a" in _body(driver, 0) and "double **b" in _body(driver, 0)
        ran, kernels_ran = _kernels_that_ran_and_agree(h, driver, 2)
        assert kernels_ran == [0, 1] and set(ran.stderr.split()) == {"tuned=1"}
