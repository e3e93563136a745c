"""Rendering a :class:`~corpus.generator.core.Kernel` as C in a drawn style, and its normalised digest:
the canonical rendering with every name and floating constant abstracted away, which is what "distinct"
means."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from corpus.generator.core import CALL_COST, CALL_RE, For, If, Kernel, Stmt, statements_of


@dataclass(frozen=True)
class Style:
    decl_in_for: bool = True
    pre_increment: bool = False
    brace_single: bool = False


CANONICAL = Style()


def _iterators(items: list, out: dict[str, None]) -> dict[str, None]:
    for it in items:
        if isinstance(it, For):
            out.setdefault(it.var)
            _iterators(it.body, out)
        elif isinstance(it, If):
            _iterators(it.body, out)
    return out


def _render(items: list, style: Style, indent: int, lines: list[str]) -> None:
    pad = "    " * indent
    for it in statements_of(items):
        if isinstance(it, Stmt):
            first, *rest = it.text.split("\n")
            lines.append(f"{pad}{first}" + ("" if rest else ";"))
            lines += [f"{pad}    {r.strip()}" + (";" if k == len(rest) - 1 else "") for k, r in enumerate(rest)]
        elif isinstance(it, If):
            lines.append(f"{pad}if ({it.cond})" + (" {" if len(it.body) > 1 else ""))
            _render(it.body, style, indent + 1, lines)
            if len(it.body) > 1:
                lines.append(f"{pad}}}")
        else:
            decl = "int " if style.decl_in_for else ""
            v = it.var
            if it.down:
                top = f"{it.hi} - 1" if not it.incl else it.hi
                head = f"for ({decl}{v} = {top}; {v} >= {it.lo}; {'--' + v if style.pre_increment else v + '--'})"
            else:
                cmp = "<=" if it.incl else "<"
                if it.step == 1:
                    inc = f"++{v}" if style.pre_increment else f"{v}++"
                else:
                    inc = f"{v} += {it.step}"
                test = it.cond or f"{v} {cmp} {it.hi}"
                head = f"for ({decl}{v} = {it.lo}; {test}; {inc})"
            body = statements_of(it.body)
            braces = len(body) > 1 or (style.brace_single and isinstance(body[0], For) and indent == 0)
            lines.append(pad + head + (" {" if braces else ""))
            _render(body, style, indent + 1, lines)
            if braces:
                lines.append(f"{pad}}}")


def _signature(k: Kernel) -> str:
    parts = [f"int {p}" for p in k.ints] + [f"{t} {n}" for t, n in k.scalars]
    parts += [f"{t} {n}" + "".join(f"[{d}]" for d in dims) for t, n, dims in k.arrays]
    head = f"{k.ret} {k.name}("
    lines, cur = [], head
    for i, part in enumerate(parts):
        piece = part + (", " if i < len(parts) - 1 else ")")
        if len(cur) + len(piece) > 100 and cur.strip() != head.strip():
            lines.append(cur.rstrip())
            cur = " " * len(head) + piece
        else:
            cur += piece
    lines.append(cur)
    return "\n".join(lines)


def render(k: Kernel, style: Style, *, comment: bool = True) -> str:
    body: list[str] = []
    its = list(_iterators(k.body, {}))
    if not style.decl_in_for and its:
        body.append(f"    int {', '.join(its)};")
    body += [f"    {line};" if not line.endswith(";") else f"    {line}" for line in k.pre]
    if body:
        body.append("")
    if k.pragma:
        body.append("#pragma scop")
    nest: list[str] = []
    _render(k.body, style, 1, nest)
    body += nest
    if k.pragma:
        body.append("#pragma endscop")
    if k.post:
        body += [f"    {line}" if line.endswith(";") else f"    {line};" for line in k.post]
    text = _signature(k) + "\n{\n" + "\n".join(body) + "\n}\n"
    head = ""
    if comment:
        if CALL_RE.search(text):
            head += "#include <math.h>\n\n"
        head += "/*\n" + "".join(f" * {line}\n" if line else " *\n" for line in _wrap(k.description)) + " */\n"
    return head + text


def _wrap(text: str, width: int = 96) -> list[str]:
    out, cur = [], ""
    for word in text.split():
        if cur and len(cur) + 1 + len(word) > width:
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}" if cur else word
    if cur:
        out.append(cur)
    return out


_KEEP = frozenset(
    "void int long float double char short unsigned signed const for if else return while do break continue "
    "sizeof pragma scop endscop".split()
) | {f + s for f in CALL_COST for s in ("", "f")}


_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+\.\d*(?:[eE][-+]?\d+)?[fF]?|\.\d+(?:[eE][-+]?\d+)?[fF]?|\d+[eE][-+]?\d+[fF]?"
                    r"|\d+|[^\sA-Za-z_\d]")


def normalize(code: str) -> str:
    """Code without comments and whitespace, every identifier renamed by first occurrence, every
    floating constant replaced by ``F``: two nests are the same if these strings are equal."""
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#include"))
    names: dict[str, str] = {}
    out = []
    for tok in _TOKEN.findall(code):
        if tok[0].isalpha() or tok[0] == "_":
            if tok not in _KEEP:
                tok = names.setdefault(tok, f"v{len(names)}")
        elif tok[0] == "." or ("." in tok or "e" in tok.lower()) and tok[0].isdigit():
            tok = "F"
        out.append(tok)
    return " ".join(out)


def digest(k: Kernel) -> str:
    return hashlib.sha256(normalize(render(k, CANONICAL, comment=False)).encode()).hexdigest()
