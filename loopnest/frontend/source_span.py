"""Where a ``for`` statement ends in the original (unpreprocessed) text.

pycparser gives start coordinates only; the drop-in output must replace exactly the nest's lines,
so the end is found by scanning the original text for the matching braces and semicolons.
"""

from __future__ import annotations

import re

from loopnest.errors import SourceError

_FOR = re.compile(r"\bfor\b")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Scanner:
    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def skip_space(self) -> None:
        t = self.text
        while self.pos < len(t):
            if t[self.pos].isspace():
                self.pos += 1
            elif t.startswith("//", self.pos):
                self.pos = _find(t, "\n", self.pos)
            elif t.startswith("/*", self.pos):
                self.pos = _find(t, "*/", self.pos) + 2
            elif t[self.pos] == "#" and (self.pos == 0 or t[self.pos - 1] == "\n" or
                                          t[:self.pos].rsplit("\n", 1)[-1].strip() == ""):
                self.pos = _find(t, "\n", self.pos)  # a preprocessor line inside the nest
            else:
                return

    def word(self) -> str:
        self.skip_space()
        m = _WORD.match(self.text, self.pos)
        return m.group(0) if m else ""

    def balanced(self, open_: str, close: str) -> None:
        """Skip from an opening bracket to just after its match, ignoring strings and comments."""
        self.skip_space()
        if self.text[self.pos:self.pos + 1] != open_:
            raise SourceError(f"expected {open_!r} while locating the end of a loop")
        depth = 0
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if t.startswith("//", self.pos) or t.startswith("/*", self.pos):
                self.skip_space()
                continue
            if c in "\"'":
                self.pos = _string_end(t, self.pos)
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    self.pos += 1
                    return
            self.pos += 1
        raise SourceError("unbalanced brackets while locating the end of a loop")

    def statement(self) -> None:
        w = self.word()
        if w in ("for", "while"):
            self.pos += len(w)
            self.balanced("(", ")")
            self.statement()
        elif w == "if":
            self.pos += 2
            self.balanced("(", ")")
            self.statement()
            if self.word() == "else":
                self.pos += 4
                self.statement()
        elif self.text[self.pos:self.pos + 1] == "{":
            self.balanced("{", "}")
        else:
            self._to_semicolon()

    def _to_semicolon(self) -> None:
        t = self.text
        depth = 0
        while self.pos < len(t):
            c = t[self.pos]
            if c in "\"'":
                self.pos = _string_end(t, self.pos)
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == ";" and depth <= 0:
                self.pos += 1
                return
            self.pos += 1
        raise SourceError("missing ';' while locating the end of a loop")


def _find(text: str, what: str, start: int) -> int:
    i = text.find(what, start)
    return len(text) if i < 0 else i


def _string_end(text: str, pos: int) -> int:
    quote = text[pos]
    i = pos + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def statement_span(text: str, start_line: int) -> tuple[int, int]:
    """Character offsets [start, end) of the ``for`` statement that starts on ``start_line``."""
    offset = sum(len(line) + 1 for line in text.split("\n")[: start_line - 1])
    m = _FOR.search(text, offset)
    if m is None:
        raise SourceError(f"line {start_line}: no 'for' found in the original source")
    scanner = _Scanner(text, m.start())
    scanner.statement()
    return m.start(), scanner.pos


def statement_end_line(lines: list[str], start_line: int) -> int:
    """The 1-based line where the ``for`` statement starting on ``start_line`` ends."""
    text = "\n".join(lines)
    _, end = statement_span(text, start_line)
    return text.count("\n", 0, end - 1) + 1
