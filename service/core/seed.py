"""The shipped tuning database on this machine (``perfembed seed``): the corpus's nests to build it from,
the build and its confirmation (Optuna, loaded on use), the export, and the load of a seed file with the
embedding model fitted afterwards."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from database.embedding_store import EmbeddingStore
from database.seed import best_recipes, count_records, export_seed, is_empty, load_seed
from loopnest.errors import ParameterError
from service.core.maintenance import open_local_store

if TYPE_CHECKING:
    from autotune.seed.build import SeedEntry

WARM_PER_NEST = 3  # --warm-from: an earlier build's best recipes tried first, per nest


def seed_entries(manifest: Path, family: Sequence[str], per_family: int | None, limit: int | None,
                 scale: float) -> list[SeedEntry]:
    """The manifest's entries a build or a confirmation covers, in manifest order, at ``scale``."""
    from autotune.seed.build import read_manifest, scaled  # lazy: with Optuna, +54 ms to every CLI start

    entries = [scaled(e, scale) for e in read_manifest(manifest) if not family or e.family in family]
    if per_family:
        rank = {id(e): sum(1 for f in entries[:i] if f.family == e.family) for i, e in enumerate(entries)}
        entries = [e for e in entries if rank[id(e)] < per_family]
    return entries[:limit]


class LocalSeed:
    """The seed work on this machine's database (created on first use)."""

    def __init__(self) -> None:
        self.store, self.settings = open_local_store()

    def build(self, entries: list[SeedEntry], *, trials: int, jobs: int, reps: int, warm_from: Path | None,
              on_done: Callable[[Any], None]) -> None:
        """Autotune ``entries`` into the database (nests tuned to the budget already are skipped); ``warm_from``:
        a seed file whose best recipes of each nest are tried first."""
        from autotune.seed.build import build_seed  # lazy, as in seed_entries

        build_seed(self.store.url, entries, trials=trials, jobs=jobs, reps=reps, settings=self.settings,
                   on_done=on_done, warm=best_recipes(warm_from, per_nest=WARM_PER_NEST) if warm_from else None)

    def confirm(self, entries: list[SeedEntry], *, max_compares: int, reps: int,
                on_done: Callable[[Any], None]) -> None:
        """Re-measure, paired with the baseline, the recipes each nest lends to transfer."""
        from autotune.seed.confirm import confirm_seed  # lazy, as build's

        confirm_seed(self.store.url, entries, settings=self.settings, families=self.settings.transfer_families,
                     max_compares=max_compares, reps=reps, on_done=on_done)

    def export(self, out: Path) -> dict[str, int]:
        out.parent.mkdir(parents=True, exist_ok=True)
        return dict(export_seed(self.store, out))

    def seed_file(self, path: Path | None, default: Path) -> Path | None:
        """The file to load: ``path``, else ``PERFEMBED_SEED_FILE``, else ``default``; None when the default
        is missing (a file the user named must exist: a ParameterError)."""
        named = path or self.settings.seed_file
        chosen = named or default
        if chosen.exists():
            return chosen
        if named is not None:
            raise ParameterError(f"seed file {chosen}{'' if path else ' (PERFEMBED_SEED_FILE)'} does not exist")
        return None

    def is_empty(self) -> bool:
        return bool(is_empty(self.store))

    def records(self, path: Path) -> int:
        """How many records the file holds; first, a database that refuses writes is said, in one line."""
        self.store.check_writable()
        return int(count_records(path))

    def load(self, path: Path, *, progress: Callable[[int], None], replace: bool) -> dict[str, int]:
        return dict(load_seed(self.store, path, progress=progress, replace=replace))

    def fit(self) -> str:
        """Fit the embedding model on every stored nest and build the index; the model's version."""
        return str(EmbeddingStore(self.store, data_dir=self.settings.data_dir).fit())
