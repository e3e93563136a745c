"""Request and response models of the REST API (kept apart from the ORM models).

Families follow the template: ``XIn`` is what a client sends, ``XPublic`` what it gets back and
``XsPublic`` a page of them (``data`` plus ``count``). Every response model forbids keys it does not
declare (``ErrorPublic`` excepted: errors carry their own details): what comes from the application core
(suggestions, search, nest details) is filled by explicit mappers (:mod:`service.mappers`), the rest by
the services, and a key that none of them names is a bug caught at once, never sent to a client.

One module per resource (``programs``, ``suggestions``, ``jobs``, ``catalog``, ``status``), the shared
limits and types in ``_common``; every name is imported from here.
"""

from __future__ import annotations

from service.schemas._common import (
    FLOAT32_MAX,
    MAX_HEADERS,
    MAX_ID,
    MAX_SOURCE_BYTES,
    MAX_VECTOR,
    MAX_WARM_START,
    Forbid,
    HeaderName,
    Identifier,
    JsonObject,
    MatrixId,
    ParamValue,
    ProgramName,
)
from service.schemas.catalog import (
    NestDetailPublic,
    NestsPublic,
    NestSummaryPublic,
    TargetPublic,
    TargetsPublic,
)
from service.schemas.jobs import (
    JobIn,
    JobPublic,
    JobsPublic,
    RecipeIn,
)
from service.schemas.programs import (
    AnalysisPublic,
    MatrixPublic,
    ProgramIn,
    ProgramStoredPublic,
)
from service.schemas.status import (
    ErrorPublic,
    HealthPublic,
    ReadyPublic,
    WorkerPublic,
    WorkersPublic,
)
from service.schemas.suggestions import (
    EvaluationJobPublic,
    GatePublic,
    NeighbourPublic,
    ProgressPublic,
    SearchIn,
    SearchPublic,
    SuggestedNeighbourPublic,
    SuggestedNestPublic,
    SuggestionsIn,
    SuggestionsPublic,
)

__all__ = [
    "AnalysisPublic",
    "ErrorPublic",
    "EvaluationJobPublic",
    "FLOAT32_MAX",
    "Forbid",
    "GatePublic",
    "HeaderName",
    "HealthPublic",
    "Identifier",
    "JobIn",
    "JobPublic",
    "JobsPublic",
    "JsonObject",
    "MAX_HEADERS",
    "MAX_ID",
    "MAX_SOURCE_BYTES",
    "MAX_VECTOR",
    "MAX_WARM_START",
    "MatrixId",
    "MatrixPublic",
    "NeighbourPublic",
    "NestDetailPublic",
    "NestSummaryPublic",
    "NestsPublic",
    "ParamValue",
    "ProgramIn",
    "ProgramName",
    "ProgramStoredPublic",
    "ProgressPublic",
    "ReadyPublic",
    "RecipeIn",
    "SearchIn",
    "SearchPublic",
    "SuggestedNeighbourPublic",
    "SuggestedNestPublic",
    "SuggestionsIn",
    "SuggestionsPublic",
    "TargetPublic",
    "TargetsPublic",
    "WorkerPublic",
    "WorkersPublic",
]
