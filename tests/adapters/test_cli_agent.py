"""`memdir index`, `memdir recall` and `memdir extract` through the real stack."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

Invoke = Callable[..., Result]


def test_index_is_guidance_when_empty_then_lists_notes(cli: Invoke) -> None:
    empty = cli("index")
    assert empty.exit_code == 0
    assert "No memory notes yet" in empty.stdout
    cli("remember", "Deploys go out on Tuesdays", "--type", "project")
    listed = cli("index", "--json")
    doc = json.loads(listed.stdout)
    assert "Deploys go out on Tuesdays" in doc["index"]
    assert doc["guidance"]


def test_recall_attaches_a_matching_note_once(cli: Invoke, tmp_path: Path) -> None:
    made = cli(
        "remember",
        "Staging database password rotation uses Vault",
        "--type",
        "reference",
        "--tags",
        "vault,staging,database",
        "--body",
        "Rotate through the Vault UI.",
        "--json",
    )
    note_id = json.loads(made.stdout)["note"]["id"]
    first = cli("recall", "how do we rotate the staging database credentials in vault?", "--json")
    assert first.exit_code == 0, first.output
    doc = json.loads(first.stdout)
    assert doc["note_ids"] == [note_id]
    assert "<recalled-memory>" in doc["block"]
    history = tmp_path / "history.json"
    history.write_text(
        json.dumps([{"role": "user", "content": "earlier", "metadata": doc["metadata"]}]),
        encoding="utf-8",
    )
    again = cli("recall", "vault staging database rotation again", "--history", str(history))
    assert again.exit_code == 0
    assert "nothing recalled" in again.stdout
    assert "nothing recalled" in cli("recall", "thanks, that is all for today").stdout


def test_recall_with_a_broken_history_file_is_a_usage_error(cli: Invoke, tmp_path: Path) -> None:
    bad = tmp_path / "history.json"
    bad.write_text("{not json", encoding="utf-8")
    result = cli("recall", "anything", "--history", str(bad))
    assert result.exit_code == 2
    assert "history.json" in result.output


def test_extract_without_a_configured_model_says_so(cli: Invoke, tmp_path: Path) -> None:
    conversation = tmp_path / "conversation.json"
    conversation.write_text(
        json.dumps([{"role": "user", "content": "We always deploy on Tuesdays."}]),
        encoding="utf-8",
    )
    # the same exit code as `ask`, `tidy --confirm-with-llm` and merge drafts give (1)
    result = cli("extract", str(conversation))
    assert result.exit_code == 1
    assert "llm.url" in result.output
    as_json = cli("extract", str(conversation), "--json")
    assert as_json.exit_code == 1
    assert "llm.url" in json.loads(as_json.stdout)["error"]
    for args in (("tidy", "--confirm-with-llm"),):
        assert cli(*args).exit_code == 1


def test_sync_status_on_a_fresh_home_says_what_to_do(cli: Invoke) -> None:
    """Issue 25: a fresh home said "sync is on", then "not signed in"."""
    result = cli("sync", "status")
    assert result.exit_code == 0
    first = result.stdout.splitlines()[0]
    assert first.startswith("not syncing: not signed in") and "memdir sync login" in first
    assert "sync is on" not in result.stdout


def test_no_help_text_shows_spec_section_numbers() -> None:
    """`memdir --help` showed "(§7.3)": the reference generated from every command's help
    holds no section sign."""
    from pathlib import Path

    reference = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
    assert "§" not in reference.read_text(encoding="utf-8")
