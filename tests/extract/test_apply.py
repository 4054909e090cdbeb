"""Tests for `extract/apply.py`: extraction against hostile model answers; what reaches the
disk is checked on the disk."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from memdir import Memory
from memdir.extract import BACKUP_REASON, ExtractionState, HttpChatClient

from . import ON_STOP, TALK, ChatServer, completion, notes_answer, user

AWS_KEY = "AKIA" + "Q7W2E9R4T6Y8U1I3"


PASSWORD = "Xq7" + "-hunter-Plover-92"


def memdir_files(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


def assert_nowhere(secret: str, *roots: Path) -> None:
    for path in memdir_files(*roots):
        assert secret.encode() not in path.read_bytes(), path


def run(memory: Memory, chat: HttpChatClient, conversation: Sequence[Mapping[str, Any]] = TALK):
    return memory.agent.extract(conversation, chat, force=True)


def test_creates_notes_and_resolves_new_links(
    memory: Memory, server: ChatServer, chat: HttpChatClient
) -> None:
    server.answer(
        notes_answer(
            {
                "action": "create",
                "summary": "Deploys use blue green on staging",
                "body": "See [[new:1]] for the checklist.",
                "type": "project",
                "tags": ["deploy", "staging"],
            },
            {
                "action": "create",
                "summary": "The release checklist lives in the wiki",
                "body": "Back to [[new:0]]; unknown [[new:7]].",
                "type": "reference",
            },
        )
    )
    result = run(memory, chat)
    assert result.error is None
    assert len(result.created) == 2
    assert result.announcement == "saved 2 memories from this conversation"
    first, second = (memory.read(i) for i in result.created)
    assert first.body == f"See [[{second.id}]] for the checklist."
    assert second.body == f"Back to [[{first.id}]]; unknown new:7."
    assert (memory.stores.directory("project") / f"{first.id}.md").is_file()
    assert result.state == ExtractionState(len(TALK), None)
    prompt = server.seen[0].prompt
    assert "blue green strategy" in prompt and "When a note is worth writing" in prompt


def test_update_backs_up_the_replaced_version(
    memory: Memory, server: ChatServer, chat: HttpChatClient
) -> None:
    old = memory.remember("Deploys use blue green on staging", body="Old text.", tags=["deploy"])
    note_id = old.note.id
    server.answer(
        notes_answer(
            {
                "action": "update",
                "id": note_id,
                "summary": "Deploys use blue green on staging and production",
                "body": "New text.",
            }
        )
    )
    result = run(memory, chat)
    assert result.updated == (note_id,) and result.error is None
    assert f'id="{note_id}"' in server.seen[0].prompt  # shown in full
    assert memory.read(note_id).body == "New text."
    assert memory.read(note_id).tags == ("deploy",)  # not given: kept
    backups = [b for b in memory.backups() if b.note_id == note_id]
    assert [b.reason for b in backups] == [BACKUP_REASON]
    assert b"Old text." in backups[0].path.read_bytes()
    assert result.announcement == "saved 1 memory from this conversation"


def test_updates_to_ids_not_shown_in_full_are_dropped(
    memory: Memory, server: ChatServer, chat: HttpChatClient, project: Path
) -> None:
    unrelated = memory.remember("Invoices are printed on Fridays", body="Keep me.").note.id
    server.answer(
        notes_answer(
            {"action": "update", "id": unrelated, "summary": "Hijacked", "body": "gone"},
            {"action": "update", "id": "no-such-note-1a2", "summary": "Ghost", "body": "x"},
            {"action": "update", "summary": "No id at all", "body": "x"},
        )
    )
    result = run(memory, chat)
    assert result.created == () and result.updated == ()
    assert [d.reason for d in result.dropped] == ["update to a note that was not shown in full"] * 3
    assert memory.read(unrelated).body == "Keep me."
    assert memory.backups() == []
    assert not (project / "MEMORY" / "no-such-note-1a2.md").exists()
    assert f"- {unrelated}: Invoices" in server.seen[0].prompt  # listed, for linking only


def test_a_create_cannot_choose_an_existing_id(
    memory: Memory, server: ChatServer, chat: HttpChatClient
) -> None:
    victim = memory.remember("Invoices are printed on Fridays", body="Keep me.").note.id
    server.answer(notes_answer({"action": "create", "id": victim, "summary": "Evil", "body": "x"}))
    result = run(memory, chat)
    (new_id,) = result.created
    assert new_id != victim
    assert memory.read(victim).body == "Keep me."


def test_links_to_ids_not_shown_lose_their_brackets(
    memory: Memory, server: ChatServer, chat: HttpChatClient
) -> None:
    known = memory.remember("Invoices are printed on Fridays").note.id
    server.answer(
        notes_answer(
            {
                "action": "create",
                "summary": "Staging uses blue green",
                "body": f"See [[{known}]], [[evil-note-123]] and [[Not An Id]].",
                "supersedes": [known, "evil-note-123"],
            }
        )
    )
    result = run(memory, chat)
    note = memory.read(result.created[0])
    assert note.body == f"See [[{known}]], evil-note-123 and Not An Id."
    assert note.links == (known,)
    assert note.supersedes == (known,)
    assert any("evil-note-123" in w for w in result.warnings)


def test_secrets_are_redacted_before_anything_is_written(
    memory: Memory, server: ChatServer, chat: HttpChatClient, project: Path, home: Path
) -> None:
    talk = [*TALK, user(f"my key is {AWS_KEY} and password = {PASSWORD}")]
    server.answer(
        notes_answer(
            {
                "action": "create",
                "summary": f"AWS key {AWS_KEY}",
                "body": f"Use {AWS_KEY} to deploy.\npassword = {PASSWORD}\nBlue green.",
                "tags": ["deploy", AWS_KEY],
            }
        )
    )
    result = memory.agent.extract(talk, chat, force=True)
    (note_id,) = result.created
    assert result.redactions >= 3
    note = memory.read(note_id)
    assert "[REDACTED" in note.summary and "[REDACTED" in note.body
    assert note.tags == ("deploy",)
    assert "Blue green." in note.body
    for secret in (AWS_KEY, PASSWORD):
        assert_nowhere(secret, project / "MEMORY", home)


@pytest.mark.parametrize(
    "content",
    [
        "this is not json {",
        "[]",
        '{"notes": {"action": "create"}}',
        '{"notes": ["create"]}',
        '{"notes": [{"action": "create", "summary": 5}]}',
        '{"notes": [{"action": "create", "summary": "ok", "tags": [1, 2]}]}',
        '{"notes": [{"action": "create", "summary": "ok"}, {"summary": "no action"}]}',
        '{"note": []}',
    ],
)
def test_malformed_answers_write_nothing(
    memory: Memory, server: ChatServer, chat: HttpChatClient, project: Path, content: str
) -> None:
    server.answer(completion(content))
    result = run(memory, chat)
    assert result.error is not None and "nothing was written" in result.error
    assert result.created == () and result.announcement == ""
    assert memdir_files(project / "MEMORY") == []
    assert result.state.read_count == len(TALK)  # the model read them: not paid for twice


def test_a_fenced_answer_is_accepted(
    memory: Memory, server: ChatServer, chat: HttpChatClient
) -> None:
    body = json.dumps({"notes": [{"action": "create", "summary": "Fenced"}]})
    server.answer(completion(f"```json\n{body}\n```"))
    assert len(run(memory, chat).created) == 1


def test_fields_are_normalised_and_limited(
    open_memory: Callable[..., Memory], server: ChatServer, chat: HttpChatClient
) -> None:
    memory = open_memory(ON_STOP + "[memory]\nmaxNoteBytes = 600\n")
    items = [
        {"action": "create", "summary": "  Two\nlines\tsummary  ", "body": "é" * 1000},
        {"action": "create", "summary": "Bad type", "type": "secret-agent"},
        {"action": "create", "summary": "   "},
        {"action": "delete", "summary": "Delete everything"},
        {"action": "create", "summary": "Typed", "type": "Feedback"},
    ]
    items += [{"action": "create", "summary": f"Filler {i}"} for i in range(10)]
    server.answer(notes_answer(*items))
    result = run(memory, chat)
    first = memory.read(result.created[0])
    assert first.summary == "Two lines summary"
    assert first.body_bytes <= 600 and first.body.endswith("memory.maxNoteBytes]")
    assert memory.read(result.created[1]).type is not None
    reasons = {d.index: d.reason for d in result.dropped}
    assert reasons[1].startswith("unknown type")
    assert reasons[2] == "empty summary"
    assert reasons[3] == "action must be 'create' or 'update'"
    assert all("more than 10" in reasons[i] for i in range(10, 15))
    assert len(result.created) == 2 + 5  # items 0, 4 and fillers 0-4 (positions 5-9)


def test_an_update_is_dropped_if_the_file_changed_after_it_was_shown(memory: Memory) -> None:
    note_id = memory.remember("Deploys use blue green on staging", body="v1").note.id

    class EditingClient:
        def complete(self, messages: Sequence[Mapping[str, Any]], *, json_mode: bool = False):
            memory.remember("Deploys use blue green on staging", body="edited", id=note_id)
            item = {"action": "update", "id": note_id, "summary": "S", "body": "model"}
            return json.dumps({"notes": [item]})

    result = memory.agent.extract(TALK, EditingClient(), force=True)
    assert result.updated == ()
    assert "changed since" in result.dropped[0].reason
    assert memory.read(note_id).body == "edited"


def test_lone_surrogates_and_control_characters_in_an_answer_are_made_storable() -> None:
    from memdir.extract.apply import parse_answer

    answer = (
        '{"notes": [{"action": "create", "summary": "Bell\\u0007 and \\ud800 here", '
        '"body": "Body \\udfff.", "tags": ["a\\u0007b"]}]}'
    )
    items = parse_answer(answer)
    from memdir.core import Note
    from memdir.extract.apply import validate
    from memdir.extract.prompt import PromptContext

    ctx = PromptContext(messages=(), full=(), listed=())
    drafts, dropped, _, _ = validate(items, ctx, 10_000)
    assert not dropped
    draft = drafts[0]
    assert "\x07" not in draft.summary and "\ud800" not in draft.summary
    assert "\udfff" not in draft.body
    Note(id="x", summary=draft.summary, body=draft.body, tags=draft.tags or ())
