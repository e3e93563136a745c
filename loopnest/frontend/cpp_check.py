"""Whether a program from the network can be preprocessed here at all: checked at start, by ``/readyz``
and by ``perfembed target``, with a one-line reason when it cannot (issue 59, item 21: run as root from
a checkout under a private directory, every program failed with "preprocessing program.c failed" and
nothing said why)."""

from __future__ import annotations

import tempfile
from functools import lru_cache
from pathlib import Path

from loopnest.errors import PerfembedError
from loopnest.frontend.preprocess import PreprocessOptions, preprocess
from loopnest.harness.sandbox import share_with_sandbox

_PROBE = "#include <stdio.h>\n#include <stdlib.h>\nint perfembed_probe(void) { return EXIT_SUCCESS; }\n"


@lru_cache(maxsize=4)
def preprocessor_problem(mode: str = "auto") -> str | None:
    """None when a confined program including libc headers preprocesses in the sandbox, else why not."""
    try:
        with tempfile.TemporaryDirectory(prefix="perfembed-cpp-check-") as tmp:
            source = Path(tmp) / "program.c"
            source.write_text(_PROBE)
            share_with_sandbox([Path(tmp)], mode)
            text = preprocess(source, PreprocessOptions(confined=True, sandbox=mode))
    except (PerfembedError, OSError) as exc:
        return f"programs cannot be preprocessed here: {exc}"
    if "perfembed_probe" not in text:
        return "programs cannot be preprocessed here: cpp gave no output for a two-line program"
    return None
