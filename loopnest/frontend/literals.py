"""Literals of the source as validated text: the only constants that reach generated C.

A literal is copied only when it matches C's numeric literal grammar; a character constant becomes
its integer value; anything else (strings, wide or multi-character constants) is refused.
"""

from __future__ import annotations

import re

_INT_LITERAL = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)[uUlL]{0,3}")
_FLOAT_LITERAL = re.compile(r"(([0-9]*\.[0-9]+|[0-9]+\.?)([eE][+-]?[0-9]+)?"
                            r"|0[xX]([0-9a-fA-F]*\.[0-9a-fA-F]+|[0-9a-fA-F]+\.?)[pP][+-]?[0-9]+)[fFlL]?")
_CHAR_ESCAPES = {"n": 10, "t": 9, "r": 13, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "v": 11, "?": 63}


def numeric_literal(kind: str, text: str) -> str | None:
    """``text`` when it is an integer or floating literal; a char constant's value; else None."""
    if kind == "char":
        if len(text) >= 3 and text[0] == text[-1] == "'":
            value = char_value(text[1:-1])
            return None if value is None else str(value)
        return None
    if _INT_LITERAL.fullmatch(text) or _FLOAT_LITERAL.fullmatch(text):
        return text
    return None


def char_value(body: str) -> int | None:
    """The int value gcc gives a character constant (plain char is signed on x86-64)."""
    if len(body) == 1 and body != "\\" and ord(body) < 128:
        return ord(body)
    if len(body) == 2 and body[0] == "\\" and body[1] in _CHAR_ESCAPES:
        return _CHAR_ESCAPES[body[1]]
    if re.fullmatch(r"\\x[0-9a-fA-F]{1,2}", body):
        value = int(body[2:], 16)
    elif re.fullmatch(r"\\[0-7]{1,3}", body):
        value = int(body[1:], 8) & 0xFF
    else:
        return None
    return value - 256 if value > 127 else value


def shorten(text: str, limit: int = 60) -> str:
    """One line of at most ``limit`` characters, for messages."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
