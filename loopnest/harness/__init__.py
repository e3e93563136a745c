"""Sandboxed compile/run/verify/time of nests and their variants."""

from loopnest.harness.driver import ArrayLayout, array_layouts, synthesize_driver
from loopnest.harness.measure import Evaluation, Harness, VariantResult, Verification, measure, verify_outputs
from loopnest.harness.sandbox import Limits, RunResult, run_limited

__all__ = ["ArrayLayout", "Evaluation", "Harness", "Limits", "RunResult", "VariantResult", "Verification",
           "array_layouts", "measure", "run_limited", "synthesize_driver", "verify_outputs"]
