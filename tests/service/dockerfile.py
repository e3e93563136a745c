"""Reading a Dockerfile and its .dockerignore the way a builder does, for tests that cannot run one.

:class:`DockerIgnore` follows the builder's rules (moby's patternmatcher): ``#`` comments, a
leading ``/`` dropped, ``*`` and ``?`` within one path segment, ``**`` across segments, ``!`` to
re-include, the last matching line wins, and a pattern that matches a directory excludes
everything under it. :func:`instructions` joins continuation lines and drops comments.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


def _regex(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[":
            end = pattern.index("]", i + 1)
            out, i = out + "[" + pattern[i + 1:end].replace("\\", "\\\\") + "]", end + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


@dataclass(frozen=True)
class DockerIgnore:
    rules: tuple[tuple[re.Pattern[str], bool], ...]  # (pattern, excludes)

    @classmethod
    def parse(cls, text: str) -> DockerIgnore:
        rules = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            include = line.startswith("!")
            pattern = str(PurePosixPath(line.lstrip("!").strip())).lstrip("/")
            rules.append((_regex(pattern), not include))
        return cls(tuple(rules))

    def ignored(self, path: str) -> bool:
        """Whether the builder leaves ``path`` (relative to the context, ``/``-separated) out."""
        parts = PurePosixPath(path).parts
        prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        verdict = False
        for pattern, excludes in self.rules:
            if any(pattern.match(p) for p in prefixes):
                verdict = excludes
        return verdict


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` in order, continuation lines joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in dockerfile.splitlines():
        line = raw.strip()
        if line.startswith("#") or (not line and not pending):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        word, _, rest = (pending + line).strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        pending = ""
    return out


@dataclass(frozen=True)
class Copy:
    sources: tuple[str, ...]
    dest: str  # absolute, resolved against WORKDIR
    line: int  # index among the instructions


def copies(dockerfile: str) -> list[Copy]:
    """The build-context COPY/ADD instructions (not ``--from`` stages)."""
    workdir, out = "/", []
    for n, (word, args) in enumerate(instructions(dockerfile)):
        if word == "WORKDIR":
            workdir = str(PurePosixPath(workdir) / args)
        elif word in ("COPY", "ADD"):
            words = shlex.split(args)
            flags = [w for w in words if w.startswith("--")]
            paths = [w for w in words if not w.startswith("--")]
            if any(f.startswith("--from") for f in flags):
                continue
            dest = str(PurePosixPath(workdir) / paths[-1])
            out.append(Copy(tuple(paths[:-1]), dest.rstrip("/") + ("/" if paths[-1].endswith("/") else ""), n))
    return out


def env(dockerfile: str) -> dict[str, str]:
    """Every ``ENV KEY=VALUE`` of the Dockerfile (the last one wins)."""
    values: dict[str, str] = {}
    for word, args in instructions(dockerfile):
        if word == "ENV":
            for item in shlex.split(args):
                key, _, value = item.partition("=")
                values[key] = value
    return values


def files_under(root: Path, source: str) -> list[str]:
    """Files of ``source`` (a file or directory of the context ``root``), relative and ``/``-separated,
    without Python's byte-code caches."""
    path = root / source
    found = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sorted(p.relative_to(root).as_posix() for p in found
                  if "__pycache__" not in p.parts and p.suffix != ".pyc")
