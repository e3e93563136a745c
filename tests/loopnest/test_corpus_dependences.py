"""Every corpus kernel parses, and its dependences match the hand-checked expectations."""

from __future__ import annotations

import pytest

from loopnest import PreprocessOptions, ScheduleSpace, compute_dependences, extract_scops
from tests.helpers.paths import ROOT, load_expected

EXPECTED = load_expected()


def _extract(rel: str):
    spec = EXPECTED[rel]
    options = PreprocessOptions(tuple(str(ROOT / d) for d in spec.get("include_dirs", [])))
    return extract_scops(ROOT / rel, options, function=spec.get("function"))


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_kernel_matches_expectations(rel: str) -> None:
    spec = EXPECTED[rel]
    extraction = _extract(rel)
    got_rejected = sorted((r.construct, r.location.line) for r in extraction.rejected)
    want_rejected = sorted((r["construct"], r["line"]) for r in spec.get("rejected", []))
    assert got_rejected == want_rejected
    assert len(extraction.scops) == len(spec["nests"])
    for scop, want in zip(extraction.scops, spec["nests"], strict=True):
        assert scop.region.function == want["function"]
        assert scop.depth == want["depth"]
        assert len(scop.statements) == want["statements"]
        deps = compute_dependences(scop)
        space = ScheduleSpace(scop, deps)
        for level in range(scop.depth):
            carried = sorted({d.kind for d in space.carried_deps(level)})
            assert carried == sorted(want["carried"][str(level)]), f"{scop.name} depth {level}: {want['why']}"
            assert (not carried) == want["parallel"][level]
