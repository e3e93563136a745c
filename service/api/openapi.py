"""The OpenAPI description and the documentation pages.

``/docs`` (Swagger UI) and ``/redoc`` load their scripts and styles from this server (the assets
of the ``fastapi-offline`` package, under ``/docs-assets``), so they work without internet access.
The description marks each operation's key as the server needs it: writes need one; reads need one
only when ``PERFEMBED_API_KEYS_FOR_READS`` is set, else a key is optional (``security: [{}, ...]``:
no key, or a valid one).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from service.api.deps import READ_SCHEME
from service.config import ServiceSettings

DOCS_ASSETS = "/docs-assets"
WRITE_SCHEME = "ApiKey"
# Swagger UI would ask validator.swagger.io to check the description: nothing leaves the server.
SWAGGER_UI_PARAMETERS = {"validatorUrl": None, "tryItOutEnabled": True, "displayRequestDuration": True}


def make_app(**kwargs: Any) -> FastAPI:
    """A FastAPI app whose ``/docs`` and ``/redoc`` are served from local assets."""
    return FastAPIOffline(static_url=DOCS_ASSETS, swagger_ui_parameters=SWAGGER_UI_PARAMETERS, **kwargs)


def install_openapi(app: FastAPI, settings: ServiceSettings) -> None:
    """Generate the description once, with each read's key marked as the server needs it."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            mark_read_keys(generate(), required=settings.api_keys_for_reads)
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]


def mark_read_keys(schema: dict[str, Any], *, required: bool) -> None:
    """Reads name the key's scheme ``ApiKeyForReads`` (see :mod:`service.api.deps`): say instead that
    they take the write key, optionally (``[{}, {"ApiKey": []}]``) unless ``required``."""
    for operation in (op for ops in schema.get("paths", {}).values() for op in ops.values()):
        security = operation.get("security")
        if security and any(READ_SCHEME in requirement for requirement in security):
            operation["security"] = [{WRITE_SCHEME: []}] if required else [{}, {WRITE_SCHEME: []}]
    schema.get("components", {}).get("securitySchemes", {}).pop(READ_SCHEME, None)
