"""The CLI's neighbour table: a transfer variant says what it is, and a neighbour with nothing new says why."""

from __future__ import annotations

import pytest
from rich.console import Console

from service.commands.suggest import NOTHING_NEW, neighbour_table, print_suggestions
from service.ui.deps import TEMPLATES, templates


def _render(neighbours: list[dict[str, object]], candidates: list[dict[str, object]]) -> str:
    console = Console(width=250, record=True)
    console.print(neighbour_table(neighbours, candidates))
    return console.export_text()


def test_a_variant_of_a_lent_recipe_is_labelled_and_a_repeat_is_not_called_inapplicable() -> None:
    neighbours = [{"nest_id": 1, "name": "logsum_f64", "distance": 0.13, "recorded_speedup": 2.16, "target": None},
                  {"nest_id": 2, "name": "sum1d_f64", "distance": 0.24, "recorded_speedup": 3.88, "target": None}]
    lent = {"from": "logsum_f64", "from_nest_id": 1, "recipe_text": "tile i by 256; unroll i by 2",
            "from_speedup": 2.16}
    simd = {**lent, "from": "logsum_f64 (SIMD reduction)", "recipe_text": "tile i by 256; simd i (reduction)",
            "variant": "SIMD reduction"}
    text = _render(neighbours, [lent, simd])
    (lent_line,) = [line for line in text.splitlines() if "unroll i by 2" in line]
    assert "(variant:" not in lent_line
    assert "tile i by 256; simd i (reduction) (variant: SIMD reduction)" in text
    # sum1d's recipe is the SIMD variant above (the same code): nothing new, not "does not apply".
    assert NOTHING_NEW in text


def test_the_web_page_says_nothing_new_as_the_cli_does() -> None:
    assert templates().from_string("{{ NOTHING_NEW }}").render() == NOTHING_NEW
    assert "{{ NOTHING_NEW }}" in (TEMPLATES / "suggest.html").read_text()


def test_a_busy_machine_is_said_on_each_screening_figure_and_at_the_end(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 58: on a busy machine every parallel candidate screened at 0.02-0.13x and nothing was accepted,
    with no word that the machine was busy or that --threads 1 would measure something."""
    evaluated = [{"from": "gemm_ikj", "status": "ok", "message": "", "verified": True, "speedup": 0.05,
                  "confirmed": None}]
    nest = {"index": 0, "name": "k.c#0", "function": "k", "neighbours": [], "candidates": [], "confident": True,
            "evaluated": evaluated, "accepted": False, "best": None, "screening_pressure": 0.62, "busy": True}
    print_suggestions({"nests": [nest]}, None, database="sqlite://")
    out = " ".join(capsys.readouterr().out.split())  # the console wraps at its width
    assert "screening speedup 0.05x, machine busy (62% CPU pressure)" in out
    assert "none screened faster than the original, so none was re-measured" in out  # nothing was re-measured
    assert "rerun on an idle machine, or with --threads 1" in out


def test_a_tiny_ratio_keeps_its_digits(capsys: pytest.CaptureFixture[str]) -> None:
    """A parallel candidate of a 1000-iteration loop screened at 0.004x and read '0.00x', like a bug."""
    evaluated = [{"from": "axpy", "status": "ok", "message": "", "verified": True, "speedup": 0.0043,
                  "confirmed": None}]
    nest = {"index": 0, "name": "k.c#0", "function": "k", "neighbours": [], "candidates": [], "confident": True,
            "evaluated": evaluated, "accepted": False, "best": None}
    print_suggestions({"nests": [nest]}, None, database="sqlite://")
    assert "screening speedup 0.0043x" in " ".join(capsys.readouterr().out.split())
