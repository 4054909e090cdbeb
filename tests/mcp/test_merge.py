"""`memory_merge` (§6 over MCP) through the real MCP server over stdio: the right to delete,
the plan that changes nothing, the merge on confirm (files on disk), private notes never
named or shown, and the usual tool errors with nothing changed."""

from __future__ import annotations

import random
import string
from pathlib import Path
from typing import Any

import anyio
from mcp_helpers import make_grant, stdio_params

from mcp import Client
from memdir import Memory
from memdir.sync.baseline import Baseline
from memdir.tidy.merge import keeper

#: What a `not_found` tool error adds: how the agent finds notes and their ids.
NOT_FOUND_NEXT = " (memory_search finds notes and their ids)"


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert not text.startswith("Error executing tool")  # the kind comes first, said once
    return bool(result.is_error), (text if result.is_error else result.structured_content)


def _merge(
    project: Path, home: Path, *calls: dict[str, Any], grant: Path | None = None
) -> list[tuple[bool, Any]]:
    """Each call's (is_error, structured output or error text), in one stdio session."""
    extra = ("--grant-file", str(grant)) if grant is not None else ()
    answers: list[tuple[bool, Any]] = []

    async def main() -> None:
        async with Client(stdio_params(project, home, *extra)) as client:
            for args in calls:
                if args.get("confirm") and "plan_token" not in args:
                    # As an agent does: the plan first (shown to the user), then confirm it.
                    plan = {k: v for k, v in args.items() if k != "confirm"}
                    err, out = await _call(client, "memory_merge", plan)
                    if err:
                        answers.append((err, out))
                        continue
                    args = {**args, "plan_token": out["plan_token"]}
                answers.append(await _call(client, "memory_merge", args))

    anyio.run(main)
    return answers


def _files(*roots: Path) -> dict[str, bytes]:
    """Every note and backup file under `roots` with its bytes (indexes and logs left out)."""
    out: dict[str, bytes] = {}
    for root in roots:
        for path in sorted(root.rglob("*.md")):
            out[str(path)] = path.read_bytes()
    return out


def _text(memory: Memory, note_id: str) -> str:
    path = memory.read(note_id).path
    assert path is not None
    return path.read_text(encoding="utf-8")


def _pair(memory: Memory) -> tuple[str, str]:
    a = memory.remember(
        "Staging deploys run through the blue cluster", "Blue cluster deploys need a ticket."
    ).note
    b = memory.remember(
        "Staging deploys go via the blue cluster", "Rollbacks use the previous image tag."
    ).note
    kept = keeper([a, b]).id
    return kept, b.id if kept == a.id else a.id


