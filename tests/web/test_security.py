"""The memory page's guard (docs/web.md, §5): Host, Origin, fetch metadata, framing and the
token are checked before any route runs — a spy on the Memory proves no handler ran —, every
response carries the security headers, and note bodies render inert."""

from __future__ import annotations

import html.parser
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from web_helpers import ASGI_PORT, AsgiPage, UiServer

from memdir import Memory
from memdir.web.render import allowed_url, render_body
from memdir.web.security import CSP

HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
SPIED = (
    "notes.list",
    "search",
    "notes.read_current",
    "notes.links",
    "remember",
    "tidy.findings",
    "sync.status",
    "backups",
)


@pytest.fixture
def spy(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the Memory methods called (none, for a refused request)."""
    calls: list[str] = []
    for path in SPIED:
        *nouns, name = path.split(".")
        owner: Any = memory
        for noun in nouns:
            owner = getattr(owner, noun)
        original = getattr(owner, name)

        def recorder(*args: Any, _name: str = name, _fn: Any = original, **kw: Any) -> Any:
            calls.append(_name)
            return _fn(*args, **kw)

        monkeypatch.setattr(owner, name, recorder)
    yield calls


def assert_headers(response: httpx.Response, api: bool) -> None:
    for name, value in HEADERS.items():
        assert response.headers.get(name) == value, (name, response.status_code)
    assert response.headers.get("cache-control") == ("no-store" if api else "no-cache")
    assert not any(h.lower().startswith("access-control-") for h in response.headers)


def test_the_token_is_required_and_compared_whole(page: AsgiPage, spy: list[str]) -> None:
    assert page.get("/api/notes", auth=False).status_code == 401
    wrong = {"Authorization": f"Bearer {page.token[:-1]}x"}
    assert page.get("/api/notes", auth=False, headers=wrong).status_code == 401
    bare = {"Authorization": page.token}  # without "Bearer"
    assert page.get("/api/notes", auth=False, headers=bare).status_code == 401
    assert page.get(f"/api/notes?token={page.token}", auth=False).status_code == 401
    assert page.get(f"/api/notes?access_token={page.token}", auth=False).status_code == 401
    assert spy == []
    answer = page.get("/api/notes", auth=False)
    assert answer.headers["www-authenticate"] == "Bearer"
    assert answer.json()["error"]["kind"] == "refused"
    assert page.get("/api/notes").status_code == 200
    assert spy == ["list"]


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        f"evil.example:{ASGI_PORT}",
        "127.0.0.1",
        f"127.0.0.1:{ASGI_PORT + 1}",
        f"0.0.0.0:{ASGI_PORT}",
        f"[::1]:{ASGI_PORT}",
        f"localhost.evil.example:{ASGI_PORT}",
    ],
)
def test_a_foreign_host_is_misdirected(page: AsgiPage, spy: list[str], host: str) -> None:
    answer = page.get("/api/notes", headers={"Host": host})
    assert answer.status_code == 421
    assert_headers(answer, api=True)
    assert page.get("/", headers={"Host": host}).status_code == 421
    assert spy == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Origin", "http://evil.example"),
        ("Origin", f"http://127.0.0.1:{ASGI_PORT + 1}"),
        ("Origin", f"https://127.0.0.1:{ASGI_PORT}"),
        ("Origin", "null"),
        ("Sec-Fetch-Site", "cross-site"),
        ("Sec-Fetch-Site", "same-site"),
        ("Sec-Fetch-Dest", "iframe"),
        ("Sec-Fetch-Dest", "embed"),
    ],
)
def test_other_sites_and_framing_are_refused(
    page: AsgiPage, spy: list[str], name: str, value: str
) -> None:
    for method, path in (("GET", "/api/notes"), ("POST", "/api/notes"), ("GET", "/")):
        answer = page.request(method, path, headers={name: value}, json={"summary": "x"})
        assert answer.status_code == 403, (method, path)
        assert_headers(answer, api=path.startswith("/api/"))
    assert spy == []
    assert page.memory.notes.list() == []


def test_own_origin_and_same_origin_fetches_pass(page: AsgiPage) -> None:
    for origin in (f"http://127.0.0.1:{ASGI_PORT}", f"http://localhost:{ASGI_PORT}"):
        ok = page.get(
            "/api/notes",
            headers={"Origin": origin, "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Dest": "empty"},
        )
        assert ok.status_code == 200
    assert page.get("/api/notes", headers={"Host": f"localhost:{ASGI_PORT}"}).status_code == 200
    assert page.get("/", auth=False, headers={"Sec-Fetch-Site": "none"}).status_code in (200, 404)


def test_every_kind_of_answer_carries_the_headers(page: AsgiPage) -> None:
    answers = {
        "ok": page.get("/api/notes"),
        "not found": page.get("/api/notes/no-such-note"),
        "no route": page.get("/api/nothing-here"),
        "bad method": page.request("DELETE", "/api/notes"),
        "invalid": page.post(
            "/api/notes", content=b"{", headers={"Content-Type": "application/json"}
        ),
        "refused": page.get("/api/notes", auth=False),
    }
    for label, answer in answers.items():
        assert_headers(answer, api=True)
        assert answer.headers["content-type"].startswith("application/json"), label
    assert answers["no route"].status_code == 404
    assert answers["bad method"].status_code == 405
    for path in ("/", "/no-such-file.js", "/../pyproject.toml", "/%2e%2e/app.py"):
        assert_headers(page.get(path, auth=False), api=False)


def test_the_page_serves_only_its_own_files(page: AsgiPage) -> None:
    for path in (
        "/app.py",
        "/../app.py",
        "/%2e%2e/app.py",
        "/..%2fapp.py",
        "/static/../app.py",
        "/.hidden.js",
        "/__init__.py",
        "/etc/passwd",
    ):
        answer = page.get(path, auth=False)
        assert answer.status_code == 404, path
        assert "import" not in answer.text


def test_static_files_have_their_content_type(tmp_path: Any, memory: Memory) -> None:
    from memdir.web.app import build_app

    root = tmp_path / "static"
    (root / "img").mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html><title>memdir</title>")
    (root / "app.js").write_text("console.log(1)")
    (root / "style.css").write_text("body{}")
    (root / "img" / "logo.svg").write_text("<svg/>")
    (root / "notes.py").write_text("secret = 1")
    (root / "link.js").symlink_to(root / "app.js")
    app = AsgiPage(build_app(memory, token="t" * 43, port=ASGI_PORT, static=root), "t", memory)
    expected = {
        "/": "text/html; charset=utf-8",
        "/app.js": "text/javascript; charset=utf-8",
        "/static/app.js": "text/javascript; charset=utf-8",
        "/style.css": "text/css; charset=utf-8",
        "/img/logo.svg": "image/svg+xml",
    }
    for path, kind in expected.items():
        answer = app.get(path, auth=False)
        assert answer.status_code == 200, path
        assert answer.headers["content-type"] == kind
        assert_headers(answer, api=False)
    assert app.get("/notes.py", auth=False).status_code == 404
    assert app.get("/link.js", auth=False).status_code == 404


def test_the_real_server_refuses_the_same(ui_server: UiServer, monkeypatch: Any) -> None:
    calls: list[str] = []
    original = ui_server.memory.notes.list
    monkeypatch.setattr(
        ui_server.memory.notes, "list", lambda *a, **k: (calls.append("list"), original(*a, **k))[1]
    )
    base = ui_server.base
    with httpx.Client(base_url=base, timeout=10) as client:
        assert client.get("/api/notes").status_code == 401
        assert client.get("/api/notes", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert client.get(f"/api/notes?token={ui_server.token}").status_code == 401
        auth = ui_server.headers
        assert client.get("/api/notes", headers={**auth, "Host": "evil.example"}).status_code == 421
        foreign = {**auth, "Origin": "http://evil.example"}
        assert client.get("/api/notes", headers=foreign).status_code == 403
        cross = {**auth, "Sec-Fetch-Site": "cross-site"}
        assert client.get("/api/notes", headers=cross).status_code == 403
        framed = client.get("/", headers={"Sec-Fetch-Dest": "iframe"})
        assert framed.status_code == 403
        assert calls == []
        ok = client.get("/api/notes", headers=auth)
        assert ok.status_code == 200
        assert_headers(ok, api=True)
        assert "server" not in ok.headers
        assert calls == ["list"]
        front = client.get("/")
        assert_headers(front, api=False)
        assert "frame-ancestors 'none'" in front.headers["content-security-policy"]


def test_a_guard_refusal_never_echoes_the_secret(page: AsgiPage) -> None:
    secret = "AKIA" + "QWERTYUIOPASDFGH"
    answer = page.post("/api/notes", json={"summary": "aws keys", "body": f"key {secret}"})
    assert answer.status_code == 422
    assert answer.json()["error"]["kind"] == "refused"
    assert secret not in answer.text
    assert secret[4:] not in answer.text
    assert page.memory.notes.list() == []


# -- rendering ---------------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](&#x6A;avascript:alert(1))",
    "[x](java\nscript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x]( javascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    "![x](javascript:alert(1))",
    "![x](data:image/svg+xml,<svg onload=alert(1)>)",
    "![x](https://tracker.example/pixel.png)",
    "<javascript:alert(1)>",
    "<data:text/html,x>",
    "[x][r]\n\n[r]: javascript:alert(1)",
    "[x][r]\n\n[r]: data:text/html,x 'title'",
    "[[../x]] [[../../etc/passwd]] [[a b]] [[<script>]]",
    '[x](https://ok.example "a\\" onmouseover=\\"alert(1)")',
    "[x](https://ok.example 'it''s \" onclick=alert(1)')",
    "<div onclick=alert(1)>x</div>",
    "<svg><script>alert(1)</script></svg>",
    "```html\n<script>alert(1)</script>\n```",
    "`<img src=x onerror=alert(1)>`",
    "[x](#/note/../../x) [y](#javascript:alert(1)) [z](//evil.example)",
    "<style>body{display:none}</style><iframe src=https://evil.example></iframe>",
]


class _Tags(html.parser.HTMLParser):
    """Every tag and attribute of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


_ALLOWED_TAGS = {
    *("p", "a", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "hr", "br"),
    *("h1", "h2", "h3", "h4", "h5", "h6"),
}


def assert_inert(rendered: str) -> None:
    parser = _Tags()
    parser.feed(rendered)
    parser.close()
    assert "<script" not in rendered.lower()
    for tag, attrs in parser.tags:
        assert tag in _ALLOWED_TAGS, tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name in {"href", "class", "title", "rel", "start"}, (tag, name)
            if name == "href":
                assert value is not None and allowed_url(value), value
                assert re.match(r"(https?:|mailto:|#/note/[a-z0-9-]+$)", value), value


@pytest.mark.parametrize("body", HOSTILE)
def test_hostile_bodies_render_inert(body: str) -> None:
    assert_inert(render_body(body, {"x": "a note"}))


def test_links_that_are_allowed_stay_links() -> None:
    out = render_body(
        "[[known]] [[gone]] [w](https://example.org/a?b=1) <https://example.org> "
        "[m](mailto:me@example.org) [n](#/note/known)",
        {"known": 'Summary "quoted" <b>'},
    )
    assert (
        '<a href="#/note/known" class="wikilink" title="Summary &quot;quoted&quot; &lt;b&gt;">'
        in out
    )
    assert '<a href="#/note/gone" class="wikilink dangling"' in out
    assert '<a href="https://example.org/a?b=1" rel="noopener noreferrer nofollow">w</a>' in out
    assert 'href="mailto:me@example.org"' in out
    assert '<a href="#/note/known">n</a>' in out
    assert "<img" not in render_body("![alt](https://example.org/x.png)")


def test_entity_encoded_and_reference_tricks_are_text() -> None:
    for body in ("[x](&#106;avascript:alert(1))", "[x][r]\n\n[r]: javascript:alert(1)"):
        out = render_body(body)
        assert "href" not in out
        assert "<a" not in out


_PIECES = [
    *list("<>[]()!\"'`&#;:/=\n -_*\\ax1"),
    *("javascript:", "JaVaScRiPt:", "data:", "vbscript:", "&#106;", "&#x3a;", "on"),
    *("onerror=", "script", "img", "src", "href", "http://", "mailto:", "#/note/", "[["),
    "]]",
]


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(st.text(max_size=80), st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
)
def test_rendering_any_text_stays_inert(body: str) -> None:
    assert_inert(render_body(body, {"a": "note a", "x": None}))
