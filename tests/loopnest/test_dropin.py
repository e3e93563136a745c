"""``apply`` writes a drop-in file: only the region changes, and the program still builds and agrees."""

from __future__ import annotations

import subprocess
from pathlib import Path

from loopnest import PreprocessOptions, Recipe, apply_recipe, extract_scops, replace_regions
from tests.helpers.paths import CORPUS

PB = CORPUS / "pbstyle"
GEMM_RECIPE = Recipe.from_dict({"steps": [
    {"op": "distribute", "loop": 1}, {"op": "interchange", "order": [0, 2, 1]},
    {"op": "tile", "loops": [0, 1, 2], "sizes": [16, 8, 32]}, {"op": "parallelize", "loop": 0}]})


def build_and_run(source: Path, out: Path) -> str:
    subprocess.run(["gcc", "-O2", "-fopenmp", "-I", str(PB / "include"), "-o", str(out), str(source), "-lm"],
                   check=True, capture_output=True, text=True)
    return subprocess.run([str(out)], check=True, capture_output=True, text=True, timeout=60).stdout


def test_pragma_region_is_replaced_and_everything_else_is_kept(tmp_path: Path) -> None:
    path = PB / "mb_gemm.c"
    scops = extract_scops(path, PreprocessOptions((str(PB / "include"),))).scops
    region = scops[0].region
    new_text = replace_regions(path, {0: apply_recipe(scops[0], GEMM_RECIPE)}, scops)
    old_lines, new_lines = path.read_text().split("\n"), new_text.split("\n")
    tail = len(old_lines) - region.last_line
    assert new_lines[: region.first_line - 1] == old_lines[: region.first_line - 1]
    assert new_lines[len(new_lines) - tail:] == old_lines[region.last_line:]
    assert "#pragma omp parallel for" in new_text
    out = tmp_path / "mb_gemm.c"
    out.write_text(new_text)
    assert build_and_run(out, tmp_path / "new") == build_and_run(path, tmp_path / "old")


def test_for_nest_without_pragmas_is_replaced_in_place(tmp_path: Path) -> None:
    src = tmp_path / "k.c"
    src.write_text("#include <stdio.h>\n#define N 64\nstatic double A[N][N], B[N][N];\n"
                   "int main(void) {\n  int i, j;\n  for (i = 0; i < N; i++) for (j = 0; j < N; j++) {\n"
                   "      B[j][i] = A[i][j] + i; }  /* trailing comment */\n"
                   "  double s = 0; for (i = 0; i < N; i++) s += B[i][3];\n  printf(\"%f\\n\", s);\n"
                   "  return 0;\n}\n")
    scops = extract_scops(src).scops
    assert len(scops) == 2
    recipe = Recipe.from_dict({"steps": [{"op": "interchange", "order": [1, 0]}]})
    text = replace_regions(src, {0: apply_recipe(scops[0], recipe)}, scops)
    assert text.startswith("#include <stdio.h>\n#define N 64\n")
    assert "/* trailing comment */\n  double s = 0; for (i = 0;" in text
    out = tmp_path / "out.c"
    out.write_text(text)
    assert build_and_run(out, tmp_path / "a") == build_and_run(src, tmp_path / "b")
