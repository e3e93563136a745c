"""Tuned files as downloads (the dashboard's and the API's): the file name a program's name gives, and a
``Content-Disposition`` header that no name can break (RFC 6266, with the UTF-8 name in RFC 5987's ``filename*``).

A program's name comes from whoever sent it: ``x";filename*=UTF-8''evil.sh;a=".c`` added a parameter of its
own to the header when it was quoted as it was, and ``日本語.c`` was a 500 (headers are Latin-1). Now the
header has an ASCII ``filename`` of safe characters only and the exact name, percent-encoded, in
``filename*``.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from fastapi.responses import PlainTextResponse

from loopnest.errors import ParameterError

# A name is cut to this many characters before ".tuned.c" (a header is not a place for 10 kB of name).
MAX_NAME = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def tuned_name(name: str | None) -> str:
    """``NAME.tuned.c`` for a program called ``NAME.c`` (its last path part, without control characters)."""
    base = PurePosixPath((name or "").replace("\\", "/")).name
    base = "".join(c for c in base if c.isprintable()).strip() or "program.c"
    stem = base[:-2] if base.endswith(".c") else base
    return f"{stem[:MAX_NAME] or 'program'}.tuned.c"


def ascii_fallback(name: str) -> str:
    """The name with every run of characters outside ``[A-Za-z0-9._+-]`` as one ``_``."""
    return _UNSAFE.sub("_", name).strip("_.") or "download"


def content_disposition(name: str, *, download: bool) -> str:
    """``attachment`` (or ``inline``) naming ``name``: RFC 6266's ASCII ``filename`` and RFC 5987's
    ``filename*=UTF-8''...`` (every byte outside the unreserved set percent-encoded)."""
    kind = "attachment" if download else "inline"
    return f"{kind}; filename=\"{ascii_fallback(name)}\"; filename*=UTF-8''{quote(name, safe='')}"


def c_file(name: str, text: str, *, download: bool) -> PlainTextResponse:
    """A C file for the browser to show or save as ``name``."""
    return PlainTextResponse(text, media_type="text/x-c; charset=utf-8",
                             headers={"Content-Disposition": content_disposition(name, download=download)})


def program_field(text: str) -> dict[str, Any]:
    """The ``program`` field of the tuned-file form: the JSON of the request the page evaluated. A field
    that is not a JSON object, or one nested past what a parser can follow, is a one-line 422."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParameterError(f"program: not JSON ({exc.msg} at {exc.pos})") from None
    except RecursionError:  # 100,000 "[": the parser recurses once per level
        raise ParameterError("program: nested too deeply; send the request the page evaluated") from None
    if not isinstance(value, dict):
        raise ParameterError("program: not a JSON object; send the request the page evaluated")
    return value
