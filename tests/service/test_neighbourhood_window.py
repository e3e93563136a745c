"""Which stored nests a suggestion looks at for lenders (:func:`database.neighbourhood.read_neighbourhoods`):
the nearest ``searched`` nests of other programs, with the program's own other nests that fall among them.
A suggestion with fallback is answered from what it read before storing its nests, and the answer is kept
under the stamp after: reading again after the write must give the same lenders. Before, a program's stored
nests took places among the nearest (two alike nests: the twin is the nearest of all) and pushed a lender out."""

from __future__ import annotations

from pathlib import Path

from database.neighbourhood import NestLookup, read_neighbourhoods
from loopnest.harness.index_data import structure_key
from service.core.analysis import analyse_program
from service.core.ingest import ingest_nests
from service.core.types import ProgramSource
from tests.helpers.kernels import GEMM
from tests.service.factories import TUNED, make_app, service_settings

# Two alike nests in one program: each one's embedding is the other's, the nearest stored nest of all.
TWINS = GEMM + GEMM.replace("void gemm(", "void gemm_again(")


def test_a_programs_stored_nests_take_no_place_among_the_nearest(tmp_path: Path) -> None:
    app = make_app(service_settings(tmp_path), populated=True)
    core = app.state.perfembed.core()
    ctx = core.context
    program = ProgramSource(source=TWINS, params={"n": 16}, name="twins.c")
    nests = analyse_program(program).nests
    others = len(TUNED)  # every other stored nest lends (populate measured each under its recipe)

    def lenders(ids: list[int | None]) -> list[tuple[int, ...]]:
        read = read_neighbourhoods(ctx.store, ctx.embeddings, [NestLookup(
            source=program.source, index=n.index, normalized=n.normalized, features=n.static_features(),
            target_id=ctx.target_id, params={"n": 16}, structure=structure_key(None), nest_id=i,
            siblings=len(nests) - 1, lenders=others, searched=others) for n, i in zip(nests, ids, strict=True)])
        return [tuple(near.hit.nest_id for near in r.near) for r in read.nests]

    before = lenders([None, None])
    ids = ingest_nests(ctx, source=program.source, name="twins.c", nests=nests, params={"n": 16})
    assert lenders(list(ids)) == before == lenders([None, None])
    assert all(len(near) == others for near in before)
