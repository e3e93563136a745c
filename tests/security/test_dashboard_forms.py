"""Issue 59, item 13: the dashboard refuses cross-site forms, sends the security headers, and marks its key
cookie ``Secure`` where it is served over HTTPS.

Reproduction (before the fix): ``POST /ui/key`` from ``Origin: http://evil.example`` set or forgot the key
cookie (303); there was no CSRF or Origin check, no CSP, X-Frame-Options or nosniff, and the cookie, which
holds a whole write key, was never ``Secure``. Now a form another site posts is a 403 that sets nothing;
every answer says nosniff and no framing, the pages a strict CSP (no inline script or style); the cookie is
``Secure`` over HTTPS or behind a trusted proxy that says ``X-Forwarded-Proto: https``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.ui.routes import router as ui_router
from service.web_security import CSP
from tests.security.owners import World, build, form_headers

EVIL = "http://evil.example"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    built = build(Path(tmp_path_factory.mktemp("forms")))
    yield built
    built.client.__exit__(None, None, None)


@pytest.mark.parametrize("headers", [
    {"Origin": EVIL}, {"Origin": "null"}, {"Referer": EVIL + "/page"}, {"Sec-Fetch-Site": "cross-site"},
    {"Origin": "http://testserver.evil.example"}, {"Origin": "http://testserver", "Sec-Fetch-Site": "same-site"},
], ids=["origin", "null-origin", "referer", "fetch-site", "lookalike", "same-site"])
def test_a_form_from_another_site_is_refused_and_sets_nothing(world: World, headers: dict[str, str]) -> None:
    for data in ({"key": world.keys["a"]}, {"forget": "1"}):
        r = world.client.post("/ui/key", data=data, headers=headers, follow_redirects=False)
        assert r.status_code == 403 and "set-cookie" not in r.headers, r.text
        assert "posted from another site" in r.text
    # Every form the dashboard takes, found from the app's routes, so that a new one cannot be forgotten.
    posts = sorted(route.path for route in ui_router.routes if "POST" in (getattr(route, "methods", None) or ()))
    assert {"/ui/key", "/ui/suggest", "/ui/suggest/tuned"} <= set(posts), posts
    for path in posts:
        r = world.client.post(path, data={"source": "void f(void) {}"}, headers=headers)
        assert r.status_code == 403, (path, r.text[:200])


def test_the_dashboards_own_forms_and_clients_without_a_browser_are_served(world: World) -> None:
    for headers in (form_headers(), {"Referer": "http://testserver/ui/key"}, {"Sec-Fetch-Site": "same-origin"}, {}):
        r = world.client.post("/ui/key", data={"key": world.keys["a"]}, headers=headers, follow_redirects=False)
        assert r.status_code == 303, (headers, r.text)
    behind = world.client.post("/ui/key", data={"key": world.keys["a"]}, follow_redirects=False,
                               headers={"Host": "internal:8000", "X-Forwarded-Host": "perfembed.example.org",
                                        "Origin": "https://perfembed.example.org"})
    assert behind.status_code == 403  # the client is no trusted proxy: its X-Forwarded-Host is not believed


def test_every_answer_has_the_security_headers_and_the_pages_a_strict_csp(world: World) -> None:
    for path in ("/ui", "/ui/map", "/ui/nests/1", "/ui/static/ui.css", "/v1/nests", "/healthz"):
        r = world.client.get(path)
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY", path
        assert (r.headers.get("content-security-policy") == CSP) == path.startswith("/ui"), path
    assert "'unsafe-inline'" not in CSP and "'unsafe-eval'" not in CSP and "frame-ancestors 'none'" in CSP
    page = world.client.get("/ui").text
    assert "style=" not in page and "<script>" not in page


def test_plotly_gets_its_stylesheet_as_a_file(world: World) -> None:
    page = world.client.get("/ui/map").text
    assert '<link id="plotly.js-style-global" class="no-inline-styles" rel="stylesheet" href="/ui/static/plotly.css">' \
        in page
    css = world.client.get("/ui/static/plotly.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert ".js-plotly-plot .plotly .modebar{" in css.text and css.text.count("{") > 30


def _cookie(client: TestClient, key: str, **headers: str) -> str:
    r = client.post("/ui/key", data={"key": key}, headers=headers, follow_redirects=False)
    assert r.status_code == 303, r.text
    return r.headers["set-cookie"].lower()


def test_the_key_cookie_is_secure_over_https_or_behind_a_trusted_proxy(world: World, tmp_path: Path) -> None:
    plain = _cookie(world.client, world.keys["a"])
    assert "httponly" in plain and "samesite=strict" in plain and "secure" not in plain
    # X-Forwarded-Proto from a client that is no trusted proxy: not believed.
    assert "secure" not in _cookie(world.client, world.keys["a"], **{"X-Forwarded-Proto": "https"})
    with TestClient(world.client.app, base_url="https://testserver") as https:
        assert "; secure" in _cookie(https, world.keys["a"])
    trusting = build(tmp_path, forwarded_allow_ips="testclient")
    try:
        assert "; secure" in _cookie(trusting.client, trusting.keys["a"], **{"X-Forwarded-Proto": "https"})
    finally:
        trusting.client.__exit__(None, None, None)
