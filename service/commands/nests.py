"""The nests a command found: rejected regions on stderr, and an error when nothing is left.

Every command that works on the nests of FILE (``analyze``, ``apply``, ``measure``, ``suggest``,
``tune``, with or without ``--server``) reports the regions outside the supported subset the
same way, ``rejected FILE:LINE[:COL]: message``, and ends with :class:`NoLoopNestError` (exit 2)
when FILE has no supported nest, instead of an empty table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rich.markup import escape

from service.commands.options import err_console
from service.core.errors import PerfembedError


class NoLoopNestError(PerfembedError):
    """FILE has no loop nest at all, or every one of its regions was rejected (listed in ``rejected``)."""

    def __init__(self, file: str | Path, rejected: list[dict[str, Any]]) -> None:
        self.file = str(file)
        self.rejected = rejected
        detail = f"no supported loop nest ({len(rejected)} rejected)" if rejected else "no loop nest found"
        super().__init__(f"{self.file}: {detail}")

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "file": self.file, "rejected": self.rejected}


def rejected_dicts(rejected: Iterable[Any], file: str | Path, *, served_as: str = "program.c") -> list[dict[str, Any]]:
    """Rejected regions (``RejectedRegion`` or the API's dicts) as dicts naming the user's ``file``.

    The server and the local core analyse a copy called ``served_as``; its name is replaced.
    """
    out = []
    for region in rejected:
        data = dict(region.to_dict() if hasattr(region, "to_dict") else region)
        location = dict(data.get("location") or {})
        if location.get("file") in (None, served_as):
            location["file"] = str(file)
        data["location"] = location
        out.append(data)
    return out


def location_text(location: Mapping[str, Any]) -> str:
    """``file:line`` or ``file:line:col``, as a compiler prints a position."""
    text = f"{location.get('file', '?')}:{location.get('line', '?')}"
    return f"{text}:{location['column']}" if location.get("column") else text


def print_rejected(rejected: Iterable[Mapping[str, Any]]) -> None:
    """One ``rejected FILE:LINE: message`` line per region on stderr."""
    for region in rejected:
        where = location_text(region.get("location") or {})
        err_console.print(f"[yellow]rejected[/] {escape(where)}: {escape(str(region.get('message', '')))}",
                          highlight=False)


def require_nests(file: str | Path, count: int, rejected: Iterable[Any], *, quiet: bool = False,
                  served_as: str = "program.c") -> list[dict[str, Any]]:
    """Report the rejected regions (unless ``quiet``: ``--json`` carries them); raise
    :class:`NoLoopNestError` when ``count`` (the supported nests) is 0. Returns the regions as dicts."""
    regions = rejected_dicts(rejected, file, served_as=served_as)
    if not quiet:
        print_rejected(regions)
    if count == 0:
        raise NoLoopNestError(file, regions)
    return regions
