"""NumPy kernels on the command line (``kernel.py --function F``): ``--inputs example.npz`` and
``--write-best kernel_tuned.py``, which writes a drop-in module backed by the tuned C, kept only when, in
the sandbox, it computes what the original NumPy function computes on the same inputs."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from loopnest.config import Settings
from loopnest.errors import ParameterError
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.frontend.python.check import check_module
from loopnest.frontend.python.dropin import python_dropin
from loopnest.frontend.python.extract import lower_python
from loopnest.harness import Limits
from loopnest.transform.recipe import Recipe, apply_recipe
from loopnest.transform.recipe_text import recipe_text
from service.commands.options import err_console
from service.program_eval import ProgramOutcome, best_recipe

InputsOpt = typer.Option(None, "--inputs", exists=True, dir_okay=False, help="A Python kernel's example inputs "
                         "(.npz, one entry per parameter): its shapes, dtypes and sizes.")


def is_python(file: Path) -> bool:
    return file.suffix == ".py"


def with_inputs(options: PreprocessOptions, inputs: Path | None) -> PreprocessOptions:
    """``options`` carrying a Python kernel's example inputs (:mod:`loopnest.frontend.python`)."""
    return options if inputs is None else dataclasses.replace(options, inputs=str(inputs))


def write_python_best(file: Path, function: str | None, inputs: Path | None, params: dict[str, int],
                      result: dict[str, Any], out: Path, settings: Settings) -> tuple[ProgramOutcome, str | None]:
    """Write ``out`` (and its C beside it) for the kernel's best verified recipe (the nest as it is where none
    held up: compiled, it may still beat NumPy), when the module passes :func:`check_module`."""
    if function is None:
        raise ParameterError(f"{file}: --write-best for a Python file needs --function NAME")
    if out.suffix != ".py" or out.resolve() == file.resolve():
        raise ParameterError(f"--write-best {out}: name a new .py file (the original is never overwritten)")
    kernel = lower_python(file, function, inputs=inputs)
    nest = next((n for n in result["nests"] if n.get("index") == 0), None)
    steps = best_recipe(nest) if nest is not None else None
    recipe = Recipe.from_dict(steps) if steps is not None else Recipe()
    description = recipe_text(recipe, [lp.iterator for lp in kernel.scop.loops]) if steps else "no recipe held up"
    tuned = apply_recipe(kernel.scop, recipe)
    dropin = python_dropin(kernel, tuned, file, out, cflags=settings.cflags, description=description)
    check = check_module(kernel, file, dropin, params=params, inputs=inputs, limits=Limits.from_settings(settings),
                         threads=settings.threads or 1)
    if not check.ok:
        return ProgramOutcome("not-tuned", f"the module does not compute what {function} computes ({check.status}: "
                                           f"{check.message}); nothing written"), None
    speedup = check.speedup
    figure = f"{speedup:.2f}x over NumPy" if speedup else "timing unavailable"
    if speedup is not None and speedup < 1.0:
        return ProgramOutcome("not-tuned", f"the module computes the same but is slower than NumPy ({figure}); "
                                           "nothing written"), None
    out.write_text(dropin.module)
    out.with_name(dropin.c_file).write_text(dropin.c_source)
    err_console.print(f"wrote {escape(str(out))} and {escape(dropin.c_file)}: {function} {description}; "
                      f"checked against NumPy in the sandbox ({check.message}), {figure} (one call, best of 5)")
    return ProgramOutcome("tuned", f"{function}: same results as NumPy, {figure}"), str(out)
