"""The drop-in module written for a NumPy kernel: same name and signature, backed by the tuned C compiled once
beside it, importable without perfembed; it computes what the original computes (in place and returned),
runs the original for arguments it was not built for, and says so plainly when there is no compiler."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from loopnest.frontend.python.check import check_module
from loopnest.frontend.python.dropin import load_module, python_dropin
from loopnest.frontend.python.extract import lower_python
from loopnest.harness import Limits
from loopnest.transform.recipe import Recipe, apply_recipe

SOURCE = '''
import numpy as np

def kernel(alpha: float, A: "float64[N, M]", x: "float64[M]", y: "float64[N]"):
    y[1:] += alpha * (A[1:, :] @ x)
    y[1:] = y[1:] + y[:-1]
    s = np.sum(y)
    return s, A.T @ y
'''


def _write(tmp_path: Path, recipe: Recipe) -> tuple[Path, Path]:
    source = tmp_path / "kernels.py"
    source.write_text(textwrap.dedent(SOURCE))
    kernel = lower_python(source, "kernel")
    module = tmp_path / "kernel_tuned.py"
    dropin = python_dropin(kernel, apply_recipe(kernel.scop, recipe), source, module,
                           cflags="-O2 -fopenmp", description="test")
    module.write_text(dropin.module)
    (tmp_path / dropin.c_file).write_text(dropin.c_source)
    return source, module


def _arguments(rng: np.random.Generator) -> list[Any]:
    return [1.5, rng.random((7, 5)), rng.random(5), rng.random(7)]


def test_the_module_computes_what_numpy_computes_and_falls_back_where_it_must(tmp_path: Path) -> None:
    source, path = _write(tmp_path, Recipe.from_dict({"steps": [{"op": "autoschedule", "tile": 4}]}))
    original, tuned = load_module(source, "kernels_original"), load_module(path, "kernel_tuned_a")
    rng = np.random.default_rng(1)
    want_args = _arguments(rng)
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in want_args]
    want, got = original.kernel(*want_args), tuned.kernel(*got_args)
    assert tuned._library is not None and list((tmp_path / "__perfembed_cache__").glob("*.so"))
    np.testing.assert_allclose(got_args[3], want_args[3], rtol=1e-12)  # y, written in place
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    setattr(tuned, "_library", None)  # noqa: B010 - forget the loaded C: a call that needs it loads it again
    singles = [1.5, np.ones((7, 5), dtype=np.float32), np.ones(5), np.ones(7)]  # not what it was built for
    assert tuned.kernel(*singles)[0] == original.kernel(1.5, np.ones((7, 5), np.float32), np.ones(5), np.ones(7))[0]
    assert tuned._library is None  # the original ran
    a, y1, y2 = rng.random((7, 5)), np.arange(7.0), np.arange(7.0)
    original.kernel(1.0, a, y1[:5], y1)  # x views y, which the kernel writes: NumPy's answer, not the C's
    tuned.kernel(1.0, a, y2[:5], y2)
    np.testing.assert_array_equal(y2, y1)


def test_without_a_compiler_the_module_says_so(tmp_path: Path) -> None:
    _, path = _write(tmp_path, Recipe())
    script = (f"import sys, numpy as np; sys.path.insert(0, {str(tmp_path)!r}); import kernel_tuned\n"
              "kernel_tuned.kernel(1.0, np.ones((3, 2)), np.ones(2), np.ones(3))\n")
    env = {**os.environ, "PATH": str(tmp_path / "nowhere"), "CC": "no-such-cc"}
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert ran.returncode != 0
    assert "CompilerNotFoundError" in ran.stderr and "no C compiler found" in ran.stderr


def test_the_sandboxed_check_compares_with_numpy(tmp_path: Path) -> None:
    source, _ = _write(tmp_path, Recipe())
    kernel = lower_python(source, "kernel")
    good = python_dropin(kernel, kernel.scop, source, tmp_path / "good.py", cflags="-O2", description="none")
    check = check_module(kernel, source, good, params={"N": 9, "M": 4}, inputs=None, limits=Limits.configured(),
                         reps=1)
    assert check.ok and check.max_rel_error is not None and check.max_rel_error < 1e-9
    wrong = python_dropin(kernel, kernel.scop, source, tmp_path / "wrong.py", cflags="-O2", description="none")
    assert " = 0;" in wrong.c_source  # an accumulation starts from 1 instead
    broken = type(wrong)(wrong.module, wrong.c_source.replace(" = 0;", " = 1;", 1), wrong.c_file)
    assert check_module(kernel, source, broken, params={"N": 9, "M": 4}, inputs=None, limits=Limits.configured(),
                        reps=1).status == "wrong-output"


BUSY_AFTER = '''
import time
import numpy as np

def scale(A: "float64[N]"):
    A[:] = A * 2.0

_scale = scale


def _stamped(A):  # as NumPy's BLAS leaves its threads spinning on the cores for a while after a call
    _scale(A)
    with open("busy_until", "w") as f:
        f.write(repr(time.perf_counter() + 0.15))


scale = _stamped
'''


def test_the_check_times_the_module_after_the_originals_threads_went_quiet(tmp_path: Path) -> None:
    """The tuned module ran right after NumPy's call every round, sharing the cores with the threads NumPy's
    BLAS leaves spinning: here, a module that runs while the original's stamp says its threads still spin is
    slowed by 20 ms, and the check must still see it as fast as it is."""
    source = tmp_path / "busy.py"
    source.write_text(BUSY_AFTER)
    kernel = lower_python(source, "scale")
    dropin = python_dropin(kernel, kernel.scop, source, tmp_path / "busy_tuned.py", cflags="-O2", description="none")
    slowed = dropin.module.replace("    return _run((A,))", "\n".join([
        "    import os, time",
        "    if os.path.exists('busy_until') and time.perf_counter() < float(open('busy_until').read()):",
        "        time.sleep(0.02)",
        "    return _run((A,))"]))
    assert slowed != dropin.module
    check = check_module(kernel, source, type(dropin)(slowed, dropin.c_source, dropin.c_file), params={"N": 64},
                         inputs=None, limits=Limits.configured(), reps=4)
    assert check.ok and check.tuned_s is not None and check.tuned_s < 0.01, check
