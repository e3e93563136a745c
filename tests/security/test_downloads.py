"""Issue 59, items 14, 16 and 17: the dashboard's downloads.

Reproduction (before the fix): a program named ``x";filename*=UTF-8''evil.sh;a=".c`` added a ``filename*``
parameter of its own to its drop-in file's ``Content-Disposition`` (browsers prefer it: the file saved as
``evil.sh``); one named ``日本語.c`` was a 500 ``UnicodeEncodeError`` (headers are Latin-1); and
``/ui/suggest/tuned`` with ``program`` = 100,000 ``[`` was a 500 ``RecursionError``. Now the header is
RFC 6266's, an ASCII ``filename`` of safe characters and the exact name in RFC 5987's ``filename*``, and a
program field nested too deeply is a one-line 422.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from service.downloads import ascii_fallback, content_disposition, tuned_name
from tests.security.owners import INJECTION, World, build

# RFC 6266: disposition-type *( ";" disposition-parm ), a parm being token "=" ( token / quoted-string ).
_PARAM = re.compile(r';\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)=("(?:[^"\\]|\\.)*"|[!#$%&\'*+.^_`|~0-9A-Za-z-]+)')


def _params(header: str) -> tuple[str, dict[str, str]]:
    kind, rest = header.split(";", 1)
    rest = ";" + rest
    found = _PARAM.findall(rest)
    assert "".join(f"; {k}={v}" for k, v in found).replace(" ", "") == rest.replace(" ", ""), header
    return kind, dict(found)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    built = build(Path(tmp_path_factory.mktemp("downloads")))
    yield built
    built.client.__exit__(None, None, None)


def test_a_name_cannot_add_a_parameter_to_the_header(world: World) -> None:
    r = world.client.get(f"/ui/nests/{world.nests['injection']}/dropin.c?download=1", headers=world.auth("a"))
    assert r.status_code == 200, r.text
    kind, params = _params(r.headers["content-disposition"])
    assert kind == "attachment" and set(params) == {"filename", "filename*"}
    assert re.fullmatch(r'"[A-Za-z0-9._+-]+"', params["filename"]) and "evil.sh" != params["filename"].strip('"')
    assert params["filename*"].startswith("UTF-8''") and unquote(params["filename*"][7:]) == tuned_name(INJECTION)


def test_a_non_latin_name_is_downloaded_not_a_500(world: World) -> None:
    for download in ("?download=1", ""):
        r = world.client.get(f"/ui/nests/{world.nests['unicode']}/dropin.c{download}", headers=world.auth("a"))
        assert r.status_code == 200, r.text
        kind, params = _params(r.headers["content-disposition"])
        assert kind == ("attachment" if download else "inline")
        assert params["filename*"] == "UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E.tuned.c"
        assert unquote(params["filename*"][7:]) == "日本語.tuned.c" and params["filename"] == '"tuned.c"'


@pytest.mark.parametrize("program", ["[" * 100_000, "{" * 100_000, "[1, 2]", "not json"])
def test_a_program_field_nested_too_deeply_or_not_an_object_is_a_one_line_422(world: World, program: str) -> None:
    r = world.client.post("/ui/suggest/tuned", data={"program": program, "job": "0" * 32}, headers=world.auth("a"))
    assert r.status_code == 422, r.text
    message = re.search(r'<p class="error"[^>]*>(.*?)</p>', r.text, re.S)
    assert message is not None and message.group(1).startswith("program: ") and "\n" not in message.group(1)
    assert "RecursionError" not in r.text and "internal error" not in r.text


@pytest.mark.parametrize("name, fallback", [
    ("gemm.c", "gemm.tuned.c"), ("a b/c d.c", "c_d.tuned.c"), ('x";y=.c', "x_y_.tuned.c"),
    ("\x00\r\n.c", "program.tuned.c"), ("", "program.tuned.c"), ("../../etc/passwd", "passwd.tuned.c"),
    ("é" * 500 + ".c", "tuned.c"),
])
def test_every_name_gives_a_header_of_safe_ascii(name: str, fallback: str) -> None:
    header = content_disposition(tuned_name(name), download=True)
    header.encode("latin-1")
    _, params = _params(header)
    assert params["filename"] == f'"{fallback}"' and len(header) < 1200
    assert ascii_fallback("日本語") == "download"
