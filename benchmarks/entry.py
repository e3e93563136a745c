"""How every ``python -m benchmarks.X`` ends: a Ctrl-C or a reader gone is an exit status, not a traceback.

``perfembed bench X`` runs each benchmark as a child process on the same terminal, so a Ctrl-C reaches
both; and a parent that ends first leaves the child writing into a closed pipe. Both printed a Python
traceback from the child (``BrokenPipeError`` when a paper benchmark's parent was stopped).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
BROKEN_PIPE = 141  # 128 + SIGPIPE


def exit_after(main: Callable[[], int | None]) -> NoReturn:
    """Call ``main`` and exit with its status; a Ctrl-C exits 130 with one line on stderr, a closed stdout 141."""
    try:
        status = main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        raise SystemExit(INTERRUPTED) from None
    except BrokenPipeError:
        # Nobody reads stdout any more: point it at /dev/null so that the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(BROKEN_PIPE) from None
    raise SystemExit(status or 0)
