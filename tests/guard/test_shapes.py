"""Tests for `guard/shapes.py`: private keys, JWTs, URLs, headers and command lines."""

from __future__ import annotations

import pytest

from memdir.guard.shapes import shape_hits

from .corpus import ALNUM, PW_DB, jwt, pem_body, tok

BEARER = tok("shape-bearer", ALNUM, 40)
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body("shape") + "\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        (f"postgres://admin:{PW_DB}@db:5432/app", "connection string with password", PW_DB),
        (f"mysql -u root -p{PW_DB}", "command-line password", PW_DB),
        (f"Authorization: Bearer {BEARER}", "bearer token", BEARER),
        (jwt("shape"), "JWT", jwt("shape")),
        (PEM, "private key", PEM),
        (f"docker login -u ci -p {PW_DB} registry.example.com", "command-line password", PW_DB),
        (f"mongosh -u admin -p {PW_DB} --host db", "command-line password", PW_DB),
        (f"db.internal:5432:app:app_user:{PW_DB}", "pgpass password", PW_DB),
        (f"https://beheer:M@{PW_DB}@intranet.lan/admin", "URL with password", f"M@{PW_DB}"),
    ],
)
def test_shapes_are_found_with_their_kind_and_span(text: str, kind: str, value: str) -> None:
    (hit,) = shape_hits(text)
    assert hit.kind == kind
    assert text[hit.start : hit.end] == value


@pytest.mark.parametrize(
    "text",
    [
        "postgres://user:${PASS}@db/app",
        "https://example.com/path",
        "Bearer <token>",
        "",
        "docker login ghcr.io -u acme --password-stdin",
        "localhost:5432:*:postgres:*",
        "fe80:0:0:0:1:2:3:4",
    ],
)
def test_references_and_plain_urls_are_not_shapes(text: str) -> None:
    assert list(shape_hits(text)) == []
