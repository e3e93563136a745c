"""``Notebook.tune(kernel, *example_args)``: a NumPy function tuned from a notebook, handed back callable.

It is ``perfembed suggest kernel.py --function NAME --inputs example.npz --write-best kernel_tuned.py``, run
on the function's source with ``import numpy as np`` above it (never its whole file, whose other code the
sandboxed check would run: a notebook saved as a script, a module that tunes at import), with the example
arguments as the inputs: transfer from the database's nearest
nests, every candidate compiled, verified and timed in the sandbox, and the drop-in module written only
when, in the sandbox, it computes what the original computes and is not slower. The module is then
imported and its function handed back.

What comes back says what happened (:class:`TunedFunction`): ``tuned`` is False, with the reason, when no
module held up (``tune`` warns), and then calling it runs the original function. The module, its C and its
compiled library stay in ``out`` (default: a folder per function, argument shapes and sizes under the data
directory), so a notebook restarted later can import it without perfembed. A file there that ``tune`` did
not write is never overwritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import secrets
import textwrap
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from autotune.config import AutotuneSettings
from database import Store
from loopnest.errors import ParameterError
from loopnest.frontend.python.dropin import load_module
from service.core import SuggestOptions
from service.core.local import SourceFile
from service.core.local_suggest import LocalSuggestRequest, suggest_file
from service.core.program import applied_recipes

PROGRESS_EVERY_S = 2.0  # a long measurement prints where it is at most this often
SOURCE_MARK = "# The source of a function, written by perfembed's Notebook.tune.\n"
HEADER = "import math\nimport numpy\nimport numpy as np\n\n\n"  # what the frontend lets kernels use
SOURCE_LINES = (SOURCE_MARK + HEADER).count("\n")  # the lines before the function's own


@dataclass(frozen=True)
class TunedFunction:
    """The tuned function (``tuned``), or the original when nothing held up; ``outcome`` says which and
    why in one line, ``module`` is the drop-in module written (its C and library beside it)."""

    function: Callable[..., Any]
    tuned: bool
    outcome: str
    module: Path | None = None
    recipe: bool = False  # a recipe held up (else the module is the nest compiled as written)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        name = getattr(self.function, "__name__", "function")
        if self.tuned and self.recipe:
            return f"<{name}: tuned by perfembed: {self.outcome}>"
        if self.tuned:
            return f"<{name}: compiled by perfembed, no recipe beat the nest as written: {self.outcome}>"
        return f"<{name}: NOT tuned, the original runs: {self.outcome}>"


def tune_function(store: Store, settings: AutotuneSettings, function: Callable[..., Any], args: tuple[Any, ...],
                  kwargs: Mapping[str, Any], *, k: int = 5, out: Path | None = None) -> TunedFunction:
    """:meth:`service.notebook.Notebook.tune` (its docstring says what it does)."""
    name = getattr(function, "__name__", "")
    if not inspect.isfunction(function) or name == "<lambda>":
        raise ParameterError(f"tune: {function!r} is not a function defined with def")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ParameterError(f"tune: k={k!r} is not a number of neighbours (a kernel argument named k or out "
                             "is passed by position)")
    values = _example_values(function, args, kwargs)
    text, first_line = _kernel_module(function)
    folder = settings.data_dir / "tuned-functions" / f"{name}-{_digest(text, values, k)}" if out is None else out
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    file, module = folder / f"{name}_source.py", folder / f"{name}_tuned.py"
    _refuse_foreign(file, SOURCE_MARK)
    _refuse_foreign(module, '"""')
    file.write_text(text)
    inputs = folder / f"{name}_inputs.npz"
    try:
        _write_npz(inputs, values)
        request = LocalSuggestRequest(src=SourceFile(path=file, function=name, inputs=inputs), whole=None,
                                      options=SuggestOptions(k=k, evaluate=True, name=file.name), write_best=module)
        answer = suggest_file(request, status=_printed_status, store=store, settings=settings,
                              check_nests=lambda count, rejected: _require_nest(function, first_line, count, rejected))
    except BaseException:
        _discard(folder, created, module, file, inputs)
        raise
    finally:
        inputs.unlink(missing_ok=True)  # a copy of the example data: the module does not need it
    nest = next((n for n in answer.result["nests"] if n.get("index") == 0), None)
    if nest is not None and not nest.get("neighbours"):
        print("perfembed: no stored nest to transfer from (an empty database? `perfembed seed load` fills it); "
              "only the recipe space's first guesses were tried", flush=True)
    written = answer.written
    if written is None or written.path is None:
        reason = answer.outcome.reason or (written.message if written is not None else "nothing written")
        warnings.warn(f"perfembed: {name} NOT tuned ({reason}); the original runs", stacklevel=3)
        _discard(folder, created, module, file)
        return TunedFunction(function, False, reason)
    tuned = getattr(load_module(module, f"perfembed_tuned_{name}_{secrets.token_hex(4)}"), name)
    # Its C is compiled and loaded now, on copies of the examples: a later tune into the same folder cannot
    # swap the C under it, and the first real call pays nothing.
    tuned(*(np.array(v, copy=True) if v.ndim else v.item() for v in values.values()))
    return TunedFunction(tuned, True, written.message, module, recipe=bool(applied_recipes([nest] if nest else [])))


