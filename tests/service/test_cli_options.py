"""Issue 60 item 7: a command's parameters are its options as typer has them. Options two commands share are
declared once (``Annotated`` types), and related ones come to a command as one small dataclass
(:func:`service.commands.options.grouped`); the whole-program answer is one typed value whose JSON is the
API's (item 6)."""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer
from typer.testing import CliRunner

from loopnest.harness.compare import Speedup
from loopnest.harness.program import ProgramComparison
from service.cli import app, suggest
from service.commands.options import Compiler, Include, Json, Kernel, grouped
from service.core.program import NestAlone, ProgramEvaluation, applied_recipes, program_outcome

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Budget:
    trials: Annotated[int, typer.Option("--trials", min=1)] = 3
    names: Annotated[list[str], typer.Option("--name")] = field(default_factory=list)


def test_a_group_is_its_options_on_the_command_line_and_one_value_in_the_command() -> None:
    seen = []
    probe = typer.Typer()

    @probe.command()
    @grouped
    def run(kernel: Kernel, budget: Budget, json_out: Json = False) -> None:
        seen.append((kernel, budget, json_out))

    result = CliRunner().invoke(probe, ["--param", "n=8", "--function", "f", "--trials", "5", "--name", "a",
                                        "--name", "b", "--json"])
    assert result.exit_code == 0, result.output
    assert seen == [(Kernel(param=["n=8"], function="f"), Budget(trials=5, names=["a", "b"]), True)]
    assert seen[0][0].params() == {"n": 8}
    assert CliRunner().invoke(probe, ["--trials", "0"]).exit_code == 2  # the group's bounds hold


def test_the_commands_take_at_most_ten_parameters_and_show_every_option() -> None:
    assert len(inspect.signature(suggest.__wrapped__).parameters) <= 10  # type: ignore[attr-defined]
    shown = CliRunner().invoke(app, ["suggest", "--help"], env={"COLUMNS": "250"}).output
    for option in ("-iquote", "--build-path", "--param", "--write-best", "--no-program-check", "--cflags",
                   "--matrix", "--api-key", "--inputs"):
        assert option in shown, option
    assert {f.name for f in Compiler.__dataclass_fields__.values()} >= {"include", "build_path"}


def test_a_groups_options_are_listed_under_its_heading_in_help() -> None:
    """``--help`` lists each group's options under the group's PANEL; the shared option types stay unmarked."""
    shown = CliRunner().invoke(app, ["suggest", "--help"], env={"COLUMNS": "250"}).output
    panels = {line.split("─")[1].strip(): line for line in shown.splitlines() if line.startswith("╭─")}
    assert list(panels) == ["Arguments", "Options", "Compiler flags (as cc)", "Nests and sizes", "Suggestions",
                            "Whole-program check (with --evaluate)", "Measuring", "Server"]
    program = shown[shown.index("Whole-program check"):shown.index("─ Measuring")]
    assert "--build " in program and "--no-program-check" in program and "--include" not in program
    info = typing.get_args(Include)[1]
    assert info.rich_help_panel is None  # the copy in the group carries the panel, not the shared type


def test_every_help_paragraph_is_one_line_for_the_terminal_to_wrap() -> None:
    """typer's rich help keeps a docstring's line breaks; the command list then showed suggest's summary
    broken at the source's 110 columns and wrapped again at the terminal's."""
    def commands(command: typing.Any) -> typing.Iterator[typing.Any]:
        yield command
        for sub in getattr(command, "commands", {}).values():
            yield from commands(sub)

    helps = {c.name: c.help for c in commands(typer.main.get_command(app)) if c.help}
    assert len(helps) > 30
    assert not [name for name, text in helps.items() if any("\n" in part for part in text.split("\n\n"))]
    listing = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "250"}).output
    summary = "Recipes for each nest of FILE from its stored neighbours; --evaluate measures them in the program."
    assert summary in listing


def test_an_apply_reads_the_file_as_its_compiler_does(tmp_path: Path) -> None:
    out = tmp_path / "tuned.c"
    recipe = tmp_path / "recipe.json"
    recipe.write_text('{"steps": [{"op": "unroll", "loop": 1, "factor": 2}]}')
    done = CliRunner().invoke(app, ["apply", str(ROOT / "corpus/kernels/blas2/gemv.c"), "--recipe", str(recipe),
                                    "-U", "NOTHING", "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert "wrote" in done.output and out.read_text() != (ROOT / "corpus/kernels/blas2/gemv.c").read_text()


def test_the_whole_programs_json_is_the_apis_and_its_outcome_reads_the_typed_value() -> None:
    speedup = Speedup(1.5, 1.3, 1.7, confidence=0.95, pairs=6, runs=12, threads=1, cpu_pressure=0.0,
                      loaded=False, placement="unpinned")
    ok = ProgramComparison("ok", speedup=speedup, original_seconds=0.2, tuned_seconds=0.13)
    alone = NestAlone(1, "main.c#1", ProgramComparison("ok", speedup=speedup))
    evaluation = ProgramEvaluation(ok, accepted=True, nests_tuned=2, per_nest=(alone,))
    data = evaluation.to_dict()
    assert list(data) == ["status", "message", "original_seconds", "tuned_seconds", "speedup", "accepted",
                          "nests_tuned", "per_nest"]
    assert data["per_nest"][0]["name"] == "main.c#1" and data["speedup"]["text"] == speedup.describe()
    assert "per_nest" not in ProgramEvaluation(ok, accepted=True, nests_tuned=1).to_dict()
    assert program_outcome(2, evaluation, unchecked_ok=False).status == "tuned"
    assert evaluation.verdict() == f"held: whole program {speedup.describe()}"
    # The faster of the accepted candidate and the fallback's autotuned recipe is the one applied.
    nests = [{"index": 0, "name": "a#0", "accepted": True, "best": {"recipe": {"steps": []}, "speedup": 1.2,
                                                                    "text": "1.20x"},
              "autotuned": {"recipe": {"steps": [{"op": "parallelize", "loop": 0}]}, "speedup": 2.0, "text": "2x"}},
             {"index": 1, "name": "a#1", "accepted": False, "best": None}]
    (applied,) = applied_recipes(nests).values()
    assert applied.index == 0 and applied.figure == "2x" and applied.steps["steps"][0]["op"] == "parallelize"
