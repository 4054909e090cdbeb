"""`memdir search`, `retrieve` and `reindex` through the real stack (local embedder included)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

Invoke = Callable[..., Result]

HIT_FIELDS = {
    "note_id",
    "score",
    "snippet",
    "scope",
    "path",
    "summary",
    "revision",
    "superseded_by",
    "match",
    "weak",
    "type",
    "tags",
}
CHUNK_FIELDS = {"note_id", "revision", "chunk_hash", "start", "end", "score", "source"}
REINDEX_FIELDS = {"notes", "chunks", "embedded", "embedder", "seconds"}


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _remember(cli: Invoke, summary: str, body: str, *extra: str) -> str:
    doc = _json(cli("remember", summary, "--body", body, *extra, "--json"))
    note_id: str = doc["note"]["id"]
    return note_id


@pytest.fixture
def notes(cli: Invoke) -> dict[str, str]:
    return {
        "pricing": _remember(cli, "Pricing cards use fills", "Separated by fill and whitespace."),
        "vacuum": _remember(cli, "Database vacuum weekly", "Run the weekly maintenance vacuum."),
        "cars": _remember(cli, "Automobile upkeep", "Automobile maintenance every spring."),
        "cjk": _remember(cli, "Datenbank", "数据库使用PostgreSQL"),
    }


def test_search_human_output(cli: Invoke, notes: dict[str, str]) -> None:
    result = cli("search", "whitespace", "--method", "lexical")
    assert result.exit_code == 0
    assert notes["pricing"] in result.stdout
    assert "Separated by fill and whitespace." in result.stdout
    assert notes["vacuum"] not in result.stdout
    none = cli("search", "zzzunmatched", "--method", "lexical")
    assert none.exit_code == 0 and "no matching notes" in none.stdout


def test_search_json_fields(cli: Invoke, notes: dict[str, str]) -> None:
    hits = _json(cli("search", "whitespace", "--method", "lexical", "--json"))
    assert [h["note_id"] for h in hits] == [notes["pricing"]]
    assert set(hits[0]) == HIT_FIELDS
    assert hits[0]["scope"] == "project" and hits[0]["match"] == "words"
    assert hits[0]["type"] is None and hits[0]["tags"] == []
    assert _json(cli("search", "zzzunmatched", "--method", "lexical", "--json")) == []


@pytest.mark.parametrize("method", ["lexical", "vector", "hybrid"])
def test_every_method(cli: Invoke, notes: dict[str, str], method: str) -> None:
    hits = _json(cli("search", "weekly vacuum", "--method", method, "--json"))
    assert hits[0]["note_id"] == notes["vacuum"]
    expected = {"lexical": "words", "vector": "meaning", "hybrid": "both"}[method]
    assert hits[0]["match"] == expected


def test_hybrid_finds_by_meaning(cli: Invoke, notes: dict[str, str]) -> None:
    hits = _json(cli("search", "car", "--json"))
    assert notes["cars"] in [h["note_id"] for h in hits[:2]]
    assert _json(cli("search", "car", "--method", "lexical", "--json")) == []


def test_modes(cli: Invoke, notes: dict[str, str]) -> None:
    any_ = _json(cli("search", "weekly fills", "--method", "lexical", "--json"))
    assert {h["note_id"] for h in any_} == {notes["vacuum"], notes["pricing"]}
    all_ = _json(cli("search", "weekly fills", "--mode", "all", "--json"))
    assert all_ == []
    phrase = _json(cli("search", "maintenance vacuum", "--mode", "phrase", "--json"))
    assert [h["note_id"] for h in phrase] == [notes["vacuum"]]
    assert _json(cli("search", "vacuum maintenance", "--mode", "phrase", "--json")) == []


def test_limit_and_scope(cli: Invoke, notes: dict[str, str]) -> None:
    assert len(_json(cli("search", "maintenance", "--limit", "1", "--json"))) == 1
    assert _json(cli("search", "whitespace", "--scope", "user", "--json")) == []


@pytest.mark.parametrize(
    "args",
    [
        ("search", "x", "--method", "regex"),
        ("search", "x", "--mode", "fuzzy"),
        ("search", "x", "--limit", "0"),
        ("retrieve", "x", "--method", "bm25"),
        ("search",),
    ],
)
def test_usage_errors_exit_2(cli: Invoke, args: tuple[str, ...]) -> None:
    assert cli(*args).exit_code == 2


def test_superseded_is_shown(cli: Invoke, project: Path, home: Path) -> None:
    from memdir import Memory

    with Memory.open(project, home=home) as m:  # the CLI has no --supersedes option
        old = m.remember("Deploy on Fridays", "Friday deploys are fine.").note.id
        new = m.remember("Deploy Monday to Thursday", "No deploys.", supersedes=[old]).note.id
    human = cli("search", "deploy", "--method", "lexical")
    assert human.exit_code == 0
    assert f"(superseded by {new})" in human.stdout
    hits = {h["note_id"]: h for h in _json(cli("search", "deploy", "--json"))}
    assert hits[old]["superseded_by"] == new and hits[new]["superseded_by"] is None


def test_retrieve_json_fields_slice_the_file(cli: Invoke, notes: dict[str, str]) -> None:
    body = "Launch 🎉 zebra.\n\n" + "The zebra crossing near the café 数据库. " * 40
    note_id = _remember(cli, "Zebra notes", body)
    chunks = _json(cli("retrieve", "zebra", "--limit", "20", "--json"))
    assert len([c for c in chunks if c["note_id"] == note_id]) >= 2
    for chunk in chunks:
        assert set(chunk) >= CHUNK_FIELDS
        scope, _, path = chunk["source"].partition(":")
        assert scope == "project"
        data = Path(path).read_bytes()
        text = data[chunk["start"] : chunk["end"]].decode("utf-8")
        assert text == chunk["text"]
        assert chunk["revision"] == hashlib.sha256(data).hexdigest()
        assert chunk["chunk_hash"] == hashlib.sha256(text.encode()).hexdigest()
        assert isinstance(chunk["score"], float) and chunk["score"] > 0


def test_retrieve_human_output(cli: Invoke, notes: dict[str, str]) -> None:
    result = cli("retrieve", "whitespace", "--method", "lexical")
    assert result.exit_code == 0
    assert notes["pricing"] in result.stdout and "bytes" in result.stdout
    assert "no matching chunks" in cli("retrieve", "zzzunmatched", "--method", "lexical").stdout


def test_reindex_json(cli: Invoke, notes: dict[str, str]) -> None:
    result = cli("reindex", "--json")
    stats = _json(result)
    assert set(stats) == REINDEX_FIELDS
    assert stats["notes"] == 4 and stats["chunks"] == 4
    assert stats["embedder"].startswith("multilingual-e5-small")
    assert _json(cli("reindex", "--json"))["embedded"] == 0  # vectors are cached


def test_reindex_human(cli: Invoke, notes: dict[str, str]) -> None:
    result = cli("reindex")
    assert result.exit_code == 0
    assert "indexed 4 notes in 4 chunks" in result.stdout


def _answers(cli: Invoke) -> list[Any]:
    out = []
    for query in ("maintenance", "car", "数据库", "fills whitespace"):
        for method in ("lexical", "vector", "hybrid"):
            out.append(_json(cli("search", query, "--method", method, "--json")))
            out.append(_json(cli("retrieve", query, "--method", method, "--json")))
    return out


def test_delete_the_index_reindex_same_answers(
    cli: Invoke, notes: dict[str, str], home: Path
) -> None:
    before = _answers(cli)
    assert any(before)
    files = list((home / "index").glob("*.sqlite3*"))
    assert files
    for f in files:
        f.unlink()
    stats = _json(cli("reindex", "--json"))
    assert stats["notes"] == 4 and stats["embedded"] == 4
    assert _answers(cli) == before


def _run(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "120", "MEMDIR_HOME": str(home)}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from memdir.cli.main import main; main()",
            "--project",
            str(project),
            "--home",
            str(home),
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_reindex_progress_goes_to_stderr_and_never_with_json(project: Path, home: Path) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    for i in range(3):
        assert _run(project, home, "remember", f"Note {i}", "--body", f"zebra {i}").returncode == 0
    human = _run(project, home, "reindex")
    assert human.returncode == 0
    assert "indexing notes" in human.stderr
    assert "indexing notes" not in human.stdout
    assert "indexed 3 notes" in human.stdout
    machine = _run(project, home, "reindex", "--json")
    assert machine.returncode == 0
    assert "indexing notes" not in machine.stderr
    assert json.loads(machine.stdout)["notes"] == 3


def test_vectors_switched_off_by_the_user_search_lexically_and_quietly(
    cli: Invoke, home: Path
) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    _remember(cli, "Pricing cards use fills", "Separated by whitespace.")
    result = cli("search", "whitespace", "--json")
    hits = json.loads(result.stdout)
    assert result.exit_code == 0 and hits[0]["match"] == "words"
    assert "vector search is off" not in result.stderr
    assert _json(cli("search", "whitespace", "--method", "vector", "--json")) == []


def test_an_unusable_embedder_search_is_lexical_with_one_warning(cli: Invoke, home: Path) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "http"\n', encoding="utf-8")
    _remember(cli, "Pricing cards use fills", "Separated by whitespace.")
    result = cli("search", "whitespace", "--json")
    hits = json.loads(result.stdout)
    assert result.exit_code == 0 and hits[0]["match"] == "words"
    assert result.stderr.count("vector search is off") == 1
    assert "embed.url" in result.stderr