def _example_values(function: Callable[..., Any], args: tuple[Any, ...],
                    kwargs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """One value per parameter, as ``--inputs`` takes them: C-ordered arrays, and numbers as 0-d arrays (an int
    given for a parameter hinted ``float`` as a float)."""
    signature = inspect.signature(function)
    try:
        arguments = signature.bind(*args, **kwargs).arguments
    except TypeError as exc:
        raise ParameterError(f"tune: the example arguments do not fit {function.__name__}: {exc}") from None
    values = {}
    for param, value in arguments.items():
        hint = signature.parameters[param].annotation
        if isinstance(value, int) and not isinstance(value, bool) and hint in (float, "float"):
            value = float(value)
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise ParameterError(f"tune: argument {param!r} of {function.__name__} is a {type(value).__name__}, "
                                 "not a NumPy array or a number")
        if isinstance(value, np.ndarray) and not value.flags.c_contiguous:
            raise ParameterError(f"tune: argument {param!r} of {function.__name__} is not in C order (a view or a "
                                 "transpose): the module runs its C on C-ordered arrays only; pass "
                                 "np.ascontiguousarray(...) and call it so")
        values[param] = array
    return values


def _kernel_module(function: Callable[..., Any]) -> tuple[str, int]:
    """A module of the function's source alone, with the imports kernels use (names from elsewhere in its file
    are refused by the frontend, naming the line), and the line the function starts at where it was written."""
    try:
        lines, first = inspect.getsourcelines(function)
    except (OSError, TypeError):
        raise ParameterError(f"tune: the source of {function.__name__} cannot be found (define it with def in a "
                             "file or a notebook cell)") from None
    return SOURCE_MARK + HEADER + textwrap.dedent("".join(lines)), max(first, 1)


def _discard(folder: Path, created: bool, module: Path, source: Path, *files: Path) -> None:
    """Nothing tuned: the files this call wrote go (the source only where no earlier tuned module beside it
    needs it), and the folder too if this call made it and it is empty (a failed tune left a folder holding
    only the source, which looked like a result). A failure here hides nothing: the user's error stands."""
    with contextlib.suppress(OSError):
        for file in files:
            file.unlink(missing_ok=True)
        if not module.exists():
            source.unlink(missing_ok=True)
        if created and not any(folder.iterdir()):
            folder.rmdir()


def _refuse_foreign(path: Path, mark: str) -> None:
    """A file of that name that ``tune`` did not write is the user's: never overwritten."""
    if path.exists() and not path.read_text(errors="replace").startswith(mark):
        raise ParameterError(f"tune: {path} exists and perfembed did not write it; choose another out=")


def _write_npz(path: Path, values: Mapping[str, np.ndarray]) -> None:
    """``np.savez`` without its keyword names (``file``, ``allow_pickle``) taking a parameter's place."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, value in values.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, value, allow_pickle=False)


def _digest(text: str, values: Mapping[str, np.ndarray], k: int) -> str:
    """What the module is built for: the source, each array's shape and dtype, each number's value (sizes are
    built into the C), and ``k``."""
    built = {n: v.item() if v.ndim == 0 else [list(v.shape), str(v.dtype)] for n, v in values.items()}
    return hashlib.sha256((text + json.dumps([built, k], sort_keys=True)).encode()).hexdigest()[:12]


def _require_nest(function: Callable[..., Any], first_line: int, count: int,
                  rejected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """No supported nest is a one-line error naming the line where the user wrote the construct."""
    if count == 0:
        where = ""
        if rejected:
            line = int(rejected[0]["location"].get("line") or 0) - SOURCE_LINES + first_line - 1
            where = f": {_place(function, line)}: {rejected[0]['message']}"
        raise ParameterError(f"tune: perfembed cannot read {function.__name__}{where}")
    return rejected


def _place(function: Callable[..., Any], line: int) -> str:
    """Where the user wrote ``line`` of ``function``: ``file.py:LINE``, or in a notebook ``cell, line LINE``
    (IPython runs a cell from a temporary file, ``/tmp/ipykernel_PID/HASH.py``, whose name means nothing)."""
    source = inspect.getsourcefile(function) or ""
    if not source or source.startswith("<ipython-input-") or Path(source).parent.name.startswith("ipykernel_"):
        return f"its notebook cell, line {line}"
    return f"{Path(source).name}:{line}"


class _Progress:
    """Prints a phase's updates, at most every :data:`PROGRESS_EVERY_S` seconds (a notebook has no status bar)."""

    def __init__(self) -> None:
        self._last = 0.0

    def update(self, text: str) -> None:
        now = time.monotonic()
        if now - self._last >= PROGRESS_EVERY_S:
            self._last = now
            print(f"perfembed: {text}", flush=True)


@contextmanager
def _printed_status(text: str) -> Iterator[_Progress]:
    start = time.monotonic()
    print(f"perfembed: {text} ...", flush=True)
    yield _Progress()
    print(f"perfembed: {text}: done in {time.monotonic() - start:.0f} s", flush=True)
