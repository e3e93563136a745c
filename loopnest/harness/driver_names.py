"""The names of the user's nest inside the measurement driver: every one prefixed, so that nothing the
driver declares (``main`` and its ``argc``/``argv``, its ``perfembed_*`` helpers) or includes (``<math.h>``'s
``y1``, ``<time.h>``'s ``time``, ``<stdio.h>``'s ``fopen``) can clash with a name the user chose.

The driver's own code spells the nest's variables through :func:`c_name`; the kernels, which code
generation prints in the nest's own names, go through :func:`rename`. Only the driver changes: the drop-in
code keeps the user's names.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from loopnest.ir import Scop

USER_PREFIX = "perfembed_v_"

# One C token of interest: what is never renamed (string and character literals, comments, numbers, a
# member after ``.`` or ``->``), or an identifier.
_TOKEN = re.compile(r"""
    (?P<skip>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?\*/|\.?\d(?:[eEpP][+-]|[\w.])*
            |(?:\.|->)\s*[A-Za-z_]\w*)
  | (?P<name>[A-Za-z_]\w*)
""", re.VERBOSE | re.DOTALL)
_PRAGMA = re.compile(r"^[ \t]*#[ \t]*pragma\b[^\n]*", re.MULTILINE)


def c_name(name: str) -> str:
    """The driver's name of the nest's variable ``name``."""
    return USER_PREFIX + name


def user_names(scop: Scop) -> frozenset[str]:
    """Every name the nest declares or uses as a variable: arrays and scalars, parameters, iterators."""
    names = set(scop.arrays) | set(scop.params) | set(scop.iterators)
    for stmt in scop.statements:
        names |= set(stmt.iterators)
    return frozenset(names)


def _rename_tokens(text: str, names: Collection[str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group("name")
        return c_name(name) if name is not None and name in names else match.group(0)

    return _TOKEN.sub(one, text)


def _rename_pragma(line: str, names: Collection[str]) -> str:
    """A ``#pragma`` line with the names inside its parentheses renamed (``private(i)``,
    ``reduction(+: s)``); its words (``omp parallel for``, ``GCC ivdep``) are never the nest's."""
    out, depth, start = [], 0, 0
    for k, char in enumerate(line):
        if char in "()":
            piece = line[start:k]
            out.append(_rename_tokens(piece, names) if depth > 0 else piece)
            out.append(char)
            depth = max(0, depth + (1 if char == "(" else -1))
            start = k + 1
    out.append(line[start:])
    return "".join(out)


def rename(text: str, names: Collection[str]) -> str:
    """C text with every identifier in ``names`` prefixed (:func:`c_name`); literals, comments, members
    and the words of pragmas are left alone."""
    pieces, last = [], 0
    for pragma in _PRAGMA.finditer(text):
        pieces += [_rename_tokens(text[last:pragma.start()], names), _rename_pragma(pragma.group(0), names)]
        last = pragma.end()
    pieces.append(_rename_tokens(text[last:], names))
    return "".join(pieces)
