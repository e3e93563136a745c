"""``suggest kernel.py --function F --write-best kernel_tuned.py``: a drop-in module backed by the tuned C,
kept only when, in the sandbox, it computes what the original NumPy function computes on the same inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopnest.config import Settings
from loopnest.errors import ParameterError
from loopnest.frontend.python.check import check_module
from loopnest.frontend.python.dropin import python_dropin
from loopnest.frontend.python.extract import lower_python
from loopnest.harness import Limits
from loopnest.transform.recipe import Recipe, apply_recipe
from loopnest.transform.recipe_text import recipe_text
from service.core.local import SourceFile
from service.core.program import ProgramOutcome, applied_recipes


@dataclass(frozen=True)
class WrittenFile:
    """What ``--write-best`` did: the path written and the line that says so, or (``path`` None) why
    nothing was written ("" when the outcome says it)."""

    path: str | None
    message: str


def write_python_best(src: SourceFile, nests: Sequence[Mapping[str, Any]], out: Path,
                      settings: Settings) -> tuple[ProgramOutcome, WrittenFile]:
    """Write ``out`` (and its C beside it) for the kernel's best verified recipe among ``nests`` (the answer's,
    in their JSON form; the nest as it is where none held up: compiled, it may still beat NumPy), when the
    module passes :func:`check_module`."""
    function, file = src.function, src.path
    if function is None:
        raise ParameterError(f"{file}: --write-best for a Python file needs --function NAME")
    if out.suffix != ".py" or out.resolve() == file.resolve():
        raise ParameterError(f"--write-best {out}: name a new .py file (the original is never overwritten)")
    kernel = lower_python(file, function, inputs=src.inputs)
    applied = applied_recipes([n for n in nests if n.get("index") == 0]).get(0)
    recipe = applied.recipe if applied is not None else Recipe()
    names = [lp.iterator for lp in kernel.scop.loops]
    description = recipe_text(recipe, names) if applied is not None else "no recipe held up"
    dropin = python_dropin(kernel, apply_recipe(kernel.scop, recipe), file, out, cflags=settings.cflags,
                           description=description)
    check = check_module(kernel, file, dropin, params=dict(src.params), inputs=src.inputs,
                         limits=Limits.from_settings(settings), threads=settings.threads or 1)
    if not check.ok:
        return ProgramOutcome("not-tuned", f"the module does not compute what {function} computes ({check.status}: "
                                           f"{check.message}); nothing written"), WrittenFile(None, "")
    speedup = check.speedup
    figure = f"{speedup:.2f}x over NumPy" if speedup else "timing unavailable"
    if speedup is not None and speedup < 1.0:
        return ProgramOutcome("not-tuned", f"the module computes the same but is slower than NumPy ({figure}); "
                                           "nothing written"), WrittenFile(None, "")
    out.write_text(dropin.module)
    out.with_name(dropin.c_file).write_text(dropin.c_source)
    message = (f"wrote {out} and {dropin.c_file}: {function} {description}; checked against NumPy in the sandbox "
               f"({check.message}), {figure} (one call, best of 5)")
    return ProgramOutcome("tuned", f"{function}: same results as NumPy, {figure}"), WrittenFile(str(out), message)
