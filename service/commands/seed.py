"""``perfembed seed``: build the tuning database from the corpus, export it, load it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from database import get_store
from database.config import get_database_settings
from database.embedding_store import EmbeddingStore
from database.errors import ensure_data_dir
from database.seed import best_recipes, count_records, export_seed, is_empty, load_seed
from loopnest.errors import ParameterError
from service.commands.options import MAX_NEST, MAX_TRIALS, make_console

if TYPE_CHECKING:
    from autotune.seed.build import SeedEntry

WARM_PER_NEST = 3  # --warm-from: an earlier build's best recipes tried first, per nest

seed_app = typer.Typer(no_args_is_help=True, help="The shipped tuning database: build, export, load.")
console = make_console(stderr=True)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MANIFEST = ROOT / "corpus" / "generated" / "manifest.json"
DEFAULT_SEED = ROOT / "seed" / "perfembed-seed.jsonl.gz"


# The corpus options a build and a confirmation share (which nests of which manifest).
MANIFEST_OPT = typer.Option(DEFAULT_MANIFEST, "--manifest", help="Corpus manifest (JSON).")
FAMILY_OPT = typer.Option([], "--family", help="Only these families.")
LIMIT_OPT = typer.Option(None, "--limit", min=1, max=MAX_NEST, help="Only the first N nests.")
PER_FAMILY_OPT = typer.Option(None, "--per-family", min=1, max=MAX_NEST,
                              help="Only the first N nests of each family (in manifest order).")


def _store() -> tuple:
    settings = get_database_settings()
    ensure_data_dir(settings.data_dir)  # one line naming the directory (exit 2), not an OSError traceback
    return get_store(settings.resolved_database_url, create=True), settings


@seed_app.command("build")
def build(manifest: Path = MANIFEST_OPT,
          trials: int = typer.Option(40, "--trials", min=1, max=MAX_TRIALS, help="Evaluated variants per nest."),
          jobs: int = typer.Option(1, "--jobs", min=1, max=64, help="Nests tuned at once."),
          reps: int = typer.Option(3, "--reps", min=1, max=50),
          family: list[str] = FAMILY_OPT,
          limit: int | None = LIMIT_OPT,
          per_family: int | None = PER_FAMILY_OPT,
          scale: float = typer.Option(1.0, "--scale", min=0.05, max=4.0,
                                      help="Multiply every size parameter (min 4): trade fidelity for build time."),
          warm_from: Path | None = typer.Option(None, "--warm-from", exists=True, dir_okay=False,
                                                help="Seed file whose 3 best recipes of each nest are tried "
                                                     "first (measured again here).")
          ) -> None:
    """Autotune the corpus into the database; nests already tuned to the budget are skipped."""
    from autotune.seed.build import build_seed  # lazy: with Optuna, +54 ms to every CLI start

    store, settings = _store()
    entries = _entries(manifest, family, per_family, limit, scale)
    failed = 0
    failures: list[str] = []
    finished = 0
    # A bar on a terminal; elsewhere (a log, `nohup`, docker logs) a line per nest, so a build of hours
    # shows where it is.
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[last]}"), console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task("seed build", total=len(entries), last="")

        def done(outcome: object) -> None:
            nonlocal failed, finished
            finished += 1
            if getattr(outcome, "status", "") == "failed":
                failed += 1
                failures.append(f"{outcome.name}: {outcome.message}")  # type: ignore[attr-defined]
            best = getattr(outcome, "best_speedup", None)
            last = f"{outcome.name}: {outcome.status}" + (f" {best:.2f}x" if best else "")  # type: ignore[attr-defined]
            progress.update(task, advance=1, last=last)
            if not console.is_terminal:
                console.print(f"seed build: {finished}/{len(entries)} {last}", highlight=False)

        build_seed(store.url, entries, trials=trials, jobs=jobs, reps=reps, settings=settings, on_done=done,
                   warm=best_recipes(warm_from, per_nest=WARM_PER_NEST) if warm_from else None)
    console.print(f"{len(entries) - failed} of {len(entries)} nests tuned or already done; {failed} failed")
    for line in failures:
        console.print(f"  failed: {line}")


def _entries(manifest: Path, family: list[str], per_family: int | None, limit: int | None,
             scale: float) -> list[SeedEntry]:
    """The manifest's entries a build or a confirmation covers, in manifest order, at ``scale``."""
    from autotune.seed.build import read_manifest, scaled

    entries = [scaled(e, scale) for e in read_manifest(manifest) if not family or e.family in family]
    if per_family:
        rank = {id(e): sum(1 for f in entries[:i] if f.family == e.family) for i, e in enumerate(entries)}
        entries = [e for e in entries if rank[id(e)] < per_family]
    return entries[:limit]


