"""The HTTP layer: dependencies (:mod:`service.api.deps`), routers (:mod:`service.api.routes`)."""
