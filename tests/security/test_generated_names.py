"""Issue 59, item 18: names the user's nest declares never clash with what the generated driver declares.

Reproduction (before the fix): an array named ``argv`` in the user's nest was declared by the measurement
driver as a static beside ``int main(int argc, char **argv)``, whose own ``argv`` then shadowed it where the
driver dumped the outputs; an array named ``y1`` or ``time`` clashed with ``<math.h>``'s and ``<time.h>``'s
functions, and one named ``main`` with the driver's entry point: the evaluation job failed with a 500
(generated code that does not compile). Now every name of the nest is prefixed in the driver.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loopnest import Harness, Recipe
from loopnest.codegen import generate_c
from loopnest.harness.driver import synthesize_driver
from loopnest.harness.driver_names import rename
from tests.helpers.scops import nest

# Names the driver's own code or its headers declare: main's parameters, the entry point, <math.h>'s
# Bessel functions and <time.h>'s time(), <stdio.h>'s FILE functions, and the driver's own prefix.
CLASHING = """
void k(int n, int argc, double argv[n], double y1[n], double time[n], double fopen[n], double main[n],
       double perfembed_state[n]) {
  for (int i = 0; i < n; i++) {
    argv[i] = argv[i] * 2.0 + y1[i];
    time[i] = fopen[i] + main[i] * perfembed_state[i] + argc;
  }
}
"""


@pytest.mark.parametrize("form", ["global", "parameters"])
def test_a_nest_whose_names_the_driver_uses_is_measured_and_verified(tmp_path: Path, form: str) -> None:
    scop = nest(tmp_path, CLASHING)
    with Harness(scop, {"n": 64, "argc": 3}, reps=1, threads=1, form=form) as h:
        baseline = h.baseline()
        assert baseline.ok, baseline.to_dict()
        result = h.evaluate(Recipe.from_dict({"steps": [{"op": "unroll", "loop": 0, "factor": 2}]}))
        assert result.variant.ok and result.verified, result.to_dict()


def test_the_driver_declares_no_name_of_the_nest(tmp_path: Path) -> None:
    scop = nest(tmp_path, CLASHING)
    with Harness(scop, {"n": 8, "argc": 1}, reps=1, threads=1) as h:
        driver = synthesize_driver(scop, generate_c(scop), h.params, h.layouts)
    assert "int main(int perfembed_argc, char **perfembed_argv)" in driver
    for name in ("argv", "y1", "time", "fopen", "main", "perfembed_state", "n", "argc"):
        assert f"static double {name}[" not in driver and f"static int {name};" not in driver
        assert f" perfembed_v_{name}" in driver


def test_renaming_skips_literals_members_and_pragma_words() -> None:
    text = ('#pragma omp parallel for private(i) reduction(+: s)\n'
            'for (i = 0; i < n; i++) { s += a.n + p->n + n; printf("n=%d", n); x = 1e5 + n2; }')
    out = rename(text, {"i", "s", "n", "parallel", "omp", "a"})
    assert out.startswith("#pragma omp parallel for private(perfembed_v_i) reduction(+: perfembed_v_s)\n")
    assert "perfembed_v_s += perfembed_v_a.n + p->n + perfembed_v_n;" in out
    assert 'printf("n=%d", perfembed_v_n)' in out and "1e5 + n2" in out