@seed_app.command("confirm")
def confirm(manifest: Path = MANIFEST_OPT,
            family: list[str] = FAMILY_OPT,
            limit: int | None = LIMIT_OPT,
            per_family: int | None = PER_FAMILY_OPT,
            scale: float = typer.Option(1.0, "--scale", min=0.05, max=4.0,
                                        help="The --scale the nests were built at (their measurements' sizes)."),
            max_compares: int = typer.Option(8, "--max-compares", min=1, max=100,
                                             help="Paired comparisons per nest at most."),
            reps: int = typer.Option(3, "--reps", min=1, max=50)) -> None:
    """Re-measure, paired with the baseline, the recipes each nest lends to transfer (its best of each
    family), until every one lent is a re-measured figure; stored with its interval."""
    from autotune.seed.confirm import confirm_seed  # lazy, as build's

    store, settings = _store()
    entries = _entries(manifest, family, per_family, limit, scale)
    counts: dict[str, int] = {}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[last]}"), console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task("seed confirm", total=len(entries), last="")

        def done(outcome: object) -> None:
            status = getattr(outcome, "status", "")
            counts[status] = counts.get(status, 0) + 1
            lent = "; ".join(getattr(outcome, "lent", ())) or getattr(outcome, "message", "")
            last = f"{getattr(outcome, 'name', '')}: {status}, {getattr(outcome, 'compared', 0)} compared: {lent}"
            progress.update(task, advance=1, last=last)
            if not console.is_terminal:
                console.print(f"seed confirm: {sum(counts.values())}/{len(entries)} {last}", highlight=False)

        confirm_seed(store.url, entries, settings=settings, families=settings.transfer_families,
                     max_compares=max_compares, reps=reps, on_done=done)
    console.print(", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no nests")


@seed_app.command("export")
def export(out: Path = typer.Option(DEFAULT_SEED, "--out", "-o", help="Seed file to write (.jsonl.gz).")) -> None:
    """Write the database's nests, recipes and measurements as a compact seed file."""
    store, _ = _store()
    out.parent.mkdir(parents=True, exist_ok=True)
    counts = export_seed(store, out)
    console.print(f"wrote {out} ({out.stat().st_size / 2**20:.1f} MiB): "
                  + ", ".join(f"{v} {k}s" for k, v in counts.items()))


@seed_app.command("load")
def load(path: Path | None = typer.Argument(None, show_default=False, help="Seed file (.jsonl.gz); default "
                                           f"PERFEMBED_SEED_FILE, else {DEFAULT_SEED}."),
         if_empty: bool = typer.Option(False, "--if-empty", help="Do nothing when the database has nests."),
         fit: bool = typer.Option(True, "--fit/--no-fit", help="Fit the embedding model afterwards."),
         replace: bool = typer.Option(False, "--replace", help="The file's measurements of a nest replace all "
                                      "stored ones of that nest (a family re-tuned in a fresh database).")
         ) -> None:
    """Load a seed file (idempotent), then fit the embedding model and build the index."""
    store, settings = _store()
    named = path or settings.seed_file  # a file the user named must exist; the default may be missing
    source = "" if path else " (PERFEMBED_SEED_FILE)"
    path = named or DEFAULT_SEED
    if if_empty and not is_empty(store):
        console.print("the database already holds nests; seed not loaded")
        return
    if not path.exists():
        if named is not None:
            raise ParameterError(f"seed file {path}{source} does not exist")
        console.print(f"no seed file at {path}; starting with an empty database")
        return
    # Loading takes a minute or two: a database that refuses writes is said now, in one line.
    store.check_writable()
    total = count_records(path)
    # A bar on a terminal (cleared at the end: the lines printed below stay); elsewhere (a log,
    # `docker compose logs`), where a bar shows only at its end, a line at every tenth of the records.
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task(f"loading {path.name}", total=total)
        counts = load_seed(store, path, progress=_reporter(progress, task, f"loading {path.name}", total),
                           replace=replace)
        progress.console.print("loaded " + ", ".join(f"{v} {k}s" for k, v in counts.items() if k != "replaced")
                               + (f"; {counts.get('replaced', 0)} stored measurements replaced" if replace else ""))
        if fit and counts["nest"]:
            what = f"fitting the embedding model on {counts['nest']} nests"
            progress.add_task(what, total=None)
            if not console.is_terminal:
                console.print(what)
            version = EmbeddingStore(store, data_dir=settings.data_dir).fit()
            progress.console.print(f"embedding model {version} fitted")


def _reporter(progress: Progress, task: TaskID, what: str, total: int) -> Callable[[int], None]:
    """Moves the bar, or off a terminal prints ``what: N/TOTAL records`` at every tenth."""
    printed = [0]

    def report(done: int) -> None:
        progress.update(task, completed=done)
        tenth = done * 10 // max(total, 1)
        if not console.is_terminal and tenth > printed[0]:
            printed[0] = tenth
            console.print(f"{what}: {done}/{total} records")

    return report
