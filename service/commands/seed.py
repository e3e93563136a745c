"""``perfembed seed``: build the tuning database from the corpus, export it, load it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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

from service.commands.options import MAX_NEST, MAX_TRIALS, make_console
from service.core.seed import LocalSeed, seed_entries

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
    seed = LocalSeed()
    entries = seed_entries(manifest, family, per_family, limit, scale)
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

        seed.build(entries, trials=trials, jobs=jobs, reps=reps, warm_from=warm_from, on_done=done)
    console.print(f"{len(entries) - failed} of {len(entries)} nests tuned or already done; {failed} failed")
    for line in failures:
        console.print(f"  failed: {line}")


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
    seed = LocalSeed()
    entries = seed_entries(manifest, family, per_family, limit, scale)
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

        seed.confirm(entries, max_compares=max_compares, reps=reps, on_done=done)
    console.print(", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no nests")


@seed_app.command("export")
def export(out: Path = typer.Option(DEFAULT_SEED, "--out", "-o", help="Seed file to write (.jsonl.gz).")) -> None:
    """Write the database's nests, recipes and measurements as a compact seed file."""
    counts = LocalSeed().export(out)
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
    seed = LocalSeed()
    if if_empty and not seed.is_empty():
        console.print("the database already holds nests; seed not loaded")
        return
    found = seed.seed_file(path, DEFAULT_SEED)
    if found is None:
        console.print(f"no seed file at {DEFAULT_SEED}; starting with an empty database")
        return
    path = found
    # Loading takes a minute or two: a database that refuses writes is said now, in one line.
    total = seed.records(path)
    # A bar on a terminal (cleared at the end: the lines printed below stay); elsewhere (a log,
    # `docker compose logs`), where a bar shows only at its end, a line at every tenth of the records.
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task(f"loading {path.name}", total=total)
        counts = seed.load(path, progress=_reporter(progress, task, f"loading {path.name}", total), replace=replace)
        progress.console.print("loaded " + ", ".join(f"{v} {k}s" for k, v in counts.items() if k != "replaced")
                               + (f"; {counts.get('replaced', 0)} stored measurements replaced" if replace else ""))
        if fit and counts["nest"]:
            what = f"fitting the embedding model on {counts['nest']} nests"
            progress.add_task(what, total=None)
            if not console.is_terminal:
                console.print(what)
            version = seed.fit()
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
