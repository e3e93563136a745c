"""The paper benchmark's held-out nests: how families are named, which nests are held out, their Scops and
their neighbours from other families.

Leave-one-family-out stands or falls with these rules (a neighbour from the held-out family would leak
its tuning into the result), so they live together, apart from the measuring in ``experiments/paper.py``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from database import best_recipe_for, list_nests, list_programs
from database.neighbourhood import targets_by_preference
from loopnest.errors import ParameterError, PerfembedError
from loopnest.frontend.extract import extract_scops
from service.core.answer_cache import AnswerCache
from service.core.context import CoreContext
from service.core.neighbours import neighbours_for


@dataclass
class HeldOut:
    """A held-out nest as stored: its program, features and normalized description."""

    nest_id: int
    name: str  # program name, "family/file.c"
    index: int  # nest index in the program
    family: str
    features: Mapping[str, float]
    normalized: Mapping[str, Any]
    source: str


@dataclass
class Selection:
    """The held-out nests of one run, and what the runner needs to keep their families out of the search."""

    held: list[HeldOut]
    chosen_families: list[str]
    family_ids: dict[str, list[int]]  # every stored nest of each chosen family: the search excludes them
    family_of_nest: dict[int, str | None]
    database_nests: int
    tuned_nests: int
    families_in_database: list[str]
    # Nests of programs not named "family/file.c" (a user's, stored by ``suggest --evaluate`` in the same
    # data directory): no family can be held out against them, so they are never neighbours either.
    outside_ids: list[int] = field(default_factory=list)

    def excluded_for(self, family: str) -> list[int]:
        """The nests the neighbour search leaves out while ``family`` is held out."""
        return sorted([*self.family_ids[family], *self.outside_ids])


def family_of(program_name: str) -> str | None:
    """The family of a seed-built program ("family/file.c"); None for a program named otherwise."""
    head, sep, tail = program_name.partition("/")
    return head if sep and head and tail else None


def choice_key(name: str, index: int) -> str:
    """A deterministic, name-spread order for picking held-out nests within a family."""
    return hashlib.sha256(f"{name}#{index}".encode()).hexdigest()


def rebuild_scop(held: HeldOut, workdir: Path) -> Any:
    """The nest's Scop, re-extracted from the stored program source."""
    base = held.name.rsplit("/", 1)[-1] or "program.c"
    if not base.endswith(".c"):
        base += ".c"
    path = workdir / f"nest{held.nest_id}" / base
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(held.source)
    try:
        scops = extract_scops(path).scops
    except PerfembedError as exc:
        raise LookupError(f"the stored source does not extract: {exc}") from None
    want_name = held.normalized.get("name")
    want_schedule = held.normalized.get("schedule")
    matches = [s for s in scops if s.name == want_name and s.schedule_isl() == want_schedule]
    if matches:
        return matches[0]
    function = held.normalized.get("function")
    in_function = [s for s in scops if function is None or s.region.function == function]
    if 0 <= held.index < len(in_function):
        return in_function[held.index]
    raise LookupError("the stored source no longer holds this nest")


def neighbours_outside(store: Any, es: Any, features: Mapping[str, float], *, k: int, target_id: int,
                       exclude: Sequence[int], settings: Any, min_speedup: float) -> list[Any]:
    """The k nearest nests outside ``exclude`` with a recipe worth transferring (the core's rule)."""
    ctx = CoreContext(store, settings, AnswerCache(store), _embeddings=es, _target_id=target_id)
    out = neighbours_for(ctx, features, k=k, exclude=tuple(exclude), min_speedup=min_speedup)
    assert not {n.nest_id for n in out} & set(exclude), "a held-out family's nest was offered as a neighbour"
    return out


def select_held_out(store: Any, target_id: int, *, per_family: int, families: Sequence[str] | None) -> Selection:
    """Up to ``per_family`` tuned nests of each family (of ``families`` when given), in :func:`choice_key` order.

    A nest counts as tuned when it has a best recipe on ``target_id`` or on any other target (as transfer
    falls back to them): a seed built on a machine whose signature differs from this one's (another L1
    size on the same CPU model, say) must not shrink the held-out set, since the held-out nest's own
    recipes are never used, only its stored parameters.

    Raises :class:`ParameterError` for a named family without tuned nests, or when fewer than two families
    have any (there would be no other family to transfer from).
    """
    with store.session() as session:
        programs = {p.id: p for p in list_programs(session)}
        nests = list_nests(session)
        targets = targets_by_preference(session, target_id)
        tuned = [n for n in nests
                 if any(best_recipe_for(session, nest_id=n.id, target_id=t) is not None for t in targets)]
    fam_of_nest = {n.id: family_of(programs[n.program_id].name) for n in nests}
    by_family: dict[str, list[Any]] = {}
    for n in tuned:
        fam = fam_of_nest[n.id]
        if fam is not None:
            by_family.setdefault(fam, []).append(n)
    if families:
        unknown = sorted(set(families) - set(by_family))
        if unknown:
            raise ParameterError(f"no tuned nests in famil{'y' if len(unknown) == 1 else 'ies'} "
                                 f"{', '.join(unknown)}; the database has {', '.join(sorted(by_family)) or 'none'}")
    chosen_families = sorted(f for f in by_family if not families or f in families)
    if len(by_family) < 2:
        raise ParameterError("leave-one-family-out needs tuned nests of at least two families "
                             f"(found {len(by_family)}); build a seed database first")
    held: list[HeldOut] = []
    for fam in chosen_families:
        members = sorted(by_family[fam], key=lambda n: choice_key(programs[n.program_id].name, n.index))
        for n in members[:per_family]:
            held.append(HeldOut(n.id, programs[n.program_id].name, n.index, fam, dict(n.static_features),
                                n.normalized if isinstance(n.normalized, dict) else {},
                                programs[n.program_id].source))
    family_ids = {fam: sorted(i for i, f in fam_of_nest.items() if f == fam) for fam in chosen_families}
    outside = sorted(i for i, f in fam_of_nest.items() if f is None)
    return Selection(held, chosen_families, family_ids, fam_of_nest, len(nests), len(tuned), sorted(by_family),
                     outside)
