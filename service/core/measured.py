"""What the database already holds about a nest a user asks about, in the answers' terms.

- **Tuned before**: the same nest (same program text, same position, same IR), at the same parameter
  values, measured on this machine. It is the nest's own earlier result, with its measurement count
  and interval, never one of its neighbours (:func:`database.neighbourhood.find_stored_nest` finds it,
  so that the neighbour search can leave it out).
- **Targets**: every recorded speedup names the machine it was measured on (:func:`target_view`) and
  says when that is not this one (the shipped seed was built on another CPU).
- **Recipe texts**: every recipe in an answer gets ``recipe_text`` in its nest's loop names; the JSON
  stays the canonical form.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from autotune.transfer import Neighbour
from database import Measurement, Store, Target, find_target, list_targets, target_signature
from database.neighbourhood import BestRun
from database.records import local_target_fields
from loopnest.transform.recipe_text import recipe_text
from service.core.types import NeighbourView


def target_label(target: Target) -> str:
    """``AMD EPYC, 2 cores, L1d 48 KiB, gcc 12.2.0``: enough to tell two machines apart."""
    l1d = target.cache_sizes.get("l1d")
    version = target.compiler_version.split()[-1] if target.compiler_version.split() else ""
    parts = [target.cpu_model, f"{target.cores} cores", *([f"L1d {l1d // 1024} KiB"] if l1d else []),
             f"{target.compiler} {version}".strip()]
    return ", ".join(parts)


def target_view(target: Target | None, here: int | None) -> dict[str, Any] | None:
    """``{"id", "name", "this_machine"}`` for a measurement's target (``here`` is this machine's id)."""
    if target is None:
        return None
    return {"id": target.id, "name": target_label(target), "this_machine": here is not None and target.id == here}


@functools.lru_cache(maxsize=8)
def _local_signature(cc: str) -> str:
    """This machine's target signature (it runs ``cc --version``: read once per process)."""
    return target_signature(**local_target_fields(cc))


def local_target_id(session: Session, *, cc: str) -> int | None:
    """This machine's target id if it is in the database (a reader creates none)."""
    found = find_target(session, signature_hash=_local_signature(cc))
    return None if found is None else found.id


def with_best_targets(store: Store, hits: list[dict[str, Any]], *, cc: str) -> list[dict[str, Any]]:
    """Search hits whose ``best_speedup`` also names its target: ``best_target`` (id, name, this_machine)."""
    if not any(h.get("best_target_id") is not None for h in hits):
        return hits
    with store.session() as session:
        views = target_views(list_targets(session), local_target_id(session, cc=cc))
    return [{**h, "best_target": views.get(h["best_target_id"])} if h.get("best_target_id") is not None else h
            for h in hits]


def target_views(targets: Sequence[Target], here: int | None) -> dict[int, dict[str, Any]]:
    """Every target's view, by id (``targets``: every stored target)."""
    return {t.id: view for t in targets if (view := target_view(t, here)) is not None}


def neighbour_view(neighbour: Neighbour, targets: Mapping[int, dict[str, Any]]) -> NeighbourView:
    """One neighbour in an answer: its best recipe in its own loop names, and where that was measured."""
    return NeighbourView(nest_id=neighbour.nest_id, name=neighbour.name, distance=neighbour.distance,
                         recorded_speedup=neighbour.recorded_speedup, recipe=neighbour.recipe.to_dict(),
                         recipe_text=recipe_text(neighbour.recipe, neighbour.loop_names),
                         target=None if neighbour.target_id is None else targets.get(neighbour.target_id))


def measurement_text(m: Measurement) -> str:
    """A stored speedup as the CLI prints a fresh one: ``1.28x [1.19, 1.39] (95%, 5 pairs, 2 threads)``;
    a figure that was never re-measured against the baseline says so."""
    threads = f", {m.threads} thread{'s' if m.threads != 1 else ''}" if m.threads else ""
    if m.speedup_low is not None and m.speedup_high is not None:
        confidence = f"{m.confidence:.0%}, " if m.confidence is not None else ""
        text = (f"{m.speedup:.2f}x [{m.speedup_low:.2f}, {m.speedup_high:.2f}] "
                f"({confidence}{m.repetitions} pairs{threads})")
    else:
        text = f"{m.speedup:.2f}x (screening, {m.repetitions} repetitions{threads}; not re-measured)"
    return text + (", machine busy" if m.loaded else "")


def tuned_before(best: BestRun | None, *, names: Sequence[str] | None = None) -> dict[str, Any] | None:
    """The nest's own best result at the asked sizes on this machine (:func:`database.neighbourhood.best_run`)
    in an answer's terms, or None when it was never measured so."""
    if best is None:
        return None
    m = best.measurement
    recipe = {"steps": best.steps}
    return {"nest_id": m.nest_id, "params": dict(m.params), "recipe": recipe, "recipe_text": recipe_text(recipe, names),
            "speedup": m.speedup, "interval": None if m.speedup_low is None else [m.speedup_low, m.speedup_high],
            "confidence": m.confidence, "pairs": m.repetitions if m.speedup_low is not None else None,
            "threads": m.threads, "loaded": m.loaded, "re_measured": m.speedup_low is not None,
            "measurements": best.runs, "measured_at": m.measured_at.isoformat(),
            "target": target_view(best.target, best.target.id),  # read on this machine
            "text": measurement_text(m)}
