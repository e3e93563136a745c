"""The engine's fixed costs: analysing a corpus kernel (extraction, dependences, description) and
compiling, running and verifying one variant. Targets: analysis under 200 ms for a ~100-line kernel; a
variant compiled in under 0.5 s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopnest import Harness, PreprocessOptions, Recipe, compute_dependences, describe_scop, extract_scops
from loopnest.config import get_settings
from loopnest.harness.sandbox import Limits

ROOT = Path(__file__).resolve().parents[2]
KERNELS = sorted(json.loads((ROOT / "corpus" / "expected.json").read_text()))
VARIANT_KERNELS = ["corpus/kernels/blas3/gemm_ijk.c", "corpus/kernels/stencil/jacobi2d.c",
                   "corpus/kernels/conv/conv_layer.c"]


@pytest.mark.parametrize("kernel", KERNELS)
def test_analysis(benchmark: Any, expected: dict[str, Any], kernel: str) -> None:
    spec = expected[kernel]
    path = ROOT / kernel
    options = PreprocessOptions(tuple(str(ROOT / d) for d in spec.get("include_dirs", [])))

    def analyse() -> int:
        extraction = extract_scops(path, options)
        for scop in extraction.scops:
            describe_scop(scop, spec["params"], compute_dependences(scop))
        return len(extraction.scops)

    nests = benchmark.pedantic(analyse, rounds=3, warmup_rounds=1)
    benchmark.extra_info.update(lines=len(path.read_text().splitlines()), nests=nests)
    assert nests == len(spec["nests"])


@pytest.mark.parametrize("kernel", VARIANT_KERNELS)
def test_variant_compile_run_verify(benchmark: Any, expected: dict[str, Any], kernel: str) -> None:
    scop = extract_scops(ROOT / kernel).scops[0]
    params = {k: min(v, 32) for k, v in expected[kernel]["params"].items()}
    unroll = Recipe.from_dict({"steps": [{"op": "unroll", "loop": scop.depth - 1, "factor": 2}]})
    with Harness(scop, params, reps=1, limits=Limits.from_settings(get_settings())) as harness:
        harness.baseline()
        evaluation = benchmark.pedantic(harness.evaluate, args=(unroll,), rounds=3)
    benchmark.extra_info.update(compile_s=evaluation.variant.compile_seconds)
    assert evaluation.verified