def test_merge_needs_the_right_to_delete(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    project, home = env
    kept, other = _pair(memory)
    before = _files(project, home)
    write_grant, read_grant = tmp_path / "write.grant", tmp_path / "read.grant"
    make_grant(memory, write_grant, write=True)
    make_grant(memory, read_grant)

    async def main() -> None:
        for grant in (write_grant, read_grant):
            async with Client(stdio_params(project, home, "--grant-file", str(grant))) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert "memory_merge" not in names and "memory_delete" not in names
                for confirm in (False, True):
                    err, text = await _call(
                        client, "memory_merge", {"ids": [kept, other], "confirm": confirm}
                    )
                    assert err and text.startswith("refused:"), text
                    if grant is write_grant:  # the same refusal as memory_delete's
                        assert "memory_merge deletes notes, which is not allowed" in text
                        assert "nothing was removed" in text
                    else:
                        assert "read-only" in text

    anyio.run(main)
    assert _files(project, home) == before


def test_the_tool_is_offered_as_destructive_to_a_caller_who_may_delete(
    env: tuple[Path, Path],
) -> None:
    project, home = env

    async def main() -> None:
        async with Client(stdio_params(project, home)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            tool = tools["memory_merge"]
            a = tool.annotations
            assert a is not None
            assert a.destructive_hint is True and a.idempotent_hint is False
            assert a.read_only_hint is False
            assert set(tool.input_schema["required"]) == {"ids"}
            assert "llm" not in tool.input_schema["properties"]
            assert "draft" not in tool.input_schema["properties"]
            assert "not offered" in " ".join((tool.description or "").split())

    anyio.run(main)


def test_without_confirm_it_returns_the_plan_and_changes_nothing(
    env: tuple[Path, Path], memory: Memory
) -> None:
    project, home = env
    kept, other = _pair(memory)
    before = _files(project, home)
    [(err, out)] = _merge(project, home, {"ids": [other, kept]})
    assert not err, out
    assert out["applied"] is False
    assert out["kept"] == kept and out["deleted"] == [other]
    assert out["scope"] == "project" and out["source"] == "concat"
    body = out["draft"]["body"]
    assert "Blue cluster deploys need a ticket." in body
    assert "Rollbacks use the previous image tag." in body
    assert out["relinked"] == [] and out["backup_ids"] == []
    assert "confirm: true" in out["message"] and "Nothing was changed" in out["message"]
    assert _files(project, home) == before


def test_confirm_merges_relinks_and_backs_up(env: tuple[Path, Path], memory: Memory) -> None:
    project, home = env
    kept, other = _pair(memory)
    third = memory.remember("Release checklist", f"Deploy as in [[{other}]].").note.id
    hidden = memory.remember("Private deploy diary", f"Mine, see [[{other}]].", private=True)
    hidden_id = hidden.note.id
    other_path = memory.read(other).path
    assert other_path is not None
    [(err, out)] = _merge(project, home, {"ids": [kept, other], "confirm": True})
    assert not err, out
    assert out["applied"] is True
    assert out["kept"] == kept and out["deleted"] == [other]
    assert out["relinked"] == [third]
    assert "Merged 2 notes" in out["message"]
    # The kept note holds both contents; the other file is gone; the link names the kept note.
    text = _text(memory, kept)
    assert "Blue cluster deploys need a ticket." in text
    assert "Rollbacks use the previous image tag." in text
    assert not other_path.exists()
    assert f"[[{kept}]]" in _text(memory, third) and f"[[{other}]]" not in _text(memory, third)
    # Every changed note was backed up; the private note's backup is not named.
    backups = {b.id: b for b in memory.backups(limit=None)}
    assert out["backup_ids"] and set(out["backup_ids"]) <= set(backups)
    assert {backups[b].note_id for b in out["backup_ids"]} == {kept, other, third}
    assert all(backups[b].reason == "merge" for b in out["backup_ids"])
    # The private note's link is rewritten too, and it is never named in the answer.
    assert f"[[{kept}]]" in _text(memory, hidden_id)
    assert hidden_id not in repr(out) and "diary" not in repr(out)


def test_a_private_note_is_no_note_and_never_shown(env: tuple[Path, Path], memory: Memory) -> None:
    project, home = env
    kept, _ = _pair(memory)
    secret = memory.remember("Private zebra fact", "zebra quagga body", private=True).note.id
    before = _files(project, home)
    answers = _merge(
        project,
        home,
        {"ids": [kept, secret]},
        {"ids": [secret, kept], "confirm": True},
        {"ids": [kept, secret], "scope": "project", "confirm": True},
        {"ids": [kept, "zz-no-such-note"], "scope": "project"},
    )
    for err, text in answers[:3]:
        assert err and text == f"not_found: no note {secret}{NOT_FOUND_NEXT}", text
        assert "quagga" not in text  # nothing of its content
    # Said exactly as for a note that does not exist.
    assert answers[3] == (True, f"not_found: no note zz-no-such-note{NOT_FOUND_NEXT}")
    assert _files(project, home) == before


def test_errors_are_tool_errors_and_change_nothing(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    project, home = env
    kept, other = _pair(memory)
    user = memory.remember("Staging deploys use blue", "user side", scope="user").note.id
    token = "ghp_" + "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=36))
    big = "x" * (memory.settings.max_note_bytes + 10)
    before = _files(project, home)
    answers = _merge(
        project,
        home,
        {"ids": [kept, "zz-no-such-note"], "confirm": True},
        {"ids": [kept, kept], "confirm": True},
        {"ids": [kept, user], "confirm": True},
        {"ids": [kept, other], "body": f"Deploy with {token}", "confirm": True},
        {"ids": [kept, other], "body": f"Deploy with {token}"},
        {"ids": [kept, other], "body": big, "confirm": True},
        {"ids": [kept]},
        {"ids": [kept, "../etc/passwd"]},
    )
    texts = [text for _, text in answers]
    assert all(err for err, _ in answers), answers
    assert all("Traceback" not in t for t in texts)
    assert texts[0] == f"not_found: no note zz-no-such-note{NOT_FOUND_NEXT}"
    assert texts[1].startswith("invalid:") and "named twice" in texts[1]
    assert texts[2].startswith("refused:") and "two scopes" in texts[2]
    for text in texts[3:5]:
        assert text.startswith("refused: the credential guard found a secret: "), text
        assert text.count("refused") == 1, text  # the kind is said once
        assert token not in text
    assert texts[5].startswith("refused:") and str(memory.settings.max_note_bytes) in texts[5]
    # The input schema's own checks, in one line each.
    assert texts[6] == "invalid: ids: expected a list of 2 to 20 strings"
    assert texts[7].startswith("invalid: ids[1]: note id '../etc/passwd'"), texts[7]
    assert _files(project, home) == before
    assert token not in "".join(p.read_text(errors="replace") for p in home.rglob("*.jsonl"))


def test_a_grant_for_one_scope_cannot_merge_or_probe_the_other(
    env: tuple[Path, Path], memory: Memory, tmp_path: Path
) -> None:
    project, home = env
    kept, other = _pair(memory)
    grant = tmp_path / "user.grant"
    make_grant(memory, grant, write=True, delete=True, scope="user")
    before = _files(project, home)
    answers = _merge(
        project,
        home,
        {"ids": [kept, other], "confirm": True},
        {"ids": [kept, other], "scope": "project"},
        grant=grant,
    )
    assert answers[0] == (True, f"not_found: no note {kept}{NOT_FOUND_NEXT}")
    assert answers[1][0] and answers[1][1].startswith("refused:") and "user scope" in answers[1][1]
    assert _files(project, home) == before


def test_a_note_held_back_by_a_sync_conflict_is_not_merged(
    env: tuple[Path, Path], memory: Memory
) -> None:
    project, home = env
    kept, other = _pair(memory)
    key = memory.stores.store("project").state_key
    baseline = Baseline(home / "memory-sync" / f"{key}.sqlite")
    try:
        baseline.hold(
            other, server_rev=None, server_data=None, local_rev=None, reasons=("both edited",)
        )
    finally:
        baseline.close()
    before = _files(project, home)
    answers = _merge(project, home, {"ids": [kept, other]}, {"ids": [kept, other], "confirm": True})
    for err, text in answers:
        assert err and text.startswith("conflict:"), text
        assert "held back by a sync conflict" in text and "nothing was merged" in text
    assert _files(project, home) == before


def test_confirm_needs_the_plans_token_and_refuses_a_stale_one(
    env: tuple[Path, Path], memory: Memory
) -> None:
    project, home = env
    kept, other = _pair(memory)
    before = _files(project, home)
    [(err, text)] = _merge(
        project, home, {"ids": [kept, other], "confirm": True, "plan_token": None}
    )
    assert err and text.startswith("invalid:") and "plan_token" in text
    [(err, text)] = _merge(
        project, home, {"ids": [kept, other], "confirm": True, "plan_token": "0" * 32}
    )
    assert err and text.startswith("conflict:") and "changed since that plan" in text
    assert _files(project, home) == before


def _live_text(memory: Memory) -> str:
    """The text of every note file in the project directory."""
    return "\n".join(
        p.read_text("utf-8") for p in sorted(memory.stores.directory("project").glob("*.md"))
    )


def test_mcp_merge_confirm_refuses_notes_changed_since_the_plan(memory: Memory) -> None:
    """A note edited between the plan the user was shown and the confirm is never lost:
    the confirm is refused (the handler called in-process, as the server does)."""
    from memdir.core import AccessLevel
    from memdir.errors import MemdirError
    from memdir.mcp.access import CURRENT, Access
    from memdir.mcp.tools.tidy import memory_merge

    a = memory.remember(
        "Staging deploys run through the blue cluster", "Needs a ticket.", id="blue-a"
    ).note.id
    b = memory.remember(
        "Staging deploys go via the blue cluster", "Rollbacks use old tags.", id="blue-b"
    ).note.id
    token = CURRENT.set(Access(AccessLevel.READ_WRITE_DELETE, "both", True, None))
    try:
        body = "Needs a ticket. Rollbacks use old tags."  # the agent's body, shown to the user
        plan = memory_merge(memory, ids=[a, b], confirm=False, body=body).model_dump()
        assert plan["applied"] is False
        # The user (or another agent) adds a fact to b before the agent confirms.
        memory.remember(
            "Staging deploys go via the blue cluster",
            "Rollbacks use old tags. NEVER on Fridays.",
            id=b,
        )
        try:
            memory_merge(memory, ids=[a, b], confirm=True, body=body)
        except MemdirError:
            return  # refused: nothing of the edit is lost
    finally:
        CURRENT.reset(token)
    assert "NEVER on Fridays" in _live_text(memory), "the edit made after the plan is gone"
