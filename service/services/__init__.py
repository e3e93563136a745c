"""The service behind the routes, one module per resource (programs, suggestions, search, catalog,
tuning jobs, evaluation jobs, matrices, workers, readiness); no HTTP here. A request is mapped to the
core's types (:mod:`service.mappers`), the core (:class:`~service.core.Core`) answers, and its answer
is mapped back to the API's JSON. The CLI's local catalogue (:mod:`service.local_catalog`) calls the
same functions as the routes."""
