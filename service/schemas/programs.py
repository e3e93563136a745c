"""Programs: what a client sends to analyse a C program or a NumPy kernel (``ProgramIn``) and what it gets
back."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from service.schemas._common import (
    MAX_HEADERS,
    MAX_SOURCE_BYTES,
    Forbid,
    HeaderName,
    Identifier,
    MatrixId,
    ParamValue,
    ProgramName,
    check_utf8,
)


class ProgramIn(BaseModel):
    """A C program as the client has it: the source, its quoted includes, macros and sizes; or a Python file
    of NumPy kernels (``language``), which is parsed, never run outside the sandbox."""

    source: str = Field(..., max_length=MAX_SOURCE_BYTES, description="C source text")
    headers: dict[HeaderName, Annotated[str, Field(max_length=MAX_SOURCE_BYTES)]] = Field(
        default_factory=dict, max_length=MAX_HEADERS, description="Quoted includes by file name")
    defines: dict[Identifier, Annotated[str, Field(max_length=1024)] | None] = Field(
        default_factory=dict, max_length=256, description="Macros, as cc -D")
    params: dict[Identifier, ParamValue] = Field(default_factory=dict, max_length=256,
                                                 description="Parameter values")
    files: dict[HeaderName, Annotated[str, Field(max_length=MAX_SOURCE_BYTES)]] = Field(
        default_factory=dict, max_length=MAX_HEADERS,
        description="The project's other files by relative path (include/params.h, src/util.c): found by the "
                    "includes as cc finds them, and built with build")
    path: HeaderName | None = Field(None, description="Where source lies in the project (src/kernel.c; default: "
                                    "at its root, as name)")
    include_dirs: list[HeaderName] = Field(default_factory=list, max_length=64,
                                           description="Include directories (as cc -I), relative to the project")
    function: Identifier | None = Field(None, description="Only the nests of this function")
    name: ProgramName | None = Field(None, description="The program's name (its file name): a stored nest is "
                                     "called NAME#INDEX in every answer (default: the function, else 'program')")
    sparsity: Literal["uniform", "banded", "powerlaw"] | None = Field(
        None, description="Pattern of the generated matrices sparse nests (CSR/CSC index arrays) run on "
                          "(default uniform)")
    density: float | None = Field(None, gt=0, le=1, description="Fraction of entries of those matrices (default "
                                  "0.01, or less where the nest's index arrays hold less)")
    matrix: MatrixId | None = Field(None, description="Run sparse nests on this matrix instead: the id POST "
                                    "/v1/matrices answered for a Matrix Market file (its shape must match the "
                                    "parameters)")

    language: Literal["c", "python"] | None = Field(
        None, description="c, or python: a NumPy kernel (its array parameters typed as \"float64[N, M]\", the "
                          "sizes in params); default python where path or name ends in .py, else c")

    @model_validator(mode="after")
    def _one_structure(self) -> ProgramIn:
        if self.matrix is not None and (self.sparsity is not None or self.density is not None):
            raise ValueError("give either matrix or sparsity/density: a matrix file has its own pattern")
        return self

    @model_validator(mode="after")
    def _python_alone(self) -> ProgramIn:
        given = [k for k in ("headers", "defines", "files", "include_dirs", "sparsity", "density", "matrix")
                 if getattr(self, k)]
        if self.resolved_language() == "python" and given:
            raise ValueError(f"a Python kernel is one file with no {', '.join(given)}: its shapes come from its "
                             "type hints and params")
        return self

    def resolved_language(self) -> str:
        """``language``, else python for a ``path`` or ``name`` ending in ``.py``, else c."""
        named = self.path or self.name or ""
        return self.language or ("python" if named.endswith(".py") else "c")

    @field_validator("source")
    @classmethod
    def _source_is_text(cls, value: str) -> str:
        return check_utf8(value, "source")

    @field_validator("headers", "files")
    @classmethod
    def _headers_are_text(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            check_utf8(name, "a header name")
            check_utf8(text, f"header {name!r}")
        return value

    @field_validator("defines")
    @classmethod
    def _defines_are_text(cls, value: dict[str, str | None]) -> dict[str, str | None]:
        for name, text in value.items():
            if text is not None:
                check_utf8(text, f"macro {name}")
        return value


class MatrixPublic(BaseModel):
    """A Matrix Market file the server holds, by the id requests name it with (``"matrix": ID``)."""

    model_config = Forbid

    id: MatrixId = Field(description="The first 16 hex digits of the SHA-256 of the (uncompressed) file")
    rows: int
    cols: int
    nnz: int = Field(description="Entries, symmetric ones expanded")
    values: bool = Field(description="Whether it has values (false: a pattern matrix; the values are then random)")
    bytes: int = Field(description="Size of the uncompressed file")


class AnalysisPublic(BaseModel):
    model_config = Forbid

    nests: list[dict[str, Any]]
    rejected: list[dict[str, Any]] = Field(
        description="Regions outside the supported subset, with construct and location")


class ProgramStoredPublic(BaseModel):
    model_config = Forbid

    nest_ids: list[int] = Field(description="Database ids of the program's nests, in source order")
