"""loopnest: C loop nests in, legal transformed C out, verified and timed.

source -> :func:`extract_scops` -> :class:`Scop` -> :func:`apply_recipe` -> :func:`generate_c`
-> :class:`Harness` (compile, run, verify, time).
"""

from loopnest.analysis import describe_scop
from loopnest.codegen import generate_c
from loopnest.dropin import replace_regions
from loopnest.errors import (
    CompileError,
    ExecutionError,
    IllegalTransformError,
    InputError,
    InternalError,
    ParameterError,
    PerfembedError,
    RecipeError,
    SourceError,
    SourceLocation,
    ToolchainError,
    UnsupportedConstructError,
    VerificationError,
)
from loopnest.frontend.extract import Extraction, RejectedRegion, extract_scops
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.harness import Evaluation, Harness, Limits, VariantResult, verify_outputs
from loopnest.ir import Scop, Statement
from loopnest.polyhedral import Dependence, ScheduleSpace, compute_dependences
from loopnest.transform import Recipe, Step, apply_recipe

__all__ = [
    "CompileError", "Dependence", "Evaluation", "ExecutionError", "Extraction", "Harness", "IllegalTransformError",
    "InputError", "InternalError", "Limits", "ParameterError", "PerfembedError", "PreprocessOptions", "Recipe",
    "RecipeError",
    "RejectedRegion", "ScheduleSpace", "Scop", "SourceError", "SourceLocation", "Statement", "Step",
    "ToolchainError", "UnsupportedConstructError", "VariantResult", "VerificationError", "apply_recipe",
    "compute_dependences", "describe_scop", "extract_scops", "generate_c", "replace_regions", "verify_outputs",
]
